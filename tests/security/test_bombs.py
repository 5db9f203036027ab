"""Resource bombs. Each runs with small limits while a host task ticks every 10 ms: the run
must end with the right kind, the host loop must stay alive (it ticks while a run that timed out
goes on), and the next run must succeed. No duration is asserted: speed lives in benchmarks/."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024

BOMBS = [
    pytest.param("while True:\n    pass", {"wall_time": 1.0}, ("timeout",), "wall-time limit of 1 s", id="infinite-loop"),
    pytest.param("while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass",
                 {"wall_time": 0.5}, ("timeout",), "wall-time limit", id="loop-swallowing-every-stop"),
    pytest.param("x = 'x' * (10 ** 10)\nreturn len(x)", {"memory": 64 * MIB}, ("memory",), "memory limit of 64 MiB", id="huge-string"),
    pytest.param("x = []\nwhile True:\n    x.append(' ' * 100000)", {"memory": 64 * MIB, "wall_time": 5.0}, ("memory",), "memory limit", id="growing-list"),
    pytest.param("return len(str(10 ** 10 ** 8))", {"wall_time": 1.0, "memory": 64 * MIB}, ("timeout", "memory"), "limit", id="huge-int"),
    pytest.param("def f(n):\n    return f(n + 1)\nreturn f(0)", {}, ("exception",), "RecursionError", id="recursion"),
    pytest.param("import re\nreturn bool(re.match(r'(a+)+$', 'a' * 64 + 'b'))", {"wall_time": 0.5}, ("timeout",), "wall-time limit", id="regex-backtracking"),
    pytest.param("while True:\n    print('x' * 1000)", {"max_output": 4096}, ("output-limit",), "printed more than", id="print-flood"),
    pytest.param("while True:\n    await tools.f(x=1)", {"max_calls": 30}, ("call-limit",), "more than 30 host calls", id="endless-host-calls"),
    pytest.param("import asyncio\nawait asyncio.gather(*[tools.f(x=i) for i in range(5000)])", {"max_calls": 30},
                 ("call-limit",), "more than 30 host calls", id="gather-flood"),
    pytest.param("import asyncio\nawait asyncio.sleep(10 ** 9)", {"wall_time": 0.5}, ("timeout",), "wall-time limit", id="sleep-forever"),
    pytest.param("import asyncio\nawait asyncio.sleep(float('inf'))", {"wall_time": 0.5}, ("timeout",), "wall-time limit", id="sleep-inf"),
    pytest.param("x = 0\nwhile True:\n    x += 1", {"wall_time": 5.0, "cpu_time": 0.5}, ("timeout",), "CPU-time limit", id="cpu-limit"),
    pytest.param("import hashlib\nreturn hashlib.pbkdf2_hmac('sha256', b'x', b'y', 10 ** 9).hex()", {"wall_time": 0.5},
                 ("timeout",), "wall-time limit", id="long-c-call"),
    pytest.param("x = list(range(10 ** 9))", {"memory": 64 * MIB}, ("memory",), "memory limit", id="huge-range-list"),
    pytest.param("class E(Exception):\n    def __str__(self):\n        while True:\n            pass\nraise E()",
                 {"wall_time": 0.5, "cpu_time": 1.0}, ("timeout",), "limit", id="exception-str-loops-after-main"),
    pytest.param("x = 'a' * 10\nfor i in range(40):\n    x = x + x\nreturn len(x)", {"memory": 64 * MIB}, ("memory",), "memory limit", id="doubling-string"),
]


@pytest.mark.parametrize(("code", "lims", "kinds", "fragment"), BOMBS)
async def test_worker_bombs(sb, code, lims, kinds, fragment):
    result, ticks, elapsed = await sb.run_with_ticker(code, **lims)
    assert result.error is not None, result
    assert result.error.kind in kinds, result.error
    assert fragment in result.error.message, result.error
    sb.assert_no_leak(result)
    # The host loop kept running while the run went on: a run that timed out lasted at least its
    # limit (0.5 s or more), in which a loop that is not blocked wakes the 10 ms ticker dozens
    # of times; a blocked one not at all. (No speed is asserted: only that the loop was alive.)
    if result.error.kind == "timeout":
        assert ticks >= 2, (ticks, elapsed)
    if "tools.f" in code:
        assert len(sb.spy.calls) <= lims["max_calls"]
    await sb.assert_next_run_ok()


INPROCESS_BOMBS = [
    pytest.param("while True:\n    pass", {"wall_time": 0.5}, "limit", id="loop"),
    pytest.param("return sum(range(10 ** 12))", {"wall_time": 0.5}, "limit", id="sum-huge-range"),
    pytest.param("return sorted(x for x in range(10 ** 12))", {"wall_time": 0.5}, "limit", id="sorted-genexp"),
    pytest.param("x = 0\nwhile True:\n    x += 1", {"max_operations": 100_000}, "more than 100000 operations", id="operation-budget"),
    pytest.param("def f():\n    while True:\n        pass\nreturn [f() for _ in range(3)]", {"wall_time": 0.5}, "limit", id="loop-in-function"),
]


@pytest.mark.parametrize(("code", "lims", "fragment"), INPROCESS_BOMBS)
async def test_inprocess_budget(sb, code, lims, fragment):
    result = await sb.run(code, backend="inprocess", **lims)
    sb.assert_error(result, "timeout", fragment)
    await sb.assert_next_run_ok(backend="inprocess")


LOOP_SWALLOWING_BUDGET = """
while True:
    try:
        for i in range(4095):
            pass
    except BaseException:
        pass
"""


def test_inprocess_loop_swallowing_budget_stops(isolated):
    report = isolated(LOOP_SWALLOWING_BUDGET, "state = 0", timeout=6.0, wall_time=0.5)
    assert not report["hung"], "the host process hung"
    assert report["result"]["error"]["kind"] == "timeout"


async def test_long_c_call_is_killed(sb):
    code = "import hashlib\nreturn hashlib.pbkdf2_hmac('sha256', b'x', b's', 10 ** 9).hex()"
    result, ticks, elapsed = await sb.run_with_ticker(code, wall_time=0.5, cpu_time=5)
    assert result.error is not None and result.error.kind == "timeout", result
    assert ticks >= 2, (ticks, elapsed)  # the host loop was alive during the C call
    await sb.assert_next_run_ok()
