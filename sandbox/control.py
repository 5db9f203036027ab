"""Steering a run from outside the snippet: stopping it for a limit, or cancelling it.

`RunStopped` derives from BaseException so that `except Exception` in a snippet does not swallow
a limit. A bare `except:` can still catch it once; the stop stays armed and re-fires (budget
ticks, the worker's repeating timer), and the worker backend kills the process as a last resort.

Why a run stopped is host state, never the exception's: the host writes the kind and the text
into the run's `Verdict` when it raises the stop, and reads the verdict, not the exception, when
it describes the run. Each limit holds the verdict of its own run (the run's output, budget,
scheduler and timers are made with it), never an ambient one: a run's `print` kept alive past
its run (in a host cache, or by a concurrent in-process run) can stop nothing but its own. A snippet that catches a stop holds an object that says nothing the host
believes: changing it (even with the real `object.__setattr__`), re-raising it in a later run of a
session, or raising an instance of a subclass makes at most an `exception` of the snippet's own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

from .result import ErrorKind, RunError


class RunStopped(BaseException):
    """Raised inside a run to end it. Made only by `stop()` and `Verdict.stop()`; it carries no
    kind of its own (the run's `Verdict` has it). A snippet that caught one cannot build another
    from its class, and copying one fails because its constructor refuses to run."""

    def __init__(self, *args: object) -> None:
        raise TypeError("RunStopped cannot be created in a snippet")

    def __setattr__(self, name: str, value: object) -> None:
        raise TypeError("RunStopped cannot be changed")

    def __delattr__(self, name: str) -> None:
        raise TypeError("RunStopped cannot be changed")


class Verdict:
    """The host's account of why it stopped one run: the first stop raised for it, whatever the
    snippet did afterwards (caught it, re-raised it, raised something else, returned a value).
    Every limit of the run (output, budget, sleep, call and task caps, the worker's timers)
    records into it through `stop`."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: RunError | None = None

    def stop(self, kind: ErrorKind, message: str) -> RunStopped:
        if self.error is None:
            self.error = RunError(kind, message)
        return _new_stop(message)



def _new_stop(message: str) -> RunStopped:
    return RunStopped.__new__(RunStopped, message)


class RunOverError(Exception):
    """What snippet code gets when it runs outside its run's steps, in-process: a freed
    generator's `finally` when the garbage collector reaches it after the run or while a binding
    runs, or a snippet function that host code calls later (an object the run left in a cache).
    A fresh, ordinary exception each time, recorded in no verdict: host code that called the
    object handles it as any failing callback, never a `BaseException` of the run (which ends an
    event loop) or one instance whose traceback grows with each call. It is raised `from None`:
    a host that formats the chain (pytest's unraisable hook does) never calls the `__str__` of a
    snippet exception it interrupted."""

    def __init__(self) -> None:
        super().__init__("this code belongs to a sandbox run and cannot run outside it")


class _Collecting(threading.local):
    """Whether a garbage collection is running on this thread (`execution._collector_context`
    says so). What it finalizes may be a run's late code, which CPython runs wherever host code
    allocates: inside another run's step, or inside host code that holds a lock."""

    running = False


COLLECTING = _Collecting()


class _Releasing(threading.local):
    """Whether the host is letting go of an in-process run's objects on this thread
    (`execution.Releasing`): what that frees runs a dead run's late code there."""

    active = False


RELEASING = _Releasing()


def refuse_while_collecting() -> None:
    """For host code a snippet reaches that must not run inside a collection: `RunOverError` if
    one runs on this thread. `_strptime` holds a lock that is not reentrant while it compiles a
    format, which allocates: a review's late `time.strptime`, run by a collection started there
    (in the host's own `datetime.strptime`, or in a later run's), waited on that lock for ever."""
    if COLLECTING.running:
        raise RunOverError() from None


def after_run_stop() -> RunStopped:
    """The `RunStopped` that ends snippet code still running after its run is over (a
    generator's `finally` when it is freed): recorded in no verdict."""
    return _new_stop("the run is over")


class RunController:
    """Lets the host cancel a run it started, with a reason the run's error reports, and watch
    what it prints while it runs.

    Cancelling the awaiting task (an anyio cancel scope) also ends the run, but then the caller
    gets no result; `cancel()` ends it with `RunResult(error=RunError("cancelled", ...))`.

    `on_output(text)`, when given, is called in the host's event loop with each piece of text the
    snippet prints, as it prints it, in order (pieces may end mid-line; only the bytes kept under
    `max_output` arrive). It is a live view for a terminal or a UI: the run's `logs` stay the
    account to believe (a worker's live text is whatever it says). Exceptions it raises are
    swallowed, so a broken view cannot end a run.
    """

    def __init__(self, *, on_output: Callable[[str], None] | None = None) -> None:
        self._event = anyio.Event()
        self.reason: str | None = None
        self.on_output = on_output

    def output(self, text: str) -> None:
        """Hand printed text to `on_output` (no-op without one; never raises)."""
        if self.on_output is None:
            return
        try:
            self.on_output(text)
        except Exception:
            pass

    def cancel(self, reason: str = "cancelled by the host") -> None:
        if self.reason is None:
            self.reason = reason
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    async def wait(self) -> None:
        await self._event.wait()


def cancel_on(controller: RunController | None, tg: TaskGroup) -> None:
    """Cancel `tg` when the host cancels the run through `controller`."""
    if controller is None:
        return

    async def watch() -> None:
        await controller.wait()
        tg.cancel_scope.cancel()

    tg.start_soon(watch)


def interruption(controller: RunController | None, timed_out: bool, timeout_message: str,
                 otherwise: str) -> RunError:
    """Why a run that produced no result of its own ended: the host cancelled it, its wall time
    ran out, or (`otherwise`) something went wrong."""
    if controller is not None and controller.cancelled:
        return RunError("cancelled", f"the run was cancelled: {controller.reason}")
    if timed_out:
        return RunError("timeout", timeout_message)
    return RunError("crashed", otherwise)
