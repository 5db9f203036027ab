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


LYING_SECONDS = {
    "float subclass": "class S(float):\n    def __lt__(self, other):\n        return isinstance(other, float)\n"
                      "    def __float__(self):\n        return 40.0\ns = S(0.0)",
    "int subclass": "class S(int):\n    def __lt__(self, other):\n        return True\n"
                    "    def __float__(self):\n        return 40.0\n    def __index__(self):\n        return 40\ns = S(0)",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("seconds", LYING_SECONDS.values(), ids=LYING_SECONDS.keys())
async def test_sleep_checks_and_sleeps_the_same_plain_number(sb, backend, seconds):
    """The deadline check and the sleep read one exact copy of the number: a subclass that answers
    the check with its own `__lt__` and the sleep with its own `__float__` (40 s) held the host
    thread past the run's deadline, in-process."""
    code = f"import time\n{seconds}\nt0 = time.monotonic()\ntime.sleep(s)\nreturn 'slept'"
    result = await sb.run(code, backend=backend, wall_time=2.0)
    assert result.ok and result.value == "slept", result
