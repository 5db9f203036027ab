"""One ``mcp serve`` replica in production: readiness, graceful drain and the session cap.

``ServeController`` steers a replica (``build_server`` makes one, or takes the host's):

- **Readiness.** ``readiness()`` is None while the replica takes work, else one line: it is
  draining, or its worker backend cannot run (a tiny probe run, made at most every
  ``PROBE_INTERVAL`` seconds, failed).
- **Drain.** ``drain()`` marks the replica draining (``/readyz`` answers 503, new sessions and
  runs are refused with a sentence that says why), waits up to ``drain_timeout`` for the runs in
  flight, cancels the rest with kind ``cancelled`` and a reason, then closes every session's
  worker. ``serve_http`` runs it on SIGTERM/SIGINT or ``shutdown()``.
- **Sessions.** ``admit(key)`` gives the code session of an MCP session, creating it within the
  cap (``ServeLimits.session_cap``): past it the least recently used idle session is closed (its
  next call carries ``SESSION_EVICTED``) or, when every one is busy, the new one is refused.

Everything here runs on the server's event loop; nothing is shared between replicas.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

import sandbox

from . import messages as m
from .metrics import ServeMetrics
from .options import DEFAULT_SERVE_LIMITS, ServeLimits

__all__ = ["PROBE_INTERVAL", "ServeController"]

#: Seconds a worker-backend probe result stays good for ``/readyz``.
PROBE_INTERVAL = 5.0
#: Seconds a probe run may take before the backend counts as unable to run.
PROBE_TIMEOUT = 15.0
#: Seconds cancelled runs get to report back after the drain timeout.
CANCEL_GRACE = 10.0
#: Keys of evicted sessions remembered for their next call's note.
EVICTED_MEMORY = 4096
_PROBE_LIMITS = sandbox.Limits(wall_time=PROBE_TIMEOUT, cpu_time=PROBE_TIMEOUT)


class ServeController:
    """Steers one replica: readiness, drain, session admission (see the module docstring).

    ``code_mode`` is the served ``CodeMode``; ``limits`` a ``ServeLimits``. Also holds the
    replica's ``metrics``."""

    def __init__(self, code_mode: Any, limits: ServeLimits = DEFAULT_SERVE_LIMITS) -> None:
        if not isinstance(limits, ServeLimits):
            raise TypeError(f"limits must be a ServeLimits, got {type(limits).__name__}")
        self.code_mode = code_mode
        self.limits = limits
        self.draining = False
        self._shutdown = anyio.Event()
        self._runs: set[sandbox.RunController] = set()
        self._used: dict[str, float] = {}
        self._busy: dict[str, int] = {}
        self._evicted: OrderedDict[str, None] = OrderedDict()
        self._probe_at = -PROBE_INTERVAL
        self._probe_result: str | None = None
        self._probe_lock = anyio.Lock()
        self.metrics = ServeMetrics(self)

    # --- the numbers -----------------------------------------------------------------------

    @property
    def runs_in_flight(self) -> int:
        return len(self._runs)

    @property
    def session_cap(self) -> int:
        """Code sessions that may live at once: ``max_sessions`` within the memory budget."""
        session_limits = getattr(self.code_mode, "session_limits", None)
        memory = session_limits.memory if session_limits is not None else sandbox.DEFAULT_SESSION_LIMITS.memory
        return self.limits.session_cap(memory)

    def live_sessions(self) -> dict[str, Any]:
        return dict(getattr(self.code_mode, "sessions", {}) or {})

    def session_workers(self) -> int:
        """Session workers alive now (a session reset for idleness holds none)."""
        return sum(1 for s in self.live_sessions().values() if getattr(s.sandbox, "pid", None) is not None)

    # --- readiness -------------------------------------------------------------------------

    async def readiness(self) -> str | None:
        """None while this replica takes work, else why not (one line)."""
        if self.draining:
            return m.NOT_READY_DRAINING
        backend = self.code_mode.tool.backend
        if not isinstance(sandbox.get_runtime(backend), sandbox.WorkerRuntime):
            return None
        async with self._probe_lock:
            if anyio.current_time() - self._probe_at >= PROBE_INTERVAL:
                self._probe_result = await _probe(backend)
                self._probe_at = anyio.current_time()
            return self._probe_result

    # --- runs and drain --------------------------------------------------------------------

    def refusal(self, in_session: bool) -> str | None:
        """Why a new run is refused now (draining), or None."""
        if not self.draining:
            return None
        return m.DRAINING_SESSION if in_session else m.DRAINING

    @contextmanager
    def run(self) -> Iterator[sandbox.RunController]:
        """Track one run in flight; the drain cancels it through the controller yielded."""
        controller = sandbox.RunController()
        self._runs.add(controller)
        try:
            yield controller
        finally:
            self._runs.discard(controller)

    def shutdown(self) -> None:
        """Ask ``serve_http`` to drain and stop (what SIGTERM does)."""
        self._shutdown.set()

    async def wait_shutdown(self) -> None:
        await self._shutdown.wait()

    async def drain(self, timeout: float | None = None) -> int:
        """Stop taking work, let the runs in flight finish for up to ``timeout`` seconds
        (``drain_timeout``), cancel the rest, then close every session. Returns how many runs
        were cancelled. Safe to call twice (a second call with ``timeout=0`` cancels at once)."""
        if not self.draining:
            self.draining = True
            self.metrics.drains.inc()
        limit = self.limits.drain_timeout if timeout is None else timeout
        with anyio.move_on_after(limit):
            await self._quiet()
        cancelled = self.cancel_runs(limit)
        if cancelled:
            with anyio.move_on_after(CANCEL_GRACE):
                await self._quiet()
        self.close_sessions()
        return cancelled

    def cancel_runs(self, after: float | None = None) -> int:
        """Cancel every run in flight, saying the drain timeout (``after`` seconds) ran out, or
        (``None``) that the server was told to stop at once."""
        reason = m.DRAIN_STOPPED if after is None else m.DRAIN_CANCELLED.format(seconds=after)
        runs = [c for c in self._runs if not c.cancelled]
        for controller in runs:
            controller.cancel(reason)
        if runs:
            self.metrics.drain_cancelled.inc(len(runs))
        return len(runs)

    async def _quiet(self) -> None:
        while self._runs:
            await anyio.sleep(0.02)

    def close_sessions(self) -> None:
        """Close every code session (kills their workers)."""
        for code_session in self.live_sessions().values():
            code_session.close()
        self._used.clear()

    # --- sessions --------------------------------------------------------------------------

    def admit(self, key: str, on_close: Callable[[Callable[[], None]], None] | None = None) -> tuple[Any, str | None]:
        """``(code_session, note)`` for the MCP session named ``key``, or ``(None, refusal)``.

        An existing session is returned as it is. A new one is made within the cap, closing the
        least recently used idle session when the cap is reached; ``note`` then says, for a key
        whose session was closed that way, that its variables are gone. ``on_close(fn)``
        registers ``fn`` to run when the MCP session ends (the transport's exit stack)."""
        mode = self.code_mode
        found = mode.sessions.get(key)
        if found is not None:
            return found, None
        if self.draining:
            return None, m.DRAINING_SESSION
        cap = self.session_cap
        live = mode.sessions
        while len(live) >= cap:
            victim = min((k for k in live if not self._busy.get(k)), key=lambda k: self._used.get(k, 0.0), default=None)
            if victim is None:
                self.metrics.sessions_refused.inc()
                return None, m.SESSIONS_FULL.format(cap=cap)
            self._evict(victim)
            live = mode.sessions
        code_session = mode.session(key)
        self._used[key] = time.monotonic()
        if on_close is not None:
            on_close(lambda: self._ended(key, code_session))
        note = None
        if key in self._evicted:
            del self._evicted[key]
            note = m.SESSION_EVICTED.format(cap=cap)
        return code_session, note

    def _evict(self, key: str) -> None:
        self.code_mode.close_session(key)
        self._used.pop(key, None)
        self._evicted[key] = None
        while len(self._evicted) > EVICTED_MEMORY:
            self._evicted.popitem(last=False)
        self.metrics.sessions_evicted.inc()

    def _ended(self, key: str, code_session: Any) -> None:
        """The MCP session ended: its worker goes with it."""
        code_session.close()
        if key not in self.code_mode.sessions:
            self._used.pop(key, None)
            self._evicted.pop(key, None)

    @contextmanager
    def using(self, key: str | None) -> Iterator[None]:
        """Mark the session named ``key`` busy (not evictable) for one run."""
        if key is None:
            yield
            return
        self._busy[key] = self._busy.get(key, 0) + 1
        try:
            yield
        finally:
            self._used[key] = time.monotonic()
            left = self._busy[key] - 1
            if left:
                self._busy[key] = left
            else:
                del self._busy[key]


async def _probe(backend: Any) -> str | None:
    """None when a tiny run works on ``backend``, else why not."""
    try:
        with anyio.fail_after(PROBE_TIMEOUT + 5):
            result = await sandbox.run("return 1", backend=backend, limits=_PROBE_LIMITS)
    except TimeoutError:
        return m.NOT_READY_BACKEND.format(reason=f"a probe run did not finish within {PROBE_TIMEOUT:g} s")
    except (sandbox.JailError, RuntimeError, OSError) as exc:
        return m.NOT_READY_BACKEND.format(reason=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    if result.error is not None:
        return m.NOT_READY_BACKEND.format(reason=f"a probe run ended in {result.error.kind}")
    return None
