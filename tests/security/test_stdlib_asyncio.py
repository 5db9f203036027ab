"""asyncio shim and the run's scheduler: `sleep` and `gather` take only what they document, and a
snippet that drives a coroutine by hand cannot build or forge the scheduler's requests (sleep,
gather) into anything but a snippet error.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


FORGED_SLEEP = """
import asyncio
async def s():
    await asyncio.sleep(1)
c = s()
r = c.send(None)
c.close()
Await = type(asyncio.gather())
await Await(type(r)(DELAY))
return 1
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_sleep_is_a_snippet_error(sb, backend):
    try:
        result = await sb.run(FORGED_SLEEP.replace("DELAY", "'x'"), backend=backend)
    except Exception as exc:
        pytest.fail(f"sandbox.run raised {type(exc).__name__}: {exc}")
    sb.assert_error(result, "exception", "TypeError")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_negative_sleep_is_harmless(sb, backend):
    result = await sb.run(FORGED_SLEEP.replace("DELAY", "-1e9"), backend=backend)
    sb.assert_error(result, "exception", "TypeError", "sandbox internals cannot be created by a snippet")


FORGED_GATHER = """
import asyncio
async def g():
    await asyncio.gather()
c = g()
r = c.send(None)
c.close()
Gather = type(r)
Await = type(asyncio.gather())
async def one():
    return 1
class Lie:
    def __len__(self):
        return 0
    def __bool__(self):
        return True
    def __iter__(self):
        return iter([one(), one()])
return await Await(Gather(Lie(), False))
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_gather_is_a_snippet_error(sb, backend):
    try:
        result = await sb.run(FORGED_GATHER, backend=backend)
    except Exception as exc:
        pytest.fail(f"sandbox.run raised {type(exc).__name__}: {exc}")
    assert result.error is not None and result.error.kind == "exception", result
    sb.assert_no_leak(result)


SCHEDULER_REFUSED = {
    # scheduler internals
    "sched_subclass": (
        "import asyncio\nT = type(asyncio.gather())\nclass X(T):\n    pass\nreturn repr(X())", "exception",
        "asyncio._GatheringFuture cannot be subclassed"),
    "sched_direct": ("import asyncio\nT = type(asyncio.gather())\nreturn repr(T())", "exception", "internals"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SCHEDULER_REFUSED))
async def test_scheduler_internals_refused(sb, name, backend):
    code, kind, fragment = SCHEDULER_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


ASYNCIO_CLOSED = [
    pytest.param("import asyncio\nreturn await asyncio.gather(1)", "exception",
                 ["TypeError", "An asyncio.Future, a coroutine or an awaitable is required"],
                 id="gather-non-awaitable"),
    pytest.param("import asyncio\nawait asyncio.sleep(True)", "exception", ["TypeError", "number of seconds"],
                 id="sleep-bool"),
    pytest.param("import asyncio\nawait asyncio.sleep(float('nan'))", "exception", ["ValueError", "NaN"],
                 id="sleep-nan"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), ASYNCIO_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_asyncio_closed_paths(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gather_with_non_awaitables_and_odd_sleep(sb, backend):
    code = (
        "import asyncio\nout = []\n"
        "try:\n    await asyncio.gather(5)\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "class N(float):\n    pass\nawait asyncio.sleep(N(0.0))\n"
        "try:\n    await asyncio.sleep(float('nan'))\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "r = await asyncio.gather(tools.f(1), return_exceptions=True)\nreturn [out, r]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value[0][1] == "ValueError"
    assert result.value[1] == [{"echo": [1], "kw": {}}]
    assert len(sb.spy.calls) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gather_return_exceptions_with_base_exception(sb, backend):
    code = (
        "import asyncio\n"
        "async def boom():\n    raise SystemExit(7)\n"
        "async def ok():\n    return await tools.f(1)\n"
        "r = await asyncio.gather(boom(), ok(), return_exceptions=True)\n"
        "return [type(r[0]).__name__, r[1]]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["SystemExit", {"echo": [1], "kw": {}}]
    assert sb.spy.calls == [((1,), {})]


# -- tasks, locks and queues (sandbox/aio.py) --------------------------------------------------

PRIVATE_STATE = {
    # each reads the scheduler state an asyncio object holds; the guard refuses private names of
    # host-made objects, and the coroutine, scheduler and waiters stay out of reach
    "task-slot": "async def f():\n    pass\nt = asyncio.create_task(f())\nx = t._task\nawait tools.f(x)",
    "task-getattr": "async def f():\n    pass\nt = asyncio.create_task(f())\nx = getattr(t, '_task')\nawait tools.f(1)",
    "lock-waiters": "l = asyncio.Lock()\nx = getattr(l, '_waiters')\nawait tools.f(1)",
    "queue-items": "q = asyncio.Queue()\nx = getattr(q, '_items')\nawait tools.f(1)",
    "queue-finished": "q = asyncio.Queue()\nx = vars(q)\nawait tools.f(1)",
    "group-parent": "tg = asyncio.TaskGroup()\nx = getattr(tg, '_parent')\nawait tools.f(1)",
    "waiter-task": (
        "l = asyncio.Lock()\nawait l.acquire()\nc = l.acquire()\nw = c.send(None)\n"
        "x = getattr(w, '_task')\nawait tools.f(1)"
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PRIVATE_STATE))
async def test_asyncio_objects_keep_their_state_private(sb, name, backend):
    result = await sb.run("import asyncio\n" + PRIVATE_STATE[name], backend=backend)
    assert result.error is not None and result.error.kind == "exception", result
    assert any(word in result.error.message for word in ("private", "not allowed", "vars()")), result.error
    assert sb.spy.calls == []  # the run stopped at the read: nothing after it ran
    sb.assert_no_leak(result)


FORGED_TASKS = {
    "class-call": "async def f():\n    pass\nt = asyncio.create_task(f())\nreturn repr(type(t)(None))",
    "shim-class": "return repr(asyncio.Task(None))",
    "subclass": "class T(asyncio.Task):\n    pass\nreturn repr(T())",
    "waiter-class": (
        "l = asyncio.Lock()\nawait l.acquire()\nc = l.acquire()\nw = c.send(None)\nreturn repr(type(w)(None))"
    ),
    "copy": "import copy\nasync def f():\n    pass\nt = asyncio.create_task(f())\nreturn repr(copy.copy(t))",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(FORGED_TASKS))
async def test_tasks_and_waiters_cannot_be_forged(sb, name, backend):
    await sb.assert_refused("import asyncio\n" + FORGED_TASKS[name], "exception", "TypeError")


STOLEN_WAIT = """
import asyncio
lock = asyncio.Lock()
await lock.acquire()
stolen = []
async def other():
    c = lock.acquire()
    stolen.append(c.send(None))
    await asyncio.sleep(0)
