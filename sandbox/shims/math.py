"""`math`: the whole public API; every member is a pure function or a constant."""

from __future__ import annotations

import math
from typing import Any

from .base import public

NAME = "math"


def attrs() -> dict[str, Any]:
    return public(math)
