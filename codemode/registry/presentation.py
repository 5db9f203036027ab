"""UI card intents: how a front end may show a call and its result.

``present_call(args)`` and ``present_result(args, result)`` on a definition are pure functions that
return one of these plain dicts. The registry never shows them to the model; it only calls them
safely and falls back to a generic card when they are missing or fail.
"""

from __future__ import annotations

from typing import Any

__all__ = ["CARD_KINDS", "diff_card", "generic_card", "terminal_card"]

CARD_KINDS = ("generic", "terminal", "diff")


def generic_card(title: str, body: str | None = None) -> dict[str, Any]:
    return {"kind": "generic", "title": title, "body": body}


def terminal_card(command: str, output: str | None = None, exit_code: int | None = None) -> dict[str, Any]:
    return {"kind": "terminal", "command": command, "output": output, "exit_code": exit_code}


def diff_card(path: str, diff: str | None = None) -> dict[str, Any]:
    """``diff`` is unified-diff text; ``None`` means the change is not known yet (a pending call)."""
    return {"kind": "diff", "path": path, "diff": diff}
