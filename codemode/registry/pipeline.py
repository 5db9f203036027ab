"""The dispatch pipeline: the only way a tool runs (DESIGN invariant 2).

``run_call`` takes one ``ToolCall`` through every step and always returns a ``ToolResult``: a
raised exception, a non-JSON or invalid output, a denial or a block becomes an error result whose
text says what happened. Only cancellation propagates, as anyio requires; it is still logged as a
``cancelled`` result and shown to observers, shielded, before it continues upward.

The happy path is tuned because every snippet sub-call pays it: arguments are frozen once (no deep
copies later), validators are precompiled on the definition, and empty hook lists cost one test.
"""

from __future__ import annotations

import logging
import re
import time
from contextlib import AbstractAsyncContextManager
from inspect import isawaitable
from typing import Any, Protocol

import anyio

from . import messages as m
from . import tracing
from .calls import ExecutionContext, ExecutionToken, ToolCall, ToolResult
from .content import check_content
from .definition import ToolDefinition
from .events import EVENT_TOOL_CALL, EVENT_TOOL_RESULT, EventLog
from .frozen import FrozenDict, FrozenList, NotJSONError, freeze
from .hooks import ACCEPT, ALLOW, Decision, HookSet, PostDecision
from .jsontext import UnreadableArguments
from .messages import ErrorKind
from .validation import Violation

__all__ = ["BodyFailed", "CallRegistry", "DispatchGate", "log_call_event", "run_call"]


class CallRegistry(Protocol):
    """What the pipeline needs of a registry: its tools as one agent sees them, its hooks and
    its event log. ``Registry`` is the one implementation; the pipeline never imports it."""

    @property
    def events(self) -> EventLog: ...

    @property
    def hooks(self) -> HookSet: ...

    def get(self, name: str, agent: str | None = None) -> ToolDefinition | None: ...

    def visible(self, agent: str | None = None) -> list[ToolDefinition]: ...


class DispatchGate(Protocol):
    """How the Code Mode bridge paces one sub-call inside the pipeline.

    ``slot()`` is held around wrappers and body only, so approvals never occupy a concurrency
    slot; ``before_post()`` is awaited before post-execute listeners run (only when there are
    any), so they see results in submission order. It may release the slot before waiting, which
    is what keeps waiting for earlier calls from ever blocking them.
    """

    def slot(self) -> AbstractAsyncContextManager[Any]: ...

    async def before_post(self) -> None: ...


class BodyFailed(Exception):
    """Raised by a tool body whose failure text is already written for the model (``run_code``
    reporting a failed run): the result is an error with exactly these blocks and ``kind``."""

    def __init__(self, blocks: list[dict[str, Any]], kind: ErrorKind = ErrorKind.TOOL_ERROR) -> None:
        super().__init__(kind.value)
        self.blocks = blocks
        self.kind = kind

logger = logging.getLogger("codemode")


async def run_call(
    registry: CallRegistry,
    call: ToolCall,
    agent: str | None,
    parent: ExecutionToken | None,
    *,
    log_call: bool = True,
    gate: DispatchGate | None = None,
) -> ToolResult:
    """Run ``call`` through the whole pipeline; see the module docstring for what never raises."""
    agent, parent_call_id, root_call_id = _lineage(call, agent, parent)
    name = call.name
    log = registry.events
    args, problem = _freeze_arguments(call.arguments)
    if log_call:
        log.append(_call_event(call, args, agent, parent_call_id, root_call_id))
    definition = registry.get(name, agent=agent)
    if definition is not None and problem is None and definition.defaults:
        args = FrozenDict({**definition.defaults, **args})
    token = ExecutionToken(call.call_id, root_call_id, agent)
    ctx = ExecutionContext(call.call_id, name, args, token, parent, root_call_id, agent)
    hooks = registry.hooks
    span = tracing.start(call.call_id, name, definition.description if definition else None, args)
    try:
        if definition is None:
            names = ", ".join(d.name for d in registry.visible(agent)) or m.NO_TOOLS
            result = _error(ctx, ErrorKind.UNKNOWN_TOOL, m.UNKNOWN_TOOL.format(name=name, available=names))
        elif problem is not None:
            result = _invalid_arguments(ctx, [Violation("$", problem)])
        else:
            violations = definition.arguments_validator.violations(args)
            if violations:
                result = _invalid_arguments(ctx, violations)
            else:
                result = await _run_checked(hooks, definition, ctx, args, gate)
    except Exception as exc:  # e.g. an unresolvable $ref in an imported schema
        result = _error(ctx, ErrorKind.TOOL_ERROR, m.TOOL_FAILED.format(name=name, error=_describe(exc)))
    except BaseException:
        result = _error(ctx, ErrorKind.CANCELLED, m.CANCELLED.format(name=name))
        tracing.finish(span, result)
        log.append(_result_event(ctx, parent_call_id, result))
        with anyio.CancelScope(shield=True):
            await _observe(hooks, result, ctx)
        raise
    tracing.finish(span, result)
    log.append(_result_event(ctx, parent_call_id, result))
    if hooks.observers:
        await _observe(hooks, result, ctx)
    return result


