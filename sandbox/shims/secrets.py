"""`secrets`: tokens and choices from the kernel's random source (`getrandom`, allowed by the
jail). `SystemRandom` is left out (`random.Random` covers seeded use)."""

from __future__ import annotations

import secrets
from typing import Any

from .base import pick

NAME = "secrets"


def attrs() -> dict[str, Any]:
    return pick(
        secrets,
        ["token_bytes", "token_hex", "token_urlsafe", "choice", "randbelow", "randbits", "compare_digest"],
    )
