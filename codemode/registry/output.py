"""What codemode writes for machines and terminals, from text a snippet controls.

- ``json_line``: JSON that stays one line for any line splitter. ``json.dumps`` escapes the C0
  controls but writes U+2028, U+2029 and U+0085 raw, and ``str.splitlines()`` (and many log
  shippers) break lines there; they only ever occur inside JSON strings, so escaping them keeps
  the JSON valid and equal.
- ``cap_json``: a value whose JSON is longer than a cap becomes an explicit marker object that
  gives the original size and a preview, so a snippet cannot make a record or an output huge.
- ``visible``: terminal escape and control characters shown as escapes (``\\x1b``), so printed
  text cannot set a window title, clear the screen or write the clipboard (OSC 52).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["TRUNCATED_KEY", "cap_json", "json_line", "visible"]

_SPLITTERS_JSON_KEEPS = re.compile("[\u2028\u2029\x85]")
#: Controls a terminal acts on (C0 but newline and tab, DEL, C1), and the bidirectional
#: overrides and line separators that reorder or break what is shown.
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: The key of the marker object that stands in for a capped value.
TRUNCATED_KEY = "$truncated"


def json_line(value: Any, **dumps: Any) -> str:
    """``value`` as JSON on one line (no newline at the end), whatever its strings hold."""
    text = json.dumps(value, ensure_ascii=False, **dumps)
    return _SPLITTERS_JSON_KEEPS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def cap_json(value: Any, limit: int) -> Any:
    """``value`` if its compact JSON is at most ``limit`` bytes, else
    ``{"$truncated": {"bytes": <original size>, "shown": <preview size>}, "preview": "<JSON prefix>"}``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    if len(text) <= limit // 4:  # at most 4 bytes a character: surely within the cap
        return value
    data = text.encode("utf-8")
    if len(data) <= limit:
        return value
    preview = data[:limit].decode("utf-8", "ignore")
    return {TRUNCATED_KEY: {"bytes": len(data), "shown": len(preview.encode("utf-8"))}, "preview": preview}


def visible(text: str) -> str:
    """``text`` with terminal controls written as escapes; newlines and tabs stay."""
    return _INVISIBLE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
