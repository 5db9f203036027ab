"""The `asyncio` a snippet imports: tasks, locks, queues and timeouts on the run's own scheduler.

Everything here is built on one scheduler primitive, the `Waiter` a task parks on until some
other task (or a timer) fires it, so no loop, future or real `asyncio` object exists. A task
object holds its scheduler state in a private slot; the classes cannot be subclassed (their
private state would become the snippet's own attributes). Semantics follow CPython 3.11 where
practical: a cancelled task gets `CancelledError` where it waits, `wait_for` and `timeout`
turn their own cancellation into `TimeoutError`.
"""

from __future__ import annotations

import inspect
import math
import time
import types
from collections import deque
from typing import Any

from .control import RunStopped
from .guards import CheckedMethods, seal
from .scheduler import (
    _KEY,
    ALREADY_AWAITED,
    MAX_SLEEP,
    CancelledError,
    PendingCall,
    Scheduler,
    Waiter,
    _await_one,
    _Awaitable,
    _Gathering,
    _Internal,
    _Task,
    running,
    sleep,
    wait_gathering,
)


class InvalidStateError(Exception):
    """`asyncio.InvalidStateError`: a task's result was read before it finished."""


class QueueEmpty(Exception):
    """`asyncio.QueueEmpty`."""


class QueueFull(Exception):
    """`asyncio.QueueFull`."""


class _Final(metaclass=CheckedMethods):
    """Sandbox asyncio classes a snippet makes but can neither subclass nor copy: a subclass's
    instances would get a dictionary beside the private slots, and a copy would share the
    original's waiters (a shallow copy of a `Lock` is half the same lock). Sealed at the end of
    this module (`guards.seal`: the class factory refuses them as bases)."""

    __slots__ = ()

    __reduce_ex__ = vars(_Internal)["__reduce_ex__"]  # the function, not the class read (see CheckedMethods)



def _seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} needs a number of seconds or None")
    if math.isnan(value):
        raise ValueError(f"{what} got NaN")
    return min(max(0.0, float(value)), MAX_SLEEP)


def _wake_first(waiters: deque[Waiter], value: Any = None) -> bool:
    sched = None
    for waiter in waiters:
        sched = waiter._task.sched
        if sched.fire(waiter, value):
            return True
    return False


async def _park(waiters: deque[Waiter]) -> Any:
    """Wait in line on `waiters`; on cancellation, leave the line (passing on a wake-up that
    arrived too late to use is the caller's job: it sees `fired`)."""
    waiter = running().waiter()
    waiters.append(waiter)
    try:
        return await waiter
    finally:
        waiters.remove(waiter)


def _wait_done(task: _Task, *, cancel_with_waiter: bool) -> Any:
    """Park the running task until `task` ends (a `yield from` body). Cancelling the waiting
    task cancels `task` too when `cancel_with_waiter` (awaiting a task), not through `shield`."""
    if task.done:
        return
    sched = running()
    if task.sched is not sched:
        raise RuntimeError("this task belongs to an earlier run")
    waiter = sched.waiter()
    task.callbacks.append(lambda _t: sched.fire(waiter))
    try:
        yield from waiter.__await__()
    except CancelledError:
        if cancel_with_waiter:
            # As in CPython: cancelling the task that awaits a task cancels that task too.
            sched.cancel(task)
        raise


def _outcome(task: _Task) -> Any:
    if not task.done:
        raise InvalidStateError("Result is not set.")
    if task.cancelled:
        raise CancelledError()
    if task.error is not None:
        raise task.error
    return task.value


