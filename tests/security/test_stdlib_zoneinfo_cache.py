"""`zoneinfo` zones are sandbox objects: the real `ZoneInfo` class, its process-wide cache,
`clear_cache`, `no_cache` and its constructor (tz file reads in-process) stay out of reach, also
through `type(zone)`, `super()` and a datetime subclass the real `fromutc` would rebuild."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: F5: a lying `str` key poisons the real class's cache for the host's later lookups.
CACHE_POISON = """
import zoneinfo
class L(str):
    def __hash__(self):
        return hash('Europe/Berlin')
    def __eq__(self, other):
        return True
Z = type(zoneinfo.ZoneInfo('UTC'))
ROUTE
return 'poisoned'
"""
ROUTES = {
    "type-clear-cache": "Z.clear_cache()\nZ(L('Asia/Tokyo'))",
    "type-no-cache": "Z.no_cache(L('Asia/Tokyo'))",
    "super-no-cache": "super(Z, zoneinfo.ZoneInfo('UTC')).no_cache(L('Asia/Tokyo'))",
    "mro-base": "Z.__mro__[1].clear_cache()",
}
EXPECTED = {
    "type-clear-cache": "clear_cache",
    "type-no-cache": "no_cache", "super-no-cache": "no_cache", "mro-base": "clear_cache",
}
HOST_CHECK = "import zoneinfo\nstate = zoneinfo.ZoneInfo('Europe/Berlin').key"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_the_real_zoneinfo_class_is_out_of_reach(sb, backend, route):
    result = await sb.run(CACHE_POISON.replace("ROUTE", ROUTES[route]), backend=backend)
    sb.assert_error(result, "exception", EXPECTED[route])


#: The constructor answers from the preloaded table with a plain copy of the key: the lying key
#: finds the zone it spells, and nothing reaches the real cache.
CONSTRUCTOR = "return [str(Z(L('Asia/Tokyo'))), type(Z(L('UTC')).key).__name__]"


@pytest.mark.parametrize("route", [*sorted(ROUTES), "constructor"])
def test_the_host_zone_cache_is_unpoisoned_in_process(isolated, route):
    if route == "constructor":
        report = isolated(CACHE_POISON.replace("ROUTE", CONSTRUCTOR), HOST_CHECK)
        assert report["result"]["value"] == ["Asia/Tokyo", "str"], report["result"]
    else:
        report = isolated(CACHE_POISON.replace("ROUTE", ROUTES[route]), HOST_CHECK)
        assert report["result"]["error"]["kind"] == "exception", report["result"]
    assert not report["hung"]
    assert report["before"] == report["after"] == "Europe/Berlin"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_datetime_subclass_never_receives_the_real_zone(sb, backend):
    # The real `fromutc` rebuilds a datetime subclass with its own tzinfo as an argument: the
    # shim hands the real zone only plain datetimes it builds itself.
    code = """
import datetime, zoneinfo
seen = []
class D(datetime.datetime):
    def __init__(self, *args, **kwargs):
        seen.extend(args)
        seen.extend(kwargs.values())
z = zoneinfo.ZoneInfo('Europe/Paris')
u = D(2024, 10, 27, 1, 30, tzinfo=datetime.timezone.utc)
local = u.astimezone(z)
d = D(2024, 7, 1, 12, tzinfo=z)
offsets = [str(d.utcoffset()), d.tzname(), str(d.dst())]
zones = [a for a in seen if isinstance(a, datetime.tzinfo)]
return [local.isoformat(), local.fold, offsets, all(a is z or a is datetime.timezone.utc for a in zones)]
"""
    await sb.assert_harmless(
        code, ["2024-10-27T02:30:00+01:00", 1, ["2:00:00", "CEST", "1:00:00"], True], backend=backend
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_zones_behave_as_zoneinfo(sb, backend):
    code = """
import copy, datetime, zoneinfo
z = zoneinfo.ZoneInfo('Europe/Paris')
return [z is zoneinfo.ZoneInfo('Europe/Paris'), isinstance(z, zoneinfo.ZoneInfo), str(z), repr(z),
        z.key, copy.deepcopy(z) is z, copy.copy(z) is z,
        datetime.datetime(2024, 1, 1, tzinfo=z).isoformat()]
"""
    expected = [True, True, "Europe/Paris", "zoneinfo.ZoneInfo(key='Europe/Paris')", "Europe/Paris",
                True, True, "2024-01-01T00:00:00+01:00"]
    await sb.assert_harmless(code, expected, backend=backend)
    result = await sb.run("import zoneinfo\nclass Z(zoneinfo.ZoneInfo):\n    pass\nreturn str(Z('UTC'))",
                          backend=backend)
    sb.assert_error(result, "exception", "cannot be subclassed")
