"""`time.sleep` is bounded by the run's deadline, not per call: many sleeps that each fit in the
wall-time limit cannot add up past it (in-process nothing else would stop a C-level `map`)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

MANY_SLEEPS = """
import time
def nap(s):
    time.sleep(s)
    print('slept')
list(map(nap, [0.9] * 5))
return 'done'
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_sleeps_cannot_add_up_past_the_wall_time(sb, backend):
    result = await sb.run(MANY_SLEEPS, backend=backend, wall_time=1.0)
    sb.assert_error(result, "timeout", "wall-time limit of 1 s")
    assert result.value is None
    # At most the first 0.9 s sleep fits before the deadline; the second one ends the run.
    assert result.logs.count("slept") <= 1, result.logs


async def test_a_caught_timeout_does_not_let_sleeping_go_on_in_process(sb):
    code = """
import time
for _ in range(5):
    try:
        time.sleep(0.9)
    except BaseException:
        print('caught')
return 'done'
"""
    result = await sb.run(code, backend="inprocess", wall_time=1.0)
    sb.assert_error(result, "timeout")
    assert result.value is None
    assert result.logs.count("caught") <= 1, result.logs