await asyncio.create_task(other())
class Yield:
    def __await__(self):
        return (yield stolen[0])
try:
    await Yield()
except RuntimeError as e:
    return str(e)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_wait_yielded_by_another_task_is_refused(sb, backend):
    result = await sb.run(STOLEN_WAIT, backend=backend)
    assert result.ok, result
    assert result.value == "this wait belongs to another task"


CANCEL_HOST_CALL = """
import asyncio
async def call():
    r = await tools.slow(1)
    print('delivered', r)
    return r
t = asyncio.create_task(call())
await asyncio.sleep(0)
t.cancel()
try:
    await t
except asyncio.CancelledError:
    pass
await asyncio.sleep(0.5)
return [t.cancelled(), t.done()]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cancelling_a_task_cancels_its_host_call_and_never_repeats_it(sb, backend):
    started: list[Any] = []
    finished: list[Any] = []

    async def slow(x: Any) -> Any:
        started.append(x)
        await anyio.sleep(0.3)  # still running when the snippet cancels (after one sleep(0))
        finished.append(x)
        return x

    async def go() -> None:
        await sb.spy(0)

    code = CANCEL_HOST_CALL.replace("t.cancel()", "t.cancel()\nawait tools.go()")
    result = await sb.run(code, backend=backend, bindings={"slow": slow, "go": go})
    assert result.ok, result
    assert result.value == [True, True]
    # The host call was made at most once (a worker's cancel frame may arrive before the call
    # starts), was cancelled rather than left to finish, and its answer never reached the task.
    assert started in ([], [1])
    assert finished == []
    assert sb.spy.calls == [((0,), {})]
    assert not any("delivered" in line for line in result.logs)


OUTLIVE = """
import asyncio
async def busy():
    while True:
        await tools.f(1)
