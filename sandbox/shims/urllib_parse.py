"""`urllib.parse` (and the `urllib` package holding it): splitting, joining, quoting and query
strings. `urlsplit` and the quoters cache process-wide, keyed on the arguments as passed, so
every function gets plain strings. Nothing of `urllib.request` or `urllib.error`."""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import Any

from .base import named_after, plain_str

NAME = "urllib.parse"

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


def urlencode(query: Any, doseq: bool = False, safe: Any = "", encoding: Any = None,
              errors: Any = None) -> str:
    return urllib.parse.urlencode(query, doseq, plain_str(safe), encoding, errors)


def attrs() -> dict[str, Any]:
    return {
        **{name: _plain_args(getattr(urllib.parse, name)) for name in _FUNCTIONS},
        "urlencode": urlencode,
        "ParseResult": urllib.parse.ParseResult,
        "SplitResult": urllib.parse.SplitResult,
        "DefragResult": urllib.parse.DefragResult,
    }
