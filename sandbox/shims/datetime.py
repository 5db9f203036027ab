"""`datetime`: the date and time classes (never `datetime.sys`). `strptime`, which caches on the
format string it is given, is handed out as a plain-string wrapper by the attribute guard."""

from __future__ import annotations

import datetime
from typing import Any

from .base import pick

NAME = "datetime"


def attrs() -> dict[str, Any]:
    return pick(
        datetime,
        ["date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR", "UTC"],
    )
