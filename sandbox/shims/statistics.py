"""`statistics`: the public API (never `statistics.sys`, a plain module attribute)."""

from __future__ import annotations

import statistics
from typing import Any

from .base import public

NAME = "statistics"


def attrs() -> dict[str, Any]:
    return public(statistics)
