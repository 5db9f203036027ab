"""A tiny event loop for snippet coroutines, shared by both backends.

Snippet coroutines never touch a real event loop. What they await (a host call, `asyncio.sleep`,
`asyncio.gather`) yields a plain request object up to this scheduler, which collects the host
calls of every runnable task, hands them to a backend driver in one batch, and resumes each task
when its answer arrives. The worker driver sends the batch over its channel; the in-process
driver runs the bound functions in an anyio task group. Neither exposes loop objects, futures or
host frames to the snippet, and cancelling the host simply stops driving.
"""

from __future__ import annotations

import heapq
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from .control import RunStopped, Verdict
from .guards import CheckedMethods
from .raised import out_of_memory


class ToolCallError(Exception):
    """Raised in a snippet when a host call fails. `tool_name` names the call, `message` says why."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(f"{tool_name}: {message}")
        self.tool_name = tool_name
        self.message = message


_KEY = object()


class _Internal(metaclass=CheckedMethods):
    """Base of the scheduler's request and awaitable objects. A snippet can reach them (by
    driving a coroutine by hand) but cannot build, copy or change one: every constructor needs
    this module's key, fields are private, and copying is refused."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if not args or args[0] is not _KEY:
            raise TypeError("sandbox internals cannot be created by a snippet")
        return object.__new__(cls)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"'{type(self).__name__}' objects cannot be copied")


class CallRequest(_Internal):
    """One host call a task is waiting for: plain data, readable by host code only."""

    __slots__ = ("_name", "_args", "_kwargs", "_payload", "_line")

    def __init__(self, key: object, name: str, args: list[Any], kwargs: dict[str, Any],
                 payload: str, line: int | None) -> None:
        self._name = name
        self._args = args
        self._kwargs = kwargs
        self._payload = payload
        self._line = line


class _Sleep(_Internal):
    __slots__ = ("_delay",)

    def __init__(self, key: object, delay: float) -> None:
        self._delay = delay


class _Gather(_Internal):
    """A task's wait for a gather to settle (what awaiting an `asyncio.gather` future yields)."""

    __slots__ = ("_gathering",)

    def __init__(self, key: object, gathering: _Gathering) -> None:
        self._gathering = gathering


class _Awaitable(_Internal):
    """Wraps one request; awaiting it yields the request to the scheduler."""

    __slots__ = ("_request",)

    def __init__(self, key: object, request: Any) -> None:
        self._request = request

    def __await__(self) -> Any:
        return (yield self._request)


ALREADY_AWAITED = "this tool call was already awaited; call the tool again"


class PendingCall(_Internal):
    """What `tools.name(...)` returns: awaitable exactly once, with nothing else reachable."""

    __slots__ = ("_request", "_awaited")

    def __init__(self, key: object, request: CallRequest) -> None:
        self._request = request
        self._awaited = False

    def __await__(self) -> Any:
        if self._awaited:
            raise RuntimeError(ALREADY_AWAITED)
        self._awaited = True
        return (yield self._request)

    def close(self) -> None:
        """Drop the call unmade, as closing a coroutine that never ran does (no warning that it
        was never awaited; awaiting it later raises)."""
        self._awaited = True

    def __repr__(self) -> str:
        return f"<un-awaited call {self._request._name}(...): write 'await' before it>"


def make_request(name: str, args: list[Any], kwargs: dict[str, Any], payload: str,
                 line: int | None) -> CallRequest:
    return CallRequest(_KEY, name, args, kwargs, payload, line)


def make_pending(request: CallRequest) -> PendingCall:
    return PendingCall(_KEY, request)


def wait_gathering(gathering: _Gathering) -> _Gather:
    return _Gather(_KEY, gathering)


async def sleep(delay: float, result: Any = None) -> Any:
    """`asyncio.sleep` for snippets: a coroutine, as in CPython (so `create_task` takes it), that
    gives back `result`; bounded by the run's wall-time limit."""
    if isinstance(delay, bool) or not isinstance(delay, (int, float)):
        raise TypeError("asyncio.sleep() needs a number of seconds")
    if math.isnan(delay):
        raise ValueError("asyncio.sleep() got NaN")
    # Longer than any run may last; the wall-time limit ends the run first.
    await _Awaitable(_KEY, _Sleep(_KEY, min(max(0.0, float(delay)), MAX_SLEEP)))
    return result


