"""`io`: the in-memory streams `StringIO` and `BytesIO` (what `csv` and `tomllib.load` read and
write). Nothing that opens a file or wraps a descriptor; `BytesIO.getbuffer` is refused (a
`memoryview` of the stream's memory).

The sandbox's `StringIO` and `BytesIO` hold a real one in a private slot instead of subclassing
it: a subclass of `BytesIO` would hand out the real `getbuffer` through `super(io.BytesIO, b)`
and its `__mro__`, and a subclass of either got the C `IOBase` finalizer, which calls `close` by
name when the object is freed, outside the run. Neither can be subclassed.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from types import FunctionType
from typing import Any

from ..guards import CheckedMethods, seal

NAME = "io"

#: The real streams' methods the sandbox's forward as they are (none returns the stream).
_FORWARDED = (
    "close", "detach", "fileno", "flush", "getvalue", "isatty", "read", "readable", "readline",
    "readlines", "seek", "seekable", "tell", "truncate", "writable", "write", "writelines",
)
_BYTES_ONLY = ("read1", "readinto", "readinto1")
_TEXT_PROPERTIES = ("encoding", "errors", "line_buffering", "newlines")


def _closed(self: Any) -> bool:
    closed: bool = self._stream.closed
    return closed


def _iter(self: Any) -> Any:
    self._stream.__iter__()  # raises on a closed stream, as the real one does
    return self


def _next(self: Any) -> Any:
    return next(self._stream)


def _enter(self: Any) -> Any:
    self._stream.__enter__()
    return self


def _exit(self: Any, *exc: Any) -> None:
    self._stream.__exit__(*exc)


def _deepcopy(self: Any, memo: Any) -> Any:
    return self.__copy__()


def _reduce_ex(self: Any, protocol: Any) -> Any:
    raise TypeError(f"cannot pickle '{type(self).__name__}' in the sandbox")


#: What the sandbox's streams share (each holds the real stream in its private slot `_stream`):
#: put into each class, not inherited, so their `__mro__` is a real stream's, less the real one.
_SHARED = {
    "closed": _closed, "__iter__": _iter, "__next__": _next, "__enter__": _enter, "__exit__": _exit,
    "__deepcopy__": _deepcopy, "__reduce_ex__": _reduce_ex,
}


class BytesIO(metaclass=CheckedMethods):
    """`io.BytesIO` without `getbuffer` (a `memoryview` of the stream's memory; a subclass would
    also hand out the real one through `super(io.BytesIO, b)`)."""

    __slots__ = ("_stream",)

    def __init__(self, initial_bytes: Any = b"") -> None:
        object.__setattr__(self, "_stream", io.BytesIO(initial_bytes))

    def getbuffer(self) -> Any:
        raise io.UnsupportedOperation("BytesIO.getbuffer() is not available in the sandbox")

    def __copy__(self) -> BytesIO:
        copied = BytesIO(self.getvalue())
        copied.seek(self.tell())
        return copied


class StringIO(metaclass=CheckedMethods):
    """`io.StringIO`. A snippet subclass of the real one got the C `IOBase` finalizer, which calls
    the instance's `close` by name whenever the garbage collector frees it: outside the run, in
    the host, for a `close` that was C code (a review's `functools.partial`)."""

    __slots__ = ("_stream", "_newline")

    def __init__(self, initial_value: Any = "", newline: Any = "\n") -> None:
        object.__setattr__(self, "_stream", io.StringIO(initial_value, newline))
        object.__setattr__(self, "_newline", newline)

    def __copy__(self) -> StringIO:
        copied = StringIO(newline=self._newline)
        copied.write(self.getvalue())
        copied.seek(self.tell())
        return copied


def _forward(cls: type, name: str, real: type) -> Callable[..., Any]:
    def method(self: Any, *args: Any) -> Any:
        return getattr(self._stream, name)(*args)

    method.__name__ = name
    method.__qualname__ = f"{cls.__name__}.{name}"
    method.__doc__ = getattr(real, name).__doc__
    return method


def _property(name: str, real: type) -> property:
    def read(self: Any) -> Any:
        return getattr(self._stream, name)

    read.__name__ = name
    return property(read, doc=getattr(real, name).__doc__)


for _cls in (BytesIO, StringIO):
    for _name, _method in _SHARED.items():
        if _name == "closed":
            setattr(_cls, _name, property(_method))
        else:
            _method = FunctionType(_method.__code__, _method.__globals__, _name)
            _method.__qualname__ = f"{_cls.__name__}.{_name}"
            setattr(_cls, _name, _method)
for _name in (*_FORWARDED, *_BYTES_ONLY):
    setattr(BytesIO, _name, _forward(BytesIO, _name, io.BytesIO))
for _name in _FORWARDED:
    setattr(StringIO, _name, _forward(StringIO, _name, io.StringIO))
for _name in _TEXT_PROPERTIES:
    setattr(StringIO, _name, _property(_name, io.StringIO))
del _name, _method

for _cls in (BytesIO, StringIO):
    _cls.__module__ = "io"
    # Their methods store and read the real stream in `_stream`: a subclass's property would
    # catch it.
    seal(_cls, "io")
del _cls


def attrs() -> dict[str, Any]:
    return {
        "StringIO": StringIO,
        "BytesIO": BytesIO,
        "UnsupportedOperation": io.UnsupportedOperation,
        "SEEK_SET": io.SEEK_SET,
        "SEEK_CUR": io.SEEK_CUR,
        "SEEK_END": io.SEEK_END,
    }