class Task(_Internal):
    """What `asyncio.create_task` and `asyncio.current_task` return: awaitable, with CPython's
    inspection methods; exactly one exists per task. Done callbacks run on the run's scheduler
    (`Scheduler.call_soon`), get this object, and are reported in the log when they fail."""

    __slots__ = ("_task", "_done_callbacks")

    def __init__(self, key: object, task: _Task) -> None:
        self._task = task
        self._done_callbacks: list[Any] = []

    def done(self) -> bool:
        return self._task.done

    def cancelled(self) -> bool:
        return self._task.done and self._task.cancelled

    def cancel(self, msg: Any = None) -> bool:
        return self._task.sched.cancel(self._task)

    def get_name(self) -> str:
        return self._task.sched.name_of(self._task)

    def set_name(self, value: Any) -> None:
        self._task.name = str(value)[:_MAX_NAME] or self._task.name

    def result(self) -> Any:
        return _outcome(self._task)

    def exception(self) -> BaseException | None:
        task = self._task
        if not task.done:
            raise InvalidStateError("Exception is not set.")
        if task.cancelled:
            raise CancelledError()
        return task.error

    def add_done_callback(self, fn: Any, *, context: Any = None) -> None:
        """`fn(task)` once the task is done (soon, when it is done already)."""
        if not callable(fn):
            raise TypeError("a done callback must be callable")
        task = self._task
        if task.done:
            task.sched.call_soon(fn, self)
            return
        if not self._done_callbacks:
            task.callbacks.append(self._schedule_callbacks)
        self._done_callbacks.append(fn)

    def remove_done_callback(self, fn: Any) -> int:
        """Forget every registration of `fn`; how many there were."""
        kept = [cb for cb in self._done_callbacks if cb != fn]
        removed = len(self._done_callbacks) - len(kept)
        self._done_callbacks[:] = kept
        return removed

    def _schedule_callbacks(self, task: _Task) -> None:
        callbacks, self._done_callbacks = self._done_callbacks, []
        for fn in callbacks:
            task.sched.call_soon(fn, self)

    def __await__(self) -> Any:
        yield from _wait_done(self._task, cancel_with_waiter=True)
        return self.result()

    def __repr__(self) -> str:
        task = self._task
        state = "pending" if not task.done else "cancelled" if task.cancelled else "finished"
        return f"<Task {state} name={task.sched.name_of(task)!r}>"


#: Longest task name kept (`create_task(name=...)`, `set_name`).
_MAX_NAME = 100


def _handle(task: _Task) -> Task:
    if task.handle is None:
        task.handle = Task(_KEY, task)
    return task.handle


def current_task() -> Task | None:
    """`asyncio.current_task()`: the task running this code (None in a done callback)."""
    sched = running()
    task = sched.current
    if task is None or task is sched.soon_runner:
        return None
    return _handle(task)



def _coroutine(coro: Any, what: str) -> Any:
    """The coroutine a new task runs: the snippet's own, or one that awaits a pending tool call
    (a tool call is a coroutine to the snippet, as an `async def` tool would be in CPython)."""
    if type(coro) is PendingCall:
        if coro._awaited:
            raise RuntimeError(ALREADY_AWAITED)
        return _await_one(coro)
    if not isinstance(coro, types.CoroutineType):
        raise TypeError(f"{what} needs a coroutine, got a '{type(coro).__name__}'")
    if inspect.getcoroutinestate(coro) != inspect.CORO_CREATED:
        raise RuntimeError("cannot reuse already awaited coroutine")
    return coro


def iscoroutine(obj: Any) -> bool:
    """`asyncio.iscoroutine`: true for the snippet's coroutines and for pending tool calls."""
    return type(obj) is PendingCall or isinstance(obj, types.CoroutineType)


def create_task(coro: Any, *, name: Any = None) -> Task:
    """`asyncio.create_task`: run a coroutine concurrently; it starts when the current task waits."""
    sched = running()
    task = sched.spawn_user(_coroutine(coro, "create_task()"))
    if name is not None:
        task.name = str(name)[:_MAX_NAME] or task.name
    return _handle(task)


