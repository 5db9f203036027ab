"""The tool registry: named tools, per-agent views, hooks and the entry point of every call.

Visibility for an agent: its scoped tools first (they shadow global tools of the same name), then
the global tools its ``allow`` list admits (all of them when there is no list; the reserved
``run_code`` builtin is never filtered out, the mode decides whether the model sees it). An agent without a
scope, and ``agent=None``, see every global tool. The name ``run_code`` is reserved for the Code
Mode bridge, which installs it with ``register_builtin``; ``mode`` is stored here for the bridge to
enforce.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Literal, get_args

import anyio

from .calls import ExecutionToken, ToolCall, ToolResult
from .definition import ToolDefinition
from .errors import RegistrationError
from .events import EventLog, MemoryEventLog
from .export import FORMATS
from .hooks import (
    ApprovalService,
    GuardHook,
    Handle,
    HookSet,
    PostExecuteHook,
    PreExecuteHook,
    ResultObserver,
    WrapperHook,
)
from .pipeline import log_call_event, run_call
from .plugins import load_plugin
from .presentation import generic_card

__all__ = ["AgentScope", "Mode", "RESERVED_NAMES", "Registry"]

Mode = Literal["native", "code", "both"]
MODES: tuple[str, ...] = get_args(Mode)
RESERVED_NAMES = frozenset({"run_code"})


def _check_mode(mode: Any) -> Mode:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    return mode  # type: ignore[no-any-return]


def _check_definition(definition: Any) -> ToolDefinition:
    if not isinstance(definition, ToolDefinition):
        raise TypeError(
            f"register() takes a ToolDefinition (from define_tool or @tool), got {type(definition).__name__}"
        )
    return definition


class AgentScope:
    """One agent's view: an optional allow list, scoped tools and a mode override. Disposable."""

    def __init__(
        self, registry: Registry, agent: str, allow: frozenset[str] | None, mode: Mode | None
    ) -> None:
        self.registry = registry
        self.agent = agent
        self.allow = allow
        self.mode = mode
        self.tools: dict[str, ToolDefinition] = {}
        self.disposed = False

    def register(self, definition: ToolDefinition) -> Handle:
        """Add a tool only this agent sees; it shadows a global tool of the same name."""
        definition = _check_definition(definition)
        if definition.name in RESERVED_NAMES:
            raise RegistrationError(f"tool name {definition.name!r} is reserved for Code Mode")
        if definition.name in self.tools:
            raise RegistrationError(f"tool {definition.name!r} is already registered for agent {self.agent!r}")
        self.tools[definition.name] = definition
        self.registry._changed()

        def undo() -> None:
            if self.tools.get(definition.name) is definition:
                del self.tools[definition.name]
                self.registry._changed()

        return Handle(undo)

    def dispose(self) -> None:
        """Remove the scope: the agent sees the global tools again."""
        if not self.disposed:
            self.disposed = True
            if self.registry._scopes.get(self.agent) is self:
                del self.registry._scopes[self.agent]
                self.registry._changed()

    def __enter__(self) -> AgentScope:
        return self

    def __exit__(self, *exc: object) -> None:
        self.dispose()

    def __repr__(self) -> str:
        return f"AgentScope({self.agent!r}, tools={sorted(self.tools)}, mode={self.mode!r})"


