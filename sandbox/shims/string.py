"""`string`: the constants, `capwords` and `Template`. `Template` is a prelude
(`sandbox/prelude/string.rpy`, a port of CPython's): placeholders are looked up in the snippet's
mapping as its own code, and a subclass's pattern settings are compiled with the `re` shim (the
stdlib's `__init_subclass__` handed a lying `delimiter` to the real `re.escape`, which gave it
`re`'s own translation table). `string.Formatter` is left out: its `get_field` traverses
attributes unchecked."""

from __future__ import annotations

import functools
import string
from typing import Any

from .base import ShimContext, pick

NAME = "string"
PER_RUN = True


@functools.cache
def _static() -> dict[str, Any]:
    return pick(
        string,
        [
            "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
            "octdigits", "punctuation", "printable", "whitespace", "capwords",
        ],
    )


def build(ctx: ShimContext) -> dict[str, Any]:
    namespace = ctx.run_prelude("string", NAME, {})
    return {**_static(), "Template": namespace["Template"]}
