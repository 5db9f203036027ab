"""Sessions, host side: the runs of one conversation sharing one program's globals.

    session = sandbox.open_session(limits=sandbox.SessionLimits(idle_timeout=300))
    await session.run("rows = await tools.fetch()\\nprint(len(rows))", bindings=bindings)
    await session.run("return rows[:3]", bindings=bindings)   # rows is still defined
    session.close()

Opt-in: `sandbox.run` never keeps anything. On the worker backend a session is one long-lived
worker, forked from the template and confined exactly like a single-use one (chroot, uid, no
capabilities, the syscall filter loaded before its first run and in force until it dies), that
keeps the program's globals between runs (`sandbox.session`). On the in-process backend it is
the same state kept in the host process, for trusted code.

Runs of one session are serialized. Each run has its own bindings, docs and `Limits`, all
enforced as for a single run; the session's own `SessionLimits` bound its memory, idle time,
lifetime and number of runs. A run that ends in a limit (`RESET_KINDS`) or kills its worker
resets the session: its worker is killed and its result's `reset` says, in one sentence, what
was lost; the next run starts fresh. Idle past `idle_timeout`, past `max_lifetime` or at
`max_runs`, the session resets the same way (a background thread kills an idle worker; the next
run's result carries the sentence). `close()` kills the worker for good.

The host believes a session worker no more than a single-use one: every run is checked as in
`sandbox.workers` (CPU time from /proc measured from the run's own start, the address-space
limit in force, output and value bounds). Between runs the worker is stopped: the host sends
its process group `SIGSTOP` as soon as the `done` frame is in, and `SIGCONT` just before the
next `run`, so a worker that escaped the Python layers cannot compute while the session is
idle. It must also be silent (no byte on the channel) and idle (no CPU time used after its
`done` frame); anything else resets the session with one sentence.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

import anyio

from .api import BackendName, Runtime, get_runtime
from .control import RunController
from .execution import Releasing, syntax_result
from .garbage import WINDOW
from .host import Bindings, escaped_inputs
from .inprocess import InProcessRuntime, release_shared
from .limits import DEFAULT_LIMITS, MIB, Limits
from .policy import PolicyError, compile_snippet
from .protocol import encode, pack_code
from .reports import quiet_reports
from .result import RunError, RunResult
from .session import SessionState
from .workers import (
    CRASHED_MESSAGE,
    KILL_GRACE,
    WorkerRuntime,
    _cpu_of,
    _HostChannel,
    _Session,
    _Worker,
)

__all__ = [
    "DEFAULT_SESSION_LIMITS",
    "RESET_KINDS",
    "InProcessSession",
    "Session",
    "SessionLimits",
    "WorkerSession",
    "open_session",
]

logger = logging.getLogger("sandbox")

#: Error kinds that reset a session: the run hit a limit, was cancelled, or lost its worker, so
#: what its globals hold is unknown. A syntax error, an exception or an invalid result leave
#: the session as the program left it.
RESET_KINDS = frozenset({"timeout", "memory", "output-limit", "call-limit", "cancelled", "crashed"})
#: CPU seconds an idle session worker may show between runs (/proc counts in 10 ms ticks).
IDLE_CPU_SLACK = 0.1

RESET_SENTENCE = "the session was reset because {cause}; variables defined earlier are gone"
_KIND_CAUSES = {
    "timeout": "the run hit its time limit",
    "memory": "the run ran out of memory",
    "output-limit": "the run printed far past its output limit",
    "call-limit": "the run made too many tool calls",
    "cancelled": "the run was cancelled",
    "crashed": "the run's worker process failed",
}
CAUSE_IDLE = "it was idle for more than {seconds:g} s"
CAUSE_LIFETIME = "it reached its maximum lifetime of {seconds:g} s"
CAUSE_RUNS = "it reached its limit of {runs} runs"
CAUSE_BETWEEN_RUNS = "its worker process stopped between runs"
CAUSE_COMPUTED = "its worker process computed between runs"
CAUSE_CANCELLED = "a run was cancelled before it finished"
CLOSED = "this session is closed"

#: `listener(event, reason)`: `event` is "start" (a fresh state), "reset" (the state was lost;
#: `reason` is the sentence, or "restart" when the host asked for it) or "close".
Listener = Callable[[str, "str | None"], None]


@dataclass(frozen=True, kw_only=True, slots=True)
class SessionLimits:
    """What one session may use across its runs; each run also keeps its own `Limits`.

    memory: address space the session's worker may add on top of its warm baseline over its
        whole life: its hard limit. Each run's own `memory` counts from the address space at the
        run's start, within this. Worker backend only. [512 MiB]
    idle_timeout: seconds without a run after which the session resets (its worker is killed). [600]
    max_lifetime: seconds after the session's state was made past which no run starts in it;
        also bounds its worker's CPU time. [3600]
    max_runs: runs in one session's state; the next one starts fresh. [1,000]
    """

    memory: int = 512 * MIB
    idle_timeout: float = 600.0
    max_lifetime: float = 3600.0
    max_runs: int = 1000

    def __post_init__(self) -> None:
        problems = []
        for f in fields(self):
            value, lo = getattr(self, f.name), _SESSION_BOUNDS[f.name]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                problems.append(f"{f.name} must be a number, got {value!r}")
            elif not lo <= value < float("inf"):
                problems.append(f"{f.name} must be >= {lo} and finite, got {value!r}")
        if problems:
            raise ValueError("invalid SessionLimits: " + "; ".join(problems))

    def replace(self, **changes: Any) -> SessionLimits:
        """A copy with some fields changed (validated like a new instance)."""
        return replace(self, **changes)

    def __repr__(self) -> str:
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if getattr(self, f.name) != f.default]
        return f"SessionLimits({', '.join(changed)})"


_SESSION_BOUNDS: dict[str, float] = {"memory": 16 * MIB, "idle_timeout": 0.01, "max_lifetime": 0.01, "max_runs": 1}

DEFAULT_SESSION_LIMITS = SessionLimits()


def reset_sentence(cause: str) -> str:
    return RESET_SENTENCE.format(cause=cause)


class Session:
    """One session: its runs, one at a time, in one state. Backends: `WorkerSession`,
    `InProcessSession`; make one with `open_session`.

    `run` never raises for anything the snippet does (as `sandbox.run`); it raises
    `RuntimeError` once the session is closed, and `JailError` when the worker jail cannot be
    had. `close()` is idempotent and safe from any thread."""

    backend = ""

    def __init__(self, limits: SessionLimits = DEFAULT_SESSION_LIMITS, listener: Listener | None = None) -> None:
        if not isinstance(limits, SessionLimits):
            raise TypeError(f"limits must be a sandbox.SessionLimits, got {type(limits).__name__}")
        self.limits = limits
        self.listener = listener
        self.closed = False
        self._lock = threading.Lock()  # the state against the reaper thread
        self._busy = False
        self._waiters: deque[anyio.Event] = deque()
        self._live = False
        self._opened = 0.0
        self._last = 0.0
        self._runs = 0
        self._note: str | None = None

    @property
    def runs(self) -> int:
        """Runs made in the current state (0 when the next run starts fresh)."""
        return self._runs if self._live else 0

    # -- what a backend provides ------------------------------------------------------------
    async def _open(self) -> RunResult | None:
        """Make a fresh state; a failed result when none can be had."""
        raise NotImplementedError

    async def _run_in(self, code: str, bindings: Bindings, limits: Limits, namespace: str,
                      docs: Mapping[str, str] | None, controller: RunController | None) -> RunResult:
        raise NotImplementedError

    def _discard(self) -> None:
        """Drop the state (kill the worker). Called with `_lock` held, from any thread."""
        raise NotImplementedError

    def _between_runs(self) -> str | None:
        """Why the state cannot be trusted after its idle time, if it cannot."""
        return None


    # -- runs -------------------------------------------------------------------------------
    async def run(
        self,
        code: str,
        *,
        bindings: Bindings | None = None,
        limits: Limits = DEFAULT_LIMITS,
        namespace: str = "tools",
        docs: Mapping[str, str] | None = None,
        controller: RunController | None = None,
        restart: bool = False,
    ) -> RunResult:
        """Run a snippet in the session's state (`restart=True`: in a fresh one). Tools are
        bound for this run only; `limits` apply to this run as to `sandbox.run`."""
        if not isinstance(code, str):
            raise TypeError("code must be a str")
        if not namespace.isidentifier():
            raise ValueError(f"namespace must be an identifier, got {namespace!r}")
        await self._acquire()
        finished = False
        try:
            if self.closed:
                raise RuntimeError(CLOSED)
            note = self._prepare(restart)
            if not self._live:
                failed = await self._open()
                if failed is not None:
                    finished = True
                    return failed
                self._live, self._runs = True, 0
                self._opened = self._last = time.monotonic()
                self._emit("start", None)
            result = await self._run_in(code, dict(bindings or {}), limits, namespace, docs, controller)
            finished = True
            self._runs += 1
            self._last = time.monotonic()
            if result.error is not None and result.error.kind in RESET_KINDS:
                note = reset_sentence(_KIND_CAUSES[result.error.kind])
                self._reset(note)
            return replace(result, reset=note) if note is not None else result
        finally:
            if not finished and self._live:
                # Cancelled mid-run (or a host fault): what the state holds is unknown.
                self._reset(reset_sentence(CAUSE_CANCELLED), keep_note=True)
            self._release()
            _REAPER.watch(self)

    def _prepare(self, restart: bool) -> str | None:
        """Reset a state that expired or broke while idle; the sentence for this run, if any."""
        note, self._note = self._note, None
        if not self._live:
            return note
        if restart:
            self._reset("restart")
            return None
        cause = self._expired(time.monotonic()) or self._between_runs()
        if cause is None:
            return note
        sentence = reset_sentence(cause)
        self._reset(sentence)
        return sentence

    def _expired(self, now: float) -> str | None:
        limits = self.limits
        if now - self._last > limits.idle_timeout:
            return CAUSE_IDLE.format(seconds=limits.idle_timeout)
        if now - self._opened > limits.max_lifetime:
            return CAUSE_LIFETIME.format(seconds=limits.max_lifetime)
        if self._runs >= limits.max_runs:
            return CAUSE_RUNS.format(runs=limits.max_runs)
        return None

    def _reset(self, reason: str, *, keep_note: bool = False) -> None:
        with self._lock:
            if not self._live:
                return
            self._live = False
            self._discard()
            if keep_note:
                self._note = reason
        self._emit("reset", reason)

    async def _acquire(self) -> None:
        while True:
            with self._lock:
                if not self._busy:
                    self._busy = True
                    return
            event = anyio.Event()
            self._waiters.append(event)
            await event.wait()

    def _release(self) -> None:
        with self._lock:
            self._busy = False
        while self._waiters:
            self._waiters.popleft().set()  # each waiter tries again; one wins

    def expire_if_due(self, now: float) -> float | None:
        """For the reaper: reset the session if it has been idle too long (or lived too long)
        and no run is in progress; the time it will next be due, or None."""
        with self._lock:
            if not self._live or self.closed:
                return None
            if self._busy:
                return now + self.limits.idle_timeout  # looked at again after the run
            due = min(self._last + self.limits.idle_timeout, self._opened + self.limits.max_lifetime)
            if due > now:
                return due
            cause = self._expired(now) or CAUSE_LIFETIME.format(seconds=self.limits.max_lifetime)
            self._live = False
            self._discard()
            self._note = reset_sentence(cause)
        self._emit("reset", self._note)
        return None

    def close(self) -> None:
        """Kill the session's worker (drop its state); later runs raise `RuntimeError`."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            if self._live:
                self._live = False
                self._discard()
        _REAPER.forget(self)
        self._emit("close", None)

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def _emit(self, event: str, reason: str | None) -> None:
        if self.listener is None:
            return
        try:
            self.listener(event, reason)
        except Exception:
            logger.warning("session listener raised", exc_info=True)

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.runs} runs" if self._live else "fresh"
        return f"{type(self).__name__}({state}, {self.limits!r})"


