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
import time
import types
from collections import deque
from collections.abc import Coroutine
from typing import Any

from .control import RunStopped, stop


class ToolCallError(Exception):
    """Raised in a snippet when a host call fails. `tool_name` names the call, `message` says why."""

    def __init__(self, tool_name: str, message: str) -> None:
        super().__init__(f"{tool_name}: {message}")
        self.tool_name = tool_name
        self.message = message


_KEY = object()


class _Internal:
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
    __slots__ = ("_awaitables", "_return_exceptions")

    def __init__(self, key: object, awaitables: tuple[Any, ...], return_exceptions: bool) -> None:
        self._awaitables = awaitables
        self._return_exceptions = return_exceptions


class _Awaitable(_Internal):
    """Wraps one request; awaiting it yields the request to the scheduler."""

    __slots__ = ("_request",)

    def __init__(self, key: object, request: Any) -> None:
        self._request = request

    def __await__(self) -> Any:
        return (yield self._request)


class PendingCall(_Internal):
    """What `tools.name(...)` returns: awaitable exactly once, with nothing else reachable."""

    __slots__ = ("_request", "_awaited")

    def __init__(self, key: object, request: CallRequest) -> None:
        self._request = request
        self._awaited = False

    def __await__(self) -> Any:
        if self._awaited:
            raise RuntimeError("this tool call was already awaited; call the tool again")
        self._awaited = True
        return (yield self._request)

    def __repr__(self) -> str:
        return f"<un-awaited call {self._request._name}(...): write 'await' before it>"


def make_request(name: str, args: list[Any], kwargs: dict[str, Any], payload: str,
                 line: int | None) -> CallRequest:
    return CallRequest(_KEY, name, args, kwargs, payload, line)


def make_pending(request: CallRequest) -> PendingCall:
    return PendingCall(_KEY, request)


def gather(*aws: Any, return_exceptions: bool = False) -> _Awaitable:
    """`asyncio.gather` for snippets: runs the awaitables concurrently, results in order."""
    return _Awaitable(_KEY, _Gather(_KEY, tuple(aws), bool(return_exceptions)))


def sleep(delay: float, result: Any = None) -> _Awaitable:
    """`asyncio.sleep` for snippets; bounded by the run's wall-time limit."""
    if isinstance(delay, bool) or not isinstance(delay, (int, float)):
        raise TypeError("asyncio.sleep() needs a number of seconds")
    if math.isnan(delay):
        raise ValueError("asyncio.sleep() got NaN")
    # Longer than any run may last; the wall-time limit ends the run first.
    return _Awaitable(_KEY, _Sleep(_KEY, min(max(0.0, float(delay)), MAX_SLEEP)))


MAX_SLEEP = 1e6

ASYNCIO_SHIM: dict[str, Any] = {"gather": gather, "sleep": sleep, "TimeoutError": TimeoutError}


async def _await_one(awaitable: Any) -> Any:
    return await awaitable


class _Task:
    __slots__ = ("coro", "group", "index", "done", "value", "error")

    def __init__(self, coro: Coroutine[Any, Any, Any], group: _Group | None, index: int) -> None:
        self.coro = coro
        self.group = group
        self.index = index
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class _Group:
    __slots__ = ("parent", "results", "pending", "return_exceptions", "children", "finished")

    def __init__(self, parent: _Task, size: int, return_exceptions: bool) -> None:
        self.parent = parent
        self.results: list[Any] = [None] * size
        self.pending = size
        self.return_exceptions = return_exceptions
        self.children: list[_Task] = []
        self.finished = False


def call_limit_message(limit: int) -> str:
    return f"the snippet made more than {limit} host calls; batch the work or narrow it"


