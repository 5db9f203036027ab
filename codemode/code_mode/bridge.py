"""The Code Mode bridge: the ``run_code`` tool, and the bindings that turn a snippet's
``await tools.name(...)`` into one registry pipeline execution each.

One run, in order: snapshot the calling agent's visible tools (``run_code`` excluded), build their
SDK (cached per tool set), pre-flight the snippet against it (diagnostics fail the run with kind
``preflight`` and nothing runs), then ``sandbox.run`` with one binding per method name *and* wire
name. A binding normalises and validates the arguments before numbering the call, so a bad call
uses no call id; an accepted call is ``<outer>:code:<n>`` with the outer token as parent. The
snippet gets the canonical value (tools with an output schema) or the text of the content blocks,
non-text blocks replaced by placeholders; a failure raises ``ToolCallError`` in the snippet.

Pacing: concurrency-safe calls share ``max_parallel_sub_calls`` slots, the others take one lock;
post-execute listeners see results in submission order (see ``pipeline.DispatchGate``). Calls
still queued when the run ends are abandoned, and every sub-call's events are written before
``run_code`` returns, whatever ended the run.
"""

from __future__ import annotations

import contextvars
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import anyio

import sandbox
import sdk_gen
from sandbox.output import TRUNCATION_MARKER

from ..registry import tracing
from ..registry.calls import RUN_DEADLINE, ExecutionContext, ExecutionToken, ToolCall, ToolResult
from ..registry.content import placeholder
from ..registry.definition import ToolDefinition, define_tool
from ..registry.events import EVENT_CODE_DISPATCH, EVENT_CODE_DISPATCH_START, estimate_size
from ..registry.frozen import freeze, thaw
from ..registry.messages import INVALID_ARGUMENTS, TOOL_FAILED, ErrorKind
from ..registry.output import cap_json
from ..registry.pipeline import BodyFailed, DispatchGate, run_call
from ..registry.presentation import generic_card
from ..registry.registry import Registry
from . import messages as m
from .discovery import search_helper

__all__ = [
    "RUN_CODE",
    "CodeRun",
    "Executor",
    "RunCodeTool",
    "RunSettings",
    "StopRun",
    "SubCall",
    "build_sdk",
    "render_run",
    "with_settings",
]

T = TypeVar("T")

RUN_CODE = "run_code"
DEFAULT_MAX_PARALLEL = 10
#: What one run keeps of its sub-calls' arguments, content and values (``estimate_size``) for
#: its records (``CodeRun.calls``, dispatch events, ``--record``, attachments). Past it, a
#: finished record keeps capped arguments and a marker instead of its content: a run of many
#: large calls cannot hold them all. The snippet itself always gets the full value.
RUN_RECORD_BYTES = 32 * 1024 * 1024
#: Arguments of a record past ``RUN_RECORD_BYTES`` are capped to this many bytes of JSON.
RECORD_ARGUMENTS_CAP = 4096

#: ``executor(call, parent, gate) -> ToolResult``: runs one accepted sub-call. The default runs
#: the registry pipeline; ``--replay`` answers from a recording instead.
Executor = Callable[[ToolCall, ExecutionToken, DispatchGate], Awaitable[ToolResult]]


class StopRun(Exception):
    """Raise from an executor to end the whole run with ``reason``; the run's error kind is
    ``kind`` (``cancelled`` unless the executor names why, as ``--replay`` does with
    ``replay-mismatch``)."""

    def __init__(self, reason: str, *, kind: str = "cancelled") -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


@dataclass(slots=True)
class SubCall:
    """One accepted sub-call, as the events, ``--trace``, ``--record`` and ``--json`` show it.

    ``status`` is ``ok``, ``error``, ``cancelled`` (in flight when the run ended, or cancelled
    by the program itself: a timeout around its await) or ``abandoned`` (queued, never
    dispatched).
    """

    call_id: str
    number: int
    name: str
    arguments: dict[str, Any]
    status: str = "queued"
    is_error: bool = False
    content: Sequence[Mapping[str, Any]] = field(default_factory=list)
    value: Any = None
    started: float = 0.0
    duration_ms: float = 0.0

    def to_json(self, *, cap: int | None = None) -> dict[str, Any]:
        """The call as ``--json`` shows it; with ``cap``, arguments and content whose JSON is
        longer than ``cap`` bytes each become truncation markers (``output.cap_json``)."""
        arguments: Any = self.arguments
        content: Any = thaw(self.content)
        if cap is not None:
            arguments, content = cap_json(arguments, cap), cap_json(content, cap)
        return {
            "id": self.call_id,
            "name": self.name,
            "arguments": arguments,
            "status": self.status,
            "is_error": self.is_error,
            "content": content,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True, slots=True)
