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
Write Python 3.11: the body of an async function (top-level `await` and `return` work).
Await every call, `await {ns}.name(arg=value)`; run independent calls with `await asyncio.gather(...)`.
Omit an optional argument (or pass None) for its default; arguments may also go in one dict: `await {ns}.name({{"arg": value}})`.
A failed call raises `ToolCallError` (`.tool_name`, `.message`).
Only prints and the return value (a final bare expression) come back to you: keep them short.
Allowed imports: {imports}."""

NO_IMPORTS = "none"

#: Appended in compact mode, before the one-line index.
COMPACT_HEADER = """\
There are {count} tools, listed below with a one-line summary. Before calling one, see its signature and types with `print({ns}.describe("name"))`; `{ns}.list()` returns all names.
Find tools by topic with `await {ns}.search("what you need")`: the best matches, each with its signature."""

HEADER = """\
from typing import Any, Literal, NotRequired, Protocol, TypedDict"""

TOOL_CALL_ERROR = """\
class ToolCallError(Exception):
    tool_name: str
    message: str"""

#: Docstring line for a tool whose argument names are not all Python names.
ARGS_FORM_NOTE = "Takes one dict: some argument names are not Python names."

#: Docstring line for a tool whose schema allows more arguments than it lists.
EXTRA_KWARGS_NOTE = "Other keyword arguments are accepted."