async def later():
    await asyncio.sleep(0.2)
    await tools.g(2)
asyncio.create_task(busy())
asyncio.create_task(later())
return 'main done'
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_tasks_do_not_outlive_the_run(sb, backend):
    result = await sb.run(OUTLIVE, backend=backend)
    assert result.ok, result
    assert result.value == "main done"
    assert result.logs == ["note: 2 tasks were still pending when the program ended and were cancelled"]
    await anyio.sleep(0.3)  # long enough for `later` to call, had it survived
    assert sb.spy.calls == []
    await sb.assert_next_run_ok(backend)


TASK_BOMB = """
import asyncio
async def f():
    await tools.f(1)
made = 0
for i in range(1000000):
    try:
        asyncio.create_task(f())
        made += 1
    except BaseException:
        pass
print('survived', made)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_million_tasks_stop_at_the_task_cap(sb, backend):
    # A million refused create_task calls take seconds of CPU on a loaded machine: the time limits
    # are generous so that the task cap, not the clock, is what this test meets.
    result = await sb.run_heavy(TASK_BOMB, backend=backend)
    sb.assert_error(result, "exception", "more than 10000 unfinished tasks")
    # Catching the stop does not help: no task past the cap was made, and none got to run.
    assert result.logs == ["survived 9999",  # the main program is the run's first task
                           "note: 9999 tasks were still pending when the program ended and were cancelled"]
    assert sb.spy.calls == []


QUEUE_BOMB = """
import asyncio
q = asyncio.Queue()
chunk = 'x' * 65536
while True:
    q.put_nowait(chunk + str(q.qsize()))
"""


async def test_an_unbounded_queue_is_bounded_by_memory(sb):
    result = await sb.run(QUEUE_BOMB, backend="worker", memory=64 * 1024 * 1024)
    sb.assert_error(result, "memory")
    assert sb.spy.calls == []
    await sb.assert_next_run_ok("worker")


async def test_an_unbounded_queue_is_bounded_in_process(sb):
    result = await sb.run(QUEUE_BOMB, backend="inprocess", max_operations=20000)
    sb.assert_error(result, "timeout")
    assert sb.spy.calls == []


ENDLESS_WAIT = """
import asyncio
async def never():
    await asyncio.Event().wait()
AFTER
await asyncio.wait_for(never(), timeout=1e300)
print('returned')
await tools.f(1)
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("after", ["", "asyncio.create_task(never())"])
async def test_an_endless_wait_for_is_bounded_by_the_wall_limit(sb, backend, after):
    result = await sb.run(ENDLESS_WAIT.replace("AFTER", after), backend=backend, wall_time=1.0)
    sb.assert_error(result, "timeout", "wall-time")
    assert result.logs == [] or all("returned" not in line for line in result.logs)
    assert sb.spy.calls == []