MAX_SLEEP = 1e6
#: Unfinished tasks a run may have at once (`asyncio.create_task`, the tasks `gather` wraps).
MAX_TASKS = 10_000
#: The run's error when one of the event loop's own callbacks failed (`Scheduler._host_action`).
LOOP_FAILED = "the sandbox's event loop failed; the run was ended"


class CancelledError(BaseException):
    """`asyncio.CancelledError` for snippets: thrown into a task that was cancelled."""


_PENDING, _FIRED, _TAKEN, _ABANDONED = range(4)


class Waiter(_Internal):
    """One wake-up a task parks on (a lock's turn, a queue item, a timer). Made by the sandbox's
    asyncio classes for the running task only; awaiting it parks that task until `fire`."""

    __slots__ = ("_task", "_state", "_value", "_error")

    def __init__(self, key: object, task: _Task) -> None:
        self._task = task
        self._state = _PENDING
        self._value: Any = None
        self._error: BaseException | None = None

    @property
    def fired(self) -> bool:
        return self._state in (_FIRED, _TAKEN)

    def __await__(self) -> Any:
        value = yield self
        if self._state != _TAKEN:
            raise RuntimeError("this wait was resumed out of turn")
        return value


async def _await_one(awaitable: Any) -> Any:
    return await awaitable


class _Task:
    __slots__ = ("coro", "done", "value", "error", "sched", "blocked",
                 "must_cancel", "cancelled", "callbacks", "user", "name", "handle", "call_id")

    def __init__(self, sched: Scheduler, coro: Coroutine[Any, Any, Any]) -> None:
        self.sched = sched
        self.coro = coro
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        #: What the task waits for (a call, a waiter, a gather); a wake-up for anything
        #: else is stale and dropped.
        self.blocked: Any = None
        self.must_cancel = False
        self.cancelled = False
        #: Host callables run with the task once it is done (`Scheduler._run_callbacks`).
        self.callbacks: list[Any] = []
        self.user = False
        self.name = ""
        #: The one `asyncio.Task` a snippet sees for this task (made on first need).
        self.handle: Any = None
        #: The id of the host call the task waits for, while `blocked` is that call.
        self.call_id = 0


class _Gathering:
    """One `asyncio.gather`'s state, CPython's `_GatheringFuture`: its children (tasks or other
    gatherings, a repeated argument listed again) settle it as they finish. The first error
    settles it (unless `return_exceptions`) and the others keep running; once settled, the
    outcome is kept, so every await gives the same list or raises the same exception. It has a
    task's outcome fields, so the snippet's view reuses `Task`'s inspection methods."""

    __slots__ = ("sched", "children", "distinct", "return_exceptions", "finished", "done", "value",
                 "error", "cancelled", "callbacks", "cancel_requested", "handle")

    def __init__(self, sched: Scheduler, children: list[Any], return_exceptions: bool) -> None:
        self.sched = sched
        self.children = children
        #: Each child once (a repeated argument is one task), in order.
        self.distinct = list({id(c): c for c in children}.values())
        self.return_exceptions = return_exceptions
        self.finished = 0
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        #: Always False, as in CPython: a cancelled gather ends with `CancelledError` as its
        #: exception, not in the cancelled state.
        self.cancelled = False
        self.callbacks: list[Any] = []
        self.cancel_requested = False
        self.handle: Any = None
        if not self.distinct:
            self._settle([], None)
        for child in self.distinct:
            if child.done:
                self._child_done(child)
            else:
                child.callbacks.append(self._child_done)

    def _child_done(self, child: Any) -> None:
        self.finished += 1
        if self.done:
            return  # settled already: what this child gives is dropped
        if not self.return_exceptions:
            if child.cancelled:
                self._settle(None, CancelledError())
                return
            if child.error is not None:
                self._settle(None, child.error)
                return
        if self.finished < len(self.distinct):
            return
        if self.cancel_requested:
            self._settle(None, CancelledError())
            return
        self._settle([CancelledError() if c.cancelled else c.error if c.error is not None else c.value
                      for c in self.children], None)

    def _settle(self, value: Any, error: BaseException | None) -> None:
        self.done = True
        self.value = value
        self.error = error
        self.sched._run_callbacks(self)


def call_limit_message(limit: int) -> str:
    return f"the snippet made more than {limit} host calls; batch the work or narrow it"


def task_limit_message(limit: int) -> str:
    return f"the snippet had more than {limit} unfinished tasks at once; bound the work with a Semaphore or batches"


_local = threading.local()


def running() -> Scheduler:
    """The scheduler running snippet code on this thread (`RuntimeError` outside a run)."""
    sched = getattr(_local, "sched", None)
    if sched is None or sched.current is None:
        raise RuntimeError("no running event loop")
    return sched