class WorkerSession(Session):
    """A session in one long-lived, fully confined worker of a `WorkerRuntime`."""

    backend = "worker"

    def __init__(self, runtime: WorkerRuntime, limits: SessionLimits = DEFAULT_SESSION_LIMITS,
                 listener: Listener | None = None) -> None:
        super().__init__(limits, listener)
        self.runtime = runtime
        self._worker: _Worker | None = None
        self._stream: _HostChannel | None = None
        self._jail = "full"
        self._stat: _StatFile | None = None
        self._cpu_after: float | None = None
        self._fields: list[str] | None = None
        #: Whether the worker was sent `SIGSTOP` after its last run (a stop cannot be blocked or
        #: caught; until it lands, the CPU time the worker uses counts against its idleness).
        self._paused = False

    @property
    def pid(self) -> int | None:
        """The worker's pid while the session holds one (for tests and monitoring)."""
        worker = self._worker
        return worker.pid if worker is not None else None

    async def _open(self) -> RunResult | None:
        runtime = self.runtime
        worker = runtime._acquire()
        stream = _HostChannel(worker.sock)
        ready = False
        try:
            failed = await runtime._ready(worker, _Session(stream, {}, DEFAULT_LIMITS))
            if failed is not None:
                return failed
            assert worker.pid is not None and worker.jail is not None
            limits = self.limits
            await stream.send(encode({"op": "session", "memory": limits.memory, "lifetime": limits.max_lifetime}))
            with runtime._lock:
                if runtime._closed:
                    raise RuntimeError("this WorkerRuntime is closed")
                runtime._session_workers.add(worker)
            ready = True
        finally:
            if not ready:
                worker.kill()
                stream.close()
            runtime._replenish()
        self._worker, self._stream = worker, stream
        self._jail = "full" if worker.jail.full else "weak"
        self._stat = _StatFile(worker.pid, worker.parent)
        self._fields = self._stat.read()
        self._cpu_after = None if self._fields is None else _cpu_of(self._fields)
        return None

    def _between_runs(self) -> str | None:
        """The worker must be stopped, silent and idle between runs: a byte on the channel, the
        channel closed, a worker that could not be sent its stop, CPU time used since its `done`
        frame, or a pid that is no longer the template's child all mean it is not the worker
        the host left."""
        worker = self._worker
        assert worker is not None and worker.pid is not None
        try:
            spoke = worker.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            spoke = None
        except OSError:
            spoke = b""
        assert self._stat is not None
        self._fields = fields = self._stat.read()
        cpu = None if fields is None else _cpu_of(fields)
        if spoke is not None or cpu is None or self._cpu_after is None or not self._paused:
            if spoke:
                logger.warning("a session worker wrote to its channel between runs; resetting the session")
            return CAUSE_BETWEEN_RUNS
        if cpu - self._cpu_after > IDLE_CPU_SLACK:
            logger.warning("a session worker used CPU time between runs; resetting the session")
            return CAUSE_COMPUTED
        return None

    def _pause(self, worker: _Worker) -> bool:
        """Stop the worker until its next run: `SIGSTOP` to its process group. False if it
        cannot be sent (the worker is gone)."""
        assert worker.pid is not None
        try:
            os.killpg(worker.pid, signal.SIGSTOP)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def _run_in(self, code: str, bindings: Bindings, limits: Limits, namespace: str,
                      docs: Mapping[str, str] | None, controller: RunController | None) -> RunResult:
        code, bindings, docs = escaped_inputs(code, bindings, docs)
        worker, stream = self._worker, self._stream
        assert worker is not None and stream is not None and worker.pid is not None
        host = _Session(stream, bindings, limits, controller, namespace=namespace, source_lines=code.count("\n") + 1,
                        source=code, in_session=True)
        fields, self._fields = self._fields, None
        self._paused = False
        host.begin(worker.pid, worker.parent, fields)
        extra: dict[str, Any] = {"compiled": True}  # the code follows (`resume`)
        if host.size_at_start:
            extra["base"] = host.size_at_start

        async def resume() -> RunResult | None:
            # After the request, not before: the worker wakes up once, to a request waiting, and
            # builds the run while the host compiles.
            try:
                os.killpg(worker.pid, signal.SIGCONT)  # type: ignore[arg-type]
            except (ProcessLookupError, PermissionError):
                pass  # gone: the run finds out and reports it
            try:
                compiled: str | None = pack_code(compile_snippet(code, limits, session=True))
                refusal = None
            except PolicyError as exc:
                compiled, refusal = None, syntax_result(exc)
            await stream.send(encode({"op": "code", "compiled": compiled}))
            if refusal is None:
                return None
            # No code: the worker ends the run unchanged; its `done` is read and set aside.
            with anyio.move_on_after(limits.wall_time + KILL_GRACE):
                frame = await host._frame()
                if frame is not None and frame.get("op") == "done":
                    return refusal
            return RunResult(error=RunError("crashed", CRASHED_MESSAGE))

        result = await self.runtime._run(host, stream, code, bindings, limits, namespace, docs, controller,
                                         extra, resume)
        # The CPU time at the `done` frame, then the stop: whatever the worker uses from here to
        # the stop counts against its idleness at the next run.
        assert self._stat is not None
        after = self._stat.read()
        self._cpu_after = None if after is None else _cpu_of(after)
        if host.buffer and (result.error is None or result.error.kind not in RESET_KINDS):
            # More than one `done` frame for one `run`: the worker is not following the protocol.
            result = RunResult(error=RunError("crashed", "the worker broke the protocol: it sent more after its result"))
        if result.error is None or result.error.kind not in RESET_KINDS:
            self._paused = self._pause(worker)
        return replace(result, jail=self._jail)  # type: ignore[arg-type]

    def _discard(self) -> None:
        worker, stream, stat = self._worker, self._stream, self._stat
        self._worker = self._stream = self._stat = None
        if stat is not None:
            stat.close()
        if worker is not None:
            worker.kill()
            with self.runtime._lock:
                self.runtime._session_workers.discard(worker)
        if stream is not None:
            stream.close()


