"""Code Mode sessions: ``run_code`` calls of one conversation that share one program's globals.

Opt-in, per conversation. ``CodeMode(registry, sessions=True)`` (or a ``sandbox.SessionLimits``)
adds an optional ``restart`` argument to ``run_code`` and one sentence to its description, and
then a host names the conversation:

    mode = CodeMode(registry, sessions=True)
    await mode.handle(call, session="conv-42")           # or:
    chat = mode.session("conv-42")
    await chat.handle(call); await chat.run("print(len(rows))")
    chat.close()                                         # kills its worker

Each key gets one ``sandbox.Session`` (one confined worker on the worker backend), created on its
first run. Tools are bound afresh for every run from the agent's visible set, and every run goes
through the pipeline as a one-shot run does. The session's start, reset and close are events in
the registry's log (``session/start``, ``session/reset``, ``session/close``); what a program keeps
is visible to later programs only, never to the model except through what they print or return.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import sandbox

from ..registry.events import EVENT_SESSION_CLOSE, EVENT_SESSION_RESET, EVENT_SESSION_START

if TYPE_CHECKING:
    from .agent import CallOutcome, CodeMode
    from .bridge import CodeRun, SubCall

__all__ = ["CodeSession"]

_EVENTS = {"start": EVENT_SESSION_START, "reset": EVENT_SESSION_RESET, "close": EVENT_SESSION_CLOSE}


class CodeSession:
    """One conversation's session on a ``CodeMode``: ``handle`` and ``run`` as on the mode, in
    this session's state. Get it with ``CodeMode.session(key)``; ``close()`` ends it."""

    def __init__(self, mode: CodeMode, key: str, limits: sandbox.SessionLimits) -> None:
        self.mode = mode
        self.key = key
        self.sandbox = sandbox.open_session(mode.tool.backend, limits=limits, listener=self._event)

    @property
    def closed(self) -> bool:
        return self.sandbox.closed

    def _event(self, event: str, reason: str | None) -> None:
        record: dict[str, Any] = {"type": _EVENTS[event], "ts": time.time(), "session": self.key}
        if reason is not None:
            record["reason"] = reason
        self.mode.registry.events.append(record)

    async def handle(
        self,
        tool_call: Any,
        *,
        agent: str | None = None,
        limits: sandbox.Limits | None = None,
        on_sub_call: Callable[[SubCall], None] | None = None,
    ) -> CallOutcome:
        """``CodeMode.handle`` in this session (a ``run_code`` call's ``restart`` starts it fresh)."""
        return await self.mode._handle(tool_call, agent=agent, limits=limits, on_sub_call=on_sub_call, session=self)

    async def run(
        self,
        code: str,
        *,
        description: str = "Run a program",
        call_id: str = "run",
        agent: str | None = None,
        limits: sandbox.Limits | None = None,
        restart: bool = False,
        on_dispatch: Any = None,
        on_output: Callable[[str], None] | None = None,
    ) -> CodeRun:
        """``CodeMode.run`` in this session."""
        return await self.mode._run(code, description=description, call_id=call_id, agent=agent, limits=limits,
                                    on_dispatch=on_dispatch, session=self, restart=restart, on_output=on_output)

    def close(self) -> None:
        """Kill the session's worker and forget it; idempotent."""
        self.sandbox.close()
        self.mode._forget(self)

    def __repr__(self) -> str:
        return f"CodeSession({self.key!r}, {self.sandbox!r})"


def session_limits(sessions: bool | sandbox.SessionLimits) -> sandbox.SessionLimits | None:
    """What ``CodeMode(sessions=...)`` means: None (off), or the limits of each session."""
    if sessions is False or sessions is None:
        return None
    if sessions is True:
        return sandbox.DEFAULT_SESSION_LIMITS
    if isinstance(sessions, sandbox.SessionLimits):
        return sessions
    raise TypeError(f"sessions must be a bool or a sandbox.SessionLimits, got {type(sessions).__name__}")


def restart_arguments(arguments: Mapping[str, Any], restart: bool) -> dict[str, Any]:
    """``run_code`` arguments with ``restart`` added when asked for."""
    return {**arguments, "restart": True} if restart else dict(arguments)