class Scheduler:
    """Runs snippet tasks until each is blocked; the driver does the waiting.

    Driver protocol: `run_ready()`, then send `take_outbox()` and cancel `take_abandoned()`, then
    wait for a reply
    (`resolve`) or the next timer (`next_deadline`, `fire_timers`), until `main_done`; then
    `close()` before reading the result.
    """

    def __init__(self, max_calls: int, verdict: Verdict, report: Callable[[str], None] | None = None,
                 memory: str = "the run exceeded its memory limit") -> None:
        self.max_calls = max_calls
        #: The run whose call and task caps this scheduler enforces.
        self.verdict = verdict
        #: The run's `memory` message, for an allocation failure in the loop's own callbacks.
        self.memory = memory
        #: Where a failing `call_soon` callback is reported (the run's log), as CPython's loop
        #: logs it; the program goes on.
        self.report = report
        self.calls_issued = 0
        self.ready: deque[tuple[_Task, Any, BaseException | None]] = deque()
        self.waiting: dict[int, tuple[_Task, CallRequest]] = {}
        self.timers: list[tuple[float, int, list[Any]]] = []
        self.outbox: list[tuple[int, CallRequest]] = []
        #: Ids of host calls whose awaiting task was cancelled: the driver cancels them on the
        #: host (`take_abandoned`), so an abandoned call neither runs on nor holds its slot.
        self.abandoned: list[int] = []
        self.tasks: list[_Task] = []
        self.main: _Task | None = None
        self.current: _Task | None = None
        self.live = 0
        self.ended_pending = 0
        self.stopping: RunStopped | None = None
        self._seq = 0
        self._names = 0
        #: Requests made by the host for this run. A snippet that drives a coroutine by hand
        #: can see (and copy) a request; only the originals are ever dispatched.
        self.issued: set[CallRequest] = set()
        #: Callbacks due (`call_soon`), run in order by one internal task at a time.
        self.soon: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self.soon_runner: _Task | None = None
        self.closing = False
        #: Tasks and gatherings whose done callbacks are due, run one after the other (a chain
        #: of nested gathers settles without recursion).
        self._due: deque[Any] = deque()
        self._draining = False
        #: Gathers still to cancel while one cancel is being carried out (`cancel_gathering`).
        self._cancels: deque[_Gathering] = deque()
        self._cancelling = False
        #: Charged once per task resumption (in-process: the run's budget tick): a task whose
        #: awaitable is a C iterator (`itertools.repeat(request)`) resumes for ever without
        #: running a line of snippet code, so nothing else would tick. (Each new batch of
        #: `call_soon` callbacks is a resumption of the task that runs them.)
        self.tick: Callable[[], None] | None = None

    def start(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.main = self._spawn(coro)
        self._names += 1
        self.main.name = "Task-1"

    def name_of(self, task: _Task) -> str:
        """A task's name; one that has none yet (the scheduler's own) gets the next `Task-<n>`."""
        if not task.name:
            self._names += 1
            task.name = f"Task-{self._names}"
        return task.name

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run the snippet's `fn(*args)` on this scheduler once the running task yields, in the
        order asked; nothing is run once the program has ended. One internal task runs the
        callbacks due, so callbacks never count against the task cap one by one."""
        if self.closing:
            return
        self.soon.append((fn, args))
        if self.soon_runner is None:
            self.soon_runner = self._spawn(self._run_soon())

    async def _run_soon(self) -> None:
        try:
            while self.soon:
                batch, self.soon = self.soon, deque()
                for fn, args in batch:
                    try:
                        fn(*args)
                    except RunStopped:
                        raise
                    except BaseException as error:  # the snippet's own, as CPython's loop logs it
                        self._report_callback(fn, args, error)
                if self.soon:
                    # Added by these callbacks: they run after the tasks ready now, as in CPython.
                    turn = Waiter(_KEY, self.current)
                    self.fire(turn)
                    await turn
        finally:
            self.soon_runner = None

    def _report_callback(self, fn: Callable[..., Any], args: tuple[Any, ...], error: BaseException) -> None:
        if self.report is None:
            return
        try:
            what = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
            name = getattr(fn, "__name__", None) or type(fn).__name__
            shown = ", ".join(repr(a) for a in args)
        except RunStopped:
            raise
        except BaseException:
            what, name, shown = type(error).__name__, "?", "..."
        self.report(f"Exception in callback {name}({shown}): {what}")

    @property
    def main_done(self) -> bool:
        return self.main is not None and self.main.done

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> _Task:
        if self.live >= MAX_TASKS:
            # Raised in the snippet's frame, which may catch it: the scheduler raises it again
            # as soon as that task yields.
            self.stopping = self.verdict.stop("exception", task_limit_message(MAX_TASKS))
            raise self.stopping
        task = _Task(self, coro)
        self.live += 1
        self.tasks.append(task)
        self.ready.append((task, None, None))
        return task

    def spawn_user(self, coro: Coroutine[Any, Any, Any]) -> _Task:
        """A task from `asyncio.create_task` or `gather`: counted in the note about tasks left
        pending."""
        task = self._spawn(coro)
        task.user = True
        self._names += 1
        task.name = f"Task-{self._names}"
        return task

    def waiter(self) -> Waiter:
        assert self.current is not None
        return Waiter(_KEY, self.current)

    def run_ready(self) -> None:
        ready = self.ready
        saved = getattr(_local, "sched", None)
        _local.sched = self
        tick = self.tick
        try:
            main = self.main
            while ready:
                if self.stopping is not None:
                    raise self.stopping
                if tick is not None:
                    tick()
                if main is not None and main.done:
                    break  # the program ended: what is left is cancelled by `close`
                task, value, exc = ready.popleft()
                if task.done:
                    continue
                if task.must_cancel:
                    task.must_cancel = False
                    exc = CancelledError()
                self.current = task
                try:
                    if exc is None:
                        request = task.coro.send(value)
                    else:
                        request = task.coro.throw(exc)
                except StopIteration as finished:
                    self._finish(task, finished.value, None)
                    continue
                except RunStopped:
                    raise
                except BaseException as error:  # the snippet's own exceptions, SystemExit included
                    self._finish(task, None, error)
                    continue
                finally:
                    self.current = None
                if self.stopping is not None:
                    raise self.stopping
                if task.done:
                    # Ended while it ran: what it yielded never starts.
                    self._drop_request(request)
                    continue
                if task.must_cancel:
                    # Cancelled while running (by itself, or by a task it woke): what it yielded
                    # never starts, and a gather it was about to wait for is cancelled, as
                    # CPython cancels the future a task with a pending cancel yields.
                    task.must_cancel = False
                    self._drop_request(request)
                    if type(request) is _Gather and request._gathering.sched is self:
                        self.cancel_gathering(request._gathering)
                    ready.append((task, None, CancelledError()))
                    continue
                try:
                    self._dispatch(task, request)
                except RunStopped:
                    raise
                except Exception as error:  # a request the snippet mangled: its own fault
                    self.ready.append((task, None, error))
        finally:
            _local.sched = saved

    def _drop_request(self, request: Any) -> None:
        kind = type(request)
        if kind is CallRequest:
            self.issued.discard(request)
        elif kind is Waiter and request._state == _PENDING:
            request._state = _ABANDONED

    def _dispatch(self, task: _Task, request: Any) -> None:
        kind = type(request)
        if kind is CallRequest:
            if request not in self.issued:
                self.ready.append((task, None, TypeError("this tool call was not made by the sandbox")))
                return
            self.issued.discard(request)
            if self.calls_issued >= self.max_calls:
                # The call that trips the limit joins the outbox: a worker shows it to the host,
                # which counts calls itself and refuses it (no call of that batch runs).
                self.outbox.append((self.calls_issued + 1, request))
                raise self.verdict.stop("call-limit", call_limit_message(self.max_calls))
            self.calls_issued += 1
            self.waiting[self.calls_issued] = (task, request)
            task.blocked = request
            task.call_id = self.calls_issued
            self.outbox.append((self.calls_issued, request))
        elif kind is Waiter:
            if request._task is not task or request._state in (_TAKEN, _ABANDONED):
                self.ready.append((task, None, RuntimeError("this wait belongs to another task")))
            elif request._state == _FIRED:
                request._state = _TAKEN
                self.ready.append((task, request._value, request._error))
            else:
                task.blocked = request
        elif kind is _Sleep:
            waiter = Waiter(_KEY, task)
            task.blocked = waiter
            self.call_later(request._delay, lambda: self.fire(waiter))
        elif kind is _Gather:
            gathering = request._gathering
            if gathering.sched is not self:
                self.ready.append((task, None, RuntimeError("this gather belongs to an earlier run")))
            elif gathering.done:
                self.ready.append((task, None, None))
            else:
                task.blocked = request
                gathering.callbacks.append(lambda _g: self._wake(task, request, None, None))
        else:
            self.ready.append(
                (task, None, TypeError("a snippet can only await tool calls, asyncio.sleep, "
                                       "asyncio.gather, tasks and its own coroutines"))
            )

    def fire(self, waiter: Waiter, value: Any = None, error: BaseException | None = None) -> bool:
        """Wake the task parked on `waiter`; False when it can no longer be woken (cancelled,
        ended, woken already), so the caller wakes the next one instead."""
        task = waiter._task
        if waiter._state != _PENDING or task.done:
            return False
        waiter._value, waiter._error = value, error
        if task.blocked is waiter:
            task.blocked = None
            waiter._state = _TAKEN
            self.ready.append((task, value, error))
        else:
            waiter._state = _FIRED
        return True

    def call_later(self, delay: float, action: Any) -> list[Any]:
        """Run `action()` (host code) after `delay` seconds; the returned handle's `[0] = None`
        cancels it."""
        self._seq += 1
        handle = [action]
        heapq.heappush(self.timers, (time.monotonic() + min(max(0.0, delay), MAX_SLEEP), self._seq, handle))
        return handle

    def gathering(self, children: list[Any], return_exceptions: bool) -> _Gathering:
        """The state of one `asyncio.gather` over `children` (this run's tasks and gatherings)."""
        return _Gathering(self, children, return_exceptions)

    def cancel_gathering(self, gathering: _Gathering) -> bool:
        """`gather(...).cancel()`: cancel every child not done yet, nested gathers' children
        included; False when nothing was left to cancel. As in CPython, a gather whose cancel
        reached a child ends with `CancelledError` whatever `return_exceptions` says. Gathers
        that the cancelled tasks wait for are cancelled after, from a queue: however deep the
        snippet nests tasks and gathers, nothing recurses."""
        if gathering.done:
            return False
        outermost = not self._cancelling
        self._cancelling = True
        try:
            hit = self._cancel_tree(gathering)
            if outermost:
                while self._cancels:
                    self._cancel_tree(self._cancels.popleft())
        finally:
            if outermost:
                self._cancelling = False
        return hit

    def _cancel_tree(self, gathering: _Gathering) -> bool:
        if gathering.done:
            return False
        order: list[_Gathering] = []
        seen: set[int] = {id(gathering)}
        stack = [gathering]
        while stack:
            g = stack.pop()
            order.append(g)
            for child in g.distinct:
                if type(child) is _Gathering and not child.done and id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)
        cancelled: dict[int, bool] = {}
        for g in reversed(order):  # children before the gathers that hold them
            hit = False
            for child in g.distinct:
                if type(child) is _Gathering:
                    hit = cancelled.get(id(child), False) or hit
                elif self.cancel(child):
                    hit = True
            cancelled[id(g)] = hit
            if hit:
                g.cancel_requested = True
        return cancelled[id(gathering)]

    def _finish(self, task: _Task, value: Any, error: BaseException | None) -> None:
        if task.done:  # killed already (by a cancel that reached it while it ran): counted once
            return
        task.done = True
        self.live -= 1
        task.value = value
        task.error = error
        if isinstance(error, CancelledError):
            task.cancelled = True
        self._run_callbacks(task)

    def _run_callbacks(self, done: Any) -> None:
        """Run the host callbacks of a task or gathering that just ended. One that settles a
        gathering queues that gathering's callbacks behind, so nesting never recurses."""
        self._due.append(done)
        if self._draining:
            return
        self._draining = True
        try:
            while self._due:
                item = self._due.popleft()
                callbacks, item.callbacks = item.callbacks, []
                for callback in callbacks:
                    self._host_action(callback, item)
        finally:
            self._draining = False

    def _host_action(self, action: Callable[..., Any], *args: Any) -> None:
        """Run one of the loop's own callbacks (a task's done callbacks, a timer's action).
        They are host code over host values (the asyncio shim copies what it keeps, such as
        `wait`'s `return_when`, to exact types); one that raises anyway ends the run through
        its verdict, as `memory` if the interpreter could not allocate (the snippet can make
        the loop's bookkeeping large), else as `crashed`, and never unwinds through the host,
        whose clean-up after the run (sealing it, putting back shared state) must run."""
        try:
            action(*args)
        except RunStopped as stopped:
            self.stopping = self.stopping or stopped
        except BaseException as exc:
            failed = self.verdict.stop("memory", self.memory) if out_of_memory(exc) else self.verdict.stop(
                "crashed", LOOP_FAILED)
            self.stopping = self.stopping or failed

    def _wake(self, task: _Task, token: Any, value: Any, error: BaseException | None) -> None:
        if not task.done and task.blocked is token:
            task.blocked = None
            self.ready.append((task, value, error))

    def cancel(self, task: _Task) -> bool:
        """`Task.cancel()`: a `CancelledError` is thrown into the task where it waits."""
        if task.done:
            return False
        blocked = task.blocked
        if blocked is None:
            task.must_cancel = True
            return True
        task.blocked = None
        if type(blocked) is Waiter:
            if blocked._state == _PENDING:
                blocked._state = _ABANDONED
        elif type(blocked) is _Gather:
            # As CPython's `Task.cancel` cancels the future its task waits for: the gather's
            # children are cancelled before anything else runs.
            if self._cancelling:
                self._cancels.append(blocked._gathering)
            else:
                self.cancel_gathering(blocked._gathering)
        elif type(blocked) is CallRequest:
            # The host cancels the call too (the driver sends `take_abandoned`); an answer that
            # crosses the cancel on its way is dropped.
            if self.waiting.pop(task.call_id, None) is not None:
                self.abandoned.append(task.call_id)
        self.ready.append((task, None, CancelledError()))
        return True

    def _kill(self, task: _Task) -> None:
        """End a task at once: its coroutine is closed (its `finally` blocks run). The task that
        is running right now cannot be closed from inside itself: it is cancelled instead, where
        it next yields."""
        if task.done:
            return
        if task is self.current:
            task.must_cancel = True
            return
        task.done = True
        task.cancelled = True
        self.live -= 1
        blocked = task.blocked
        task.blocked = None
        if type(blocked) is Waiter and blocked._state == _PENDING:
            blocked._state = _ABANDONED
        try:
            task.coro.close()
        except RunStopped as stopped:
            self.stopping = self.stopping or stopped
        except BaseException:
            pass
        if task.error is None:
            task.error = CancelledError()
        self._run_callbacks(task)

    def take_outbox(self) -> list[tuple[int, CallRequest]]:
        out = self.outbox
        self.outbox = []
        return out

    def take_abandoned(self) -> list[int]:
        """Ids of the host calls to cancel: sent after `take_outbox`, so a call made and
        abandoned in the same step is cancelled after it starts."""
        out = self.abandoned
        self.abandoned = []
        return out

    def resolve(self, call_id: int, ok: bool, value: Any) -> None:
        entry = self.waiting.pop(call_id, None)
        if entry is None:
            return
        task, request = entry
        if ok:
            self._wake(task, request, value, None)
        else:
            self._wake(task, request, None, ToolCallError(request._name, str(value)))

    def next_deadline(self) -> float | None:
        timers = self.timers
        while timers and timers[0][2][0] is None:
            heapq.heappop(timers)
        return timers[0][0] if timers else None

    def fire_timers(self) -> None:
        now = time.monotonic()
        timers = self.timers
        while timers and timers[0][0] <= now:
            _, _, handle = heapq.heappop(timers)
            action = handle[0]
            if action is not None:
                handle[0] = None
                self._host_action(action)

    @property
    def pending_note(self) -> int:
        """How many of the snippet's own tasks were (or are) left unfinished at the end."""
        return self.ended_pending + sum(1 for t in self.tasks if t.user and not t.done)

    def release(self) -> None:
        """The end of an in-process run, after `close`: let go of every task, value and callback
        of the run's, whoever still holds the scheduler (`Execution.release`)."""
        self.ready.clear()
        self.waiting.clear()
        self.timers.clear()
        self.outbox.clear()
        self.abandoned.clear()
        self.tasks = []
        self.main = self.current = self.soon_runner = None
        self.stopping = None
        self.issued.clear()
        self.soon.clear()
        self._due.clear()
        self._cancels.clear()

    def close(self, *, reraise: bool = True) -> None:
        """Close every unfinished coroutine so none outlives the run. A limit's stop raised
        by a coroutine's `finally` is raised again once all are closed (with `reraise`)."""
        saved = getattr(_local, "sched", None)
        _local.sched = None
        self.closing = True
        try:
            for task in self.tasks:
                if not task.done:
                    if task.user:
                        self.ended_pending += 1
                    self._kill(task)
        finally:
            _local.sched = saved
        self.tasks = []
        stopping, self.stopping = self.stopping, None
        if reraise and stopping is not None:
            raise stopping
