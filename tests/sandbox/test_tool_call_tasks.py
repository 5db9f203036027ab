"""A pending tool call is a coroutine to the snippet: every asyncio entry point that takes a
coroutine takes one. Cancelling the await of a call cancels it on the host: the binding sees
the cancellation and `sandbox.call_abandoned()` says the snippet did it. On both backends and in
sessions."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sandbox_helpers import BINDINGS, run

import sandbox
from sandbox import Limits

#: A call that sleeps this long only ends by being cancelled; runs get a wall-time limit that
#: still holds on a machine many times slower, and fail (not hang) if the cancel never comes.
FOREVER = 3600.0
LIMITS = Limits(wall_time=60, cpu_time=30)


@pytest.mark.parametrize(
    ("code", "value"),
    [
        pytest.param("t = asyncio.create_task(tools.echo(x=1))\nreturn [await t, t.done()]", [1, True],
                     id="create_task"),
        pytest.param("async with asyncio.TaskGroup() as tg:\n    a = tg.create_task(tools.echo(x=1))\n"
                     "    b = tg.create_task(tools.echo(x=2), name='second')\n"
                     "return [a.result(), b.result(), b.get_name()]", [1, 2, "second"], id="taskgroup"),
        pytest.param("f = asyncio.ensure_future(tools.echo(x=3))\nreturn [type(f).__name__, await f]", ["Task", 3],
                     id="ensure_future"),
        pytest.param("t = asyncio.create_task(tools.echo(x=1))\nr = asyncio.ensure_future(t) is t\nawait t\nreturn r", True,
                     id="ensure_future-task"),
        pytest.param("g = asyncio.gather(tools.echo(x=1))\nreturn [asyncio.ensure_future(g) is g, await g]",
                     [True, [1]], id="ensure_future-gather"),
        pytest.param("return await asyncio.wait_for(tools.echo(x=4), 30)", 4, id="wait_for"),
        pytest.param("return await asyncio.shield(tools.echo(x=5))", 5, id="shield"),
        pytest.param("done, pending = await asyncio.wait([tools.echo(x=6), tools.echo(x=7)])\n"
                     "return [sorted(t.result() for t in done), len(pending)]", [[6, 7], 0], id="wait"),
        pytest.param("return sorted([await f for f in asyncio.as_completed([tools.echo(x=8), tools.echo(x=9)])])",
                     [8, 9], id="as_completed"),
        pytest.param("return await asyncio.gather(tools.echo(x=1), tools.echo(x=2))", [1, 2], id="gather"),
        pytest.param("async with asyncio.timeout(30):\n    return await tools.echo(x=10)", 10, id="timeout"),
        pytest.param("c = tools.echo(x=1)\nr = [asyncio.iscoroutine(c), asyncio.iscoroutine(1)]\nawait c\nreturn r",
                     [True, False], id="iscoroutine"),
    ],
)
def test_a_tool_call_is_accepted_wherever_a_coroutine_is(code: str, value: Any, backend: str) -> None:
    result = run("import asyncio\n" + code, backend)
    assert result.error is None, result.error
    assert result.value == value
    assert result.logs == []  # no "never awaited" warning: each call ran


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param("c = tools.echo(x=1)\nawait c\nasyncio.create_task(c)",
                     "RuntimeError: this tool call was already awaited; call the tool again", id="awaited-twice"),
        pytest.param("asyncio.create_task(1)", "TypeError: create_task() needs a coroutine, got a 'int'",
                     id="not-a-coroutine"),
        pytest.param("asyncio.ensure_future(1)",
                     "TypeError: An asyncio.Future, a coroutine or an awaitable is required", id="ensure-not-awaitable"),
    ],
)
def test_what_is_not_a_fresh_coroutine_is_refused(code: str, message: str, backend: str) -> None:
    result = run("import asyncio\n" + code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.splitlines()[0] == message


def test_a_call_dropped_by_a_closing_task_group_never_runs(backend: str) -> None:
    calls: list[Any] = []

    async def record(x: Any = None) -> Any:
        calls.append(x)
        return x

    code = """
import asyncio
tg = asyncio.TaskGroup()
async with tg:
    pass
try:
    tg.create_task(tools.record(x=1))
except RuntimeError as e:
    print(e)
"""
    result = run(code, backend, bindings={"record": record})
    assert result.error is None, result.error
    # The group refuses a task once it is done; the call is closed unmade, with no warning.
    assert result.logs == ["TaskGroup is shutting down"]
    assert calls == []


class Stuck:
    """A binding that waits forever and records how it ended, and what `call_abandoned` said."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any, bool]] = []

    async def __call__(self, x: Any = None) -> Any:
        self.log.append(("start", x, sandbox.call_abandoned()))
        try:
            await anyio.sleep(FOREVER)
        except anyio.get_cancelled_exc_class():
            self.log.append(("cancelled", x, sandbox.call_abandoned()))
            raise
        return x