class CodeRun:
    """Everything one ``run_code`` execution produced; ``text`` is what the model reads."""

    call_id: str
    result: sandbox.RunResult
    calls: tuple[SubCall, ...]
    sdk_hash: str
    text: str
    attachments: tuple[Mapping[str, Any], ...]
    duration_ms: float

    @property
    def ok(self) -> bool:
        return self.result.error is None


def _snippet_block(block: Mapping[str, Any]) -> str:
    if block.get("type") == "text":
        return block["text"]
    if block.get("type") == "resource" and isinstance(block.get("text"), str):
        return placeholder(block) + "\n" + block["text"]  # an embedded text resource: its text
    return placeholder(block)


def _snippet_text(content: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(_snippet_block(b) for b in content)


_MEDIA = ("image", "audio")
_MAX_WALK = 64


def _snippet_value(value: Any, depth: int = 0) -> Any:
    """A canonical value as the snippet gets it: the base64 ``data`` of a media object in it
    (``{"type": "image"|"audio", "data", "mimeType"|"mime_type"}``) becomes a placeholder,
    as media content blocks do."""
    if depth > _MAX_WALK:
        return value
    if isinstance(value, dict):
        if value.get("type") in _MEDIA and isinstance(value.get("data"), str):
            mime = value.get("mimeType", value.get("mime_type"))
            if isinstance(mime, str):
                block = {"type": value["type"], "mime_type": mime, "data": value["data"]}
                return {**value, "data": placeholder(block)}
        return {k: _snippet_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_snippet_value(v, depth + 1) for v in value]
    return value


#: The sandbox's last log line when output was cut (``[output truncated: N bytes dropped]``).
_TRUNCATED_LOGS = re.compile(re.escape(TRUNCATION_MARKER).replace(re.escape("{dropped}"), r"\d+"))


def render_run(result: sandbox.RunResult) -> str:
    """What the model reads back: logs then the value, the no-output marker, or the error; in a
    session that lost its state, then one line that says so."""
    text = _rendered(result)
    if result.reset is not None:
        text += "\n" + m.SESSION_NOTE.format(sentence=result.reset)
    return text


def _rendered(result: sandbox.RunResult) -> str:
    if result.error is not None:
        text = m.RUN_FAILED.format(kind=result.error.kind, message=result.error.message)
        if result.logs:
            text += "\n" + m.CAPTURED_OUTPUT + "\n" + "\n".join(result.logs)
        return text
    parts = list(result.logs)
    value = result.value
    if value is not None and parts and _TRUNCATED_LOGS.fullmatch(parts[-1]):
        parts.append(m.RETURN_VALUE)  # the value must not read as more of the cut output
    if isinstance(value, str):
        parts.append(value)
    elif value is not None:
        parts.append(json.dumps(value, indent=2, ensure_ascii=False))
    return "\n".join(parts) if parts else m.RUN_NO_OUTPUT


#: What a program receives from a tool without an output schema: the text of its content blocks.
TEXT_RESULT: Mapping[str, Any] = {"type": "string"}


def _spec(definition: ToolDefinition) -> sdk_gen.ToolSpec:
    # A tool without an output schema hands the program its text, so the SDK says `-> str`.
    output = thaw(definition.output_schema) if definition.output_schema is not None else dict(TEXT_RESULT)
    return sdk_gen.ToolSpec(
        definition.name, definition.description, thaw(definition.parameters_schema), output, definition.sdk_note
    )


def _without_name(wire: str, text: str) -> str:
    """An error result's text for the snippet's ``ToolCallError``, which names the tool itself:
    ``read_file: WorkspaceError: ...``, not ``read_file: read_file failed: WorkspaceError: ...``."""
    lead = TOOL_FAILED.format(name=wire, error="")
    return text[len(lead):] if text.startswith(lead) and len(text) > len(lead) else text


def build_sdk(definitions: Sequence[ToolDefinition]) -> sdk_gen.SDK:
    """The SDK a snippet is written against for these tools (sdk_gen caches by content)."""
    return sdk_gen.generate([_spec(d) for d in definitions], allowed_imports=sandbox.ALLOWED_MODULES)


def _nullable(schema: Any) -> bool:
    if not isinstance(schema, Mapping):
        return True
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, (list, tuple)) and "null" in kind):
        return True
    if kind is None and not any(k in schema for k in ("anyOf", "oneOf", "enum", "const")):
        return True  # no type constraint: None is a value like any other
    for key in ("anyOf", "oneOf"):
        if any(_nullable(s) for s in schema.get(key) or ()):
            return True
    if None in (schema.get("enum") or ()):
        return True
    return False