class _GatheringFuture(_Internal):
    """What `asyncio.gather` returns, CPython's future of that name: its children were started
    when it was made; awaiting it (any number of times) gives the one list of results or raises
    the one exception it settled with. `done`, `cancelled`, `result`, `exception` and the done
    callbacks are `Task`'s; `cancel` cancels the children. The state sits in a private slot."""

    __slots__ = ("_task", "_done_callbacks")

    def __init__(self, key: object, gathering: _Gathering) -> None:
        self._task = gathering
        self._done_callbacks: list[Any] = []

    done = vars(Task)["done"]
    cancelled = vars(Task)["cancelled"]
    result = vars(Task)["result"]
    exception = vars(Task)["exception"]
    add_done_callback = vars(Task)["add_done_callback"]
    remove_done_callback = vars(Task)["remove_done_callback"]
    _schedule_callbacks = vars(Task)["_schedule_callbacks"]

    def cancel(self, msg: Any = None) -> bool:
        return self._task.sched.cancel_gathering(self._task)

    def __await__(self) -> Any:
        gathering = self._task
        if not gathering.done:
            yield wait_gathering(gathering)
        return _outcome(gathering)

    def __repr__(self) -> str:
        return f"<_GatheringFuture {'finished' if self._task.done else 'pending'}>"


_NOT_AWAITABLE = "An asyncio.Future, a coroutine or an awaitable is required"


def _child_of(sched: Scheduler, aw: Any) -> Any:
    """What `gather` waits for in place of `aw`, CPython's `ensure_future`: a task or gather
    as it is, a coroutine or other awaitable (a tool call) wrapped in a new task."""
    if isinstance(aw, (Task, _GatheringFuture)):
        inner = aw._task
        if inner.sched is not sched:
            what = "task" if isinstance(aw, Task) else "gather"
            raise RuntimeError(f"this {what} belongs to an earlier run")
        return inner
    if isinstance(aw, types.CoroutineType):
        return sched.spawn_user(aw)
    if hasattr(type(aw), "__await__"):
        return sched.spawn_user(_await_one(aw))
    raise TypeError(_NOT_AWAITABLE)


def gather(*aws: Any, return_exceptions: bool = False) -> _GatheringFuture:
    """`asyncio.gather`: start the awaitables now (each coroutine and tool call as a task that
    runs once the current task waits, counted against the task cap) and return the future of
    their results, in order. An argument given twice runs once. A bad argument raises here,
    and the tasks made for the arguments before it keep running, as in CPython."""
    sched = running()
    children: list[Any] = []
    made: dict[int, Any] = {}
    for i, aw in enumerate(aws):
        child = made.get(id(aw))
        if child is None:
            try:
                child = made[id(aw)] = _child_of(sched, aw)
            except RunStopped:
                # The task cap ends the run: the coroutines not started are closed unrun.
                for rest in aws[i:]:
                    if isinstance(rest, types.CoroutineType):
                        rest.close()
                raise
        children.append(child)
    gathering = sched.gathering(children, bool(return_exceptions))
    gathering.handle = _GatheringFuture(_KEY, gathering)
    return gathering.handle


def _ensure_task(aw: Any) -> Task:
    if isinstance(aw, Task):
        return aw
    if isinstance(aw, (_Awaitable, _Shielded, _GatheringFuture)):
        return create_task(_await_one(aw))
    return create_task(aw)


def ensure_future(aw: Any, *, loop: Any = None) -> Any:
    """`asyncio.ensure_future`: a task or gather future as it is; a coroutine, tool call or
    other awaitable wrapped in a new task."""
    if loop is not None:
        raise TypeError("ensure_future() takes no loop in the sandbox")
    if isinstance(aw, (Task, _GatheringFuture)):
        return aw
    if type(aw) is PendingCall or isinstance(aw, types.CoroutineType):
        return create_task(aw)
    if isinstance(aw, (_Awaitable, _Shielded)) or hasattr(type(aw), "__await__"):
        return create_task(_await_one(aw))
    raise TypeError(_NOT_AWAITABLE)


