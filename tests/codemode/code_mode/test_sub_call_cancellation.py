"""Sub-calls the program itself cancels (a timeout around the await, ``Task.cancel``): the
tool sees the cancellation, its slot and its place in line are freed at once, and its record
says the program cancelled it; on both backends, in one-shot runs and in sessions."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from bridgekit import events

import sandbox
from codemode import EVENT_CODE_DISPATCH, RUN_CODE, CodeMode, Registry, define_tool

pytestmark = pytest.mark.anyio

#: Generous: a run that never cancels its stuck call waits for the whole limit, then fails.
LIMITS = sandbox.Limits(wall_time=60, cpu_time=30)
#: Longer than any run lasts: a call that sleeps this long only ends by being cancelled.
FOREVER = 3600.0


def make_registry(log: list[tuple[str, str]], *, safe: bool) -> Registry:
    """One tool, ``wait``: sleeps ``delay`` seconds and logs how it ended."""

    async def body(args: dict[str, Any], ctx: Any) -> str:
        tag = args["tag"]
        log.append(("start", tag))
        try:
            await anyio.sleep(args["delay"])
        except anyio.get_cancelled_exc_class():
            log.append(("cancelled", tag))
            raise
        log.append(("end", tag))
        return tag

    registry = Registry(mode="code")
    registry.register(define_tool(
        name="wait", description="Wait a while.", execute=body, is_concurrency_safe=safe,
        parameters={"tag": {"type": "string", "required": True}, "delay": {"type": "number", "required": True}},
        output={"schema": {"type": "string"}},
    ))
    return registry


async def handle(mode: CodeMode, code: str, session: str | None) -> Any:
    call = {"id": "c1", "name": RUN_CODE, "arguments": {"code": code, "description": "Cancel a call"}}
    if session is None:
        return await mode.handle(call)
    return await mode.handle(call, session=session)


async def run_once(log: list[tuple[str, str]], code: str, backend: str, session: str | None, *,
                   safe: bool, slots: int) -> tuple[CodeMode, Any]:
    """One `run_code` call with the `wait` tool, one-shot or in a session; the mode (for its
    events) and the model-facing result."""
    mode = CodeMode(make_registry(log, safe=safe), backend=backend, limits=LIMITS,
                    max_parallel_sub_calls=slots, sessions=session is not None)
    async with mode:
        out = await handle(mode, code, session)
    assert not out.is_error, out.text
    return mode, out


PLACES = [pytest.param(backend, session, id=f"{backend}-{'session' if session else 'run'}")
          for backend in ("inprocess", "worker") for session in (None, "conv")]

WAIT_FOR = f"""
import asyncio
try:
    await asyncio.wait_for(tools.wait(tag="stuck", delay={FOREVER}), 0.2)
except TimeoutError:
    print("gave up")
return await tools.wait(tag="next", delay=0)
"""


@pytest.mark.parametrize(("backend", "session"), PLACES)
@pytest.mark.parametrize("safe", [False, True], ids=["serial", "parallel"])
async def test_a_timed_out_call_is_cancelled_on_the_host_and_the_next_call_runs(
        backend: str, session: str | None, safe: bool) -> None:
    log: list[tuple[str, str]] = []
    # Serial tools run one at a time; parallel ones get a single slot: either way, the next call
    # could not start while the stuck one still held its turn or its slot.
    mode, out = await run_once(log, WAIT_FOR, backend, session, safe=safe, slots=1)
    assert out.text == 'gave up\nnext'
    # The tool saw the cancellation before the next call started.
    assert log == [("start", "stuck"), ("cancelled", "stuck"), ("start", "next"), ("end", "next")]
    first, second = events(mode, EVENT_CODE_DISPATCH)
    assert first["call_id"] == "c1:code:1" and first["status"] == "cancelled" and first["is_error"]
    assert first["content"][0]["text"] == "the program cancelled wait while it ran (its await was cancelled)"
    assert second["call_id"] == "c1:code:2" and second["status"] == "ok"


CANCEL_TASKS = f"""
import asyncio
stuck = [asyncio.create_task(tools.wait(tag=f"t{{i}}", delay={FOREVER})) for i in range(3)]
await asyncio.sleep(0.2)
for task in stuck:
    task.cancel()
results = await asyncio.gather(*stuck, return_exceptions=True)
print([type(r).__name__ for r in results])
async with asyncio.timeout(0.2) as scope:
    pass
try:
    async with asyncio.timeout(0.2):
        await tools.wait(tag="t3", delay={FOREVER})
except TimeoutError:
    print("timeout")
return await tools.wait(tag="last", delay=0)
"""


@pytest.mark.parametrize(("backend", "session"), PLACES)
async def test_cancelled_tasks_and_timeouts_cancel_their_calls(backend: str, session: str | None) -> None:
    log: list[tuple[str, str]] = []
    mode, out = await run_once(log, CANCEL_TASKS, backend, session, safe=True, slots=3)
    assert out.text == "['CancelledError', 'CancelledError', 'CancelledError']\ntimeout\nlast"
    assert sorted(tag for kind, tag in log if kind == "cancelled") == ["t0", "t1", "t2", "t3"]
    assert ("end", "last") in log and not any(kind == "end" and tag != "last" for kind, tag in log)
    statuses = {e["call_id"]: e["status"] for e in events(mode, EVENT_CODE_DISPATCH)}
    assert statuses == {"c1:code:1": "cancelled", "c1:code:2": "cancelled", "c1:code:3": "cancelled",
                        "c1:code:4": "cancelled", "c1:code:5": "ok"}


QUEUED = f"""
import asyncio
first = asyncio.create_task(tools.wait(tag="holder", delay=0.5))
queued = asyncio.create_task(tools.wait(tag="queued", delay={FOREVER}))
await asyncio.sleep(0.1)
queued.cancel()
print(await first)
return await tools.wait(tag="after", delay=0)
"""


async def test_a_call_cancelled_while_it_waits_for_a_slot_never_runs() -> None:
    log: list[tuple[str, str]] = []
    mode = CodeMode(make_registry(log, safe=True), backend="inprocess", limits=LIMITS, max_parallel_sub_calls=1)
    out = await handle(mode, QUEUED, None)
    assert not out.is_error, out.text
    assert out.text == "holder\nafter"
    assert [tag for kind, tag in log if kind == "start"] == ["holder", "after"]
    by_id = {e["call_id"]: e for e in events(mode, EVENT_CODE_DISPATCH)}
    assert by_id["c1:code:2"]["status"] == "abandoned"
    assert by_id["c1:code:2"]["content"][0]["text"] == (
        "the program cancelled wait before it was dispatched (its await was cancelled)")


async def test_calls_still_running_when_the_run_ends_keep_the_run_end_record() -> None:
    # Cancelled by the run's end, not by the program: the record says the run is over.
    log: list[tuple[str, str]] = []
    mode = CodeMode(make_registry(log, safe=True), backend="inprocess", limits=LIMITS)
    code = f"import asyncio\nt = asyncio.create_task(tools.wait(tag='left', delay={FOREVER}))\nawait asyncio.sleep(0.1)\nreturn 1"
    out = await handle(mode, code, None)
    assert not out.is_error, out.text
    (event,) = events(mode, EVENT_CODE_DISPATCH)
    assert event["status"] == "cancelled"
    assert event["content"][0]["text"] == "run_code run is over (completed); wait was cancelled"
    assert log == [("start", "left"), ("cancelled", "left")]
