"""`zoneinfo`: `ZoneInfo` and its error. A confined worker cannot open the time-zone files, so
the template loads every zone before confinement (`preload`), and `ZoneInfo(key)` answers from
that table; unknown keys raise `ZoneInfoNotFoundError`. Left out: `available_timezones` as a
function (it walks the file system; the preloaded names are offered instead), `reset_tzpath`
and `TZPATH` (process-wide state)."""

from __future__ import annotations

import zoneinfo
from typing import Any

NAME = "zoneinfo"

_ZONES: dict[str, zoneinfo.ZoneInfo] = {}


def preload() -> None:
    """Load every zone the host has (called by the worker template, before confinement)."""
    for key in sorted(zoneinfo.available_timezones()):
        try:
            _ZONES[key] = zoneinfo.ZoneInfo(key)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            pass
    if "UTC" not in _ZONES:
        try:
            _ZONES["UTC"] = zoneinfo.ZoneInfo("UTC")
        except (zoneinfo.ZoneInfoNotFoundError, OSError):
            pass


def ZoneInfo(key: Any) -> zoneinfo.ZoneInfo:  # noqa: N802 - the stdlib's name
    if not isinstance(key, str):
        raise TypeError(f"ZoneInfo key must be a string, not '{type(key).__name__}'")
    key = str.__str__(key)
    if not _ZONES:
        preload()
    found = _ZONES.get(key)
    if found is None:
        raise zoneinfo.ZoneInfoNotFoundError(f"No time zone found with key {key}")
    return found


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
