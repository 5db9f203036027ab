"""Agent-loop integration: what a host loop needs to offer Code Mode to a model.

``CodeMode`` installs ``run_code`` on a registry and enforces the presentation mode: in ``code``
mode the model sees only ``run_code`` (plus the SDK in the system prompt) and a direct call to any
other tool is denied with a pointer to ``run_code``; in ``native`` mode ``run_code`` is hidden and
refused; ``both`` shows everything. The mode is the registry's, overridable per agent scope.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

import sandbox

from ..registry.calls import ExecutionContext, ToolCall, ToolResult
from ..registry.export import FORMATS
from ..registry.hooks import Decision, Handle, deny
from ..registry.messages import ErrorKind
from ..registry.registry import Mode, Registry
from ..registry.shapes import as_tool_call, result_messages
from . import messages as m
from .bridge import (
    RUN_CODE,
    CodeRun,
    Executor,
    RunCodeTool,
    RunSettings,
    SubCall,
    build_sdk,
    with_settings,
)
from .discovery import budgeted_text
from .sessions import CodeSession, restart_arguments, session_limits

__all__ = ["CallOutcome", "CodeMode", "extract_code_blocks"]

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[ \t]*(\w*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.M | re.S)
_PYTHON_TAGS = frozenset({"", "python", "py", "python3"})


def extract_code_blocks(text: str) -> list[str]:
    """The fenced Python blocks of a model reply, in order, for loops that take code from text
    instead of a tool call. Untagged fences count as Python; other languages are skipped."""
    return [match.group(3) for match in _FENCE.finditer(text) if match.group(2).lower() in _PYTHON_TAGS]


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """What ``CodeMode.handle`` returns: the pipeline result, the text for the model, and the
    images to show the model after it (from successful ``run_code`` sub-calls)."""

    result: ToolResult
    text: str
    attachments: tuple[Mapping[str, Any], ...]
    run: CodeRun | None = None

    @property
    def is_error(self) -> bool:
        return self.result.is_error

    def to_messages(self, format: str = "openai") -> list[dict[str, Any]]:
        """This outcome as the provider's tool-result message(s) or item, images in its native
        form: ``openai`` (Chat Completions), ``openai-responses`` or ``anthropic``."""
        return result_messages(self, format)


class CodeMode:
    """Code Mode on a registry: ``run_code``, mode enforcement, prompts, schemas and dispatch.

    ``limits`` and ``max_parallel_sub_calls`` are host configuration; ``run_code`` takes only
    ``code`` and ``description`` (and ``restart`` with ``sessions`` on), so a model can never
    raise them. ``sessions`` (``True`` or a ``sandbox.SessionLimits``) lets a host keep one
    program's globals per conversation: ``handle(call, session=key)`` or ``session(key)``. ``executor`` replaces the
    registry pipeline for sub-calls (replay). Use it as a context manager (``async with`` or
    ``with``), or call ``close()``, to uninstall what it installed.
    """

    def __init__(
        self,
        registry: Registry,
        *,
        mode: Mode | None = None,
        limits: sandbox.Limits = sandbox.DEFAULT_LIMITS,
        max_parallel_sub_calls: int = 10,
        backend: sandbox.BackendName | sandbox.Runtime = "worker",
        preflight: bool = True,
        executor: Executor | None = None,
        sessions: bool | sandbox.SessionLimits = False,
    ) -> None:
        if not isinstance(limits, sandbox.Limits):
            raise TypeError(f"limits must be a sandbox.Limits, got {type(limits).__name__}")
        self.registry = registry
        self.session_limits = session_limits(sessions)
        self._sessions: dict[str, CodeSession] = {}
        if mode is not None:
            registry.mode = mode
        self.tool = RunCodeTool(
            registry,
            limits=limits,
            max_parallel_sub_calls=max_parallel_sub_calls,
            backend=backend,
            preflight=preflight,
            executor=executor,
            sessions=self.session_limits is not None,
        )
        self._handles: list[Handle] = [
            registry.register_builtin(self.tool.definition()),
            registry.on_pre_execute(self._enforce_mode),
        ]

    @property
    def limits(self) -> sandbox.Limits:
        return self.tool.limits

    def close(self) -> None:
        """Close every session, remove ``run_code`` and the mode check from the registry; idempotent."""
        for code_session in list(self._sessions.values()):
            code_session.close()
        for handle in self._handles:
            handle.dispose()
        self._handles.clear()

    async def __aenter__(self) -> CodeMode:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def __enter__(self) -> CodeMode:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _enforce_mode(self, ctx: ExecutionContext) -> Decision | None:
        if ctx.parent is not None:
            return None
        mode = self.registry.mode_for(ctx.agent)
        if ctx.name == RUN_CODE:
            return deny(m.RUN_CODE_NATIVE) if mode == "native" else None
        if mode == "code":
            return deny(m.CALL_FROM_RUN_CODE.format(name=ctx.name, method=_method(ctx.name)))
        return None

    # --- what the model sees ------------------------------------------------------------------

    def sdk(self, agent: str | None = None) -> Any:
        """The ``sdk_gen.SDK`` for ``agent``'s tools (``run_code`` excluded)."""
        return build_sdk(self.tool.tools_for(agent))

    def system_prompt(self, agent: str | None = None, *, budget: int | None = None) -> str:
        """The system-prompt section for ``agent``: the SDK in ``code``/``both`` mode, else ``""``.

        With ``budget`` (characters), a prompt that would be longer becomes the discovery text
        instead (how to write the program, ``tools.search``/``describe``/``list``, then as much
        of the tool index as fits), never longer than ``budget``."""
        if self.registry.mode_for(agent) == "native":
            return ""
        sdk = self.sdk(agent)
        if budget is None:
            return m.SYSTEM_PROMPT.format(sdk=sdk.text)
        return budgeted_text(sdk, lead=m.SYSTEM_PROMPT_LEAD, budget=budget, mode="auto")

    def model_tools(self, agent: str | None = None, *, format: str = "openai") -> list[dict[str, Any]]:
        """The tool schemas to send the model: only ``run_code`` (code), everything (both), or
        everything but ``run_code`` (native)."""
        exporter = FORMATS.get(format)
        if exporter is None:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        mode = self.registry.mode_for(agent)
        visible = self.registry.visible(agent)
        if mode == "code":
            chosen = [d for d in visible if d.name == RUN_CODE]
        elif mode == "native":
            chosen = [d for d in visible if d.name != RUN_CODE]
        else:
            chosen = visible
        return exporter(chosen)

    # --- sessions -----------------------------------------------------------------------------

    def session(self, key: str) -> CodeSession:
        """The session named ``key`` (made on first use): its ``handle``/``run`` keep one
        program's globals across ``run_code`` calls. Raises ``ValueError`` when sessions are off."""
        if self.session_limits is None:
            raise ValueError(m.SESSIONS_OFF.format(key=key))
        if not isinstance(key, str):
            raise TypeError(f"a session key is a str, got {type(key).__name__}")
        found = self._sessions.get(key)
        if found is None or found.closed:
            found = self._sessions[key] = CodeSession(self, key, self.session_limits)
        return found

    @property
    def sessions(self) -> dict[str, CodeSession]:
        """The open sessions by key (a copy)."""
        return dict(self._sessions)

    def close_session(self, key: str) -> None:
        """Close the session named ``key`` if there is one (kills its worker)."""
        found = self._sessions.get(key)
        if found is not None:
            found.close()

    def _forget(self, code_session: CodeSession) -> None:
        if self._sessions.get(code_session.key) is code_session:
            del self._sessions[code_session.key]

    def _resolve(self, session: str | CodeSession | None) -> CodeSession | None:
        if session is None or isinstance(session, CodeSession):
            return session
        return self.session(session)

    # --- dispatch -----------------------------------------------------------------------------

    async def handle(
        self,
        tool_call: ToolCall | Mapping[str, Any] | Any,
        *,
        agent: str | None = None,
        limits: sandbox.Limits | None = None,
        on_sub_call: Callable[[SubCall], None] | None = None,
        session: str | CodeSession | None = None,
        controller: sandbox.RunController | None = None,
    ) -> CallOutcome:
        """Run one model tool call through the pipeline.

        ``tool_call`` is a ``ToolCall``, codemode's flat ``{"id", "name", "arguments"}``, an
        OpenAI chat tool call, an OpenAI Responses ``function_call`` item or an Anthropic
        ``tool_use`` block, as the SDK object or its dict (``arguments`` a dict or JSON text);
        another shape raises ``TypeError`` listing these. ``limits`` overrides the configured
        ones for this call only. ``on_sub_call(sub_call)`` is called as each sub-call of a run
        starts and again when it ends (progress reports). ``session`` (a key, with
        ``sessions`` on) runs ``run_code`` in that conversation's session. ``controller`` (a
        ``sandbox.RunController``) lets the host cancel the run with a reason."""
        return await self._handle(tool_call, agent=agent, limits=limits, on_sub_call=on_sub_call, session=session,
                                  controller=controller)

    async def _handle(self, tool_call: Any, *, agent: str | None, limits: sandbox.Limits | None,
                      on_sub_call: Callable[[SubCall], None] | None, session: str | CodeSession | None,
                      controller: sandbox.RunController | None = None) -> CallOutcome:
        call = as_tool_call(tool_call)
        code_session = self._resolve(session)
        sink: list[CodeRun] = []
        settings = RunSettings(limits=limits, sink=sink, on_dispatch=on_sub_call, on_finish=on_sub_call,
                             session=code_session.sandbox if code_session is not None else None,
                             controller=controller)
        result = await with_settings(settings, self.registry.execute(call, agent=agent))
        images = tuple(b for b in result.content if b.get("type") == "image")
        return CallOutcome(result, result.text, images, sink[0] if sink else None)

    async def run(
        self,
        code: str,
        *,
        description: str = "Run a program",
        call_id: str = "run",
        agent: str | None = None,
        limits: sandbox.Limits | None = None,
        on_dispatch: Any = None,
        session: str | CodeSession | None = None,
        restart: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> CodeRun:
        """Run ``code`` as a ``run_code`` call from the host (the CLI does this) and return the
        full report. The call goes through the pipeline like a model's, mode checks included.
        ``session`` runs it in that session (``restart``: in a fresh state). ``on_output(text)``
        gets what the program prints as it prints it (raw text, pieces may end mid-line; see
        ``sandbox.RunController``); the report's logs stay the account of record."""
        return await self._run(code, description=description, call_id=call_id, agent=agent, limits=limits,
                               on_dispatch=on_dispatch, session=session, restart=restart, on_output=on_output)

    async def _run(self, code: str, *, description: str, call_id: str, agent: str | None,
                   limits: sandbox.Limits | None, on_dispatch: Any, session: str | CodeSession | None,
                   restart: bool, on_output: Callable[[str], None] | None = None) -> CodeRun:
        code_session = self._resolve(session)
        sink: list[CodeRun] = []
        settings = RunSettings(limits=limits, sink=sink, on_dispatch=on_dispatch, on_output=on_output,
                             session=code_session.sandbox if code_session is not None else None)
        arguments = {"code": code, "description": description}
        call = ToolCall(call_id, RUN_CODE, restart_arguments(arguments, restart and code_session is not None))
        result = await with_settings(settings, self.registry.execute(call, agent=agent))
        if sink:
            return sink[0]
        error = sandbox.RunError(_never_ran_kind(result), result.text)  # type: ignore[arg-type]
        run = sandbox.RunResult(error=error)
        return CodeRun(call_id, run, (), "", result.text, (), 0.0)

    # --- for scripts ---------------------------------------------------------------------------

    def handle_sync(self, tool_call: Any, **options: Any) -> CallOutcome:
        """``handle`` from synchronous code (runs its own event loop; not inside one)."""
        return anyio.run(functools.partial(self.handle, tool_call, **options))

    def run_sync(self, code: str, **options: Any) -> CodeRun:
        """``run`` from synchronous code (runs its own event loop; not inside one)."""
        return anyio.run(functools.partial(self.run, code, **options))

    def __repr__(self) -> str:
        return f"CodeMode(mode={self.registry.mode!r}, limits={self.tool.limits!r})"


#: The kind of a host run that never started, by the pipeline's verdict on the ``run_code`` call.
_REFUSED = frozenset({ErrorKind.UNKNOWN_TOOL, ErrorKind.INVALID_ARGUMENTS, ErrorKind.DENIED})


def _never_ran_kind(result: ToolResult) -> str:
    """``refused`` when the pipeline turned the call away (a mode check, a policy, invalid
    arguments), ``cancelled`` when it was cancelled, else ``crashed``: ``run_code`` itself broke."""
    kind = result.meta.get("error")
    if kind in _REFUSED:
        return "refused"
    if kind == ErrorKind.CANCELLED:
        return "cancelled"
    return "crashed"


def _method(name: str) -> str:
    import sdk_gen

    return sdk_gen.sanitize_name(name)
