"""`fractions`: the `Fraction` class only (the module also holds `re`, `sys` and `math`)."""

from __future__ import annotations

import fractions
from typing import Any

from .base import pick

NAME = "fractions"


def attrs() -> dict[str, Any]:
    return pick(fractions, ["Fraction"])
