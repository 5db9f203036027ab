"""`zlib`: compression in memory. `decompress` is bounded: its output may not exceed
`MAX_OUTPUT` bytes (a few KiB can expand to gigabytes), and the streaming objects, whose
`decompress` has no such bound by default, are left out."""

from __future__ import annotations

import zlib
from typing import Any

from .base import pick

NAME = "zlib"

#: The most `decompress` produces; more raises `zlib.error`.
MAX_OUTPUT = 64 * 1024 * 1024


def decompress(data: Any, /, wbits: int = zlib.MAX_WBITS, bufsize: int = zlib.DEF_BUF_SIZE) -> bytes:
    stream = zlib.decompressobj(wbits)
    out = stream.decompress(data, MAX_OUTPUT)
    if stream.unconsumed_tail:
        raise zlib.error(f"decompressed data exceeds the sandbox limit of {MAX_OUTPUT} bytes")
    out += stream.flush()
    if not stream.eof:
        raise zlib.error("Error -5 while decompressing data: incomplete or truncated stream")
    return out


def attrs() -> dict[str, Any]:
    return {
        **pick(
            zlib,
            ["compress", "crc32", "adler32", "error", "MAX_WBITS", "DEFLATED", "DEF_BUF_SIZE",
             "DEF_MEM_LEVEL", "Z_BEST_COMPRESSION", "Z_BEST_SPEED", "Z_DEFAULT_COMPRESSION",
             "Z_DEFAULT_STRATEGY", "Z_FILTERED", "Z_HUFFMAN_ONLY", "Z_RLE", "Z_FIXED",
             "ZLIB_VERSION"],
        ),
        "decompress": decompress,
    }
