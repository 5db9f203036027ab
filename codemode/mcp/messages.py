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
UPSTREAM_REFUSED = "MCP server '{server}' refused {name}: {message}"
UPSTREAM_ERROR_EMPTY = "{name} failed on MCP server '{server}' without saying why."
UPSTREAM_INVALID = "MCP server '{server}' returned an invalid result for {name}: {detail}"
UPSTREAM_CLOSED = "MCP server '{server}' is closed (codemode is shutting down); {name} was not called."
UNSUPPORTED_BLOCK = "[unsupported MCP content: {type}]"

# --- start reasons (short, no paths) ---------------------------------------------------------------

REASON_START_TIMEOUT = "no MCP handshake within {timeout:g} s"
REASON_EXITED = "it exited or closed the connection during start-up"
REASON_NOT_FOUND = "its command was not found"
REASON_HTTP = "the HTTP endpoint did not answer as an MCP server"

# --- codemode as an MCP server -----------------------------------------------------------------------

SERVER_INSTRUCTIONS = (
    "Call run_code with a short async Python program; inside it, every tool in the SDK is an "
    "async method of `tools`. Only what the program prints and returns comes back."
)
RUN_CODE_MCP_DESCRIPTION = """\
Run a short async Python program that calls the tools below as `await tools.name(...)`. Only \
what it prints and returns comes back to you: aggregate inside the program and print a short \
summary.

{sdk}"""
SDK_RESOURCE_NAME = "codemode-sdk"
SDK_RESOURCE_TITLE = "Code Mode SDK"
SDK_RESOURCE_DESCRIPTION = "The typed Python SDK run_code programs are written against."
SDK_PROMPT_NAME = "codemode"
SDK_PROMPT_DESCRIPTION = "Instructions and the SDK for acting through run_code."
UNKNOWN_RESOURCE = "Unknown resource {uri!r}; this server has {known}."
UNKNOWN_PROMPT = "Unknown prompt {name!r}; this server has {known}."
