"""Pacing of sub-calls: overlap of safe tools, serial unsafe ones, post-execute order, run end."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from bridgekit import events, make_mode, sleeper

import sandbox
from codemode import EVENT_CODE_DISPATCH, EVENT_CODE_DISPATCH_START, RUN_CODE

pytestmark = pytest.mark.anyio


def peak(log: list[tuple[str, str, float]]) -> int:
    running = best = 0
    for kind, _, _ in log:
        running += 1 if kind == "start" else -1
        best = max(best, running)
    return best


async def run(mode: Any, code: str, call_id: str = "c1") -> Any:
    return await mode.handle({"id": call_id, "name": RUN_CODE, "arguments": {"code": code, "description": "Pace calls"}})


GATHER6 = "import asyncio\nreturn await asyncio.gather(*(tools.{name}(tag=str(i)) for i in range(6)))"


async def test_safe_calls_overlap_up_to_max_parallel_sub_calls() -> None:
    log: list[Any] = []
    mode = make_mode(sleeper("nap", log), max_parallel_sub_calls=3)
    out = await run(mode, GATHER6.format(name="nap"))
    assert not out.is_error, out.text
    assert peak(log) == 3


async def test_unsafe_calls_run_one_at_a_time() -> None:
    log: list[Any] = []
    mode = make_mode(sleeper("write", log, safe=False, delay=0.005))
    out = await run(mode, GATHER6.format(name="write"))
    assert not out.is_error
    assert peak(log) == 1
    assert [tag for kind, tag, _ in log if kind == "start"] == [str(i) for i in range(6)]


async def test_post_execute_runs_in_submission_order() -> None:
    log: list[Any] = []
    mode = make_mode(sleeper("nap", log))
    seen: list[str] = []
    mode.registry.on_post_execute(lambda ctx, result: seen.append(ctx.arguments["tag"]) if ctx.name == "nap" else None)
    # Later calls sleep less, 50 ms apart: they end in reverse order even when a busy machine
    # starts them tens of milliseconds apart.
    code = "import asyncio\nreturn await asyncio.gather(*(tools.nap(tag=str(i), delay=0.25 - i * 0.05) for i in range(5)))"
    out = await run(mode, code)
    assert not out.is_error, out.text
    assert [tag for kind, tag, _ in log if kind == "end"] == ["4", "3", "2", "1", "0"]
    assert seen == ["0", "1", "2", "3", "4"]


async def test_queued_calls_are_abandoned_when_the_run_times_out() -> None:
    log: list[Any] = []
    limits = sandbox.Limits(wall_time=0.3)
    mode = make_mode(sleeper("slow", log, delay=5), max_parallel_sub_calls=1, limits=limits)
    out = await run(mode, "import asyncio\nprint('before')\nawait asyncio.gather(*(tools.slow(tag=str(i)) for i in range(3)))")
    assert out.is_error
    assert out.text.startswith("Error: code run failed (timeout): ")
    # The gather's three call tasks were still pending: cancelled and counted, as tasks are.
    assert out.text.endswith("Captured output:\nbefore\n"
                             "note: 3 tasks were still pending when the program ended and were cancelled")
    starts = events(mode, EVENT_CODE_DISPATCH_START)
    done = events(mode, EVENT_CODE_DISPATCH)
    assert [e["call_id"] for e in starts] == [e["call_id"] for e in sorted(done, key=lambda e: e["call_id"])]
    by_id = {e["call_id"]: e for e in done}
    assert by_id["c1:code:1"]["status"] == "cancelled"
    assert by_id["c1:code:1"]["content"][0]["text"] == "run_code run is over (timeout); slow was cancelled"
    for n in (2, 3):
        event = by_id[f"c1:code:{n}"]
        assert event["status"] == "abandoned" and event["is_error"]
        assert event["content"][0]["text"] == "run_code run is over (timeout); slow not dispatched"
    # Abandoned calls waited for a slot: their bodies never started.
    assert [tag for kind, tag, _ in log] == ["0"]


async def test_cancelling_the_outer_call_mid_run_still_writes_every_event() -> None:
    log: list[Any] = []
    mode = make_mode(sleeper("slow", log, delay=5), max_parallel_sub_calls=2)
    async with anyio.create_task_group() as tg:
        tg.start_soon(run, mode, "import asyncio\nawait asyncio.gather(*(tools.slow(tag=str(i)) for i in range(3)))")
        # Cancel once both slots are busy and the third call waits for one (not after a fixed
        # time, which a loaded machine may not have reached yet).
        with anyio.fail_after(30):
            while sum(1 for kind, _, _ in log if kind == "start") < 2:
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    starts = events(mode, EVENT_CODE_DISPATCH_START)
    done = events(mode, EVENT_CODE_DISPATCH)
    assert len(starts) == len(done) == 3
    assert sorted(e["status"] for e in done) == ["abandoned", "cancelled", "cancelled"]
    assert all("run_code run is over (cancelled)" in e["content"][0]["text"] for e in done)
    results = [e for e in mode.registry.events.read() if e["type"] == "tool/result" and e["call_id"] == "c1"]
    assert results and results[0]["meta"]["error"] == "cancelled"


async def test_in_flight_calls_are_cancelled_when_the_snippet_returns_early() -> None:
    log: list[Any] = []
    mode = make_mode(sleeper("slow", log, delay=5))
    code = """
import asyncio
async def quick():
    await asyncio.sleep(0.05)
    raise ValueError("stop")
try:
    await asyncio.gather(tools.slow(tag="a"), quick())
except ValueError:
    pass
return "done"
"""
    out = await run(mode, code)
    # The failed gather's call task was still waiting on the host: cancelled, and counted.
    assert out.text == "note: 1 task was still pending when the program ended and was cancelled\ndone"
    (event,) = events(mode, EVENT_CODE_DISPATCH)
    assert event["status"] == "cancelled"
    assert event["content"][0]["text"] == "run_code run is over (completed); slow was cancelled"
