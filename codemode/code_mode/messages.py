"""Every sentence a model reads from Code Mode (``run_code``, its runs, tool discovery).

Tests pin these strings; change them here or nowhere. The pipeline's own texts (unknown tool,
invalid arguments, a failed tool) live in ``codemode.registry.messages``.
"""

from __future__ import annotations

# --- Code Mode (the run_code bridge) --------------------------------------------------------------

RUN_CODE_DESCRIPTION = (
    "Run a short async Python program that calls the tools described in the system prompt as "
    "`await tools.name(...)`. Only what it prints and returns comes back to you: aggregate "
    "inside the program and print a short summary."
)
RUN_CODE_CODE = "The body of an async Python function: top-level `await` and `return` work."
RUN_CODE_PURPOSE = "What the program does, in 5-10 words, active voice (shown to the user)."
SYSTEM_PROMPT = """\
## Code Mode
Act by calling `run_code` with a Python program. Inside it, the tools below are async methods of `tools`.

{sdk}"""
CALL_FROM_RUN_CODE = (
    "in code mode {name} is called from a run_code program: `await tools.{method}(...)`"
)
RUN_CODE_NATIVE = "run_code is not available in native mode; call the tools directly"
RUN_FAILED = "Error: code run failed ({kind}): {message}"
CAPTURED_OUTPUT = "Captured output:"
RUN_NO_OUTPUT = "(run_code completed with no output)"
RETURN_VALUE = "Return value:"
RECORD_NOT_KEPT = "[result not kept in the run's records: about {size} bytes, past the run's {limit}-byte record budget]"
EMPTY_PROGRAM = (
    "the program is empty; write the body of an async function that calls the tools, "
    "e.g. `r = await tools.name(...)` then `return` or `print` what you need"
)
PREFLIGHT_FAILED = "nothing ran; fix these and run again:\n{diagnostics}"
NOT_DISPATCHED = "run_code run is over ({reason}); {name} not dispatched"
SUB_CALL_CANCELLED = "run_code run is over ({reason}); {name} was cancelled"
#: A sub-call the program itself cancelled (a timeout around it, ``Task.cancel``) while the
#: run went on.
SUB_CALL_ABANDONED = "the program cancelled {name} while it ran (its await was cancelled)"
SUB_CALL_ABANDONED_QUEUED = "the program cancelled {name} before it was dispatched (its await was cancelled)"
ARGS_MIXED = "pass the arguments either as keywords or as one dict, not both"
ARGS_POSITIONAL = (
    "takes keyword arguments or one dict of arguments, got {count} positional argument(s)"
)
ARGS_NOT_DICT = "a positional argument must be a dict of arguments, got {type}"
REASON_COMPLETED = "completed"
RUN_CODE_SESSION = (
    "Variables, functions and imports a program defines stay defined in later run_code calls "
    "of this conversation; pass `restart: true` to start from nothing."
)
RUN_CODE_RESTART = "true: discard every variable earlier programs defined and start from nothing."
#: The last line of a run in a session that lost its state (``sandbox.RunResult.reset``).
SESSION_NOTE = "Note: {sentence}."
SESSIONS_OFF = "sessions are off; create the CodeMode with sessions=True to use session={key!r}"

# --- discovery (codemode.code_mode.discovery) -----------------------------------------------------

DISCOVERY = (
    "There are {count} tools: `print(await {ns}.search(\"what you need\"))` shows the best "
    "matches with signatures, `{ns}.describe(\"name\")` one tool, `{ns}.list()` all names."
)
INDEX_HEAD = "Tools:"
INDEX_HEAD_NAMES = "Tool names:"
INDEX_HEAD_GROUPED = "Names by prefix (`{prefix}: {name}` is `{ns}.{prefix}{name}`):"
#: Stands for the names of a group the index has no room for.
INDEX_MORE = "+{count} more"
#: A group none of whose names fit.
INDEX_COUNT = "{count} tools"
#: The discovery text's short form of the SDK's import list.
IMPORTS_SHORT = (
    "Allowed imports: {common} and {rest} more (a refused import lists all)."
)
INDEX_CUT = "\n... more: `tools.list()`"
INDEX_EMPTY = "No tools are loaded."
SEARCH_NO_QUERY = "search() takes a query with at least one word, e.g. tools.search(\"read a file\")"
SEARCH_BAD_LIMIT = "search() takes limit=1 to {max}, got {got!r}"
SEARCH_ARGS = "search() takes a query and an optional limit: tools.search(\"query\", limit=5)"
SEARCH_DOC = '''\
async def search(query: str, *, limit: int = 5) -> list[dict[str, str]]:
    """The tools whose names, descriptions or argument names best match query, best first.
    Each hit is {"name": method name, "summary": one line, "sdk": its signature and types}."""
'''
SYSTEM_PROMPT_LEAD = """\
## Code Mode
Act by calling `run_code` with a Python program. Inside it, the tools are async methods of `tools`."""