class Scheduler:
    """Runs snippet tasks until each is blocked; the driver does the waiting.

    Driver protocol: `run_ready()`, then send `take_outbox()`, then wait for a reply
    (`resolve`) or the next timer (`next_deadline`, `fire_timers`), until `main_done`.
    """

    def __init__(self, max_calls: int) -> None:
        self.max_calls = max_calls
        self.calls_issued = 0
        self.ready: deque[tuple[_Task, Any, BaseException | None]] = deque()
        self.waiting: dict[int, tuple[_Task, str]] = {}
        self.timers: list[tuple[float, int, _Task]] = []
        self.outbox: list[tuple[int, CallRequest]] = []
        self.tasks: list[_Task] = []
        self.main: _Task | None = None
        self._seq = 0
        #: Requests made by the host for this run. A snippet that drives a coroutine by hand
        #: can see (and copy) a request; only the originals are ever dispatched.
        self.issued: set[CallRequest] = set()

    def start(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.main = self._spawn(coro, None, 0)

    @property
    def main_done(self) -> bool:
        return self.main is not None and self.main.done

    def _spawn(self, coro: Coroutine[Any, Any, Any], group: _Group | None, index: int) -> _Task:
        task = _Task(coro, group, index)
        self.tasks.append(task)
        self.ready.append((task, None, None))
        return task

    def run_ready(self) -> None:
        ready = self.ready
        while ready:
            task, value, exc = ready.popleft()
            if task.done:
                continue
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
            try:
                self._dispatch(task, request)
            except RunStopped:
                raise
            except Exception as error:  # a request the snippet mangled: its own fault
                self.ready.append((task, None, error))

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
                raise stop("call-limit", call_limit_message(self.max_calls))
            self.calls_issued += 1
            self.waiting[self.calls_issued] = (task, request._name)
            self.outbox.append((self.calls_issued, request))
        elif kind is _Sleep:
            self._seq += 1
            heapq.heappush(self.timers, (time.monotonic() + request._delay, self._seq, task))
        elif kind is _Gather:
            self._gather(task, request)
        else:
            self.ready.append(
                (task, None, TypeError("a snippet can only await tool calls, asyncio.sleep, "
                                       "asyncio.gather and its own coroutines"))
            )

    def _gather(self, parent: _Task, request: _Gather) -> None:
        group = _Group(parent, len(request._awaitables), request._return_exceptions)
        if not request._awaitables:
            self.ready.append((parent, [], None))
            return
        coros = []
        for aw in request._awaitables:
            if isinstance(aw, types.CoroutineType):
                coros.append(aw)
            elif isinstance(aw, (PendingCall, _Awaitable)):
                coros.append(_await_one(aw))
            else:
                for c in coros:
                    c.close()
                self.ready.append(
                    (parent, None, TypeError(
                        f"asyncio.gather() takes awaitables (tool calls or coroutines), "
                        f"got a '{type(aw).__name__}'"))
                )
                return
        for i, coro in enumerate(coros):
            group.children.append(self._spawn(coro, group, i))

    def _finish(self, task: _Task, value: Any, error: BaseException | None) -> None:
        task.done = True
        task.value = value
        task.error = error
        group = task.group
        if group is None or group.finished:
            return
        if error is not None and not group.return_exceptions:
            group.finished = True
            for child in group.children:
                if not child.done:
                    self._cancel(child)
            self.ready.append((group.parent, None, error))
            return
        group.results[task.index] = error if error is not None else value
        group.pending -= 1
        if group.pending == 0:
            group.finished = True
            self.ready.append((group.parent, group.results, None))

    def _cancel(self, task: _Task) -> None:
        task.done = True
        try:
            task.coro.close()
        except RunStopped:
            raise
        except BaseException:
            pass

    def take_outbox(self) -> list[tuple[int, CallRequest]]:
        out = self.outbox
        self.outbox = []
        return out

    def resolve(self, call_id: int, ok: bool, value: Any) -> None:
        entry = self.waiting.pop(call_id, None)
        if entry is None:
            return
        task, name = entry
        if task.done:
            return
        if ok:
            self.ready.append((task, value, None))
        else:
            self.ready.append((task, None, ToolCallError(name, str(value))))

    def next_deadline(self) -> float | None:
        return self.timers[0][0] if self.timers else None

    def fire_timers(self) -> None:
        now = time.monotonic()
        timers = self.timers
        while timers and timers[0][0] <= now:
            _, _, task = heapq.heappop(timers)
            self.ready.append((task, None, None))

    @property
    def idle(self) -> bool:
        """Nothing runnable and nothing to wait for: the main task awaits something that can
        never finish."""
        return not self.ready and not self.waiting and not self.timers and not self.outbox

    def close(self) -> None:
        """Close every unfinished coroutine so none outlives the run."""
        for task in self.tasks:
            if not task.done:
                task.done = True
                try:
                    task.coro.close()
                except BaseException:
                    pass
