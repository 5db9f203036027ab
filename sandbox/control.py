"""Steering a run from outside the snippet: stopping it for a limit, or cancelling it.

`RunStopped` derives from BaseException so that `except Exception` in a snippet does not swallow
a limit. A bare `except:` can still catch it once; the stop stays armed and re-fires (budget
ticks, the worker's repeating timer), and the worker backend kills the process as a last resort.
"""

from __future__ import annotations

import anyio
from anyio.abc import TaskGroup

from .result import ErrorKind, RunError


class RunStopped(BaseException):
    """Raised inside a run to end it with a given error kind. Made only by `stop()`: a snippet
    that caught one cannot build another (say, a fake `cancelled`) from its class, and copying
    one fails because its constructor refuses to run."""

    kind: ErrorKind
    message: str

    def __init__(self, *args: object) -> None:
        raise TypeError("RunStopped cannot be created in a snippet")

    def __setattr__(self, name: str, value: object) -> None:
        raise TypeError("RunStopped cannot be changed")

    def __delattr__(self, name: str) -> None:
        raise TypeError("RunStopped cannot be changed")

    def to_error(self) -> RunError:
        return RunError(self.kind, self.message)


def stop(kind: ErrorKind, message: str) -> RunStopped:
    """A `RunStopped` for the host's own use."""
    exc = RunStopped.__new__(RunStopped, message)
    BaseException.__setattr__(exc, "kind", kind)
    BaseException.__setattr__(exc, "message", message)
    return exc


class RunController:
    """Lets the host cancel a run it started, with a reason the run's error reports.

    Cancelling the awaiting task (an anyio cancel scope) also ends the run, but then the caller
    gets no result; `cancel()` ends it with `RunResult(error=RunError("cancelled", ...))`.
    """

    def __init__(self) -> None:
        self._event = anyio.Event()
        self.reason: str | None = None

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
