"""Hook points of the pipeline, their decisions, and the disposable ``Handle``.

Order per call: ``pre_execute`` listeners → ``guard``s → ``execute`` wrappers around the body →
output validation → render → ``post_execute`` listeners → ``finalize_content`` → ``result``
observers. Hooks may be plain or ``async`` functions. Lists are copied on write, so registering or
disposing a hook while calls run never disturbs a call in flight.

Decisions are monotonic: once a pre_execute listener or a guard denies, nothing later can allow.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .calls import ExecutionContext, ToolResult

__all__ = [
    "ALLOW",
    "ACCEPT",
    "Decision",
    "Handle",
    "HookSet",
    "PostDecision",
    "accept",
    "allow",
    "ask",
    "block",
    "deny",
    "replace_content",
    "replace_value",
]


class Handle:
    """Undo one registration. ``dispose()`` is idempotent; ``with`` disposes on exit."""

    __slots__ = ("_undo", "disposed")

    def __init__(self, undo: Callable[[], None]) -> None:
        self._undo = undo
        self.disposed = False

    def dispose(self) -> None:
        if not self.disposed:
            self.disposed = True
            self._undo()

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"<Handle {'disposed' if self.disposed else 'active'}>"


@dataclass(frozen=True, slots=True)
class Decision:
    """A pre_execute or guard verdict: ``allow``, ``deny`` or (pre_execute only) ``ask``."""

    kind: Literal["allow", "deny", "ask"]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PostDecision:
    """A post_execute verdict: accept, replace the content or the value, or block."""

    kind: Literal["accept", "replace_content", "replace_value", "block"]
    content: Sequence[Mapping[str, Any]] | None = None
    value: Any = None
    feedback: str = ""


ALLOW = Decision("allow")
ACCEPT = PostDecision("accept")


def allow() -> Decision:
    return ALLOW


def deny(reason: str) -> Decision:
    return Decision("deny", reason)


def ask(reason: str) -> Decision:
    """Ask the approval service; without one the call is denied, naming ``reason``."""
    return Decision("ask", reason)


def accept() -> PostDecision:
    return ACCEPT


def replace_content(content: Sequence[Mapping[str, Any]]) -> PostDecision:
    return PostDecision("replace_content", content=content)


def replace_value(value: Any) -> PostDecision:
    """Swap the canonical value; it is revalidated against the output schema and re-rendered."""
    return PostDecision("replace_value", value=value)


def block(feedback: str) -> PostDecision:
    """Withhold the result; the model sees ``feedback`` as an error instead."""
    return PostDecision("block", feedback=feedback)


PreExecuteHook = Callable[["ExecutionContext"], "Decision | None | Awaitable[Decision | None]"]
GuardHook = PreExecuteHook
CallNext = Callable[[], Awaitable[Any]]
WrapperHook = Callable[["ExecutionContext", CallNext], Awaitable[Any]]
PostExecuteHook = Callable[
    ["ExecutionContext", "ToolResult"], "PostDecision | None | Awaitable[PostDecision | None]"
]
ResultObserver = Callable[["ToolResult", "ExecutionContext"], "None | Awaitable[None]"]
ApprovalService = Callable[["ExecutionContext", str], "bool | Awaitable[bool]"]


class HookSet:
    """The hooks of one registry, each list an immutable tuple replaced on change."""

    __slots__ = ("pre_execute", "guards", "wrappers", "post_execute", "observers", "approval")

    def __init__(self) -> None:
        self.pre_execute: tuple[PreExecuteHook, ...] = ()
        self.guards: tuple[GuardHook, ...] = ()
        self.wrappers: tuple[WrapperHook, ...] = ()
        self.post_execute: tuple[PostExecuteHook, ...] = ()
        self.observers: tuple[ResultObserver, ...] = ()
        self.approval: ApprovalService | None = None

    def add(self, slot: str, fn: Callable[..., Any]) -> Handle:
        if not callable(fn):
            raise TypeError(f"{slot} hook must be callable, got {type(fn).__name__}")
        entry = _Entry(fn)
        setattr(self, slot, (*getattr(self, slot), entry))

        def undo() -> None:
            setattr(self, slot, tuple(e for e in getattr(self, slot) if e is not entry))

        return Handle(undo)

    def set_approval(self, service: ApprovalService) -> Handle:
        if not callable(service):
            raise TypeError("the approval service must be callable: service(ctx, reason) -> bool")
        self.approval = service

        def undo() -> None:
            if self.approval is service:
                self.approval = None

        return Handle(undo)


class _Entry:
    """A registered hook; a distinct object so registering one function twice disposes cleanly."""

    __slots__ = ("fn", "__weakref__")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        return self.fn(*args)
