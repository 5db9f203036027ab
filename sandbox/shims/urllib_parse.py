"""`urllib.parse` (and the `urllib` package holding it): splitting, joining, quoting and query
strings. `urlsplit` and the quoters cache process-wide, keyed on the arguments as passed, so
every function gets plain strings. `urlencode` is a prelude (`sandbox/prelude/urllib_parse.rpy`):
it walks the snippet's query with the snippet's own rights and hands the quoting kernel only
exact `str`/`bytes` copies (the stdlib's stored a lying key in its process-wide `_Quoter`
cache). Nothing of `urllib.request` or `urllib.error`."""

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


def _plain_args(fn: Callable[..., Any]) -> Callable[..., Any]:
    @named_after(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*map(plain_str, args), **{k: plain_str(v) for k, v in kwargs.items()})

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
