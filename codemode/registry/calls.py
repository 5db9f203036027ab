"""The records of one call: what was asked (``ToolCall``), who is asking (``ExecutionContext``)
and what came back (``ToolResult``).

``ExecutionToken`` is the opaque proof of an execution in progress. The Code Mode bridge passes the
outer call's token as ``parent=`` for every sub-call, so sub-calls inherit the agent and the root
call id, and logs can nest them, without the bridge ever naming ids itself.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

__all__ = ["ExecutionContext", "ExecutionToken", "ToolCall", "ToolResult"]

#: The deadline (anyio clock) of the Code Mode run a sub-call belongs to; the bridge sets it
#: for the length of a run. A worker's own cancel scope allows a grace period past the run's
#: wall time, so tools read this rather than rely on the cancel scope alone.
RUN_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("codemode_run_deadline", default=math.inf)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A request to run tool ``name``; ``arguments`` is the JSON object the model sent."""

    call_id: str
    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The outcome of a call, immutable once the pipeline has finished.

    ``content`` is the tuple of content blocks the model sees. ``value`` is the canonical value the
    output schema declares (``None`` for tools without one, and for errors). ``meta`` holds
    ``call_id`` and, for errors, ``error`` (an ``ErrorKind`` value).
    """

    content: tuple[Mapping[str, Any], ...]
    value: Any = None
    is_error: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The text blocks joined by newlines: a convenience for hosts, tests and the bridge."""
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")

    @property
    def error(self) -> str | None:
        """The ``ErrorKind`` value of an error result, else None."""
        return self.meta.get("error")


class ExecutionToken:
    """Opaque handle of one execution; pass it as ``parent=`` to nest calls under it."""

    __slots__ = ("_call_id", "_root_call_id", "_agent")

    def __init__(self, call_id: str, root_call_id: str, agent: str | None) -> None:
        self._call_id = call_id
        self._root_call_id = root_call_id
        self._agent = agent

    def __repr__(self) -> str:
        return "<ExecutionToken>"


class ExecutionContext:
    """What a tool body, a hook or a wrapper knows about the call it serves. Read-only.

    Cancellation is anyio's: the body runs in the caller's task, so cancelling the caller (or a
    ``fail_after`` in a wrapper) cancels the tool at its next checkpoint.
    """

    __slots__ = ("call_id", "name", "arguments", "token", "parent", "root_call_id", "agent")

    call_id: str
    name: str
    arguments: Mapping[str, Any]
    token: ExecutionToken
    parent: ExecutionToken | None
    root_call_id: str
    agent: str | None

    def __init__(
        self,
        call_id: str,
        name: str,
        arguments: Mapping[str, Any],
        token: ExecutionToken,
        parent: ExecutionToken | None,
        root_call_id: str,
        agent: str | None,
    ) -> None:
        s = object.__setattr__
        s(self, "call_id", call_id)
        s(self, "name", name)
        s(self, "arguments", arguments)
        s(self, "token", token)
        s(self, "parent", parent)
        s(self, "root_call_id", root_call_id)
        s(self, "agent", agent)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError(f"ExecutionContext is read-only; cannot set {key!r}")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"ExecutionContext is read-only; cannot delete {key!r}")

    def __repr__(self) -> str:
        return f"ExecutionContext(call_id={self.call_id!r}, name={self.name!r}, agent={self.agent!r})"

    @property
    def parent_call_id(self) -> str | None:
        return self.parent._call_id if self.parent is not None else None

    @staticmethod
    def deadline() -> float:
        """When this call must be done, on anyio's clock: the earlier of its effective anyio
        deadline and the end of the run it belongs to (``math.inf`` when neither is set)."""
        return min(anyio.current_effective_deadline(), RUN_DEADLINE.get())

    @staticmethod
    async def checkpoint() -> None:
        """Let a pending cancellation interrupt a long CPU-bound loop in a tool body."""
        await anyio.lowlevel.checkpoint()
