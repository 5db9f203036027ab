"""datetime and time: `strptime` caches compiled formats process-wide, so a snippet str subclass
must not plant an entry the host's own parsing then uses; tzinfo callbacks see plain datetimes
and `tzname` only shapes strftime output.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


# == closed: _strptime's global regex cache keyed by a snippet str subclass ========================
#
# datetime.datetime.strptime / time.strptime reach `_strptime` (the `_INTERNAL_IMPORTS` path) and
# `_strptime._strptime` caches `_regex_cache[format] = compiled` with the caller's format object.
# A snippet str subclass hashing like "%Y-%m-%d" and equal to everything plants the regex for
# "%Y-%d-%m" under the host's key: the host's own later strptime("2020-01-02", "%Y-%m-%d") parses
# day and month swapped (silently wrong dates), and the snippet's __eq__ keeps running in the host
# after the run. Fix: pass `str.__str__(format)` (and the data string) in shims for time.strptime
# and a datetime.strptime wrapper, as `_plain_re` does for re.
def test_strptime_cache_poisoning_inprocess(isolated):
    check = (
        "import builtins, datetime\n"
        "n = getattr(builtins, 'probe_n', 0)\n"
        "builtins.probe_n = n + 1\n"
        "state = None if n == 0 else datetime.datetime.strptime('2020-01-02', '%Y-%m-%d').month"
    )
    code = """
import datetime
class S(str):
    def __hash__(self):
        return hash('%Y-%m-%d')
    def __eq__(self, o):
        return True
datetime.datetime.strptime('2020-02-01', S('%Y-%d-%m'))
return 1
"""
    report = isolated(code, check)
    assert report["after"] == 1, "the host's strptime parses day and month swapped"


STRPTIME_HARMLESS = {
    "strptime_time": ("import time\nreturn list(time.strptime('2020', '%Y'))[:1]", [2020]),
    "strptime_datetime": ("import datetime\nreturn str(datetime.datetime.strptime('2020-01-02', '%Y-%m-%d'))",
                          "2020-01-02 00:00:00"),
}


@pytest.mark.parametrize("name", sorted(STRPTIME_HARMLESS))
async def test_strptime_harmless(sb, name):
    code, expected = STRPTIME_HARMLESS[name]
    await sb.assert_harmless(code, expected, backend="inprocess")


async def test_tzinfo_tzname_replace_only_shapes_strftime_output(sb):
    code = """
import datetime
class S(str):
    def replace(self, a, b):
        return "%Y"
class Z(datetime.tzinfo):
    def utcoffset(self, d):
        return datetime.timedelta(0)
    def tzname(self, d):
        return S("Q%")
    def dst(self, d):
        return None
return datetime.datetime(2020, 1, 1, tzinfo=Z()).strftime("%Z|%z")
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == "2020|+0000"  # a format directive, nothing more
    sb.assert_no_leak(result)


DATETIME_CALLBACKS = [
    (
        "tzinfo callbacks",
        "import datetime\nseen = []\nclass Tz(datetime.tzinfo):\n    def utcoffset(self, dt):\n"
        "        seen.append(type(dt).__name__)\n        return datetime.timedelta(0)\n"
        "    def dst(self, dt):\n        return datetime.timedelta(0)\n    def tzname(self, dt):\n        return 'Z'\n"
        "d = datetime.datetime(2020, 1, 1, tzinfo=Tz())\nreturn [d.isoformat(), d.strftime('%Z'), seen[:1]]",
        ["2020-01-01T00:00:00+00:00", "Z", ["datetime"]],
    ),
]


@pytest.mark.parametrize("case", DATETIME_CALLBACKS, ids=[c[0] for c in DATETIME_CALLBACKS])
async def test_datetime_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)
