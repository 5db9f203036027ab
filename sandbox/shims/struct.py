"""`struct`: packing and unpacking bytes. `struct` caches compiled formats process-wide, keyed
on the format as passed, so the functions get a plain `str`/`bytes` format."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from .base import named_after, pick, plain_str

NAME = "struct"


def _plain_format(fn: Callable[..., Any]) -> Callable[..., Any]:
    @named_after(fn)
    def call(fmt: Any, *args: Any) -> Any:
        return fn(plain_str(fmt), *args)

    return call


def attrs() -> dict[str, Any]:
    return {
        **{name: _plain_format(getattr(struct, name))
           for name in ("pack", "unpack", "calcsize", "iter_unpack", "pack_into", "unpack_from")},
        **pick(struct, ["Struct", "error"]),
    }
