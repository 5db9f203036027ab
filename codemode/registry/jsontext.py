"""JSON text from outside (a model's arguments, a log file, a configuration): parsed one way.

``json.loads`` fails in three ways, and callers that catch only ``JSONDecodeError`` let two
escape: a number of more than 4,300 digits raises a plain ``ValueError`` (CPython's limit on
integer-string conversion), and deep nesting raises ``RecursionError``. ``parse_json`` turns all
three into ``JSONTextError``, whose ``reason`` says what is wrong in the sender's terms (no
interpreter setting to change, no internal key).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["JSONTextError", "UnreadableArguments", "parse_json"]

_DIGITS = re.compile(r"value has (\d+) digits")


class JSONTextError(ValueError):
    """The text is not JSON; ``reason`` is one short sentence fragment saying why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_json(text: str | bytes) -> Any:
    """The JSON value of ``text``. Raises ``JSONTextError`` for anything ``json.loads`` refuses,
    including over-long integers and nesting too deep to read."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONTextError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise JSONTextError("nested too deeply") from None
    except UnicodeDecodeError:
        raise JSONTextError("not UTF-8 text") from None
    except ValueError as exc:  # CPython's integer-string limit (4,300 digits by default)
        found = _DIGITS.search(str(exc))
        size = f"of {found.group(1)} digits " if found else ""
        raise JSONTextError(f"an integer {size}is longer than JSON numbers here may be; send it as a string") from None


@dataclass(frozen=True, slots=True)
class UnreadableArguments:
    """Arguments that came as text and are not JSON: the pipeline refuses the call with
    ``reason`` (an ``invalid_arguments`` result) and logs ``text``. Not a mapping on purpose,
    so nothing mistakes it for arguments."""

    text: str
    reason: str