class _Shielded(_Internal):
    """What `asyncio.shield(aw)` returns while `aw` runs, CPython's outer future: awaiting it
    gives the task's result, but cancelling it (or the task awaiting it) leaves the task
    running. `done`, `cancelled`, `cancel`, `result` and `exception` are the outer future's;
    the inner task sits in a private slot."""

    __slots__ = ("_inner", "_cancelled", "_waiters")

    def __init__(self, key: object, inner: _Task) -> None:
        self._inner = inner
        self._cancelled = False
        self._waiters: deque[Waiter] = deque()
        inner.callbacks.append(self._wake_all)

    def _wake_all(self, _task: Any = None) -> None:
        for waiter in self._waiters:
            waiter._task.sched.fire(waiter)

    def done(self) -> bool:
        return self._cancelled or self._inner.done

    def cancelled(self) -> bool:
        return self._cancelled or (self._inner.done and self._inner.cancelled)

    def cancel(self, msg: Any = None) -> bool:
        if self.done():
            return False
        self._cancelled = True
        self._wake_all()
        return True

    def result(self) -> Any:
        if self._cancelled:
            raise CancelledError()
        return _outcome(self._inner)

    def exception(self) -> BaseException | None:
        if self._cancelled:
            raise CancelledError()
        return _handle(self._inner).exception()

    def __await__(self) -> Any:
        while not self.done():
            try:
                yield from _park(self._waiters).__await__()
            except CancelledError:
                self.cancel()  # the outer future is cancelled; the inner task goes on
                raise
        return self.result()

    def __repr__(self) -> str:
        state = "pending" if not self.done() else "cancelled" if self.cancelled() else "finished"
        return f"<shielded {state} {_handle(self._inner)!r}>"


def shield(aw: Any) -> Task | _Shielded:
    """`asyncio.shield`: await `aw` without letting a cancellation reach it. A coroutine is
    wrapped in a task (counted against the run's task cap); a task already done is returned."""
    inner = _ensure_task(aw)
    if inner._task.done:
        return inner
    return _Shielded(_KEY, inner._task)


