"""`decimal`: `Decimal`, contexts and signals. `getcontext`, `setcontext` and `localcontext`
work on the run's own context (the execution installs it around every step of the snippet and
keeps what `setcontext` put there). `DefaultContext` is left out (changing it changes every
new context of the host's threads); `BasicContext` and `ExtendedContext` are copies of this
run's own."""

from __future__ import annotations

import decimal
from typing import Any

from ._base import ShimContext, pick

NAME = "decimal"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    return {
        **pick(
            decimal,
            [
                "Decimal", "Context", "DecimalException", "InvalidOperation", "DivisionByZero",
                "Inexact", "Rounded", "Overflow", "Underflow", "Clamped", "Subnormal",
                "FloatOperation", "DecimalTuple", "ROUND_CEILING", "ROUND_DOWN",
                "ROUND_FLOOR", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP",
                "ROUND_05UP", "MAX_PREC", "MAX_EMAX", "MIN_EMIN", "MIN_ETINY", "HAVE_THREADS",
                "HAVE_CONTEXTVAR", "getcontext", "setcontext", "localcontext",
            ],
        ),
        "BasicContext": decimal.BasicContext.copy(),
        "ExtendedContext": decimal.ExtendedContext.copy(),
    }
