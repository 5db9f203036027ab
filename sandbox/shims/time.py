"""`time`: clocks, conversions and formatting. `time.strptime` gets plain strings: `_strptime`
caches compiled formats process-wide, keyed on the format object, which a `str` subclass could
make lie. `time.sleep` blocks for at most the run's wall-time limit, all its calls together (the limit
then ends the run)."""

from __future__ import annotations

import math
import time
from typing import Any

from ._base import ShimContext, pick, plain_str

NAME = "time"
PER_RUN = True


def plain_strptime(data: Any, fmt: Any = "%a %b %d %H:%M:%S %Y") -> Any:
    return time.strptime(plain_str(data), plain_str(fmt))


def build(ctx: ShimContext) -> dict[str, Any]:
    ctx.state.setdefault("sleep_left", float(ctx.wall_time))

    def sleep(seconds: Any, /) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an integer")
        if math.isnan(seconds):
            raise ValueError("Invalid value NaN (not a number)")
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        # The run's sleeps add up against one allowance: many short ones from C code
        # (`list(map(time.sleep, [4.9] * 100))`) pass no loop check of the in-process backend.
        left = ctx.state["sleep_left"]
        if seconds < left:
            ctx.state["sleep_left"] = left - seconds
            time.sleep(float(seconds))
            return
        # Longer than the run may last: sleep out the limit, then end the run as a timeout (a
        # worker's own timer usually does so first).
        from ..control import stop
        from ..execution import wall_time_message

        ctx.state["sleep_left"] = 0.0
        time.sleep(left)
        raise stop("timeout", wall_time_message(ctx.wall_time))

    return {**_static(), "sleep": sleep}


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
        "strptime": plain_strptime,
    }
