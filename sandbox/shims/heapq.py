"""`heapq`: pure functions over lists the snippet owns."""

from __future__ import annotations

import heapq
from typing import Any

from .base import public

NAME = "heapq"


def attrs() -> dict[str, Any]:
    return public(heapq)
