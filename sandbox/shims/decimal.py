"""`decimal`: `Decimal`, contexts and signals. `getcontext`, `setcontext` and `localcontext`
work on the run's own context (the execution installs it around every step of the snippet and
keeps what `setcontext` put there). `DefaultContext` is left out (changing it changes every
new context of the host's threads); `BasicContext` and `ExtendedContext` are copies of this
run's own."""

from __future__ import annotations

import decimal
from typing import Any

from .base import ShimContext, pick

NAME = "decimal"
PER_RUN = True


_CONTEXT_FIELDS = ("prec", "rounding", "Emin", "Emax", "capitals", "clamp", "flags", "traps")


def _require_run(ctx: ShimContext) -> None:
    if not ctx.stepping():
        raise RuntimeError("the run is over: decimal contexts are only available while it runs")


def build(ctx: ShimContext) -> dict[str, Any]:
    def getcontext() -> decimal.Context:
        _require_run(ctx)
        return decimal.getcontext()

    def setcontext(context: Any, /) -> None:
        _require_run(ctx)
        decimal.setcontext(context)

    class localcontext:  # noqa: N801 - the stdlib's name
        """`decimal.localcontext`, restoring the previous context on exit only while the run is
        running: a generator suspended inside the block and freed after the run would otherwise
        set the host thread's context when its `with` unwinds. One class per run, so it holds
        the run's shim context without exposing it."""

        __slots__ = ("_new", "_saved")

        def __init__(self, ctx_: Any = None, **kwargs: Any) -> None:
            base = decimal.getcontext() if ctx_ is None else ctx_
            if not isinstance(base, decimal.Context):
                raise TypeError("optional argument must be a context")
            new = decimal.Context.copy(base)  # a real Context, whatever a subclass's copy() says
            for name, value in kwargs.items():
                if name not in _CONTEXT_FIELDS:
                    raise TypeError(f"'{name}' is an invalid keyword argument for this function")
                setattr(new, name, value)
            self._new, self._saved = new, None

        def __enter__(self) -> decimal.Context:
            _require_run(ctx)
            self._saved = decimal.getcontext()
            decimal.setcontext(self._new)
            return self._new

        def __exit__(self, *exc: Any) -> bool:
            if ctx.stepping() and self._saved is not None:
                decimal.setcontext(self._saved)
            return False

    localcontext.__module__ = "decimal"
    localcontext.__qualname__ = "localcontext"

    return {
        **pick(
            decimal,
            [
                "Decimal", "Context", "DecimalException", "InvalidOperation", "DivisionByZero",
                "Inexact", "Rounded", "Overflow", "Underflow", "Clamped", "Subnormal",
                "FloatOperation", "ConversionSyntax", "DivisionImpossible", "DivisionUndefined",
                "InvalidContext", "DecimalTuple", "ROUND_CEILING", "ROUND_DOWN",
                "ROUND_FLOOR", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP",
                "ROUND_05UP", "MAX_PREC", "MAX_EMAX", "MIN_EMIN", "MIN_ETINY", "HAVE_THREADS",
                "HAVE_CONTEXTVAR",
            ],
        ),
        "getcontext": getcontext,
        "setcontext": setcontext,
        "localcontext": localcontext,
        "BasicContext": decimal.BasicContext.copy(),
        "ExtendedContext": decimal.ExtendedContext.copy(),
    }
