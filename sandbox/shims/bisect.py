"""`bisect`: pure functions over sequences the snippet owns."""

from __future__ import annotations

import bisect
from typing import Any

from .base import public

NAME = "bisect"


def attrs() -> dict[str, Any]:
    return public(bisect)
