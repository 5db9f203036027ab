"""`zoneinfo`: zones come from the table loaded before confinement; a key is never a path."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_zones_load_in_a_confined_worker(sb, backend):
    code = "import zoneinfo, datetime\nz = zoneinfo.ZoneInfo('Europe/Paris')\nreturn str(datetime.datetime(2024, 7, 1, tzinfo=z).utcoffset())"
    result = await sb.run(code, backend=backend)
    assert result.ok and result.value == "2:00:00", result


@pytest.mark.parametrize("key", ["SECRET_PATH", "'../../../etc/passwd'", "'/etc/localtime'"])
async def test_a_key_is_never_a_path(sb, key):
    result = await sb.run(f"import zoneinfo\nreturn str(zoneinfo.ZoneInfo({key}))")
    sb.assert_error(result, "exception", "ZoneInfoNotFoundError")


async def test_global_tz_state_is_not_offered(sb):
    result = await sb.run("import zoneinfo\nzoneinfo.reset_tzpath(['/tmp'])\nreturn 1")
    sb.assert_error(result, "exception", "has no attribute 'reset_tzpath'")
