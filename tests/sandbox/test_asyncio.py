"""The sandbox's asyncio on its own scheduler: tasks, locks, queues, timeouts, task groups,
cancellation and the run's limits, the same on both backends."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from sandbox_helpers import run

from sandbox import Limits


class InFlight:
    """A binding that counts how many of its calls run at once on the host."""

    def __init__(self) -> None:
        self.now = 0
        self.most = 0
        self.calls = 0

    async def __call__(self, x: Any = None) -> Any:
        self.now += 1
        self.calls += 1
        self.most = max(self.most, self.now)
        try:
            await anyio.sleep(0.005)
        finally:
            self.now -= 1
        return x


def test_semaphore_bounds_host_calls_in_flight(backend: str) -> None:
    f = InFlight()
    code = (
        "import asyncio\nsem = asyncio.Semaphore(3)\n"
        "async def one(x):\n    async with sem:\n        return await tools.f(x=x)\n"
        "return await asyncio.gather(*(one(i) for i in range(10)))"
    )
    result = run(code, backend, bindings={"f": f})
    assert result.ok, result
    assert result.value == list(range(10))
    assert f.calls == 10
    assert f.most == 3  # never more than the semaphore allows, and it did run them in parallel


def test_without_a_semaphore_the_calls_overlap(backend: str) -> None:
    f = InFlight()
    code = "import asyncio\nreturn await asyncio.gather(*(tools.f(x=i) for i in range(6)))"
    result = run(code, backend, bindings={"f": f})
    assert result.ok, result
    assert f.most == 6


def test_create_task_runs_concurrently_and_reports(backend: str) -> None:
    code = (
        "import asyncio\norder = []\n"
        "async def job(n):\n    order.append(('start', n))\n    await asyncio.sleep(0)\n    return n * 2\n"
        "t = asyncio.create_task(job(1), name='first')\n"
        "before = t.done()\n"
        "try:\n    t.result()\nexcept asyncio.InvalidStateError:\n    order.append('not yet')\n"
        "r = await t\n"
        "return [before, r, t.done(), t.result(), t.exception(), t.cancelled(), t.get_name(), order, "
        "isinstance(t, asyncio.Task)]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [False, 2, True, 2, None, False, "first", ["not yet", ["start", 1]], True]


def test_a_failed_task_raises_when_awaited(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def bad():\n    raise KeyError('k')\n"
        "t = asyncio.create_task(bad())\n"
        "try:\n    await t\nexcept KeyError as e:\n    caught = repr(e)\n"
        "return [caught, type(t.exception()).__name__]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["KeyError('k')", "KeyError"]


def test_cancel_throws_cancelled_error_where_the_task_waits(backend: str) -> None:
    code = (
        "import asyncio\nlog = []\n"
        "async def sleeper():\n    try:\n        await asyncio.sleep(100)\n"
        "    except asyncio.CancelledError:\n        log.append('cancelled')\n        raise\n"
        "    finally:\n        log.append('finally')\n"
        "t = asyncio.create_task(sleeper())\nawait asyncio.sleep(0)\n"
        "first = t.cancel()\n"
        "try:\n    await t\nexcept asyncio.CancelledError:\n    log.append('awaiter saw it')\n"
        "return [first, t.cancel(), t.cancelled(), log]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [True, False, True, ["cancelled", "finally", "awaiter saw it"]]


def test_cancelling_a_task_blocked_on_a_host_call_drops_its_answer(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def call():\n    return await tools.nap(x='late', seconds=0.05)\n"
        "t = asyncio.create_task(call())\nawait asyncio.sleep(0)\nt.cancel()\n"
        "try:\n    await t\nexcept asyncio.CancelledError:\n    return 'cancelled'\n"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == "cancelled"


def test_pending_tasks_at_the_end_are_cancelled_with_a_note(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def forever():\n    await asyncio.sleep(1000)\n"
        "async def never_started():\n    print('ran')\n"
        "asyncio.create_task(forever())\nasyncio.create_task(never_started())\n"
        "await asyncio.sleep(0)\nreturn 'done'"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == "done"
    assert result.logs == ["ran", "note: 1 task was still pending when the program ended and was cancelled"]
    two = run(code.replace("await asyncio.sleep(0)\n", ""), backend)
    assert two.logs == ["note: 2 tasks were still pending when the program ended and were cancelled"]


def test_no_note_when_every_task_finished(backend: str) -> None:
    code = "import asyncio\nasync def f():\n    return 1\nt = asyncio.create_task(f())\nreturn await t"
    result = run(code, backend)
    assert result.ok and result.value == 1 and result.logs == [], result


def test_lock_serialises_and_refuses_a_bad_release(backend: str) -> None:
    code = (
        "import asyncio\nlock = asyncio.Lock()\nlog = []\n"
        "async def worker(n):\n    async with lock:\n        log.append(('in', n))\n"
        "        await asyncio.sleep(0)\n        log.append(('out', n))\n"
        "await asyncio.gather(worker(1), worker(2), worker(3))\n"
        "try:\n    lock.release()\nexcept RuntimeError as e:\n    err = str(e)\n"
        "return [log, lock.locked(), err]"
    )
    result = run(code, backend)
    assert result.ok, result
    log, locked, err = result.value
    assert log == [["in", 1], ["out", 1], ["in", 2], ["out", 2], ["in", 3], ["out", 3]]
    assert locked is False and err == "Lock is not acquired."


def test_event_wakes_every_waiter(backend: str) -> None:
    code = (
        "import asyncio\nev = asyncio.Event()\n"
        "async def w(n):\n    await ev.wait()\n    return n\n"
        "ts = [asyncio.create_task(w(i)) for i in range(3)]\nawait asyncio.sleep(0)\n"
        "before = [t.done() for t in ts]\nev.set()\n"
        "return [before, await asyncio.gather(*ts), ev.is_set()]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [[False, False, False], [0, 1, 2], True]


def test_bounded_semaphore_and_bad_values(backend: str) -> None:
    code = (
        "import asyncio\nout = []\ns = asyncio.BoundedSemaphore(1)\nawait s.acquire()\n"
        "out.append(s.locked())\ns.release()\n"
        "try:\n    s.release()\nexcept ValueError as e:\n    out.append(str(e))\n"
        "try:\n    asyncio.Semaphore(-1)\nexcept ValueError as e:\n    out.append(str(e))\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [True, "BoundedSemaphore released too many times", "Semaphore initial value must be >= 0"]


def test_condition_notify(backend: str) -> None:
    code = (
        "import asyncio\ncond = asyncio.Condition()\nitems = []\n"
        "async def consumer():\n    async with cond:\n        await cond.wait_for(lambda: items)\n"
        "        return items.pop()\n"
        "c = asyncio.create_task(consumer())\nawait asyncio.sleep(0)\n"
        "async with cond:\n    items.append('x')\n    cond.notify()\n"
        "try:\n    cond.notify()\nexcept RuntimeError as e:\n    err = str(e)\n"
        "return [await c, err]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["x", "cannot notify on un-acquired lock"]


def test_queue_producer_consumer_with_maxsize(backend: str) -> None:
    code = (
        "import asyncio\nq = asyncio.Queue(maxsize=2)\nsizes = []\n"
        "async def producer():\n    for i in range(6):\n        await q.put(i)\n        sizes.append(q.qsize())\n"
        "async def consumer():\n    got = []\n    for _ in range(6):\n        got.append(await q.get())\n"
        "        q.task_done()\n    return got\n"
        "p = asyncio.create_task(producer())\ngot = await consumer()\nawait q.join()\nawait p\n"
        "out = [got, max(sizes), q.empty(), q.full(), q.maxsize]\n"
        "try:\n    q.get_nowait()\nexcept asyncio.QueueEmpty:\n    out.append('empty')\n"
        "q.put_nowait(1)\nq.put_nowait(2)\n"
        "try:\n    q.put_nowait(3)\nexcept asyncio.QueueFull:\n    out.append('full')\n"
        "q.task_done()\nq.task_done()\n"
        "try:\n    q.task_done()\nexcept ValueError as e:\n    out.append(str(e))\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [[0, 1, 2, 3, 4, 5], 2, True, False, 2, "empty", "full",
                            "task_done() called too many times"]


def test_wait_for_and_timeout(backend: str) -> None:
    code = (
        "import asyncio\nout = []\nlog = []\n"
        "async def slow():\n    try:\n        await asyncio.sleep(100)\n    finally:\n        log.append('slow ended')\n"
        "try:\n    await asyncio.wait_for(slow(), timeout=0.01)\nexcept TimeoutError:\n    out.append('wait_for')\n"
        "out.append(await asyncio.wait_for(tools.echo(x=5), timeout=10))\n"
        "out.append(await asyncio.wait_for(tools.echo(x=6), timeout=None))\n"
        "try:\n    async with asyncio.timeout(0.01) as cm:\n        await tools.nap(x=1, seconds=5)\n"
        "except TimeoutError:\n    out.append(['timeout', cm.expired()])\n"
        "async with asyncio.timeout(10) as cm:\n    await asyncio.sleep(0)\nout.append(cm.expired())\n"
        "return [out, log]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [["wait_for", 5, 6, ["timeout", True], False], ["slow ended"]]


def test_as_completed_yields_in_finishing_order(backend: str) -> None:
    code = (
        "import asyncio\nev = asyncio.Event()\n"
        "async def late():\n    await ev.wait()\n    return 'late'\n"
        "async def early():\n    ev.set()\n    return 'early'\n"
        "return [await c for c in asyncio.as_completed([late(), early()])]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["early", "late"]


def test_wait_return_when(backend: str) -> None:
    code = (
        "import asyncio\nev = asyncio.Event()\n"
        "async def blocked():\n    await ev.wait()\n    return 1\n"
        "async def quick():\n    return 2\n"
        "async def bad():\n    raise ValueError('v')\n"
        "a, b = asyncio.create_task(blocked()), asyncio.create_task(quick())\n"
        "done, pending = await asyncio.wait([a, b], return_when=asyncio.FIRST_COMPLETED)\n"
        "first = [b in done, a in pending]\n"
        "c = asyncio.create_task(bad())\n"
        "done, pending = await asyncio.wait([a, c], return_when=asyncio.FIRST_EXCEPTION)\n"
        "second = [c in done, a in pending]\n"
        "done, pending = await asyncio.wait([a], timeout=0.01)\n"
        "third = [len(done), len(pending)]\nev.set()\n"
        "done, pending = await asyncio.wait([a, b, c])\n"
        "try:\n    await asyncio.wait([])\nexcept ValueError as e:\n    err = str(e)\n"
        "return [first, second, third, len(done), len(pending), err]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [[True, True], [True, True], [0, 1], 3, 0, "Set of Tasks/Futures is empty."]


def test_taskgroup_waits_and_collects_failures(backend: str) -> None:
    code = (
        "import asyncio\nlog = []\n"
        "async def ok(n):\n    await asyncio.sleep(0)\n    return n\n"
        "async with asyncio.TaskGroup() as tg:\n    a = tg.create_task(ok(1))\n    b = tg.create_task(ok(2))\n"
        "results = [a.result(), b.result()]\n"
        "async def bad():\n    await asyncio.sleep(0)\n    raise ValueError('boom')\n"
        "async def long():\n    try:\n        await asyncio.sleep(100)\n    except asyncio.CancelledError:\n"
        "        log.append('sibling cancelled')\n        raise\n"
        "try:\n    async with asyncio.TaskGroup() as tg:\n        tg.create_task(bad())\n        s = tg.create_task(long())\n"
        "        await asyncio.sleep(100)\n        log.append('body kept running')\n"
        "except ExceptionGroup as eg:\n    log.append([type(e).__name__ for e in eg.exceptions])\n"
        "return [results, log, s.cancelled()]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [[1, 2], ["sibling cancelled", ["ValueError"]], True]


def test_deadlock_is_reported_not_hung(backend: str) -> None:
    code = "import asyncio\nlock = asyncio.Lock()\nawait lock.acquire()\nawait lock.acquire()"
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception", result
    assert "can never finish" in result.error.message


def test_tasks_count_against_max_calls(backend: str) -> None:
    f = InFlight()
    code = (
        "import asyncio\n"
        "async def one(i):\n    return await tools.f(x=i)\n"
        "ts = [asyncio.create_task(one(i)) for i in range(5)]\nreturn await asyncio.gather(*ts)"
    )
    result = run(code, backend, bindings={"f": f}, limits=Limits(wall_time=10, max_calls=3))
    assert result.error is not None and result.error.kind == "call-limit", result
    assert f.calls <= 3


def test_create_task_needs_a_fresh_coroutine(backend: str) -> None:
    code = (
        "import asyncio\nout = []\n"
        "async def f():\n    return 1\n"
        "c = f()\nawait c\n"
        "for bad in (c, 5, f):\n    try:\n        asyncio.create_task(bad)\n"
        "    except (TypeError, RuntimeError) as e:\n        out.append(type(e).__name__)\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["RuntimeError", "TypeError", "TypeError"]


@pytest.mark.parametrize("name", ["Lock", "Queue", "Semaphore", "TaskGroup"])
def test_the_classes_cannot_be_subclassed(backend: str, name: str) -> None:
    code = f"import asyncio\nclass Mine(asyncio.{name}):\n    pass"
    result = run(code, backend)
    assert result.error is not None and "cannot be subclassed" in result.error.message, result


def test_a_failing_gather_leaves_its_other_children_running(backend: str) -> None:
    # As in CPython: the first error settles the gather, the siblings run on as the loop turns
    # (their results are dropped).
    code = (
        "import asyncio\nlog = []\n"
        "async def worker():\n    for i in range(3):\n        await asyncio.sleep(0)\n        log.append(i)\n"
        "async def forever():\n    await asyncio.Event().wait()\n"
        "async def boom():\n    raise ValueError('boom')\n"
        "try:\n    await asyncio.gather(worker(), forever(), boom())\nexcept ValueError as e:\n    log.append(str(e))\n"
        "for _ in range(5):\n    await asyncio.sleep(0)\nreturn log"
    )
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == ["boom", 0, 1, 2]


def test_cancelling_a_gather_still_cancels_its_children(backend: str) -> None:
    code = (
        "import asyncio\nlog = []\n"
        "async def child():\n    try:\n        await asyncio.Event().wait()\n    finally:\n"
        "        log.append('child ended')\n"
        "async def parent():\n    await asyncio.gather(child(), child())\n"
        "t = asyncio.create_task(parent())\nfor _ in range(3):\n    await asyncio.sleep(0)\nt.cancel()\n"
        "for _ in range(3):\n    await asyncio.sleep(0)\nreturn [t.cancelled(), log]"
    )
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == [True, ["child ended", "child ended"]]


# -- gather as an eager future ----------------------------------------------------------------------
def test_gather_starts_its_children_at_once_and_keeps_its_result(backend: str) -> None:
    # As in CPython: the children are tasks from the moment gather() returns, whether or not it
    # is awaited, and every await of the same gather gives the same list.
    code = (
        "import asyncio\nlog = []\n"
        "async def job(n):\n    log.append(n)\n    await asyncio.sleep(0)\n    return n\n"
        "g = asyncio.gather(job(1), job(2))\nlog.append(['made', g.done()])\n"
        "asyncio.gather(job(3))\n"
        "await asyncio.sleep(0)\nlog.append('slept')\n"
        "first = await g\nsecond = await g\n"
        "return [log, first, first is second, g.done(), g.result() is first, g.exception(), g.cancel(),\n"
        "        g.cancelled()]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [[["made", False], 1, 2, 3, "slept"], [1, 2], True, True, True, None, False, False]


def test_a_failed_gather_raises_the_same_exception_each_time(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def boom():\n    raise ValueError('detonate')\n"
        "g = asyncio.gather(boom())\nseen = []\n"
        "for _ in range(3):\n    try:\n        await g\n    except ValueError as e:\n        seen.append(e)\n"
        "outer = asyncio.gather(asyncio.sleep(0, 'late'), g)\n"
        "try:\n    await outer\nexcept ValueError as e:\n    seen.append(e)\n"
        "return [str(seen[0]), all(e is seen[0] for e in seen), len(seen), g.exception() is seen[0]]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["detonate", True, 4, True]


def test_gather_refuses_a_non_awaitable_when_called(backend: str) -> None:
    # CPython's message, raised by gather() itself; a child made before the bad argument runs.
    code = (
        "import asyncio\nlog = []\n"
        "async def job():\n    log.append('ran')\n"
        "try:\n    asyncio.gather(job(), 123)\nexcept TypeError as e:\n    log.append(str(e))\n"
        "await asyncio.sleep(0)\nreturn log"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["An asyncio.Future, a coroutine or an awaitable is required", "ran"]


def test_gather_runs_a_repeated_argument_once(backend: str) -> None:
    calls: list[Any] = []

    async def record(x: Any = None) -> Any:
        calls.append(x)
        return x

    code = (
        "import asyncio\nruns = []\n"
        "async def once():\n    runs.append(1)\n    return 'o'\n"
        "async def job():\n    return 'j'\n"
        "c = once()\nt = asyncio.create_task(job())\ncall = tools.record(x=7)\n"
        "inner = asyncio.gather(job())\n"
        "r = await asyncio.gather(c, c, t, t, call, call, inner, inner)\n"
        "done = await asyncio.gather(asyncio.gather(), asyncio.gather(asyncio.gather()))\n"
        "return [r, runs, done]"
    )
    result = run(code, backend, bindings={"record": record})
    assert result.ok, result
    assert result.value == [["o", "o", "j", "j", 7, 7, ["j"], ["j"]], [1], [[], [[]]]]
    assert calls == [7]


def test_an_already_awaited_coroutine_fails_the_gather_when_it_runs(backend: str) -> None:
    code = (
        "import asyncio\nout = []\n"
        "async def f():\n    return 1\n"
        "c = f()\nawait c\ng = asyncio.gather(c)\nout.append(g.done())\n"
        "try:\n    await g\nexcept RuntimeError as e:\n    out.append(str(e))\n"
        "shared = f()\ng1 = asyncio.gather(shared)\ng2 = asyncio.gather(shared)\n"
        "out.append(await g1)\n"
        "try:\n    await g2\nexcept RuntimeError as e:\n    out.append(str(e))\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [False, "cannot reuse already awaited coroutine", [1],
                            "cannot reuse already awaited coroutine"]


def test_gather_inspection_and_done_callbacks(backend: str) -> None:
    code = (
        "import asyncio\nseen = []\n"
        "async def job():\n    await asyncio.sleep(0)\n    return 5\n"
        "g = asyncio.gather(job(), job())\nerrors = []\n"
        "for probe in (g.result, g.exception):\n    try:\n        probe()\n"
        "    except asyncio.InvalidStateError as e:\n        errors.append(str(e))\n"
        "def cb(fut):\n    seen.append([fut is g, fut.result()])\n"
        "g.add_done_callback(cb)\ng.add_done_callback(print)\nremoved = g.remove_done_callback(print)\n"
        "await g\nawait asyncio.sleep(0)\n"
        "g.add_done_callback(cb)\nawait asyncio.sleep(0)\n"
        "empty = asyncio.gather()\n"
        "return [errors, seen, removed, repr(g), empty.done(), empty.result(), repr(asyncio.gather(job()))]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [
        ["Result is not set.", "Exception is not set."], [[True, [5, 5]], [True, [5, 5]]], 1,
        "<_GatheringFuture finished>", True, [], "<_GatheringFuture pending>",
    ]
    assert result.logs == ["note: 1 task was still pending when the program ended and was cancelled"]


def test_cancelling_a_gather_future_cancels_its_children(backend: str) -> None:
    # As in CPython: cancel() reaches the children, and the gather then ends with CancelledError
    # as its exception (it is not itself in the cancelled state), even with return_exceptions.
    code = (
        "import asyncio\nlog = []\n"
        "async def child(n):\n    try:\n        await asyncio.sleep(10)\n"
        "    except asyncio.CancelledError:\n        log.append(n)\n        raise\n"
        "async def stubborn():\n    try:\n        await asyncio.sleep(10)\n"
        "    except asyncio.CancelledError:\n        log.append('swallowed')\n    return 'kept'\n"
        "g = asyncio.gather(child(1), asyncio.gather(child(2)))\nawait asyncio.sleep(0)\n"
        "out = [g.cancel(), g.done()]\n"
        "try:\n    await g\nexcept asyncio.CancelledError:\n    out.append('raised')\n"
        "out += [g.done(), g.cancelled(), type(g.exception()).__name__, g.cancel()]\n"
        "h = asyncio.gather(stubborn(), return_exceptions=True)\nawait asyncio.sleep(0)\nh.cancel()\n"
        "try:\n    out.append(await h)\nexcept asyncio.CancelledError:\n    out.append('h raised')\n"
        "return [sorted(map(str, log)), out]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [["1", "2", "swallowed"],
                            [True, False, "raised", True, False, "CancelledError", False, "h raised"]]


def test_a_task_cancelled_before_it_awaits_a_gather_cancels_that_gather(backend: str) -> None:
    # As in CPython: the future a task with a pending cancel goes on to await is cancelled too.
    code = (
        "import asyncio\nlog = []\n"
        "async def child():\n    try:\n        await asyncio.sleep(5)\n"
        "    except asyncio.CancelledError:\n        log.append('child cancelled')\n        raise\n"
        "async def me():\n    g = asyncio.gather(child())\n    await asyncio.sleep(0)\n"
        "    asyncio.current_task().cancel()\n"
        "    try:\n        await g\n    except asyncio.CancelledError:\n        log.append('me cancelled')\n"
        "    await asyncio.sleep(0)\n    return g.done()\n"
        "log.append(await asyncio.create_task(me()))\nreturn log"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["child cancelled", "me cancelled", True]


def test_the_asyncio_helpers_take_a_gather_future(backend: str) -> None:
    code = (
        "import asyncio\nlog = []\n"
        "async def slow(n):\n    try:\n        await asyncio.sleep(5)\n"
        "    except asyncio.CancelledError:\n        log.append(n)\n        raise\n"
        "async def quick():\n    return 'q'\n"
        "g = asyncio.gather(slow(1), slow(2))\n"
        "try:\n    await asyncio.wait_for(g, 0.01)\nexcept TimeoutError:\n    log.append('timeout')\n"
        "await asyncio.sleep(0)\nout = [g.done(), type(g.exception()).__name__]\n"
        "done, pending = await asyncio.wait([asyncio.gather(quick())])\nout.append([len(done), len(pending)])\n"
        "out.append(await asyncio.shield(asyncio.gather(quick(), quick())))\n"
        "out.append([await f for f in asyncio.as_completed([asyncio.gather(quick())])])\n"
        "return [sorted(map(str, log)), out]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [["1", "2", "timeout"], [True, "CancelledError", [1, 0], ["q", "q"], [["q"]]]]


def test_a_gathers_pending_children_are_counted_in_the_note(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def forever():\n    await asyncio.Event().wait()\n"
        "async def boom():\n    raise ValueError('b')\n"
        "asyncio.gather(forever(), forever())\n"
        "try:\n    await asyncio.gather(forever(), boom())\nexcept ValueError:\n    pass\n"
        "return 'end'"
    )
    result = run(code, backend)
    assert result.ok and result.value == "end", result
    assert result.logs == ["note: 3 tasks were still pending when the program ended and were cancelled"]


def test_gathered_tool_calls_go_to_the_host_in_one_batch(backend: str) -> None:
    # Made eagerly, the gather's call tasks still all reach the host before any answer is back.
    f = InFlight()
    code = (
        "import asyncio\n"
        "g = asyncio.gather(*(tools.f(x=i) for i in range(8)))\n"
        "h = asyncio.gather(tools.f(x=8), tools.f(x=9))\n"
        "return [await g, await h, await g]"
    )
    result = run(code, backend, bindings={"f": f})
    assert result.ok, result
    assert result.value == [list(range(8)), [8, 9], list(range(8))]
    assert f.calls == 10
    assert f.most == 10


# -- sleep as a coroutine, current_task, names ------------------------------------------------------
def test_sleep_is_a_coroutine_that_create_task_takes_and_gives_its_result(backend: str) -> None:
    code = (
        "import asyncio\n"
        "t = asyncio.create_task(asyncio.sleep(0, 'r'))\n"
        "s = asyncio.sleep(0)\n"
        "return [await t, await asyncio.sleep(0, result=5), await s, await asyncio.wait_for(asyncio.sleep(0, 1), 5)]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["r", 5, None, 1]


def test_current_task_and_names_follow_cpython(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def f():\n    return [asyncio.current_task().get_name(), asyncio.current_task() is t]\n"
        "t = asyncio.create_task(f())\n"
        "me = asyncio.current_task()\n"
        "r = await asyncio.gather(f(), t)\n"
        "t.set_name(42)\n"
        "return [me.get_name(), r, t.get_name(), asyncio.current_task() is me, repr(t),\n"
        "        asyncio.create_task(f(), name='given').get_name()]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["Task-1", [["Task-3", False], ["Task-2", True]], "42", True,
                            "<Task finished name='42'>", "given"]


def test_cancelling_the_current_task_cancels_the_program(backend: str) -> None:
    code = "import asyncio\nasyncio.current_task().cancel()\nawait asyncio.sleep(0)\nreturn 'not reached'"
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert "CancelledError" in result.error.message


# -- done callbacks ---------------------------------------------------------------------------------
CALLBACKS = """
import asyncio
log = []
async def job():
    await asyncio.sleep(0)
    return 7
