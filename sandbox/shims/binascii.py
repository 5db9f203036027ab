"""`binascii`: conversions between bytes and ASCII encodings, and checksums."""

from __future__ import annotations

import binascii
from typing import Any

from .base import pick

NAME = "binascii"


def attrs() -> dict[str, Any]:
    return pick(
        binascii,
        ["hexlify", "unhexlify", "b2a_hex", "a2b_hex", "b2a_base64", "a2b_base64", "crc32",
         "crc_hqx", "b2a_qp", "a2b_qp", "b2a_uu", "a2b_uu", "Error", "Incomplete"],
    )