def log_call_event(
    registry: CallRegistry, call: ToolCall, agent: str | None, parent: ExecutionToken | None
) -> None:
    """Append the ``tool/call`` event ``run_call(..., log_call=False)`` will not write itself."""
    agent, parent_call_id, root_call_id = _lineage(call, agent, parent)
    args, _ = _freeze_arguments(call.arguments)
    registry.events.append(_call_event(call, args, agent, parent_call_id, root_call_id))


def _lineage(
    call: ToolCall, agent: str | None, parent: ExecutionToken | None
) -> tuple[str | None, str | None, str]:
    """(agent, parent_call_id, root_call_id): a sub-call inherits agent and root from its parent."""
    if parent is None:
        return agent, None, call.call_id
    if type(parent) is not ExecutionToken:
        raise TypeError(f"parent must be an ExecutionToken from ctx.token, got {type(parent).__name__}")
    return (parent._agent if agent is None else agent), parent._call_id, parent._root_call_id


def _freeze_arguments(arguments: Any) -> tuple[Any, str | None]:
    """(the arguments as they are logged and handed on, the problem with them or None). Text
    that is not JSON is logged as the text; other arguments that are not JSON as one string
    naming the problem, never as the object: a cycle or a deep nest would hang or crash the
    event log's size estimate and its JSON lines."""
    if type(arguments) is UnreadableArguments:
        return arguments.text, m.NOT_JSON.format(what="arguments", detail=arguments.reason)
    try:
        args = freeze(arguments)
    except NotJSONError as exc:
        return _unloggable(exc), m.NOT_JSON.format(what="arguments", detail=exc)
    except RecursionError:  # hostile nesting (or a cycle) must be an error result, not a crash
        detail = "nested too deeply"
        return _unloggable(detail), m.NOT_JSON.format(what="arguments", detail=detail)
    if type(args) is not FrozenDict:
        return args, m.ARGUMENTS_NOT_OBJECT.format(type=type(arguments).__name__)
    return args, None


def _unloggable(detail: object) -> str:
    return f"<arguments that are not JSON: {detail}>"


def _call_event(
    call: ToolCall, args: Any, agent: str | None, parent_call_id: str | None, root_call_id: str
) -> dict[str, Any]:
    return {
        "type": EVENT_TOOL_CALL,
        "ts": time.time(),
        "call_id": call.call_id,
        "name": call.name,
        "arguments": args,
        "agent": agent,
        "parent_call_id": parent_call_id,
        "root_call_id": root_call_id,
    }


def _result_event(ctx: ExecutionContext, parent_call_id: str | None, result: ToolResult) -> dict[str, Any]:
    return {
        "type": EVENT_TOOL_RESULT,
        "ts": time.time(),
        "call_id": ctx.call_id,
        "name": ctx.name,
        "content": result.content,
        "value": result.value,
        "is_error": result.is_error,
        "meta": result.meta,
        "agent": ctx.agent,
        "parent_call_id": parent_call_id,
        "root_call_id": ctx.root_call_id,
    }


async def _run_checked(
    hooks: HookSet,
    definition: ToolDefinition,
    ctx: ExecutionContext,
    args: FrozenDict,
    gate: DispatchGate | None = None,
) -> ToolResult:
    """Steps 1-8 for a call whose tool exists and whose arguments are valid."""
    if hooks.pre_execute or hooks.guards:
        denied = await _admit(hooks, ctx)
        if denied is not None:
            return denied
    try:
        if gate is not None:
            async with gate.slot():
                raw = await _body(hooks, definition, args, ctx)
        elif hooks.wrappers:
            raw = await _wrapped(hooks, definition, args, ctx)
        else:
            raw = await definition.execute(args, ctx)
    except BodyFailed as exc:
        content = _content(exc.blocks)
        if isinstance(content, str):
            return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_CONTENT.format(name=ctx.name, detail=content))
        return ToolResult(content, None, True, FrozenDict(call_id=ctx.call_id, error=exc.kind.value))
    except TimeoutError:
        return _error(ctx, ErrorKind.TIMEOUT, m.TIMED_OUT.format(name=ctx.name))
    except Exception as exc:
        return _error(ctx, ErrorKind.TOOL_ERROR, m.TOOL_FAILED.format(name=ctx.name, error=_describe(exc)))
    result = _from_body(definition, ctx, args, raw)
    if result.is_error:
        return result
    if hooks.post_execute:
        if gate is not None:
            await gate.before_post()
        result = await _post(hooks, definition, ctx, args, result)
        if result.is_error:
            return result
    if definition.finalize_content is not None:
        try:
            content = definition.finalize_content(args, list(result.content))
        except Exception as exc:
            return _error(ctx, ErrorKind.TOOL_ERROR, m.TOOL_FAILED.format(name=ctx.name, error=_describe(exc)))
        frozen = _content(content)
        if isinstance(frozen, str):
            return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_CONTENT.format(name=ctx.name, detail=frozen))
        result = ToolResult(frozen, result.value, False, result.meta)
    return result


