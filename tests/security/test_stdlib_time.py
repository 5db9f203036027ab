"""`time.sleep`: bounded by the run's wall-time limit; the run ends as a timeout and the host
stays responsive."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_sleep_past_the_wall_limit_times_out_and_the_host_keeps_ticking(sb):
    result, ticks, elapsed = await sb.run_with_ticker("import time\ntime.sleep(10**9)\nreturn 'woke'", wall_time=1.0)
    sb.assert_error(result, "timeout", "wall-time limit")
    assert ticks > 0
    await sb.assert_next_run_ok()


@pytest.mark.parametrize(("arg", "fragment"), [("-1", "non-negative"), ("float('nan')", "NaN"), ("'1'", "'str'")])
async def test_bad_sleep_lengths_are_refused(sb, arg, fragment):
    result = await sb.run(f"import time\ntime.sleep({arg})\nreturn 1")
    sb.assert_error(result, "exception", fragment)
