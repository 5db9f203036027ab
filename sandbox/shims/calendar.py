"""`calendar`: date arithmetic and text calendars. Left out: `setfirstweekday` (process-wide
state), the locale calendars (they call `setlocale`), and the `pr*` functions (they print to
the process's standard output, not the run's log)."""

from __future__ import annotations

import calendar
from typing import Any

from .base import pick

NAME = "calendar"


def attrs() -> dict[str, Any]:
    return pick(
        calendar,
        [
            "isleap", "leapdays", "weekday", "monthrange", "monthcalendar", "timegm", "month",
            "calendar", "firstweekday", "weekheader", "Calendar", "TextCalendar", "HTMLCalendar",
            "IllegalMonthError", "IllegalWeekdayError", "month_name", "month_abbr", "day_name",
            "day_abbr", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY",
            "SUNDAY", "Month", "Day",
        ],
    )
