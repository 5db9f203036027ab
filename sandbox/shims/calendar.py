"""`calendar`: date arithmetic and text calendars. Left out: `setfirstweekday` (process-wide
state), the locale calendars (they call `setlocale`), and the module's `pr*` functions (they
print to the process's standard output, not the run's log). `TextCalendar`'s own `pr*`
methods print to the run's log (`output.run_log`), and only in a step of a run."""

from __future__ import annotations

import calendar
from typing import Any

from ..guards import CHECKED_REPLACEMENTS
from ..output import run_log
from .base import pick

NAME = "calendar"


class TextCalendar(calendar.TextCalendar):
    """`calendar.TextCalendar`, whose `pr*` methods write to the run's log. The stdlib's print
    to `sys.stdout`, which is the run's log only while a step runs: CPython may call one later
    (a `functools.partial` a snippet left where a freed generator calls `close`), in the host,
    and a review's then printed to the host's stdout."""

    def prweek(self, theweek: Any, width: Any) -> None:
        """Print a single week (no newline)."""
        log = run_log()
        print(self.formatweek(theweek, width), end="", file=log)

    def prmonth(self, theyear: Any, themonth: Any, w: Any = 0, l: Any = 0) -> None:  # noqa: E741 - the stdlib's name
        """Print a month's calendar."""
        log = run_log()
        print(self.formatmonth(theyear, themonth, w, l), end="", file=log)

    def pryear(self, theyear: Any, w: Any = 0, l: Any = 0, c: Any = 6, m: Any = 3) -> None:  # noqa: E741 - the stdlib's name
        """Print a year's calendar."""
        log = run_log()
        print(self.formatyear(theyear, w, l, c, m), end="", file=log)


TextCalendar.__module__ = "calendar"
CHECKED_REPLACEMENTS.add(TextCalendar)  # the real class stays out of every MRO a snippet sees


def attrs() -> dict[str, Any]:
    return {
        **pick(
            calendar,
            [
                "isleap", "leapdays", "weekday", "monthrange", "monthcalendar", "timegm", "month",
                "calendar", "firstweekday", "weekheader", "Calendar", "HTMLCalendar",
                "IllegalMonthError", "IllegalWeekdayError", "month_name", "month_abbr", "day_name",
                "day_abbr", "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY",
                "SUNDAY", "Month", "Day",
            ],
        ),
        "TextCalendar": TextCalendar,
    }
