"""`hashlib`: the hash constructors (loaded before confinement) and the algorithm names as frozen
sets, so no snippet can change what the host's `hashlib` reports."""

from __future__ import annotations

import hashlib
from typing import Any

from .base import pick

NAME = "hashlib"


def attrs() -> dict[str, Any]:
    return {
        **pick(
            hashlib,
            [
                "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256",
                "sha3_384", "sha3_512", "shake_128", "shake_256", "blake2b", "blake2s", "new",
                "pbkdf2_hmac",
            ],
        ),
        "algorithms_guaranteed": frozenset(hashlib.algorithms_guaranteed),
        "algorithms_available": frozenset(hashlib.algorithms_available),
    }
