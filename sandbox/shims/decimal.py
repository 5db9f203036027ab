"""`decimal`: `Decimal`, `Context`, the signals and the rounding constants."""

from __future__ import annotations

import decimal
from typing import Any

from ._base import pick

NAME = "decimal"


def attrs() -> dict[str, Any]:
    return pick(
        decimal,
        [
            "Decimal", "Context", "DecimalException", "InvalidOperation", "DivisionByZero",
            "Inexact", "Rounded", "Overflow", "Underflow", "ROUND_CEILING", "ROUND_DOWN",
            "ROUND_FLOOR", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP",
            "ROUND_05UP", "MAX_PREC", "MAX_EMAX", "MIN_EMIN",
        ],
    )
