"""`urllib.parse` (and the `urllib` package holding it): splitting, joining, quoting and query
strings. `urlsplit` and the quoters cache process-wide, keyed on the arguments as passed, so
every function gets plain values copied by exact type (text, numbers, flags, tuples of them),
and anything else is refused. `urlencode` is a prelude (`sandbox/prelude/urllib_parse.rpy`): it
walks the snippet's query with the snippet's own rights and hands the quoting kernel only exact
`str`/`bytes` copies (the stdlib's stored a lying key in its process-wide `_Quoter` cache).
Nothing of `urllib.request` or `urllib.error`."""

from __future__ import annotations

import functools
import urllib.parse
from collections.abc import Callable
from typing import Any

from ..kernels import kernel
from .base import ShimContext, named_after, plain_str

NAME = "urllib.parse"
PER_RUN = True

_FUNCTIONS = (
    "quote", "quote_plus", "unquote", "unquote_plus", "quote_from_bytes", "unquote_to_bytes",
    "urlparse", "urlsplit", "urlunparse", "urlunsplit", "urljoin", "urldefrag", "parse_qs",
    "parse_qsl",
)


def _plain_arg(value: Any, nested: bool = False) -> Any:
    """An argument copied by exact type: text, numbers and flags as plain values, a tuple or
    list of those item by item (one level: `urlunsplit`'s parts; a list holding itself forty
    levels deep was 2**40 items to copy); anything else is a `TypeError`. What is not text must not reach the
    stdlib as it is: `urljoin`/`urldefrag` decode it with its own `decode` and hand the result to
    the process-wide `urlsplit` cache, which keeps it as a key."""
    if isinstance(value, (str, bytes, bytearray)):
        return plain_str(value)
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, (tuple, list)) and not nested:
        items = tuple.__iter__(value) if isinstance(value, tuple) else list.__iter__(value)
        return tuple(_plain_arg(item, nested=True) for item in items)
    raise TypeError(f"urllib.parse takes text, not {type(value).__name__}")


def _plain_args(fn: Callable[..., Any]) -> Callable[..., Any]:
    @named_after(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*map(_plain_arg, args), **{k: _plain_arg(v) for k, v in kwargs.items()})

    return call


#: The quoting kernel `urlencode` calls: exact plain data only.
_QUOTE_PLUS = kernel(urllib.parse.quote_plus)


@functools.cache
def _static() -> dict[str, Any]:
    return {
        **{name: _plain_args(getattr(urllib.parse, name)) for name in _FUNCTIONS},
        "ParseResult": urllib.parse.ParseResult,
        "SplitResult": urllib.parse.SplitResult,
        "DefragResult": urllib.parse.DefragResult,
    }


def build(ctx: ShimContext) -> dict[str, Any]:
    namespace = ctx.run_prelude("urllib_parse", NAME, {"quote_plus": _QUOTE_PLUS})
    return {**_static(), "urlencode": namespace["urlencode"]}