class Lock(_Final):
    """`asyncio.Lock`: first come, first served."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[Waiter] = deque()

    def locked(self) -> bool:
        return self._locked

    async def acquire(self) -> bool:
        if not self._locked and not self._waiters:
            self._locked = True
            return True
        waiter_line = self._waiters
        try:
            await _park(waiter_line)
        except BaseException:
            if not self._locked:
                _wake_first(waiter_line)
            raise
        self._locked = True
        return True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("Lock is not acquired.")
        self._locked = False
        _wake_first(self._waiters)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<asyncio.Lock [{'locked' if self._locked else 'unlocked'}]>"


class Event(_Final):
    """`asyncio.Event`."""

    __slots__ = ("_set", "_waiters")

    def __init__(self) -> None:
        self._set = False
        self._waiters: deque[Waiter] = deque()

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if not self._set:
            self._set = True
            for waiter in self._waiters:
                waiter._task.sched.fire(waiter)

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if self._set:
            return True
        await _park(self._waiters)
        return True


class Semaphore(_Final):
    """`asyncio.Semaphore`: at most `value` holders at once, woken in arrival order."""

    __slots__ = ("_value", "_waiters")

    def __init__(self, value: int = 1) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError("Semaphore value must be an int")
        if value < 0:
            raise ValueError("Semaphore initial value must be >= 0")
        self._value = value
        self._waiters: deque[Waiter] = deque()

    def locked(self) -> bool:
        return self._value == 0 or bool(self._waiters)

    async def acquire(self) -> bool:
        if self._value > 0 and not self._waiters:
            self._value -= 1
            return True
        line = self._waiters
        try:
            await _park(line)
        except BaseException:
            if self._value > 0:
                _wake_first(line)
            raise
        self._value -= 1
        return True

    def release(self) -> None:
        self._value += 1
        _wake_first(self._waiters)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()


class BoundedSemaphore(Semaphore):
    """`asyncio.BoundedSemaphore`: releasing more than acquired is a `ValueError`."""

    __slots__ = ("_bound",)

    def __init__(self, value: int = 1) -> None:
        super().__init__(value)
        self._bound = value

    def release(self) -> None:
        if self._value >= self._bound:
            raise ValueError("BoundedSemaphore released too many times")
        super().release()


class Condition(_Final):
    """`asyncio.Condition`, over its own `Lock` or the one given."""

    __slots__ = ("_lock", "_waiters")

    def __init__(self, lock: Lock | None = None) -> None:
        if lock is None:
            lock = Lock()
        elif not isinstance(lock, Lock):
            raise TypeError("Condition() takes an asyncio.Lock")
        self._lock = lock
        self._waiters: deque[Waiter] = deque()

    def locked(self) -> bool:
        return self._lock.locked()

    async def acquire(self) -> bool:
        return await self._lock.acquire()

    def release(self) -> None:
        self._lock.release()

    async def __aenter__(self) -> None:
        await self._lock.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self._lock.release()

    async def wait(self) -> bool:
        if not self._lock.locked():
            raise RuntimeError("cannot wait on un-acquired lock")
        self._lock.release()
        try:
            await _park(self._waiters)
        except GeneratorExit:
            raise
        except BaseException:
            await self._reacquire()
            raise
        await self._reacquire()
        return True

    async def _reacquire(self) -> None:
        """Take the lock back, as CPython does, even through cancellations (raised after)."""
        cancelled: BaseException | None = None
        while True:
            try:
                await self._lock.acquire()
                break
            except CancelledError as exc:
                cancelled = exc
        if cancelled is not None:
            raise cancelled

    async def wait_for(self, predicate: Any) -> Any:
        result = predicate()
        while not result:
            await self.wait()
            result = predicate()
        return result

    def notify(self, n: int = 1) -> None:
        if not self._lock.locked():
            raise RuntimeError("cannot notify on un-acquired lock")
        woken = 0
        for waiter in self._waiters:
            if woken >= n:
                break
            if waiter._task.sched.fire(waiter):
                woken += 1

    def notify_all(self) -> None:
        self.notify(len(self._waiters))


class Queue(_Final):
    """`asyncio.Queue` (FIFO); `maxsize <= 0` means unbounded (the memory limit still holds)."""

    __slots__ = ("_maxsize", "_items", "_getters", "_putters", "_unfinished", "_finished")

    def __init__(self, maxsize: int = 0) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int):
            raise TypeError("Queue maxsize must be an int")
        self._maxsize = maxsize
        self._items: deque[Any] = deque()
        self._getters: deque[Waiter] = deque()
        self._putters: deque[Waiter] = deque()
        self._unfinished = 0
        self._finished = Event()
        self._finished.set()

    @property
    def maxsize(self) -> int:
        return self._maxsize

    def qsize(self) -> int:
        return len(self._items)

    def empty(self) -> bool:
        return not self._items

    def full(self) -> bool:
        return 0 < self._maxsize <= len(self._items)

    async def put(self, item: Any) -> None:
        while self.full():
            try:
                await _park(self._putters)
            except BaseException:
                if not self.full():
                    _wake_first(self._putters)
                raise
        self.put_nowait(item)

    def put_nowait(self, item: Any) -> None:
        if self.full():
            raise QueueFull
        self._items.append(item)
        self._unfinished += 1
        self._finished.clear()
        _wake_first(self._getters)

    async def get(self) -> Any:
        while self.empty():
            try:
                await _park(self._getters)
            except BaseException:
                if not self.empty():
                    _wake_first(self._getters)
                raise
        return self.get_nowait()

    def get_nowait(self) -> Any:
        if not self._items:
            raise QueueEmpty
        item = self._items.popleft()
        _wake_first(self._putters)
        return item

    def task_done(self) -> None:
        if self._unfinished <= 0:
            raise ValueError("task_done() called too many times")
        self._unfinished -= 1
        if self._unfinished == 0:
            self._finished.set()

    async def join(self) -> None:
        if self._unfinished:
            await self._finished.wait()

    def __repr__(self) -> str:
        return f"<asyncio.Queue maxsize={self._maxsize} qsize={len(self._items)}>"


class Timeout(_Final):
    """What `asyncio.timeout(delay)` and `asyncio.timeout_at(when)` return: an async context
    manager that cancels the task running its body at the deadline (a `time.monotonic()`
    value, the clock CPython's loop uses) and turns that cancellation into `TimeoutError`."""

    __slots__ = ("_when", "_task", "_handle", "_expired", "_entered")

    def __init__(self, when: Any) -> None:
        self._when = None if when is None else _instant(when, "asyncio.Timeout()")
        self._task: _Task | None = None
        self._handle: list[Any] | None = None
        self._expired = False
        self._entered = False

    def when(self) -> float | None:
        return self._when

    def reschedule(self, when: Any) -> None:
        """Move the deadline (`None`: never), while the block runs and before it expired."""
        if not self._entered:
            raise RuntimeError("Timeout has not been entered")
        if self._expired:
            raise RuntimeError("Timeout has already expired")
        self._when = None if when is None else _instant(when, "Timeout.reschedule()")
        self._arm()

    def expired(self) -> bool:
        return self._expired

    def _arm(self) -> None:
        if self._handle is not None:
            self._handle[0] = None
            self._handle = None
        task = self._task
        if self._when is not None and task is not None:
            self._handle = task.sched.call_later(self._when - time.monotonic(), self._fire)

    def _fire(self) -> None:
        task = self._task
        if task is not None and not task.done:
            self._expired = True
            task.sched.cancel(task)

    async def __aenter__(self) -> Timeout:
        if self._entered:
            raise RuntimeError("Timeout has already been entered")
        self._entered = True
        self._task = running().current
        self._arm()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._handle is not None:
            self._handle[0] = None
        task = self._task
        if task is not None:
            # A cancellation that came from our own deadline is not delivered twice.
            task.must_cancel = task.must_cancel and not self._expired
        if self._expired and exc_type is CancelledError:
            raise TimeoutError from exc

    def __repr__(self) -> str:
        state = "expired" if self._expired else "active" if self._entered else "created"
        return f"<Timeout [{state}] when={self._when}>"


def _instant(value: Any, what: str) -> float:
    """A deadline on the `time.monotonic()` clock, no later than any wait may be."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{what} needs a time.monotonic() value or None")
    if math.isnan(value):
        raise ValueError(f"{what} got NaN")
    return min(float(value), time.monotonic() + MAX_SLEEP)


def timeout(delay: Any) -> Timeout:
    """`asyncio.timeout(delay)`; `None` never expires. Waits never outlive the run's wall time."""
    return Timeout(None if delay is None else time.monotonic() + _seconds(delay, "asyncio.timeout()"))


def timeout_at(when: Any) -> Timeout:
    """`asyncio.timeout_at(when)`: `when` is a `time.monotonic()` value (the sandbox has no loop
    whose `time()` to ask); `None` never expires."""
    return Timeout(None if when is None else _instant(when, "asyncio.timeout_at()"))


async def wait_for(aw: Any, timeout: Any) -> Any:
    """`asyncio.wait_for`: the awaitable's result, or `TimeoutError` (and it is cancelled)."""
    if timeout is None:
        return await aw
    task = _ensure_task(aw)
    async with Timeout(time.monotonic() + _seconds(timeout, "asyncio.wait_for()")):
        return await task


FIRST_COMPLETED = "FIRST_COMPLETED"
FIRST_EXCEPTION = "FIRST_EXCEPTION"
ALL_COMPLETED = "ALL_COMPLETED"


def _tasks_of(aws: Any, what: str) -> list[Task]:
    if isinstance(aws, (Task, types.CoroutineType, PendingCall, _GatheringFuture)) or not hasattr(aws, "__iter__"):
        raise TypeError(f"{what} takes an iterable of tasks or coroutines, not one awaitable")
    tasks: list[Task] = []
    seen: set[int] = set()
    for aw in aws:
        task = _ensure_task(aw)
        if id(task) not in seen:
            seen.add(id(task))
            tasks.append(task)
    if not tasks:
        raise ValueError("Set of Tasks/Futures is empty.")
    return tasks


async def wait(aws: Any, *, timeout: Any = None, return_when: str = ALL_COMPLETED) -> tuple[set[Task], set[Task]]:
    """`asyncio.wait`: `(done, pending)` sets of tasks; nothing is cancelled. `return_when` is
    kept as one of the three plain strings: the loop's own callback compares it when a task
    ends, and a snippet object there would run its `__eq__` as host code."""
    if type(return_when) is not str or return_when not in (FIRST_COMPLETED, FIRST_EXCEPTION, ALL_COMPLETED):
        raise ValueError(f"Invalid return_when value: {return_when!r}")
    tasks = _tasks_of(aws, "asyncio.wait()")
    delay = None if timeout is None else _seconds(timeout, "asyncio.wait()")

    def finished() -> bool:
        done = [t for t in tasks if t._task.done]
        if len(done) == len(tasks):
            return True
        if return_when == FIRST_COMPLETED:
            return bool(done)
        if return_when == FIRST_EXCEPTION:
            return any(t._task.error is not None and not t._task.cancelled for t in done)
        return False

    if not finished() and delay != 0.0:
        sched = running()
        waiter = sched.waiter()

        def check(_task: _Task) -> None:
            if finished():
                sched.fire(waiter)

        for t in tasks:
            if not t._task.done:
                t._task.callbacks.append(check)
        handle = None if delay is None else sched.call_later(delay, lambda: sched.fire(waiter))
        try:
            await waiter
        finally:
            if handle is not None:
                handle[0] = None
    done = {t for t in tasks if t._task.done}
    return done, {t for t in tasks if not t._task.done}


class _AsCompleted(_Final):
    """The iterator `asyncio.as_completed` returns: each item is a coroutine that waits for the
    next task to finish and gives its result."""

    __slots__ = ("_left", "_done", "_waiters", "_expired")

    def __init__(self, tasks: list[Task], delay: float | None) -> None:
        self._left = len(tasks)
        self._done: deque[Task] = deque()
        self._waiters: deque[Waiter] = deque()
        self._expired = False
        by_inner = {id(t._task): t for t in tasks}
        sched = running()

        def on_done(inner: _Task) -> None:
            self._done.append(by_inner[id(inner)])
            _wake_first(self._waiters)

        for t in tasks:
            if t._task.done:
                self._done.append(t)
            else:
                t._task.callbacks.append(on_done)
        if delay is not None:
            sched.call_later(delay, self._expire)

    def _expire(self) -> None:
        self._expired = True
        for waiter in self._waiters:
            waiter._task.sched.fire(waiter)

    def __iter__(self) -> _AsCompleted:
        return self

    def __next__(self) -> Any:
        if self._left <= 0:
            raise StopIteration
        self._left -= 1
        return self._next()

    async def _next(self) -> Any:
        while not self._done:
            if self._expired:
                raise TimeoutError
            await _park(self._waiters)
        return await self._done.popleft()


def as_completed(aws: Any, *, timeout: Any = None) -> _AsCompleted:
    """`asyncio.as_completed`: iterate, awaiting each item for the next result to finish."""
    tasks = _tasks_of(aws, "asyncio.as_completed()")
    return _AsCompleted(tasks, None if timeout is None else _seconds(timeout, "asyncio.as_completed()"))


class TaskGroup(_Final):
    """`asyncio.TaskGroup`: the block waits for its tasks; the first failure cancels the rest
    and the block, and the failures are raised together as an `ExceptionGroup`."""

    __slots__ = ("_parent", "_tasks", "_errors", "_aborting", "_exiting", "_waiter", "_cancelled_parent",
                 "_entered")

    def __init__(self) -> None:
        self._parent: _Task | None = None
        self._tasks: list[_Task] = []
        self._errors: list[BaseException] = []
        self._aborting = False
        self._exiting = False
        self._waiter: Waiter | None = None
        self._cancelled_parent = False
        self._entered = False

    async def __aenter__(self) -> TaskGroup:
        if self._entered:
            raise RuntimeError("TaskGroup has already been entered")
        self._entered = True
        self._parent = running().current
        return self

    def create_task(self, coro: Any, *, name: Any = None) -> Task:
        if not self._entered:
            raise RuntimeError("TaskGroup has not been entered")
        if self._aborting or (self._exiting and not self._tasks):
            if type(coro) is PendingCall or isinstance(coro, types.CoroutineType):
                coro.close()
            raise RuntimeError("TaskGroup is shutting down")
        task = create_task(coro, name=name)
        self._tasks.append(task._task)
        task._task.callbacks.append(self._on_done)
        return task

    def _abort(self) -> None:
        self._aborting = True
        for task in self._tasks:
            task.sched.cancel(task)

    def _on_done(self, task: _Task) -> None:
        if task in self._tasks:
            self._tasks.remove(task)
        error = task.error
        if error is not None and not task.cancelled:
            self._errors.append(error)
            if not self._aborting:
                self._abort()
                parent = self._parent
                if not self._exiting and parent is not None and not parent.done:
                    self._cancelled_parent = True
                    parent.sched.cancel(parent)
        if not self._tasks and self._waiter is not None:
            self._waiter._task.sched.fire(self._waiter)

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        self._exiting = True
        if exc is not None and not isinstance(exc, CancelledError) and not self._aborting:
            self._abort()
        propagate: BaseException | None = None
        while self._tasks:
            self._waiter = running().waiter()
            try:
                await self._waiter
            except CancelledError as cancelled:
                if not self._aborting:
                    self._abort()
                propagate = cancelled
            finally:
                self._waiter = None
        if self._cancelled_parent and self._parent is not None:
            self._parent.must_cancel = False
        errors = self._errors
        if exc is not None and not isinstance(exc, CancelledError):
            errors = [exc, *errors]
        if errors:
            self._errors = []
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", errors)
        if propagate is not None and not self._cancelled_parent:
            raise propagate
        return False


ASYNCIO_SHIM: dict[str, Any] = {
    "gather": gather, "sleep": sleep, "TimeoutError": TimeoutError, "CancelledError": CancelledError,
    "InvalidStateError": InvalidStateError, "create_task": create_task, "Task": Task,
    "Lock": Lock, "Event": Event, "Semaphore": Semaphore, "BoundedSemaphore": BoundedSemaphore,
    "Condition": Condition, "Queue": Queue, "QueueEmpty": QueueEmpty, "QueueFull": QueueFull,
    "wait_for": wait_for, "timeout": timeout, "wait": wait, "as_completed": as_completed,
    "FIRST_COMPLETED": FIRST_COMPLETED, "FIRST_EXCEPTION": FIRST_EXCEPTION,
    "ALL_COMPLETED": ALL_COMPLETED, "TaskGroup": TaskGroup, "timeout_at": timeout_at,
    "shield": shield, "current_task": current_task, "ensure_future": ensure_future,
    "iscoroutine": iscoroutine,
}

# Judged by the class factory over every base's MRO, whatever `__init_subclass__` chain a
# snippet's bases build.
for _sealed in (_Final, _Internal, _Task, _Gathering, Scheduler):
    seal(_sealed, "asyncio")
