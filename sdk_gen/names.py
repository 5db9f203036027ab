"""Tool and argument names: wire names become Python method names, injectively.

Wire names come from tool servers and may be anything (`fs.read-file`, `2fa`, `class`). The
model calls methods, so each wire name gets a valid ASCII identifier, and the map back is kept so
the bridge can route a call to the right wire name. Non-ASCII letters are replaced too: Python
NFKC-normalises identifiers, so `ﬁle` and `file` would otherwise name the same attribute.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["AWAITED_HELPERS", "RESERVED_METHODS", "is_keyword_name", "map_names", "sanitize_name"]

#: Helpers the bridge puts on the namespace; a tool named like one gets another method name.
RESERVED_METHODS = frozenset({"describe", "list", "search"})
#: The helpers that are host calls, so a snippet must await them like a tool.
AWAITED_HELPERS = frozenset({"search"})

_INVALID_RUN = re.compile(r"[^0-9A-Za-z_]+")
#: Names the `Tools` class body reads in its annotations: a method called `dict` would make a
#: later `-> dict[str, Any]` subscript the method.
_ANNOTATION_NAMES = frozenset({"Any", "Literal", "NotRequired", "bool", "dict", "float", "int", "str", "tuple"})


def sanitize_name(name: str) -> str:
    """Return the method name a wire name would get on its own (before de-duplication).

    Accents are dropped (`café` -> `cafe`), other non-ASCII runs become `_`. Always a valid,
    non-keyword ASCII identifier that is not a namespace helper and not a
    dunder name (which would break the `Tools` protocol class).
    """
    decomposed = unicodedata.normalize("NFKD", str(name))
    text = "".join(c for c in decomposed if not unicodedata.combining(c))
    text = _INVALID_RUN.sub("_", text)
    if not text.strip("_"):
        text = "tool" + text
    if text[0].isdigit():
        text = "tool_" + text
    if text.startswith("__"):
        text = "tool" + text
    if keyword.iskeyword(text) or text in RESERVED_METHODS or text in _ANNOTATION_NAMES:
        text += "_"
    return text


def map_names(wire_names: Iterable[str]) -> dict[str, str]:
    """Map each wire name to a unique method name; the result is injective and order-free.

    Names that are already valid keep themselves. The others take their sanitised form, with
    `_2`, `_3`, ... appended on a clash, assigned in sorted wire-name order so that the same
    set of names always gives the same map.
    """
    names = sorted(set(wire_names))
    mapping: dict[str, str] = {}
    taken: set[str] = set()
    for wire in names:
        if sanitize_name(wire) == wire:
            mapping[wire] = wire
            taken.add(wire)
    for wire in names:
        if wire in mapping:
            continue
        base = candidate = sanitize_name(wire)
        suffix = 2
        while candidate in taken:
            candidate = f"{base}_{suffix}"
            suffix += 1
        mapping[wire] = candidate
        taken.add(candidate)
    return dict(sorted(mapping.items()))


def is_keyword_name(key: object) -> bool:
    """Tell whether an argument name can be written as a keyword argument in a method.

    ASCII only (NFKC again), no keywords, not `self`, and no leading `__`, which Python would
    mangle inside the `Tools` class body.
    """
    return (
        isinstance(key, str)
        and key.isascii()
        and key.isidentifier()
        and not keyword.iskeyword(key)
        and key != "self"
        and not key.startswith("__")
    )