async def _admit(hooks: HookSet, ctx: ExecutionContext) -> ToolResult | None:
    """Steps 1-2: the first deny wins; an ``ask`` goes to the approval service after all listeners."""
    ask_reason: str | None = None
    for entry in hooks.pre_execute:
        try:
            decision = await _maybe_await(entry.fn(ctx))
        except Exception as exc:
            return _denied(ctx, m.HOOK_FAILED.format(hook="pre_execute", error=_describe(exc)))
        if decision is None or decision is ALLOW:
            continue
        if type(decision) is not Decision:
            return _denied(ctx, m.HOOK_RETURNED.format(hook="pre_execute", got=type(decision).__name__, expected="Decision"))
        if decision.kind == "deny":
            return _denied(ctx, decision.reason)
        if decision.kind == "ask" and ask_reason is None:
            ask_reason = decision.reason
    if ask_reason is not None:
        approve = hooks.approval
        if approve is None:
            return _denied(ctx, m.NO_APPROVAL_SERVICE.format(reason=ask_reason))
        try:
            approved = await _maybe_await(approve(ctx, ask_reason))
        except Exception as exc:
            return _denied(ctx, m.APPROVAL_FAILED.format(error=_describe(exc)))
        if approved is not True:
            return _denied(ctx, m.APPROVAL_REFUSED.format(reason=ask_reason))
    for entry in hooks.guards:
        try:
            decision = await _maybe_await(entry.fn(ctx))
        except Exception as exc:
            return _denied(ctx, m.HOOK_FAILED.format(hook="guard", error=_describe(exc)))
        if decision is None or decision is ALLOW:
            continue
        if type(decision) is not Decision or decision.kind == "ask":
            return _denied(ctx, m.HOOK_RETURNED.format(hook="guard", got=_kind(decision), expected="allow() or deny()"))
        if decision.kind != "allow":
            return _denied(ctx, decision.reason)
    return None


async def _body(hooks: HookSet, definition: ToolDefinition, args: FrozenDict, ctx: ExecutionContext) -> Any:
    if hooks.wrappers:
        return await _wrapped(hooks, definition, args, ctx)
    return await definition.execute(args, ctx)


async def _wrapped(hooks: HookSet, definition: ToolDefinition, args: FrozenDict, ctx: ExecutionContext) -> Any:
    """Steps 3-4: the first registered wrapper is the outermost."""
    wrappers = hooks.wrappers
    depth = len(wrappers)

    async def call_at(i: int) -> Any:
        if i == depth:
            return await definition.execute(args, ctx)
        return await wrappers[i].fn(ctx, lambda: call_at(i + 1))

    return await call_at(0)


def _from_body(definition: ToolDefinition, ctx: ExecutionContext, args: FrozenDict, raw: Any) -> ToolResult:
    """Steps 5-6: validate the canonical value and render it, or take content blocks as they are."""
    validator = definition.output_validator
    if validator is None:
        content = _content(raw)
        if isinstance(content, str):
            return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_CONTENT.format(name=ctx.name, detail=content))
        return ToolResult(content, None, False, FrozenDict(call_id=ctx.call_id))
    try:
        value = freeze(raw)
    except NotJSONError as exc:
        return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_OUTPUT.format(name=ctx.name, detail=m.NOT_JSON.format(what="the value", detail=exc)))
    violations = validator.violations(value)
    if violations:
        detail = "; ".join(map(str, violations))
        return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_OUTPUT.format(name=ctx.name, detail=detail))
    try:
        rendered = definition.render(args, value)  # type: ignore[misc]
    except Exception as exc:
        return _error(ctx, ErrorKind.TOOL_ERROR, m.TOOL_FAILED.format(name=ctx.name, error=_describe(exc)))
    content = _content(rendered)
    if isinstance(content, str):
        return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_CONTENT.format(name=ctx.name, detail=content))
    return ToolResult(content, value, False, FrozenDict(call_id=ctx.call_id))