KILLED_WHILE_RUNNING = """
import asyncio
hold = []
async def child():
    hold[0].cancel()  # cancels the gather parent while this very child runs
    await tools.f(x="after-the-kill")
    return 1
async def outer():
    await asyncio.gather(child())
for i in range(50):
    t = asyncio.create_task(outer())
    hold[:] = [t]
    try:
        await t
    except asyncio.CancelledError:
        pass
ev = asyncio.Event()
async def idle():
    await ev.wait()
ts = [asyncio.create_task(idle()) for _ in range(10050)]
await asyncio.sleep(0)
return "past the cap"
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_task_cancelled_while_it_runs_is_counted_once_and_dispatches_nothing(sb, backend):
    """A child that cancels its own gather parent is cancelled where it next yields, not
    'closed' while running: the task cap still counts it once (no bypass), and the host call it
    yields after the cancel never reaches the host."""
    result = await sb.run(KILLED_WHILE_RUNNING, backend=backend)
    sb.assert_error(result, "exception", "more than 10000 unfinished tasks")
    assert sb.spy.calls == []


# -- shield, done callbacks, current_task, copies -------------------------------------------------
SHIELD_FLOOD = """
import asyncio
ev = asyncio.Event()
async def idle():
    await ev.wait()
shields = [asyncio.shield(idle()) for _ in range(10050)]
await tools.f(x="past the cap")
"""

CALLBACK_FLOOD = """
import asyncio
ev = asyncio.Event()
async def idle():
    await ev.wait()
async def quick():
    return 1
def spawn(task):
    for _ in range(200):
        asyncio.create_task(idle())
t = asyncio.create_task(quick())
for _ in range(60):
    t.add_done_callback(spawn)
await t
await asyncio.sleep(0)
await tools.f(x="past the cap")
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("code", [SHIELD_FLOOD, CALLBACK_FLOOD], ids=["shield", "callbacks"])
async def test_the_task_cap_holds_through_shield_and_callbacks(sb, backend, code):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "more than 10000 unfinished tasks")
    assert sb.spy.calls == []


