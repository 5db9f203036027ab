"""Model-facing wording, in one place so it stays short, stable and reviewable.

Changing any of these changes every `sdk_hash`: prompt caches go cold and recorded runs point to
a different SDK, so edit on purpose.
"""

from __future__ import annotations

__all__ = [
    "ARGS_FORM_NOTE",
    "COMPACT_HEADER",
    "EXTRA_KWARGS_NOTE",
    "HEADER",
    "INSTRUCTIONS",
    "NO_IMPORTS",
    "TOOL_CALL_ERROR",
]

#: `{ns}` is the namespace name, `{imports}` the allowed imports (or NO_IMPORTS).
INSTRUCTIONS = """\
Write Python 3.11 code to do the task. It runs as the body of an async function: use top-level `await`, and `return` a value to finish.
Call tools as `await {ns}.name(arg=value)`; every call must be awaited. Run independent calls together with `await asyncio.gather({ns}.a(...), {ns}.b(...))`.
Optional arguments default to None, which means not sent. You can also pass all arguments as one dict: `await {ns}.name({{"arg": value}})`.
A failed call raises `ToolCallError`, with `.tool_name` and `.message`; catch it to recover or report.
Only what you print and the value you return come back to you, so print or return just what you need.
Allowed imports: {imports}."""

NO_IMPORTS = "none"

#: Appended in compact mode, before the one-line index.
COMPACT_HEADER = """\
There are {count} tools, listed below with a one-line summary. Before calling one, see its signature and types with `print({ns}.describe("name"))`; `{ns}.list()` returns all names."""

HEADER = """\
from typing import Any, Literal, NotRequired, Protocol, TypedDict"""

TOOL_CALL_ERROR = '''\
class ToolCallError(Exception):
    """Raised by a failed tool call."""

    tool_name: str
    message: str'''

#: Docstring line for a tool whose argument names are not all Python names.
ARGS_FORM_NOTE = "Pass the arguments as one dict; some names are not Python names."

#: Docstring line for a tool whose schema allows more arguments than it lists.
EXTRA_KWARGS_NOTE = "Other keyword arguments are accepted."
