"""`string`: the constants, `capwords` and a checked `Template`. `string.Formatter` is left out:
its `get_field` traverses attributes unchecked."""

from __future__ import annotations

import string
from typing import Any

from ..guards import CHECKED_REPLACEMENTS
from .base import pick

NAME = "string"


class Template(string.Template):
    """`string.Template` whose subclasses' pattern settings are made plain strings before the
    stdlib compiles them (it escapes `delimiter` through `re.escape`, see the `re` shim)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        for name in ("delimiter", "idpattern", "braceidpattern"):
            value = type.__getattribute__(cls, name)
            if isinstance(value, str):
                type.__setattr__(cls, name, str.__str__(value))
        flags = type.__getattribute__(cls, "flags")
        if isinstance(flags, int):
            # A lying int subclass would become part of `re`'s cache key (its `__eq__` then
            # runs whenever the host compiles the same pattern).
            type.__setattr__(cls, "flags", int.__int__(flags))
        super().__init_subclass__(**kwargs)


CHECKED_REPLACEMENTS.add(Template)


def attrs() -> dict[str, Any]:
    return pick(
        string,
        [
            "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
            "octdigits", "punctuation", "printable", "whitespace", "capwords",
        ],
    ) | {"Template": Template}
