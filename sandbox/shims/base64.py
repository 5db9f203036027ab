"""`base64`: encoders and decoders over bytes (no file variants: `encode`/`decode` take files)."""

from __future__ import annotations

import base64
from typing import Any

from .base import pick

NAME = "base64"


def attrs() -> dict[str, Any]:
    return pick(
        base64,
        [
            "b64encode", "b64decode", "standard_b64encode", "standard_b64decode",
            "urlsafe_b64encode", "urlsafe_b64decode", "b32encode", "b32decode", "b32hexencode",
            "b32hexdecode", "b16encode", "b16decode", "a85encode", "a85decode", "b85encode",
            "b85decode", "encodebytes", "decodebytes",
        ],
    )
