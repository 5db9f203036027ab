"""`io`: the in-memory streams `StringIO` and `BytesIO` (what `csv` and `tomllib.load` read and
write). Nothing that opens a file or wraps a descriptor; `BytesIO.getbuffer` is refused (a
`memoryview` of the stream's memory)."""

from __future__ import annotations

import io
from typing import Any

NAME = "io"


class BytesIO(io.BytesIO):
    """`io.BytesIO` without `getbuffer`."""

    def getbuffer(self) -> Any:
        raise io.UnsupportedOperation("BytesIO.getbuffer() is not available in the sandbox")


BytesIO.__module__ = "io"


def attrs() -> dict[str, Any]:
    return {
        "StringIO": io.StringIO,
        "BytesIO": BytesIO,
        "UnsupportedOperation": io.UnsupportedOperation,
        "SEEK_SET": io.SEEK_SET,
        "SEEK_CUR": io.SEEK_CUR,
        "SEEK_END": io.SEEK_END,
    }