async def test_many_callbacks_on_one_task_do_not_count_as_tasks(sb):
    code = (
        "import asyncio\nn = []\n"
        "async def quick():\n    return 1\n"
        "t = asyncio.create_task(quick())\n"
        "for _ in range(20000):\n    t.add_done_callback(lambda task: n.append(1))\n"
        "await t\nawait asyncio.sleep(0)\nreturn len(n)"
    )
    result = await sb.run(code)
    assert result.ok and result.value == 20000, result


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_callback_that_reschedules_itself_is_bounded_by_the_wall_limit(sb, backend):
    code = (
        "import asyncio\n"
        "async def quick():\n    return 1\n"
        "t = asyncio.create_task(quick())\nawait t\n"
        "def again(task):\n    task.add_done_callback(again)\n"
        "t.add_done_callback(again)\n"
        "await asyncio.Event().wait()\n"
        "await tools.f(x='never')"
    )
    result = await sb.run(code, backend=backend, wall_time=1.0)
    sb.assert_error(result, "timeout")
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_failing_callback_is_logged_and_leaks_nothing(sb, backend):
    code = sb.secret.fill(
        "import asyncio\n"
        "async def quick():\n    return 1\n"
        "def bad(task):\n    open(SECRET_PATH).read()\n"
        "t = asyncio.create_task(quick())\nt.add_done_callback(bad)\nawait t\nawait asyncio.sleep(0)\n"
        "return 'went on'"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok and result.value == "went on", result
    assert len(result.logs) == 1 and result.logs[0].startswith("Exception in callback bad(<Task finished")
    assert "NameError" in result.logs[0]
    sb.assert_no_leak(result)


TASK_INTERNALS = {
    "task-dict": ("return t.__dict__", "AttributeError", '"__dict__" is not accessible'),
    "task-vars": ("return vars(t)", "TypeError", "vars() argument must have __dict__ attribute"),
    "task-slot": ("return t._task", "AttributeError", '"_task" is not accessible'),
    "task-callbacks": ("return t._done_callbacks", "AttributeError", '"_done_callbacks" is not accessible'),
    "task-build": ("return type(t)(t)", "TypeError", "sandbox internals cannot be created by a snippet"),
    "current-slot": ("return asyncio.current_task()._task", "AttributeError", '"_task"'),
    "shield-inner": ("return asyncio.shield(t)._inner", "AttributeError", '"_inner" is not accessible'),
    "shield-waiters": ("return asyncio.shield(t)._waiters", "AttributeError", '"_waiters"'),
    "shield-build": ("return type(asyncio.shield(t))(t)", "TypeError", "sandbox internals cannot be created"),
    "shield-subclass": ("class S(type(asyncio.shield(t))):\n    pass\nreturn S(t)", "TypeError",
                        "asyncio._Shielded cannot be subclassed"),
    "timeout-slot": ("return asyncio.timeout(1)._task", "AttributeError", '"_task" is not accessible'),
    "lock-subclass-spoof": ("class L(asyncio.Lock):\n    __module__ = 'sandbox.aio'\nreturn 1", "TypeError",
                            "asyncio.Lock cannot be subclassed"),
    "queue-subclass-spoof": ("class Q(asyncio.Queue):\n    __module__ = 'sandbox.aio'\nreturn 1", "TypeError",
                             "asyncio.Queue cannot be subclassed"),
    "sleep-frame": ("return asyncio.sleep(0).cr_frame", "syntax", '"cr_frame"'),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(TASK_INTERNALS))
async def test_task_shield_and_timeout_internals_are_refused(sb, backend, name):
    code, kind, fragment = TASK_INTERNALS[name]
    pre = "import asyncio\nasync def f():\n    await asyncio.sleep(1)\nt = asyncio.create_task(f())\n"
    if kind == "syntax":
        result = await sb.assert_refused(pre + code, "syntax", fragment, backend=backend)
    else:
        result = await sb.assert_refused(pre + code, "exception", kind, fragment, backend=backend)
    sb.assert_no_leak(result)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_what_task_and_shield_hand_out_is_the_sandbox_api(sb, backend):
    code = (
        "import asyncio\nseen = []\n"
        "async def f():\n    await asyncio.sleep(0)\n"
        "t = asyncio.create_task(f())\n"
        "t.add_done_callback(lambda *a, **k: seen.append([len(a), a[0] is t, sorted(k)]))\n"
        "s = asyncio.shield(t)\n"
        "await s\nawait asyncio.sleep(0)\n"
        "return [[c.__name__ for c in type(t).__mro__], [c.__name__ for c in type(s).__mro__], seen,\n"
        "        asyncio.current_task() is asyncio.current_task(), type(asyncio.current_task()).__name__]"
    )
    await sb.assert_harmless(code, [
        ["Task", "_Internal", "object"], ["_Shielded", "_Internal", "object"], [[1, True, []]], True, "Task",
    ], backend=backend)


COPIED = {
    "lock": ("asyncio.Lock()", "await obj.acquire()", "obj.locked()", True),
    "event": ("asyncio.Event()", "obj.set()", "obj.is_set()", True),
    "semaphore": ("asyncio.Semaphore(1)", "await obj.acquire()", "obj.locked()", True),
    "queue": ("asyncio.Queue()", "obj.put_nowait(1)", "obj.qsize()", 1),
    "condition": ("asyncio.Condition()", "await obj.acquire()", "obj.locked()", True),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(COPIED))
@pytest.mark.parametrize("how", ["copy", "deepcopy"])
async def test_copying_a_primitive_is_refused_and_the_original_is_untouched(sb, backend, name, how):
    make, use, probe, expected = COPIED[name]
    code = (
        f"import asyncio, copy\nobj = {make}\n{use}\n"
        f"try:\n    copy.{how}(obj)\n    copied = 'copied'\nexcept TypeError as e:\n    copied = str(e)\n"
        f"return [copied, {probe}]"
    )
    cls = make.split("(")[0].split(".")[1]
    await sb.assert_harmless(code, [f"'{cls}' objects cannot be copied", expected], backend=backend)


# -- the gather future ----------------------------------------------------------------------------
GATHER_INTERNALS = {
    "gather-dict": ("return g.__dict__", "AttributeError", '"__dict__" is not accessible'),
    "gather-vars": ("return vars(g)", "TypeError", "vars() argument must have __dict__ attribute"),
    "gather-slot": ("return g._task", "AttributeError", '"_task" is not accessible'),
    "gather-getattr": ("return getattr(g, '_task')", "AttributeError", '"_task" is not accessible'),
    "gather-callbacks": ("return g._done_callbacks", "AttributeError", '"_done_callbacks" is not accessible'),
    "gather-init": ("return type(g).__init__(g, g)", "AttributeError", '"__init__" is not accessible'),
    "gather-build": ("return type(g)(g)", "TypeError", "sandbox internals cannot be created by a snippet"),
    "gather-subclass": ("class G(type(g)):\n    pass\nreturn G(g)", "TypeError",
                        "asyncio._GatheringFuture cannot be subclassed"),
    "gather-copy": ("return copy.copy(g)", "TypeError", "'_GatheringFuture' objects cannot be copied"),
    "gather-deepcopy": ("return copy.deepcopy(g)", "TypeError", "'_GatheringFuture' objects cannot be copied"),
    # what awaiting a pending gather yields to a coroutine driven by hand
    "wait-slot": ("async def w():\n    await g\nc = w()\nr = c.send(None)\nreturn r._gathering",
                  "AttributeError", '"_gathering" is not accessible'),
    "wait-build": ("async def w():\n    await g\nc = w()\nr = c.send(None)\nreturn type(r)(g)",
                   "TypeError", "sandbox internals cannot be created by a snippet"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(GATHER_INTERNALS))
async def test_gather_future_internals_are_refused(sb, backend, name):
    code, kind, fragment = GATHER_INTERNALS[name]
    # The gathered tool call would run at the next turn: the refusal ends the run first, so the
    # host never sees it.
    pre = ("import asyncio, copy\nasync def f():\n    await asyncio.sleep(1)\n"
           "g = asyncio.gather(f(), tools.f(x='gathered'))\n")
    result = await sb.assert_refused(pre + code, "exception", kind, fragment, backend=backend)
    sb.assert_no_leak(result)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_what_a_gather_future_hands_out_is_the_sandbox_api(sb, backend):
    code = (
        "import asyncio, copy\nseen = []\n"
        "async def f():\n    await asyncio.sleep(0)\n    return 1\n"
        "g = asyncio.gather(f(), tools.f(x=2))\n"
        "g.add_done_callback(lambda *a, **k: seen.append([len(a), a[0] is g, sorted(k)]))\n"
        "copies = []\n"
        "for how in (copy.copy, copy.deepcopy):\n    try:\n        how(g)\n"
        "    except TypeError as e:\n        copies.append(str(e))\n"
        "r = await g\nawait asyncio.sleep(0)\n"
        "return [[c.__name__ for c in type(g).__mro__], seen, copies, r, await g is r, type(r).__name__]"
    )
    await sb.assert_harmless(code, [
        ["_GatheringFuture", "_Internal", "object"], [[1, True, []]],
        ["'_GatheringFuture' objects cannot be copied"] * 2, [1, {"echo": [], "kw": {"x": 2}}], True, "list",
    ], backend=backend)
    assert sb.spy.calls == [((), {"x": 2})]  # the copies did not run the gathered call again


GATHER_FLOOD = """
import asyncio
ev = asyncio.Event()
async def idle():
    await ev.wait()
    await tools.f(x='past the cap')
made = []
try:
    asyncio.gather(*(idle() for _ in range(10050)))
except BaseException:
    made.append('caught')
print('survived', made)
await tools.f(x='after the flood')
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_task_cap_counts_a_gathers_children(sb, backend):
    result = await sb.run(GATHER_FLOOD, backend=backend)
    sb.assert_error(result, "exception", "more than 10000 unfinished tasks")
    assert sb.spy.calls == []


DEEP_GATHERS = """
import asyncio
ev = asyncio.Event()
async def leaf():
    await ev.wait()
    return 1
g = asyncio.gather(leaf())
for _ in range(100000):
    g = asyncio.gather(g)
ev.set()
r = await g
for _ in range(100000):
    r = r[0]
h = asyncio.gather(leaf(), asyncio.sleep(5))
async def waits(x):
    return await x
ts = []
x = h
for _ in range(2000):
    t = asyncio.create_task(waits(x))
    ts.append(t)
    x = asyncio.gather(t)
await asyncio.sleep(0)
top = asyncio.gather(x)
await asyncio.sleep(0)
hit = top.cancel()
try:
    await top
except asyncio.CancelledError:
    pass
await asyncio.sleep(0)
return [r, hit, h.done(), sum(t.cancelled() for t in ts)]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_deeply_nested_gathers_settle_and_cancel_without_recursion(sb, backend):
    """A chain of gathers 100,000 deep settles, and a cancel reaches down a chain of tasks each
    awaiting a gather of the next, without the host recursing (a RecursionError there would be
    the scheduler's, not the snippet's). About 2 s of work on an idle machine: its limits hold on
    one many times slower (what it asserts is the outcome, not the time)."""
    await sb.assert_harmless(DEEP_GATHERS, [[1], True, True, 2000], backend=backend)


STOLEN_GATHER_WAIT = """
import asyncio
ev = asyncio.Event()
async def slow():
    await ev.wait()
    return 'v'
g = asyncio.gather(slow())
async def waits():
    await g
c = waits()
stolen = c.send(None)
class Yield:
    def __await__(self):
        return (yield stolen)
async def other():
    await Yield()
    return g.done()
t = asyncio.create_task(other())
await asyncio.sleep(0)
ev.set()
c.close()
return [await t, await g]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_stolen_gather_wait_only_waits_for_that_gather(sb, backend):
    await sb.assert_harmless(STOLEN_GATHER_WAIT, [True, ["v"]], backend=backend)
    assert sb.spy.calls == []


# -- what the loop's own callbacks hold -------------------------------------------------------------
#: `asyncio.wait` kept its `return_when` and compared it in a callback the loop runs when a task
#: ends: a snippet object there ran its `__eq__` as host code, and what it raised (SystemExit,
#: out of `sandbox.run` into the host) unwound the in-process clean-up, so a typing cache entry
#: the run planted stayed for the host and later runs.
WAIT_RETURN_WHEN = """
import asyncio, typing
class W:
    n = 0
    def __eq__(self, other):
        W.n += 1
        if W.n > 2:
            raise SystemExit(3)
        return other == "FIRST_COMPLETED"
    def __hash__(self):
        return 1
class Evil:
    def __call__(self):
        pass
    def __hash__(self):
        return hash(int)
    def __eq__(self, other):
        return True
    def __repr__(self):
        return "EVIL"
planted = typing.List[Evil()]
async def forever():
    await asyncio.sleep(100)
tasks = [asyncio.create_task(forever()) for _ in range(3)]
await asyncio.wait(tasks, return_when=W())
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_wait_keeps_only_a_plain_return_when(sb, backend):
    import typing

    result = await sb.run(WAIT_RETURN_WHEN, backend=backend)
    sb.assert_error(result, "exception", "ValueError: Invalid return_when value")
    assert repr(typing.List[int]) == "typing.List[int]"  # noqa: UP006 - the cache a snippet poisoned
    later = await sb.run("import typing\nreturn repr(typing.List[int])", backend=backend)
    assert later.value == "typing.List[int]", later


def test_a_failing_loop_callback_ends_the_run_as_crashed_and_goes_no_further() -> None:
    from sandbox.control import RunStopped, Verdict
    from sandbox.result import RunError
    from sandbox.scheduler import LOOP_FAILED, Scheduler

    class Ended:
        callbacks: list[Any]

    def fails(_item: Any) -> None:
        raise SystemExit(3)

    ran: list[Any] = []
    verdict = Verdict()
    sched = Scheduler(10, verdict)
    ended = Ended()
    ended.callbacks = [fails, ran.append]
    sched._run_callbacks(ended)  # returns: nothing unwinds into the host
    assert ran == [ended]  # the callbacks after it still ran
    assert isinstance(sched.stopping, RunStopped)
    assert verdict.error == RunError("crashed", LOOP_FAILED)


def test_the_in_process_clean_up_runs_every_step_whatever_one_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    import sandbox
    from sandbox import inprocess
    from sandbox.execution import Execution

    execution = Execution("return 1", [], sandbox.Limits(), budget=True)
    steps: list[str] = []

    def close(*, reraise: bool = True) -> None:
        steps.append("close")
        raise KeyError("from the loop")

    def put_back(groups: object) -> int:
        steps.append("put back")
        raise ValueError("from the put-back")

    monkeypatch.setattr(execution.scheduler, "close", close)
    monkeypatch.setattr(inprocess, "_clear_shared_caches", lambda: steps.append("caches") or 0)
    monkeypatch.setattr(inprocess.SHARED, "restore", put_back)
    with pytest.raises(KeyError):
        inprocess._end_run(execution, None)
    assert not execution.output.open  # sealed
    with pytest.raises(ValueError):
        inprocess.release_shared(execution.shims.shared_groups())  # after the run's garbage
    assert steps == ["close", "put back", "caches"]


def test_an_allocation_failure_in_a_loop_callback_is_the_memory_limit() -> None:
    # The loop's bookkeeping grows with what the snippet hands it (a gather of one task listed
    # six million times settles a list of six million results): running out of memory there is
    # the run's `memory`, as anywhere else in the run, never the sandbox's `crashed`.
    from sandbox.control import Verdict
    from sandbox.raised import mark_raised
    from sandbox.scheduler import Scheduler

    class Ended:
        callbacks: list[Any]

    def allocates(_item: Any) -> None:
        raise MemoryError

    verdict = Verdict()
    sched = Scheduler(10, verdict, memory="the run exceeded its memory limit of 1 MiB")
    ended = Ended()
    ended.callbacks = [allocates]
    sched._run_callbacks(ended)
    assert (verdict.error.kind, verdict.error.message) == ("memory", "the run exceeded its memory limit of 1 MiB")

    def raises_the_snippets(_item: Any) -> None:
        raise mark_raised(MemoryError("FAKE"))

    verdict = Verdict()
    sched = Scheduler(10, verdict)
    ended.callbacks = [raises_the_snippets]
    sched._run_callbacks(ended)
    assert verdict.error is not None and verdict.error.kind == "crashed"



#: A task whose awaitable is a C iterator yielding a finished gather's request for ever: the
#: scheduler resumed it without a line of snippet code, so nothing ticked.
SPINS_IN_THE_SCHEDULER = """
import asyncio, itertools
async def nothing():
    return 1
async def grab(fut):
    await fut
fut = asyncio.gather(nothing())
c = grab(fut)
req = c.send(None)
c.close()
await fut
class Spin:
    def __await__(self):
        return itertools.repeat(req)
print("start")
await Spin()
return "never"
"""
def test_the_scheduler_charges_the_budget_for_every_resumption(isolated):
    """In-process, the run still ends at its deadline (the scheduler ticks for each task it
    resumes), and the next run works."""
    report = isolated(SPINS_IN_THE_SCHEDULER, "state = 1", timeout=120, wall_time=1)
    assert not report["hung"], report
    assert report["result"]["error"]["kind"] == "timeout", report
    assert report["next"]["value"] == "[1]", report
