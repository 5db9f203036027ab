"""`zoneinfo`: `ZoneInfo` and its error. A confined worker cannot open the time-zone files, so
the template loads every zone before confinement (`preload`), and `ZoneInfo(key)` answers from
that table; unknown keys raise `ZoneInfoNotFoundError`.

A zone is a sandbox `tzinfo` holding the real zone in a private slot: the real class would
hand the snippet `clear_cache`, `no_cache` and its constructor (tz file reads in-process, and a
process-wide cache a lying `str` key can poison), also through `type(zone)` and `super()`. The
zones are loaded with `no_cache`, so they are not the host's cached ones either. The real zone only ever sees plain datetimes the shim builds (a snippet's datetime subclass would
otherwise be rebuilt, with the real zone as an argument, by the real `fromutc`).

Left out: `available_timezones` as a function (it walks the file system; the preloaded names are
offered instead), `reset_tzpath` and `TZPATH` (process-wide state), `ZoneInfo.no_cache`,
`clear_cache` and `from_file`.
"""

from __future__ import annotations

import datetime
import zoneinfo
from typing import Any

from ..crossing import CheckedMethods

NAME = "zoneinfo"

_ZONES: dict[str, ZoneInfo] = {}


class ZoneInfo(datetime.tzinfo, metaclass=CheckedMethods):
    """A preloaded time zone: `ZoneInfo(key)` is the one zone of that key. Its methods read the
    private slot of `self`, so read off the class they come behind the receiver check
    (`CheckedMethods`): a review called the raw `ZoneInfo.utcoffset` on an object of its own."""

    __slots__ = ("_zone",)

    def __new__(cls, key: Any) -> ZoneInfo:
        if cls is not ZoneInfo:
            raise TypeError("zoneinfo.ZoneInfo cannot be subclassed in the sandbox")
        if not isinstance(key, str):
            raise TypeError(f"ZoneInfo key must be a string, not '{type(key).__name__}'")
        key = str.__str__(key)
        if not _ZONES:
            preload()
        found = _ZONES.get(key)
        if found is None:
            raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}")
        return found

    @classmethod
    def _of(cls, zone: zoneinfo.ZoneInfo) -> ZoneInfo:
        self = datetime.tzinfo.__new__(cls)
        object.__setattr__(self, "_zone", zone)
        return self

    @property
    def key(self) -> str:
        key: str = self._zone.key
        return key

    def _plain(self, dt: Any) -> datetime.datetime | None:
        """`dt` as a plain datetime in the real zone (None stays None)."""
        if dt is None:
            return None
        if not isinstance(dt, datetime.datetime):
            raise TypeError("a datetime or None is required")
        return datetime.datetime(
            dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second, dt.microsecond,
            self._zone, fold=dt.fold,
        )

    def utcoffset(self, dt: Any) -> datetime.timedelta | None:
        return self._zone.utcoffset(self._plain(dt))

    def dst(self, dt: Any) -> datetime.timedelta | None:
        return self._zone.dst(self._plain(dt))

    def tzname(self, dt: Any) -> str | None:
        return self._zone.tzname(self._plain(dt))

    def fromutc(self, dt: Any) -> datetime.datetime:
        if not isinstance(dt, datetime.datetime):
            raise TypeError("fromutc() requires a datetime argument")
        if dt.tzinfo is not self:
            raise ValueError("fromutc: dt.tzinfo is not self")
        local = self._zone.fromutc(self._plain(dt))
        return datetime.datetime(
            local.year, local.month, local.day, local.hour, local.minute, local.second,
            local.microsecond, self, fold=local.fold,
        )

    def __str__(self) -> str:
        return self.key

    def __repr__(self) -> str:
        return f"zoneinfo.ZoneInfo(key={self.key!r})"

    def __reduce__(self) -> Any:
        return (ZoneInfo, (self.key,))

    def __copy__(self) -> ZoneInfo:
        return self

    def __deepcopy__(self, memo: Any) -> ZoneInfo:
        return self


ZoneInfo.__module__ = "zoneinfo"


def preload() -> None:
    """Load every zone the host has (called by the worker template, before confinement)."""
    keys = sorted(zoneinfo.available_timezones())
    if "UTC" not in keys:
        keys.append("UTC")
    for key in keys:
        try:
            # `no_cache`: the sandbox's zones are never the host's cached ones.
            _ZONES[key] = ZoneInfo._of(zoneinfo.ZoneInfo.no_cache(key))
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            pass


def available_timezones() -> set[str]:
    if not _ZONES:
        preload()
    return set(_ZONES)


def attrs() -> dict[str, Any]:
    return {
        "ZoneInfo": ZoneInfo,
        "ZoneInfoNotFoundError": zoneinfo.ZoneInfoNotFoundError,
        "available_timezones": available_timezones,
    }
