"""Every sentence a model reads about an upstream MCP server or from codemode's MCP server.

Each text says what happened and what to do next. None of them carries a host path, a command
line, an environment value or a server's stderr: those go to the ``codemode.mcp`` logger.
"""

from __future__ import annotations

# --- upstream failures (error results of <server>__<tool> calls) ------------------------------------

UPSTREAM_START_FAILED = (
    "MCP server '{server}' is not available: it could not be started ({reason}). "
    "{name} was not called; it will be retried on the next call."
)
UPSTREAM_LOAD_FAILED = (
    "MCP server '{server}' could not be started ({reason}); its tools are not available in this "
    "session."
)
UPSTREAM_CRASHED = (
    "MCP server '{server}' stopped while {name} was running (the connection closed); "
    "the call may or may not have taken effect. The server restarts on the next call."
)
UPSTREAM_HUNG = (
    "MCP server '{server}' stopped responding: {name} got no answer within {timeout:g} s and "
    "the server did not answer a ping. The server restarts on the next call."
)
UPSTREAM_SLOW = (
    "{name} did not finish within {timeout:g} s (MCP server '{server}' is still responding); "
    "the call was cancelled. Try a smaller request."
)
UPSTREAM_UNREADABLE = (
    "MCP server '{server}' sent an answer codemode cannot read ({detail}); {name} failed. "
    "The server restarts on the next call."
)
UPSTREAM_REFUSED = "MCP server '{server}' refused {name}: {message}"
UPSTREAM_ERROR_EMPTY = "{name} failed on MCP server '{server}' without saying why."
UPSTREAM_INVALID = "MCP server '{server}' returned an invalid result for {name}: {detail}"
UPSTREAM_CLOSED = "MCP server '{server}' is closed (codemode is shutting down); {name} was not called."
UNSUPPORTED_BLOCK = "[unsupported MCP content: {type}]"
TOOL_SKIPPED = "MCP tool '{tool}' of server '{server}' is skipped: {reason}."
TOOL_HIDDEN = "MCP tool '{tool}' of server '{server}' is hidden: {reason}."
REASON_NEEDS_TASKS = "it requires task-augmented execution, which codemode does not offer"

# --- upstream resources (read_resource / list_resources) --------------------------------------------

RESOURCES_NOTE = (
    "MCP resources: `await tools.{list}()` lists their URIs, `await tools.{read}(uri=...)` reads one."
)
READ_RESOURCE_DESCRIPTION = (
    "Read a resource of an MCP server by URI: text comes back as text, images and other binary "
    "content as placeholders."
)
READ_RESOURCE_URI = "The resource's URI, as {list} lists it (or one its URI templates match)."
LIST_RESOURCES_DESCRIPTION = (
    "List the resources the MCP servers offer (uri, name, server, mime_type, description) and "
    "their URI templates."
)
RESOURCE_UNKNOWN = "No MCP server offers resource {uri!r}; `await tools.{list}()` lists the URIs there are."
RESOURCE_TEXT_CUT = "[resource text cut: {shown} of {total} characters shown]"
RESOURCE_TOO_LARGE = "[resource: {uri}, {mime_type}, {size} bytes: over the {limit}-byte limit, not passed on]"
RESOURCE_PARTS_CUT = "[{dropped} more parts of this resource not shown]"
RESOURCES_UNAVAILABLE = "No MCP server could list its resources: {reason}"

# --- start reasons (short, no paths) ---------------------------------------------------------------

REASON_START_TIMEOUT = "no MCP handshake within {timeout:g} s"
REASON_EXITED = "it exited or closed the connection during start-up"
REASON_NOT_FOUND = "its command was not found"
REASON_UNREADABLE = "it sent an answer codemode cannot read: {detail}"
REASON_BAD_LISTING = "its tools/list answer is not valid MCP: {detail}"
REASON_HTTP = "the HTTP endpoint did not answer as an MCP server"

