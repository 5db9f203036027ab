"""`time`: clocks, conversions and formatting. `time.strptime` gets plain strings: `_strptime`
caches compiled formats process-wide, keyed on the format object, which a `str` subclass could
make lie."""

from __future__ import annotations

import time
from typing import Any

from ._base import pick, plain_str

NAME = "time"


def plain_strptime(data: Any, fmt: Any = "%a %b %d %H:%M:%S %Y") -> Any:
    return time.strptime(plain_str(data), plain_str(fmt))


def attrs() -> dict[str, Any]:
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