class _StatFile:
    """/proc/<pid>/stat of a session worker, held open: each read is one `pread` of the same
    process (never of a later one with a reused pid), checked to be a child of the template."""

    __slots__ = ("fd", "parent")

    def __init__(self, pid: int, parent: int | None) -> None:
        self.parent = parent
        try:
            self.fd: int | None = os.open(f"/proc/{pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            self.fd = None

    def read(self) -> list[str] | None:
        """The fields after the command name, or None if the worker is gone."""
        if self.fd is None:
            return None
        try:
            stat = os.pread(self.fd, 4096, 0).decode("ascii", "replace")
            fields = stat[stat.rindex(")") + 2 :].split()
            if self.parent is not None and int(fields[1]) != self.parent:
                return None
            return fields
        except (OSError, ValueError, IndexError):
            return None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class InProcessSession(Session):
    """A session in the host process (`InProcessRuntime`): the same API, for trusted code. No
    memory limit, and nothing to kill: a reset drops the state."""

    backend = "inprocess"

    def __init__(self, runtime: InProcessRuntime, limits: SessionLimits = DEFAULT_SESSION_LIMITS,
                 listener: Listener | None = None) -> None:
        super().__init__(limits, listener)
        self.runtime = runtime
        self._state: SessionState | None = None

    async def _open(self) -> RunResult | None:
        self._state = SessionState()
        return None

    async def _run_in(self, code: str, bindings: Bindings, limits: Limits, namespace: str,
                      docs: Mapping[str, str] | None, controller: RunController | None) -> RunResult:
        return await self.runtime.run(code, bindings=bindings, limits=limits, namespace=namespace, docs=docs,
                                      controller=controller, state=self._state)

    def _discard(self) -> None:
        state, self._state = self._state, None
        if state is None:
            return
        quiet_reports()
        with Releasing():  # what only the session held goes now (`execution.Releasing`)
            groups = state.shims.shared_groups()
            state.release()
            del state
            WINDOW.collect_all(lambda: release_shared(groups))  # and what its runs left in cycles


def open_session(
    backend: BackendName | Runtime = "worker",
    *,
    limits: SessionLimits = DEFAULT_SESSION_LIMITS,
    listener: Listener | None = None,
) -> Session:
    """A new session on `backend` (nothing starts until its first run). `listener(event,
    reason)` hears its start, reset and close. Raises `TypeError` for a runtime without
    sessions."""
    runtime = get_runtime(backend)
    if isinstance(runtime, WorkerRuntime):
        return WorkerSession(runtime, limits, listener)
    if isinstance(runtime, InProcessRuntime):
        return InProcessSession(runtime, limits, listener)
    opener = getattr(runtime, "open_session", None)
    if opener is None:
        raise TypeError(f"the {getattr(runtime, 'name', type(runtime).__name__)} backend has no sessions")
    return opener(limits=limits, listener=listener)  # type: ignore[no-any-return]


class _Reaper:
    """One daemon thread that resets sessions idle past their timeout, so an idle worker does
    not wait for the next run to be killed."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._sessions: set[Session] = set()
        self._thread: threading.Thread | None = None

    def watch(self, session: Session) -> None:
        """Keep an eye on `session`. A session already watched is not news: its due time only
        ever moves later, and the thread looks again when the earlier one comes."""
        if session.closed or not session._live:
            return
        with self._cond:
            if session in self._sessions:
                return
            self._sessions.add(session)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="sandbox-session-reaper", daemon=True)
                self._thread.start()
            self._cond.notify()

    def forget(self, session: Session) -> None:
        with self._cond:
            self._sessions.discard(session)

    def _loop(self) -> None:
        while True:
            with self._cond:
                sessions = list(self._sessions)
            now = time.monotonic()
            soonest: float | None = None
            for session in sessions:
                due = session.expire_if_due(now)
                if due is None:
                    if not session._live or session.closed:
                        self.forget(session)
                elif soonest is None or due < soonest:
                    soonest = due
            with self._cond:
                self._cond.wait(None if soonest is None else max(0.01, soonest - time.monotonic()))


_REAPER = _Reaper()