class Registry:
    """Named tools, per-agent views, hooks, and ``execute`` (the only way a tool runs)."""

    def __init__(self, *, log: EventLog | None = None, mode: Mode = "native") -> None:
        self.events: EventLog = log if log is not None else MemoryEventLog.default()
        self._mode: Mode = _check_mode(mode)
        self._tools: dict[str, ToolDefinition] = {}
        self._scopes: dict[str, AgentScope] = {}
        self._hooks = HookSet()
        self._visible: dict[str | None, list[ToolDefinition]] = {}
        self._change_listeners: list[Callable[[], None]] = []

    @property
    def hooks(self) -> HookSet:
        """The hook lists the pipeline runs (add to them with ``on_pre_execute``, ``add_guard``, ...)."""
        return self._hooks

    # --- mode --------------------------------------------------------------------------------

    @property
    def mode(self) -> Mode:
        """How tools reach the model: ``native`` calls, ``code`` (run_code only) or ``both``."""
        return self._mode

    @mode.setter
    def mode(self, value: Mode) -> None:
        self._mode = _check_mode(value)

    def mode_for(self, agent: str | None = None) -> Mode:
        """The agent's scope override, else the registry's mode."""
        scope = self._scopes.get(agent) if agent is not None else None
        return scope.mode if scope is not None and scope.mode is not None else self._mode

    # --- registration -------------------------------------------------------------------------

    def register(self, definition: ToolDefinition) -> Handle:
        """Add a global tool; dispose the handle (or leave its ``with``) to remove it.

        Raises ``RegistrationError`` for a duplicate or reserved name.
        """
        definition = _check_definition(definition)
        if definition.name in RESERVED_NAMES:
            raise RegistrationError(f"tool name {definition.name!r} is reserved for Code Mode")
        return self._add(definition)

    def register_builtin(self, definition: ToolDefinition) -> Handle:
        """Install a tool with a reserved name (the Code Mode bridge's ``run_code``)."""
        definition = _check_definition(definition)
        if definition.name not in RESERVED_NAMES:
            raise RegistrationError(
                f"register_builtin() is only for reserved names ({', '.join(sorted(RESERVED_NAMES))}); use register()"
            )
        return self._add(definition)

    def _add(self, definition: ToolDefinition) -> Handle:
        if definition.name in self._tools:
            raise RegistrationError(
                f"tool {definition.name!r} is already registered; dispose its handle first to replace it"
            )
        self._tools[definition.name] = definition
        self._changed()

        def undo() -> None:
            if self._tools.get(definition.name) is definition:
                del self._tools[definition.name]
                self._changed()

        return Handle(undo)

    def scope(
        self, agent: str, *, allow: Iterable[str] | None = None, mode: Mode | None = None
    ) -> AgentScope:
        """Create ``agent``'s view. ``allow`` restricts which global tools it sees; tools added with
        ``scope.register`` are always visible to it. Raises ``RegistrationError`` if it exists."""
        if not isinstance(agent, str) or not agent:
            raise ValueError("agent must be a non-empty string")
        if agent in self._scopes:
            raise RegistrationError(f"agent {agent!r} already has a scope; dispose it first")
        allowed = None if allow is None else frozenset(allow)
        scope = AgentScope(self, agent, allowed, None if mode is None else _check_mode(mode))
        self._scopes[agent] = scope
        self._changed()
        return scope

    def _changed(self) -> None:
        self._visible.clear()
        for listener in list(self._change_listeners):
            try:
                listener()
            except Exception:  # a listener's failure never undoes a registration
                logging.getLogger("codemode").warning("tool-set change listener failed", exc_info=True)

    def on_change(self, listener: Callable[[], None]) -> Handle:
        """Call ``listener()`` after every change of the tool set (register, dispose, scopes),
        e.g. to tell an MCP client its tool list changed. A failing listener is logged."""
        self._change_listeners.append(listener)

        def undo() -> None:
            if listener in self._change_listeners:
                self._change_listeners.remove(listener)

        return Handle(undo)

    # --- lookup ----------------------------------------------------------------------------------

    def get(self, name: str, agent: str | None = None) -> ToolDefinition | None:
        """The definition ``agent`` would run for ``name``, or None if it cannot see one."""
        scope = self._scopes.get(agent) if agent is not None else None
        if scope is None:
            return self._tools.get(name)
        found = scope.tools.get(name)
        if found is not None:
            return found
        if scope.allow is not None and name not in scope.allow and name not in RESERVED_NAMES:
            return None
        return self._tools.get(name)

    def visible(self, agent: str | None = None) -> list[ToolDefinition]:
        """The tools ``agent`` can see after scoping and shadowing, sorted by name."""
        cached = self._visible.get(agent)
        if cached is None:
            names = set(self._tools)
            scope = self._scopes.get(agent) if agent is not None else None
            if scope is not None:
                allowed = names if scope.allow is None else names & (scope.allow | RESERVED_NAMES)
                names = allowed | set(scope.tools)
            cached = [d for d in (self.get(n, agent) for n in sorted(names)) if d is not None]
            self._visible[agent] = cached
        return list(cached)

    def schemas(self, agent: str | None = None, *, format: str = "json_schema") -> list[dict[str, Any]]:
        """The model-visible tool schemas in ``format``: json_schema, openai, anthropic or mcp."""
        exporter = FORMATS.get(format)
        if exporter is None:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
        return exporter(self.visible(agent))

    def load_plugin(self, spec: str) -> ModuleType:
        """Import a plugin by module path or ``.py`` file path and call its ``apply(self)``."""
        return load_plugin(self, spec)

    # --- hooks -------------------------------------------------------------------------------

    def on_pre_execute(self, listener: PreExecuteHook) -> Handle:
        """Step 1: ``listener(ctx)`` returns ``allow()``/None, ``deny(reason)`` or ``ask(reason)``."""
        return self._hooks.add("pre_execute", listener)

    def add_guard(self, guard: GuardHook) -> Handle:
        """Step 2: ``guard(ctx)`` returns None/``allow()`` or ``deny(reason)``; the first denial wins."""
        return self._hooks.add("guards", guard)

    def wrap_execute(self, wrapper: WrapperHook) -> Handle:
        """Steps 3-4: ``async wrapper(ctx, call_next)`` returns ``await call_next()`` or its own value."""
        return self._hooks.add("wrappers", wrapper)

    def on_post_execute(self, listener: PostExecuteHook) -> Handle:
        """Step 7: ``listener(ctx, result)`` returns None/``accept()``, ``replace_content(blocks)``,
        ``replace_value(value)`` or ``block(feedback)``."""
        return self._hooks.add("post_execute", listener)

    def on_result(self, observer: ResultObserver) -> Handle:
        """Step 9: ``observer(result, ctx)`` sees every final result, errors included."""
        return self._hooks.add("observers", observer)

    def set_approval_service(self, service: ApprovalService) -> Handle:
        """Answer ``ask`` decisions: ``service(ctx, reason)`` returns True to approve."""
        return self._hooks.set_approval(service)

    # --- execution -----------------------------------------------------------------------------

    async def execute(
        self, call: ToolCall, *, agent: str | None = None, parent: ExecutionToken | None = None
    ) -> ToolResult:
        """Run one call through the full pipeline; never raises for tool or policy failures.

        ``parent`` is ``ctx.token`` of an outer execution: the call then inherits its agent (unless
        given) and root call id, and is logged as a sub-call that history skips.
        """
        return await run_call(self, call, agent, parent)

    async def execute_batch(
        self, calls: Sequence[ToolCall], *, agent: str | None = None, parent: ExecutionToken | None = None
    ) -> list[ToolResult]:
        """Run one model turn's calls, results in call order. Runs of concurrency-safe calls
        overlap; any other call runs alone. All ``tool/call`` events are logged first, so history
        shows the calls as one turn."""
        results: list[ToolResult | None] = [None] * len(calls)
        for call in calls:
            log_call_event(self, call, agent, parent)
        group: list[int] = []

        async def one(i: int) -> None:
            results[i] = await run_call(self, calls[i], agent, parent, log_call=False)

        async def flush() -> None:
            if len(group) == 1:
                await one(group[0])
            elif group:
                async with anyio.create_task_group() as tg:
                    for i in group:
                        tg.start_soon(one, i)
            group.clear()

        viewer = agent if agent is not None or parent is None else parent._agent
        for i, call in enumerate(calls):
            definition = self.get(call.name, viewer)
            if definition is not None and definition.is_concurrency_safe(call.arguments):
                group.append(i)
                continue
            await flush()
            await one(i)
        await flush()
        return [r for r in results if r is not None]

    # --- presentation ----------------------------------------------------------------------------

    def present_call(self, call: ToolCall, agent: str | None = None) -> dict[str, Any]:
        """The UI card for a pending call; a generic card when the tool has none or it fails."""
        definition = self.get(call.name, agent)
        if definition is not None and definition.present_call is not None:
            try:
                return definition.present_call(call.arguments)
            except Exception:
                pass
        return generic_card(call.name)

    def present_result(self, call: ToolCall, result: ToolResult, agent: str | None = None) -> dict[str, Any]:
        """The UI card for a finished call; a generic card with the result text as fallback."""
        definition = self.get(call.name, agent)
        if definition is not None and definition.present_result is not None:
            try:
                return definition.present_result(call.arguments, result)
            except Exception:
                pass
        return generic_card(call.name, result.text)

    def __repr__(self) -> str:
        return f"Registry(tools={sorted(self._tools)}, scopes={sorted(self._scopes)}, mode={self._mode!r})"