CANCELLING = """
import asyncio
try:
    await asyncio.wait_for(tools.stuck(x="wait_for"), 0.1)
except TimeoutError:
    print("wait_for timed out")
try:
    async with asyncio.timeout(0.1):
        await tools.stuck(x="timeout")
except TimeoutError:
    print("timeout expired")
t = asyncio.create_task(tools.stuck(x="task"))
await asyncio.sleep(0.1)
t.cancel()
try:
    await t
except asyncio.CancelledError:
    print("task cancelled", t.cancelled())
g = asyncio.gather(tools.stuck(x="gather"))
await asyncio.sleep(0.1)
g.cancel()
try:
    await g
except asyncio.CancelledError:
    print("gather cancelled")
return await tools.echo(x="after")
"""


def test_cancelling_the_await_cancels_the_host_call(backend: str) -> None:
    stuck = Stuck()
    result = run(CANCELLING, backend, bindings={**BINDINGS, "stuck": stuck}, limits=LIMITS)
    assert result.error is None, result.error
    assert result.value == "after"
    assert result.logs == ["wait_for timed out", "timeout expired", "task cancelled True", "gather cancelled"]
    # Each call started, then was cancelled as the snippet gave up on it (the cancel may reach
    # the host after the snippet's next call started: nothing waits for it).
    for tag in ["wait_for", "timeout", "task", "gather"]:
        assert [(kind, abandoned) for kind, x, abandoned in stuck.log if x == tag] == [
            ("start", False), ("cancelled", True)]
    assert len(stuck.log) == 8


def test_cancelling_the_await_cancels_the_host_call_in_a_session(backend: str) -> None:
    stuck = Stuck()

    async def go() -> list[sandbox.RunResult]:
        async with sandbox.open_session(backend) as session:
            bindings = {**BINDINGS, "stuck": stuck}
            first = await session.run("import asyncio\nkept = 1", bindings=bindings, limits=LIMITS)
            second = await session.run(CANCELLING, bindings=bindings, limits=LIMITS)
            third = await session.run("return kept", bindings=bindings, limits=LIMITS)
            return [first, second, third]

    first, second, third = anyio.run(go)
    assert first.error is None and second.error is None and third.error is None, (first, second, third)
    assert second.value == "after" and third.value == 1
    for tag in ["wait_for", "timeout", "task", "gather"]:
        assert [(kind, abandoned) for kind, x, abandoned in stuck.log if x == tag] == [
            ("start", False), ("cancelled", True)]


def test_a_call_left_running_at_the_end_is_cancelled_by_the_run_not_the_snippet(backend: str) -> None:
    stuck = Stuck()
    code = "import asyncio\nt = asyncio.create_task(tools.stuck(x=1))\nawait asyncio.sleep(0.1)\nreturn 2"
    result = run(code, backend, bindings={"stuck": stuck}, limits=LIMITS)
    assert result.error is None and result.value == 2
    assert stuck.log[0] == ("start", 1, False)
    # Cancelled as the run ended: not something the snippet abandoned.
    assert stuck.log[1:] in ([], [("cancelled", 1, False)])


def test_a_call_made_and_cancelled_before_it_started_never_runs(backend: str) -> None:
    stuck = Stuck()
    code = ("import asyncio\nt = asyncio.create_task(tools.stuck(x=1))\nt.cancel()\n"
            "try:\n    await t\nexcept asyncio.CancelledError:\n    return 'cancelled'")
    result = run(code, backend, bindings={"stuck": stuck}, limits=LIMITS)
    assert result.error is None and result.value == "cancelled"
    assert stuck.log == []


def test_an_answer_that_crosses_the_cancel_is_dropped(backend: str) -> None:
    # The binding finishes just as the snippet gives up on it: the snippet sees its timeout, and
    # the late answer wakes nothing.
    async def late(x: Any = None) -> Any:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.2)
        return x

    code = ("import asyncio\ntry:\n    await asyncio.wait_for(tools.late(x=1), 0.05)\nexcept TimeoutError:\n"
            "    print('timed out')\nawait asyncio.sleep(0.3)\nreturn await tools.echo(x=2)")
    result = run(code, backend, bindings={**BINDINGS, "late": late}, limits=LIMITS)
    assert result.error is None, result.error
    assert (result.logs, result.value) == (["timed out"], 2)


def test_call_abandoned_is_false_outside_a_call() -> None:
    assert sandbox.call_abandoned() is False