# --- codemode as an MCP server -----------------------------------------------------------------------

SERVER_INSTRUCTIONS = (
    "Call run_code with a short async Python program; inside it, every tool in the SDK is an "
    "async method of `tools`. Only what the program prints and returns comes back. To look "
    "before writing code, search_tools finds tools by topic and get_tool_sdk shows their "
    "signatures."
)
SDK_RESOURCE_NAME = "codemode-sdk"
SDK_RESOURCE_TITLE = "Code Mode SDK"
SDK_RESOURCE_DESCRIPTION = "The typed Python SDK run_code programs are written against."
SDK_PROMPT_NAME = "codemode"
SDK_PROMPT_DESCRIPTION = "Instructions and the SDK for acting through run_code."
UNKNOWN_RESOURCE = "Unknown resource {uri!r}; this server has {known}."
UNKNOWN_PROMPT = "Unknown prompt {name!r}; this server has {known}."
RUN_PROGRESS = "{started} sub-calls started, {finished} finished; {seconds:.1f} s"

# --- discovery tools and the budgeted run_code description ----------------------------------------

RUN_CODE_MCP_LEAD = (
    "Run a short async Python program that calls tools as `await tools.name(...)`. Only what it "
    "prints and returns comes back to you: aggregate inside the program and print a short summary."
)
SEARCH_TOOLS_DESCRIPTION = (
    "Find the tools a run_code program can call: the best matches for a query (names, "
    "descriptions and argument names), each with its Python signature and types."
)
SEARCH_QUERY = "What you need, in a few words (e.g. 'create a github issue')."
SEARCH_LIMIT = "How many tools to return (1-50)."
GET_TOOL_SDK_DESCRIPTION = (
    "The Python signature, types and docstring of named tools, as a run_code program calls them."
)
GET_TOOL_SDK_NAMES = "Tool names, as in the run_code description or search_tools."
NO_MATCHES = "No tool matches {query!r}; try other words, or run_code with `print(tools.list())`."

# --- serving in production (codemode.mcp.serving) -------------------------------------------------

#: The run_code description's sentence, with --sessions, for a client that keeps no MCP session.
RUN_CODE_NO_SESSION = (
    "This connection has no MCP session (no Mcp-Session-Id), so nothing persists between run_code "
    "calls: each program starts from nothing and must define everything it uses."
)
#: Added to a failed run of such a client when a name was not defined.
NO_SESSION_NOTE = "Note: " + RUN_CODE_NO_SESSION
DRAINING = (
    "This server is shutting down and takes no new runs; call run_code again and the load "
    "balancer sends it to another server."
)
DRAINING_SESSION = (
    "This server is shutting down: it takes no new runs and its sessions end, so variables defined "
    "earlier are gone; reconnect to continue on another server."
)
DRAIN_CANCELLED = "the server is shutting down and its drain timeout of {seconds:g} s ran out"
DRAIN_STOPPED = "the server is shutting down and was told a second time to stop at once"
SESSIONS_FULL = (
    "This server already runs its limit of {cap} sessions and every one is busy; try again in a "
    "few seconds."
)
SESSION_EVICTED = (
    "Note: this session was closed because the server keeps at most {cap} sessions and this one was "
    "idle longest; variables defined earlier are gone."
)
NOT_READY_DRAINING = "draining: the server is shutting down and takes no new work"
NOT_READY_BACKEND = "the worker backend cannot run: {reason}"

# --- the tool-list cache (codemode.mcp.cache; lines for the user, never for the model) -------------

CACHE_IGNORED = "ignoring the cached tool list of MCP server '{server}' ({path}: {problem}); it is listed live"
CACHE_UNWRITABLE = "cannot write MCP tool lists to {directory} ({problem}); servers are listed live on every run"
CACHE_DISAGREES = (
    "MCP server '{server}' now lists other tools than its cached list ({changes}); this run's SDK "
    "was built from the cached list, and the next run uses the new one"
)
