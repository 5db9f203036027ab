"""`time`: clocks, conversions and formatting. `time.strptime` gets plain strings: `_strptime`
caches compiled formats process-wide, keyed on the format object, which a `str` subclass could
make lie. `time.sleep` blocks for at most the time left before the run's deadline (which then
ends the run)."""

from __future__ import annotations

import math
import time
from typing import Any

from ..control import RunOverError, after_run_stop, refuse_while_collecting
from .base import ShimContext, pick, plain_str

NAME = "time"
PER_RUN = True


def _strptime_time(data_string: Any, format: Any = "%a %b %d %H:%M:%S %Y") -> Any:
    # Named and shaped like CPython's `_strptime._strptime_time`, whose signature errors
    # `time.strptime` shows.
    refuse_while_collecting()  # `_strptime` may hold its lock below us (`control`)
    return time.strptime(plain_str(data_string), plain_str(format))


def strptime(*args: Any, **kwargs: Any) -> Any:
    """`time.strptime` with plain strings: positional only, as the C function is."""
    if kwargs:
        raise TypeError("strptime() takes no keyword arguments")
    return _strptime_time(*args)


def build(ctx: ShimContext) -> dict[str, Any]:

    def sleep(seconds: Any, /) -> None:
        seconds = _plain_seconds(seconds)
        if not ctx.stepping() and ctx.phase != "unbound":
            # Not this run's thread, not in a step, or between a session's runs: never block a
            # host thread (a review's late sleep blocked the host's loop after a session run).
            raise RunOverError()
        if math.isnan(seconds):
            raise ValueError("Invalid value NaN (not a number)")
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        left = ctx.deadline - time.monotonic()
        if seconds < left:
            time.sleep(seconds)
            return
        # Past the run's deadline (however many sleeps came before): sleep out what is left,
        # then end the run as a timeout (a worker's own timer usually does so first).
        time.sleep(max(0.0, left))
        raise ctx.expire() if ctx.expire is not None else after_run_stop()

    return {**_static(), "sleep": sleep}


def _plain_seconds(seconds: Any) -> float:
    """`seconds` as an exact `float`, made without running any of its code: the deadline check
    and the sleep must read the same number (an `int` or `float` subclass answered the check with
    its own `__lt__` and the sleep with its own `__float__`, and the host thread slept past the
    run's deadline)."""
    if isinstance(seconds, float):
        return float.__float__(seconds)
    if isinstance(seconds, int) and not isinstance(seconds, bool):
        return float(int.__index__(seconds))
    raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an integer")


def _static() -> dict[str, Any]:
    return {
        **pick(
            time,
            [
                "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
                "process_time", "process_time_ns", "gmtime", "localtime", "mktime", "strftime",
                "asctime", "ctime", "struct_time", "timezone", "altzone", "daylight",
            ],
        ),
        "strptime": strptime,
    }