async def _post(
    hooks: HookSet, definition: ToolDefinition, ctx: ExecutionContext, args: FrozenDict, result: ToolResult
) -> ToolResult:
    """Step 7: each listener sees the result left by the one before it."""
    for entry in hooks.post_execute:
        try:
            decision: PostDecision | None = await _maybe_await(entry.fn(ctx, result))
        except Exception as exc:
            return _error(ctx, ErrorKind.BLOCKED, m.BLOCKED.format(name=ctx.name, feedback=m.HOOK_FAILED.format(hook="post_execute", error=_describe(exc))))
        if decision is None or decision is ACCEPT:
            continue
        if type(decision) is not PostDecision:
            feedback = m.HOOK_RETURNED.format(hook="post_execute", got=type(decision).__name__, expected="PostDecision")
            return _error(ctx, ErrorKind.BLOCKED, m.BLOCKED.format(name=ctx.name, feedback=feedback))
        if decision.kind == "block":
            return _error(ctx, ErrorKind.BLOCKED, m.BLOCKED.format(name=ctx.name, feedback=decision.feedback))
        if decision.kind == "replace_content":
            content = _content(decision.content)
            if isinstance(content, str):
                return _error(ctx, ErrorKind.INVALID_OUTPUT, m.INVALID_CONTENT.format(name=ctx.name, detail=content))
            result = ToolResult(content, result.value, False, result.meta)
        elif decision.kind == "replace_value":
            result = _from_body(definition, ctx, args, decision.value)
            if result.is_error:
                return result
    return result


async def _observe(hooks: HookSet, result: ToolResult, ctx: ExecutionContext) -> None:
    """Step 9: observers see the frozen result; a failing one is logged and changes nothing."""
    for entry in hooks.observers:
        try:
            await _maybe_await(entry.fn(result, ctx))
        except Exception:
            logger.exception("result observer %r failed for call %s", entry.fn, ctx.call_id)


async def _maybe_await(value: Any) -> Any:
    return await value if isawaitable(value) else value


def _content(blocks: Any) -> FrozenList | str:
    """Frozen content blocks, or the reason they are not content blocks."""
    problem = check_content(blocks)
    if problem is not None:
        return problem
    try:
        return freeze(blocks)
    except NotJSONError as exc:
        return str(exc)


def _kind(decision: Any) -> str:
    return f"ask({decision.reason!r})" if type(decision) is Decision else type(decision).__name__


#: An absolute host path in an exception's text: POSIX (``/home/me/x``, also after ``cwd:`` or
#: in a ``file:`` URL, ``//server/share``; not ``a/b`` or a web URL's path) or Windows
#: (``C:\\x``, ``\\\\server\\share``), up to a quote, whitespace or a separator of the message; a
#: space goes on the path when a slash follows before the next one (``/home/Ann Lee/x``).
_PATH_PART = r"[^\s'\"<>|,;)\]]"
_HOST_PATH = re.compile(
    r"(?:(?<![\w/.~:-])//|(?:(?<![\w/.~-])|(?<=file://))/|(?<![\w/.~-])\\\\|(?<![\w/.~-])[A-Za-z]:\\)"
    rf"[\w.~-]{_PATH_PART}*(?: {_PATH_PART}*[/\\]{_PATH_PART}*)*"
)
#: What stands in for a host path in a tool's error text.
HOST_PATH_MASK = "<path>"


def _describe(exc: BaseException) -> str:
    """A tool's exception as the model reads it: type and message, host paths masked (an
    ``OSError`` shows its reason only), so no error carries where the host keeps its files.
    An exception class with ``model_facing = True`` (``WorkspaceError``) wrote its message for
    the model and keeps it."""
    if getattr(type(exc), "model_facing", False) is True:
        text = str(exc)
    elif isinstance(exc, OSError) and exc.strerror and (exc.filename is not None or exc.filename2 is not None):
        text = exc.strerror
    else:
        text = _HOST_PATH.sub(HOST_PATH_MASK, str(exc))
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _error(ctx: ExecutionContext, kind: ErrorKind, text: str) -> ToolResult:
    block = FrozenDict(type="text", text=text)
    return ToolResult(FrozenList((block,)), None, True, FrozenDict(call_id=ctx.call_id, error=kind.value))


def _denied(ctx: ExecutionContext, reason: str) -> ToolResult:
    return _error(ctx, ErrorKind.DENIED, m.DENIED.format(name=ctx.name, reason=reason))


def _invalid_arguments(ctx: ExecutionContext, violations: list[Violation]) -> ToolResult:
    lines = "\n".join(f"- {v}" for v in violations)
    return _error(
        ctx, ErrorKind.INVALID_ARGUMENTS, m.INVALID_ARGUMENTS.format(name=ctx.name, violations=lines)
    )
