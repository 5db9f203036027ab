"""The host side of a binding call, shared by both backends.

A binding is a named async host function. Whatever it raises or returns, the snippet receives
either a lossless-JSON copy of the value or a `ToolCallError` with a message. `BindingError` is
how a binding chooses that message; any other exception is reported by type only, so host
paths and secrets in exception text never reach the snippet.

Text the host hands a run (source, binding names, docs, results, error messages) passes
through `escape_surrogates` first, as everything the run hands back does.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

import anyio

from .jsonvalue import NotJSONError, escape_surrogates, to_json_value

logger = logging.getLogger("sandbox")

Binding = Callable[..., Awaitable[Any]]
Bindings = Mapping[str, Binding]


class BindingError(Exception):
    """Raise this from a binding to fail the call with `message` shown to the snippet."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def escaped_inputs(code: str, bindings: Bindings, docs: Mapping[str, str] | None
                   ) -> tuple[str, Bindings, dict[str, str] | None]:
    """The run's source, bindings and docs with lone surrogates escaped, so both backends
    compile and describe the same text (a string literal keeps its value: `'\\udc80'` is the
    same string as the raw character)."""
    code = escape_surrogates(code)
    if not all(name.isascii() for name in bindings):
        bindings = {escape_surrogates(name): fn for name, fn in bindings.items()}
    if docs is not None:
        docs = {escape_surrogates(k): escape_surrogates(v) for k, v in docs.items()}
    return code, bindings, docs


class CallScope:
    """One binding call's cancel scope: a backend's driver calls `abandon` when the snippet
    cancels the task that awaits the call (`asyncio.timeout`, `wait_for`, `Task.cancel`), so
    the binding sees a cancellation, stops holding what it holds, and can tell this from the
    run's own end with `call_abandoned()`."""

    __slots__ = ("scope", "abandoned")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.abandoned = False

    def abandon(self) -> None:
        self.abandoned = True
        self.scope.cancel()


_CURRENT_CALL: ContextVar[CallScope | None] = ContextVar("sandbox_current_call", default=None)


def call_abandoned() -> bool:
    """Whether the snippet abandoned the binding call running in this task: true once the task
    that awaited it was cancelled (the binding is being cancelled for that reason), false
    when the cancellation is the run's own end or anything else."""
    scope = _CURRENT_CALL.get()
    return scope is not None and scope.abandoned


async def invoke(bindings: Bindings, name: str, args: list[Any], kwargs: dict[str, Any],
                 scope: CallScope | None = None) -> tuple[bool, Any] | None:
    """Run one binding; `(True, value)` or `(False, message)`, or None when the snippet
    abandoned the call through `scope` (before it started, or while it ran). Never raises but
    for cancellation."""
    if scope is not None and scope.abandoned:
        return None  # cancelled before it started: as a task cancelled before it runs, it never runs
    # Set even without a scope: a binding that runs a nested run must not see the outer call's.
    token = _CURRENT_CALL.set(scope)
    try:
        if scope is None:
            return await _invoke(bindings, name, args, kwargs)
        with scope.scope:
            outcome = await _invoke(bindings, name, args, kwargs)
    finally:
        _CURRENT_CALL.reset(token)
    return None if scope.abandoned else outcome


async def _invoke(bindings: Bindings, name: str, args: list[Any], kwargs: dict[str, Any]) -> tuple[bool, Any]:
    fn = bindings.get(name)
    if fn is None:
        return False, f"no host function named '{name}'"
    try:
        value = await fn(*args, **kwargs)
    except BindingError as exc:
        return False, escape_surrogates(str(exc.message))
    except Exception as exc:
        logger.warning("binding %r raised", name, exc_info=True)
        return False, f"the host function failed ({type(exc).__name__})"
    try:
        return True, to_json_value(value, "$")
    except NotJSONError as exc:
        return False, f"the host function returned a value that is not JSON: {exc}"
    except RecursionError:
        return False, "the host function returned a value nested too deeply"