def _none_droppers(definition: ToolDefinition) -> frozenset[str]:
    """Optional arguments whose schema refuses null: ``None`` for them means "not sent"."""
    schema = definition.parameters_schema
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return frozenset(k for k, s in props.items() if k not in required and not _nullable(s))


class _Gate:
    """One sub-call's ``DispatchGate``: its slot (semaphore or lock) and its place in line."""

    __slots__ = ("_limiter", "_before", "_held", "record", "run")

    def __init__(self, limiter: Any, before: anyio.Event | None, record: SubCall, run: _Run) -> None:
        self._limiter = limiter
        self._before = before
        self._held = False
        self.record = record
        self.run = run

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        try:
            self._limiter.acquire_nowait()  # uncontended: no trip through the event loop
        except anyio.WouldBlock:
            await self._limiter.acquire()
        self._held = True
        self.record.status = "running"
        self.run.dispatched(self.record)
        try:
            yield
        finally:
            self.release()

    def release(self) -> None:
        if self._held:
            self._held = False
            self._limiter.release()

    async def before_post(self) -> None:
        self.release()
        if self._before is not None:
            await self._before.wait()


class _Run:
    """The state of one run: numbering, pacing, records, attachments."""

    def __init__(
        self,
        ctx: ExecutionContext,
        definitions: Sequence[ToolDefinition],
        registry: Registry,
        executor: Executor,
        max_parallel: int,
        controller: sandbox.RunController,
    ) -> None:
        self.ctx = ctx
        self.registry = registry
        self.executor = executor
        self.controller = controller
        self.definitions = {d.name: d for d in definitions}
        self.droppers = {d.name: _none_droppers(d) for d in definitions}
        self.count = 0
        self.records: list[SubCall] = []
        self.semaphore = anyio.Semaphore(max_parallel)
        self.serial = anyio.Lock()
        self.last_done: anyio.Event | None = None
        self.on_dispatch: Callable[[SubCall], None] | None = None
        self.kept = 0
        self.on_finish: Callable[[SubCall], None] | None = None
        #: The kind and reason of a ``StopRun``, which the run's ``cancelled`` becomes.
        self.stopped: tuple[str, str] | None = None
        #: Numbers of the sub-calls the program itself cancelled, recorded as they ended.
        self.settled: set[int] = set()

    def dispatched(self, record: SubCall) -> None:
        record.started = time.perf_counter()
        if self.on_dispatch is not None:
            self.on_dispatch(record)

    def binding(self, wire: str) -> Callable[..., Awaitable[Any]]:
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await self.call(wire, args, kwargs)

        return call

    def _arguments(self, wire: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        if args:
            if len(args) > 1:
                raise sandbox.BindingError(m.ARGS_POSITIONAL.format(count=len(args)))
            if kwargs:
                raise sandbox.BindingError(m.ARGS_MIXED)
            if not isinstance(args[0], dict):
                raise sandbox.BindingError(m.ARGS_NOT_DICT.format(type=type(args[0]).__name__))
            kwargs = args[0]
        drop = self.droppers[wire]
        if drop:
            kwargs = {k: v for k, v in kwargs.items() if v is not None or k not in drop}
        return kwargs

    async def call(self, wire: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        definition = self.definitions[wire]
        arguments = self._arguments(wire, args, kwargs)
        frozen = freeze(arguments)
        if definition.defaults:
            checked = {**definition.defaults, **frozen}
            violations = definition.arguments_validator.violations(checked)
        else:
            violations = definition.arguments_validator.violations(frozen)
        if violations:
            lines = "\n".join(f"- {v}" for v in violations)
            raise sandbox.BindingError(INVALID_ARGUMENTS.format(name=wire, violations=lines))
        self.count += 1
        n = self.count
        ctx = self.ctx
        record = SubCall(f"{ctx.call_id}:code:{n}", n, wire, arguments)
        self.records.append(record)
        log = self.registry.events
        log.append(
            {
                "type": EVENT_CODE_DISPATCH_START,
                "ts": time.time(),
                "call_id": record.call_id,
                "parent_call_id": ctx.call_id,
                "root_call_id": ctx.root_call_id,
                "agent": ctx.agent,
                "name": wire,
                "arguments": arguments,
            }
        )
        before, done = self.last_done, anyio.Event()
        self.last_done = done
        safe = definition.is_concurrency_safe(frozen)
        gate = _Gate(self.semaphore if safe else self.serial, before, record, self)
        try:
            result = await self.executor(ToolCall(record.call_id, wire, frozen), ctx.token, gate)
        except StopRun as exc:
            record.status, record.is_error = "error", True
            record.content = [{"type": "text", "text": exc.reason}]
            if self.stopped is None:
                self.stopped = (exc.kind, exc.reason)
            self.controller.cancel(exc.reason)
            self._finish(record)
            raise sandbox.BindingError(exc.reason) from None
        except Exception as exc:  # an executor that broke: the call failed, nobody cancelled it
            record.status, record.is_error = "error", True
            record.content = [{"type": "text", "text": TOOL_FAILED.format(name=wire, error=type(exc).__name__)}]
            self._finish(record)
            raise
        except BaseException:
            queued = record.status == "queued"
            record.status = "abandoned" if queued else "cancelled"
            record.is_error = True
            if sandbox.call_abandoned():
                # The program cancelled this call and runs on: its record is final now, its slot
                # and its place in line are freed below.
                text = m.SUB_CALL_ABANDONED_QUEUED if queued else m.SUB_CALL_ABANDONED
                record.content = [{"type": "text", "text": text.format(name=wire)}]
                self.settled.add(n)
                self._finish(record)
            # Otherwise the run is ending: its dispatch event waits for the run's reason (`close`).
            raise
        finally:
            gate.release()
            done.set()
        record.status = "error" if result.is_error else "ok"
        record.is_error = result.is_error
        record.content = result.content  # frozen: shared, never copied
        record.value = result.value
        self._keep(record)
        self._finish(record)
        if result.is_error:
            raise sandbox.BindingError(_without_name(wire, result.text))
        if definition.output_schema is not None:
            return _snippet_value(thaw(result.value))
        return _snippet_text(result.content)

    def _keep(self, record: SubCall) -> None:
        """Keep the record whole while the run's records fit ``RUN_RECORD_BYTES``, else a marker."""
        size = estimate_size(record.arguments) + estimate_size(record.content) + estimate_size(record.value)
        if self.kept + size <= RUN_RECORD_BYTES:
            self.kept += size
            return
        record.arguments = cap_json(record.arguments, RECORD_ARGUMENTS_CAP)
        record.content = [{"type": "text", "text": m.RECORD_NOT_KEPT.format(size=size, limit=RUN_RECORD_BYTES)}]
        record.value = None

    def _finish(self, record: SubCall) -> None:
        if record.started:
            record.duration_ms = (time.perf_counter() - record.started) * 1000
        if self.on_finish is not None:
            self.on_finish(record)
        ctx = self.ctx
        self.registry.events.append(
            {
                "type": EVENT_CODE_DISPATCH,
                "ts": time.time(),
                "call_id": record.call_id,
                "parent_call_id": ctx.call_id,
                "root_call_id": ctx.root_call_id,
                "agent": ctx.agent,
                "name": record.name,
                "arguments": record.arguments,
                "status": record.status,
                "is_error": record.is_error,
                "content": record.content,
                "duration_ms": round(record.duration_ms, 3),
            }
        )

    def close(self, reason: str) -> None:
        """Write the dispatch event of every call the run's end cut short."""
        for record in self.records:
            if record.number in self.settled:
                continue
            if record.status == "abandoned":
                text = m.NOT_DISPATCHED.format(reason=reason, name=record.name)
            elif record.status == "cancelled":
                text = m.SUB_CALL_CANCELLED.format(reason=reason, name=record.name)
            else:
                continue
            record.content = [{"type": "text", "text": text}]
            self._finish(record)

    def attachments(self) -> list[dict[str, Any]]:
        return [
            b for r in self.records if r.status == "ok" for b in r.content if b.get("type") == "image"
        ]


@dataclass(frozen=True, slots=True)
class RunSettings:
    """Per-call overrides a host sets around ``handle``/``run`` (never the model); ``with_settings``
    puts them in force for one awaited registry call, which reaches ``run_code`` through the
    pipeline without any argument of its own."""

    limits: sandbox.Limits | None = None
    sink: list[CodeRun] | None = None
    on_dispatch: Callable[[SubCall], None] | None = None
    on_finish: Callable[[SubCall], None] | None = None
    #: The session this call runs in (``CodeMode(sessions=...)``), or None for a one-shot run.
    session: sandbox.Session | None = None
    #: Lets the host cancel the run with a reason (a server's drain); a fresh one when None.
    controller: sandbox.RunController | None = None
    #: Gets the program's prints as they happen (the CLI on a terminal); see ``CodeMode.run``.
    on_output: Callable[[str], None] | None = None


_NO_SETTINGS = RunSettings()
_SETTINGS: contextvars.ContextVar[RunSettings] = contextvars.ContextVar("codemode_run_settings", default=_NO_SETTINGS)


async def with_settings(settings: RunSettings, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` with ``settings`` in force for the ``run_code`` calls it makes."""
    token = _SETTINGS.set(settings)
    try:
        return await awaitable
    finally:
        _SETTINGS.reset(token)


def _preflight_error(diagnostics: Sequence[sdk_gen.Diagnostic]) -> sandbox.RunError:
    lines = "\n".join(str(d) for d in diagnostics)
    return sandbox.RunError("preflight", m.PREFLIGHT_FAILED.format(diagnostics=lines))  # type: ignore[arg-type]


class RunCodeTool:
    """The ``run_code`` body and its configuration; ``CodeMode`` owns one."""

    def __init__(
        self,
        registry: Registry,
        *,
        limits: sandbox.Limits,
        max_parallel_sub_calls: int,
        backend: sandbox.BackendName | sandbox.Runtime,
        preflight: bool,
        executor: Executor | None,
        sessions: bool = False,
    ) -> None:
        if isinstance(max_parallel_sub_calls, bool) or not isinstance(max_parallel_sub_calls, int) or max_parallel_sub_calls < 1:
            raise ValueError(f"max_parallel_sub_calls must be an int >= 1, got {max_parallel_sub_calls!r}")
        self.registry = registry
        self.limits = limits
        self.max_parallel_sub_calls = max_parallel_sub_calls
        self.backend = backend
        self.preflight = preflight
        self.executor: Executor = executor if executor is not None else self._pipeline
        #: With sessions, ``run_code`` takes ``restart`` and says that variables persist.
        self.sessions = sessions

    async def _pipeline(self, call: ToolCall, parent: ExecutionToken, gate: DispatchGate) -> ToolResult:
        return await run_call(self.registry, call, None, parent, gate=gate)

    def tools_for(self, agent: str | None) -> list[ToolDefinition]:
        return [d for d in self.registry.visible(agent) if d.name != RUN_CODE]

    def definition(self) -> ToolDefinition:
        properties: dict[str, Any] = {
            # An empty program is the bridge's to answer (a `syntax` error that says so), not an
            # argument error.
            "code": {"type": "string", "description": m.RUN_CODE_CODE},
            "description": {
                "type": "string",
                "minLength": 1,
                "pattern": r"\S",
                "description": m.RUN_CODE_PURPOSE,
            },
        }
        description = m.RUN_CODE_DESCRIPTION
        if self.sessions:
            properties["restart"] = {"type": "boolean", "description": m.RUN_CODE_RESTART}
            description += " " + m.RUN_CODE_SESSION
        return define_tool(
            name=RUN_CODE,
            description=description,
            parameters_schema={
                "type": "object",
                "properties": properties,
                "required": ["code", "description"],
                "additionalProperties": False,
            },
            execute=self.execute,
            present_call=lambda args: generic_card(str(args.get("description", RUN_CODE)), args.get("code")),
        )

    async def execute(self, args: Mapping[str, Any], ctx: ExecutionContext) -> list[dict[str, Any]]:
        settings = _SETTINGS.get()
        report = await self.run(args["code"], ctx, settings, restart=args.get("restart") is True)
        tracing.annotate_run(report)
        if settings.sink is not None:
            settings.sink.append(report)
        blocks = [{"type": "text", "text": report.text}, *report.attachments]
        if not report.ok:
            raise BodyFailed(blocks, ErrorKind.RUN_FAILED)
        return blocks

    async def run(self, code: str, ctx: ExecutionContext, settings: RunSettings, *, restart: bool = False) -> CodeRun:
        started = time.perf_counter()
        definitions = self.tools_for(ctx.agent)
        sdk = build_sdk(definitions)
        limits = settings.limits or self.limits
        controller = settings.controller or sandbox.RunController(on_output=settings.on_output)
        state = _Run(ctx, definitions, self.registry, self.executor, self.max_parallel_sub_calls, controller)
        state.on_dispatch = settings.on_dispatch
        state.on_finish = settings.on_finish
        result: sandbox.RunResult | None = None
        # Oversized code is the sandbox's to refuse (cheaply, before parsing); pre-flight would
        # parse all of it on the event loop first.
        small = len(code) <= limits.max_source
        diagnostics = sdk_gen.check(code, sdk) if self.preflight and small else []
        if not code.strip():
            result = sandbox.RunResult(error=sandbox.RunError("syntax", m.EMPTY_PROGRAM))
        elif diagnostics:
            result = sandbox.RunResult(error=_preflight_error(diagnostics))
        else:
            bindings: dict[str, Callable[..., Awaitable[Any]]] = {}
            docs: dict[str, str] = {}
            for method, wire in sdk.method_names.items():
                fn = state.binding(wire)
                bindings[method] = bindings[wire] = fn
                docs[method] = docs[wire] = sdk.describe(method)
            helpers = search_helper(sdk)  # the helper wins over a tool whose wire name is "search"
            bindings.update(helpers)
            docs.update(dict.fromkeys(helpers, m.SEARCH_DOC))
            deadline = RUN_DEADLINE.set(anyio.current_time() + limits.wall_time)
            try:
                if settings.session is not None:
                    result = await settings.session.run(
                        code, bindings=bindings, limits=limits, docs=docs, controller=controller, restart=restart
                    )
                else:
                    result = await sandbox.run(
                        code,
                        bindings=bindings,
                        limits=limits,
                        docs=docs,
                        backend=self.backend,
                        controller=controller,
                    )
            finally:
                RUN_DEADLINE.reset(deadline)
                if result is None:  # the outer call itself was cancelled
                    state.close("cancelled")
        if result.error is not None and result.error.kind == "cancelled" and state.stopped is not None:
            kind, reason = state.stopped
            if kind != "cancelled":
                result = replace(result, error=sandbox.RunError(kind, reason))  # type: ignore[arg-type]
        if result.error is None:
            state.close(m.REASON_COMPLETED)
        else:
            state.close(result.error.kind)
        return CodeRun(
            call_id=ctx.call_id,
            result=result,
            calls=tuple(state.records),
            sdk_hash=sdk.sdk_hash,
            text=render_run(result),
            attachments=tuple(state.attachments()),
            duration_ms=(time.perf_counter() - started) * 1000,
        )