def cb(task):
    log.append(['cb', task.result(), task is t, asyncio.current_task()])
def bad(task):
    raise ValueError('boom')
def spawns(task):
    asyncio.create_task(later())
async def later():
    log.append('spawned by a callback')
t = asyncio.create_task(job())
for fn in (cb, bad, spawns, cb, print, print):
    t.add_done_callback(fn)
removed = [t.remove_done_callback(print), t.remove_done_callback(print)]
log.append('before')
await t
log.append('awaited')
await asyncio.sleep(0)
t.add_done_callback(cb)
log.append('added when done')
await asyncio.sleep(0)
await asyncio.sleep(0)
return [log, removed]
"""


def test_done_callbacks_run_soon_in_order_and_a_failure_is_logged(backend: str) -> None:
    result = run(CALLBACKS, backend)
    assert result.ok, result
    assert result.value == [
        # CPython's order: the callbacks were added before the awaiter's wake-up
        ["before", ["cb", 7, True, None], ["cb", 7, True, None], "awaited", "spawned by a callback",
         "added when done", ["cb", 7, True, None]],
        [2, 0],
    ]
    assert result.logs == ["Exception in callback bad(<Task finished name='Task-2'>): ValueError: boom"]


def test_done_callbacks_see_cancellation_and_failure(backend: str) -> None:
    code = (
        "import asyncio\nseen = []\n"
        "async def forever():\n    await asyncio.sleep(100)\n"
        "async def bad():\n    raise KeyError('k')\n"
        "def cb(task):\n    seen.append([task.get_name(), task.cancelled(), "
        "None if task.cancelled() else repr(task.exception())])\n"
        "a = asyncio.create_task(forever(), name='a')\nb = asyncio.create_task(bad(), name='b')\n"
        "a.add_done_callback(cb)\nb.add_done_callback(cb)\n"
        "await asyncio.sleep(0)\na.cancel()\n"
        "await asyncio.wait([a, b])\nawait asyncio.sleep(0)\n"
        "return seen"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [["b", False, "KeyError('k')"], ["a", True, None]]


def test_callbacks_still_due_when_the_program_ends_do_not_run(backend: str) -> None:
    code = (
        "import asyncio\n"
        "async def forever():\n    await asyncio.sleep(100)\n"
        "t = asyncio.create_task(forever())\n"
        "t.add_done_callback(lambda task: print('callback ran'))\n"
        "return 'end'"
    )
    result = run(code, backend)
    assert result.ok and result.value == "end", result
    assert result.logs == ["note: 1 task was still pending when the program ended and was cancelled"]


def test_a_done_callback_must_be_callable(backend: str) -> None:
    code = "import asyncio\nasync def f():\n    pass\nasyncio.create_task(f()).add_done_callback(3)"
    result = run(code, backend)
    assert result.error is not None and "a done callback must be callable" in result.error.message


# -- shield -----------------------------------------------------------------------------------------
def test_shield_keeps_the_task_running_when_the_wait_times_out(backend: str) -> None:
    code = (
        "import asyncio\nlog = []\n"
        "async def slow():\n    await asyncio.sleep(0.05)\n    log.append('inner done')\n    return 'v'\n"
        "t = asyncio.create_task(slow())\n"
        "try:\n    await asyncio.wait_for(asyncio.shield(t), 0.01)\nexcept TimeoutError:\n    log.append('timeout')\n"
        "log.append(t.done())\n"
        "r = await t\n"
        "return [list(log), r, asyncio.shield(t) is t, await asyncio.shield(slow()),\n"
        "        await asyncio.gather(asyncio.shield(slow()), asyncio.shield(tools.echo(x=1)))]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [["timeout", False, "inner done"], "v", True, "v", ["v", 1]]


def test_cancelling_the_shield_or_its_awaiter_leaves_the_inner_task(backend: str) -> None:
    code = (
        "import asyncio\nout = []\n"
        "async def slow():\n    await asyncio.sleep(0.02)\n    return 'v'\n"
        "inner = asyncio.create_task(slow())\n"
        "s = asyncio.shield(inner)\nout.append([s.done(), s.cancel(), s.cancelled(), s.done(), s.cancel()])\n"
        "try:\n    await s\nexcept asyncio.CancelledError:\n    out.append('outer cancelled')\n"
        "async def waits(x):\n    return await x\n"
        "inner2 = asyncio.create_task(slow())\n"
        "w = asyncio.create_task(waits(asyncio.shield(inner2)))\nawait asyncio.sleep(0)\nw.cancel()\n"
        "try:\n    await w\nexcept asyncio.CancelledError:\n    out.append('awaiter cancelled')\n"
        "out.append([inner.cancelled(), inner2.cancelled(), await inner, await inner2])\n"
        "async def bad():\n    raise KeyError('k')\n"
        "try:\n    await asyncio.shield(bad())\nexcept KeyError:\n    out.append('error passes through')\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [
        [False, True, True, True, False], "outer cancelled", "awaiter cancelled",
        [False, False, "v", "v"], "error passes through",
    ]


def test_shield_takes_only_awaitables(backend: str) -> None:
    result = run("import asyncio\nawait asyncio.shield(3)", backend)
    assert result.error is not None and "create_task() needs a coroutine, got a 'int'" in result.error.message


# -- timeout_at, when, reschedule -------------------------------------------------------------------
def test_timeout_at_expires_at_a_monotonic_deadline(backend: str) -> None:
    code = (
        "import asyncio, time\nout = []\n"
        "try:\n    async with asyncio.timeout_at(time.monotonic() + 0.01) as cm:\n        await asyncio.sleep(10)\n"
        "except TimeoutError:\n    out.append(cm.expired())\n"
        "async with asyncio.timeout_at(None) as cm:\n    await asyncio.sleep(0)\nout.append(cm.when())\n"
        "async with asyncio.timeout(0.01) as cm:\n    cm.reschedule(None)\n    await asyncio.sleep(0.03)\n"
        "out.append([cm.expired(), cm.when()])\n"
        "try:\n    async with asyncio.timeout(10) as cm:\n        cm.reschedule(time.monotonic())\n        await asyncio.sleep(10)\n"
        "except TimeoutError:\n    out.append('moved earlier')\n"
        "t = asyncio.timeout(5)\nout.append(t.when() > time.monotonic())\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [True, None, [False, None], "moved earlier", True]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("asyncio.timeout(1).reschedule(3)", "RuntimeError: Timeout has not been entered"),
        ("asyncio.timeout_at('soon')", "TypeError: asyncio.timeout_at() needs a time.monotonic() value or None"),
        ("asyncio.timeout_at(float('nan'))", "ValueError: asyncio.timeout_at() got NaN"),
        ("type(asyncio.timeout(1))(True)", "TypeError: asyncio.Timeout() needs a time.monotonic() value"),
    ],
)
def test_timeout_at_refuses_what_is_not_a_deadline(code: str, message: str) -> None:
    result = run("import asyncio\n" + code)
    assert result.error is not None and message in result.error.message, result


def test_an_expired_timeout_cannot_be_rescheduled(backend: str) -> None:
    code = (
        "import asyncio\n"
        "try:\n    async with asyncio.timeout(0) as cm:\n        await asyncio.sleep(1)\nexcept TimeoutError:\n    pass\n"
        "cm.reschedule(None)"
    )
    result = run(code, backend)
    assert result.error is not None and "Timeout has already expired" in result.error.message


# -- copies -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("make", "name"),
    [("asyncio.Lock()", "Lock"), ("asyncio.Event()", "Event"), ("asyncio.Semaphore(2)", "Semaphore"),
     ("asyncio.BoundedSemaphore()", "BoundedSemaphore"), ("asyncio.Condition()", "Condition"),
     ("asyncio.Queue()", "Queue"), ("asyncio.timeout(1)", "Timeout"), ("asyncio.TaskGroup()", "TaskGroup"),
     ("asyncio.create_task(f())", "Task"), ("asyncio.shield(asyncio.create_task(f()))", "_Shielded"),
     ("asyncio.as_completed([f()])", "_AsCompleted"), ("asyncio.gather(f())", "_GatheringFuture"),
     ("asyncio.gather()", "_GatheringFuture")],
)
@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_asyncio_objects_cannot_be_copied(make: str, name: str, how: str) -> None:
    code = f"import asyncio, copy\nasync def f():\n    return 1\nobj = {make}\ncopy.{how}(obj)"
    result = run(code)
    assert result.error is not None, result
    assert f"TypeError: '{name}' objects cannot be copied" in result.error.message
