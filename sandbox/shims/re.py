"""`re`: the matching functions, `Pattern`, `Match`, `error` and the flags.

`re` keeps a process-wide cache keyed on (pattern, flags) as passed, and `re._compile_repl` one
keyed on the replacement template: a snippet's `str`/`int` subclass with a lying
`__eq__`/`__hash__` could poison what the host's own `re` calls get back (in-process). Every
function therefore gets a plain `str`/`bytes` pattern and template and plain `int` flags.
`re.escape` gets a plain string: it calls `pattern.translate(<re's own table>)`, which a `str`
subclass could use to get (and change) that shared table.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..jsonvalue import type_name
from .base import named_after, pick, plain_str

NAME = "re"

#: The `re` functions whose pattern and flags a snippet passes.
FUNCTIONS = ("compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split")

#: Where `flags` sits among the arguments after the pattern, per function.
_FLAGS_POSITION = {
    "compile": 0, "search": 1, "match": 1, "fullmatch": 1, "findall": 1, "finditer": 1,
    "sub": 3, "subn": 3, "split": 2,
}


def _plain_flags(flags: Any) -> re.RegexFlag:
    """Flags as an exact `RegexFlag`: `re` keys its process-wide cache on them, and anything
    else (a review's object with `__and__`/`__or__` and a `__hash__`/`__eq__` that matched the
    default flags) stayed in that cache after the run, answering the host's own lookups."""
    if not isinstance(flags, int):
        raise TypeError(f"flags must be an int (re.I, re.M, ...), not '{type_name(type(flags))}'")
    return re.RegexFlag(int.__int__(flags))


#: What a pattern may be once `plain_str` has copied it: what `re`'s cache may be keyed on.
_PATTERN_TYPES = frozenset({str, bytes, re.Pattern})


def plain_re(fn: Callable[..., Any]) -> Callable[..., Any]:
    @named_after(fn)
    def call(pattern: Any, *args: Any, **kwargs: Any) -> Any:
        pattern = plain_str(pattern)
        if type(pattern) not in _PATTERN_TYPES:
            # CPython's words, said before its cache lookup hashes (and compares) the object.
            raise TypeError("first argument must be string or compiled pattern")
        if fn.__name__ in ("sub", "subn"):
            if "repl" in kwargs:
                kwargs["repl"] = plain_str(kwargs["repl"])
            elif args:
                args = (plain_str(args[0]), *args[1:])
        if "flags" in kwargs:
            kwargs["flags"] = _plain_flags(kwargs["flags"])
        elif fn.__name__ in _FLAGS_POSITION and len(args) > _FLAGS_POSITION[fn.__name__]:
            i = _FLAGS_POSITION[fn.__name__]
            args = (*args[:i], _plain_flags(args[i]), *args[i + 1 :])
        return fn(pattern, *args, **kwargs)

    return call


def plain_escape(pattern: Any) -> Any:
    return re.escape(plain_str(pattern))


def attrs() -> dict[str, Any]:
    return {
        **{name: plain_re(getattr(re, name)) for name in FUNCTIONS},
        "escape": plain_escape,
        **pick(
            re,
            [
                "error", "Pattern", "Match", "IGNORECASE", "I", "MULTILINE", "M",
                "DOTALL", "S", "VERBOSE", "X", "ASCII", "A", "UNICODE", "U", "NOFLAG",
            ],
        ),
    }
