"""`io`: the in-memory streams `StringIO` and `BytesIO` (what `csv` and `tomllib.load` read and
write). Nothing that opens a file or wraps a descriptor; `BytesIO.getbuffer` is refused (a
`memoryview` of the stream's memory).

The sandbox's `BytesIO` holds a real one in a private slot instead of subclassing it: a subclass
would hand out the real `getbuffer` through `super(io.BytesIO, b)` and its `__mro__`.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from ..guards import CheckedMethods, seal

NAME = "io"

#: The real `BytesIO` methods the sandbox's forwards as they are (none returns the stream).
_FORWARDED = (
    "close", "detach", "fileno", "flush", "getvalue", "isatty", "read", "read1", "readable",
    "readinto", "readinto1", "readline", "readlines", "seek", "seekable", "tell", "truncate",
    "writable", "write", "writelines",
)


class BytesIO(metaclass=CheckedMethods):
    """`io.BytesIO` without `getbuffer`."""

    __slots__ = ("_stream",)

    def __init__(self, initial_bytes: Any = b"") -> None:
        object.__setattr__(self, "_stream", io.BytesIO(initial_bytes))

    def getbuffer(self) -> Any:
        raise io.UnsupportedOperation("BytesIO.getbuffer() is not available in the sandbox")

    @property
    def closed(self) -> bool:
        closed: bool = self._stream.closed
        return closed

    def __iter__(self) -> BytesIO:
        self._stream.__iter__()  # raises on a closed stream, as the real one does
        return self

    def __next__(self) -> bytes:
        line: bytes = next(self._stream)
        return line

    def __enter__(self) -> BytesIO:
        self._stream.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stream.__exit__(*exc)

    def __copy__(self) -> BytesIO:
        copied = BytesIO(self.getvalue())
        copied.seek(self.tell())
        return copied

    def __deepcopy__(self, memo: Any) -> BytesIO:
        return self.__copy__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("cannot pickle 'BytesIO' in the sandbox")


def _forward(name: str) -> Callable[..., Any]:
    def method(self: BytesIO, *args: Any) -> Any:
        return getattr(self._stream, name)(*args)

    method.__name__ = name
    method.__qualname__ = f"BytesIO.{name}"
    method.__doc__ = getattr(io.BytesIO, name).__doc__
    return method


for _name in _FORWARDED:
    setattr(BytesIO, _name, _forward(_name))
del _name

BytesIO.__module__ = "io"
# Its methods store and read the real stream in `_stream`: a subclass's property would catch it.
seal(BytesIO, "io")


def attrs() -> dict[str, Any]:
    return {
        "StringIO": io.StringIO,
        "BytesIO": BytesIO,
        "UnsupportedOperation": io.UnsupportedOperation,
        "SEEK_SET": io.SEEK_SET,
        "SEEK_CUR": io.SEEK_CUR,
        "SEEK_END": io.SEEK_END,
    }
