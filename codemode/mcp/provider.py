"""``McpProvider``: the tools of configured MCP servers, brought into a registry.

Nothing connects until ``load()`` (or ``register()``), which starts every server at once and
lists its tools; a server that fails to start is reported in ``failures`` and the others load.
Each tool is a plain registered tool, so every call goes through the registry pipeline (policies,
guards, approvals, validation, observers) whether the model or a snippet makes it.

The provider owns a task group, so use it as ``async with McpProvider(...) as provider:``, or
call ``await provider.start()`` and ``await provider.aclose()`` from the same task.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import IO, Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup

from ..definition import ToolDefinition
from ..errors import CodemodeError
from ..hooks import Handle
from ..registry import Registry
from . import messages as m
from .config import DEFAULT_UPSTREAM_LIMITS, ServerConfig, UpstreamLimits
from .tools import missing_capability, namespace_names, tool_definition
from .upstream import UpstreamError, UpstreamServer

__all__ = ["McpProvider"]

logger = logging.getLogger("codemode.mcp")


class McpProvider:
    """Upstream MCP servers and the registry tools made from theirs.

    After ``load()``: ``definitions`` (sorted by name), ``upstream`` (registry name ->
    ``(server, upstream tool name)``), ``failures`` (server -> why it has no tools; a tool whose
    schemas the registry refuses is listed under ``"<server>/<tool>"``), ``hidden``
    (``"<server>/<tool>"`` -> the one line saying which capability it needs that codemode
    lacks) and ``servers``.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerConfig] | Iterable[ServerConfig],
        *,
        limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
        errlog: IO[str] | int | None = None,
    ) -> None:
        configs = list(servers.values()) if isinstance(servers, Mapping) else list(servers)
        self.limits = limits
        self.servers: dict[str, UpstreamServer] = {
            c.name: UpstreamServer(c, self._spawn, limits=limits, errlog=errlog) for c in configs
        }
        self.definitions: list[ToolDefinition] = []
        self.upstream: dict[str, tuple[str, str]] = {}
        self.failures: dict[str, str] = {}
        self.hidden: dict[str, str] = {}
        self._tg: TaskGroup | None = None
        self._handles: list[Handle] = []
        self._loaded = False

    def __repr__(self) -> str:
        return f"McpProvider(servers={list(self.servers)!r}, tools={len(self.definitions)})"

    # --- lifecycle ---------------------------------------------------------------------------------

    async def start(self) -> McpProvider:
        """Open the task group connection owners run in (connects nothing yet)."""
        if self._tg is None:
            tg = anyio.create_task_group()
            await tg.__aenter__()
            self._tg = tg
        return self

    async def __aenter__(self) -> McpProvider:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Unregister the tools, stop every server and wait for their processes; idempotent."""
        for handle in self._handles:
            handle.dispose()
        self._handles.clear()
        tg, self._tg = self._tg, None
        if tg is None:
            return
        try:
            with anyio.CancelScope(shield=True):
                async with anyio.create_task_group() as closers:
                    for server in self.servers.values():
                        closers.start_soon(server.aclose)
        finally:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)

    def _spawn(self, fn: Callable[[], Awaitable[None]]) -> None:
        if self._tg is None:
            raise CodemodeError("McpProvider is not started: use `async with McpProvider(...)` or `await start()`")
        self._tg.start_soon(fn)

    # --- tools ---------------------------------------------------------------------------------------

    async def load(self, *, taken: Iterable[str] = ()) -> list[ToolDefinition]:
        """Start every server in parallel, list their tools and build the definitions.

        ``taken`` names registry tools the new names must avoid. Idempotent.
        """
        if self._loaded:
            return self.definitions
        await self.start()
        listed: dict[str, list[types.Tool]] = {}

        async def list_one(server: UpstreamServer) -> None:
            try:
                listed[server.name] = await server.tools()
            except UpstreamError as exc:
                reason = getattr(exc, "reason", "")
                self.failures[server.name] = (
                    m.UPSTREAM_LOAD_FAILED.format(server=server.name, reason=reason) if reason else exc.message
                )
                logger.debug("MCP server %r: %s", server.name, exc.message)

        async with anyio.create_task_group() as tg:
            for server in self.servers.values():
                tg.start_soon(list_one, server)
        for server_name, tools in listed.items():
            usable = []
            for tool in tools:
                reason = missing_capability(tool)
                if reason is None:
                    usable.append(tool)
                    continue
                self.hidden[f"{server_name}/{tool.name}"] = m.TOOL_HIDDEN.format(
                    tool=tool.name, server=server_name, reason=reason
                )
            listed[server_name] = usable
        pairs = [(s, t.name) for s, tools in listed.items() for t in tools]
        names = namespace_names(pairs, taken)
        definitions: list[ToolDefinition] = []
        for server_name, tools in listed.items():
            server = self.servers[server_name]
            for tool in tools:
                name = names[(server_name, tool.name)]
                try:
                    definitions.append(tool_definition(server, tool, name))
                except (CodemodeError, ValueError, TypeError) as exc:
                    key = f"{server_name}/{tool.name}"
                    self.failures[key] = str(exc)
                    logger.warning("MCP tool %s skipped: %s", key, exc)
                    continue
                self.upstream[name] = (server_name, tool.name)
        self.definitions = sorted(definitions, key=lambda d: d.name)
        self._loaded = True
        return self.definitions

    async def register(self, registry: Registry) -> list[str]:
        """``load()`` avoiding the registry's names, then register every tool; returns the names.

        Raises ``RegistrationError`` if a name was taken in between (nothing stays registered).
        """
        taken = [d.name for d in registry.visible()]
        definitions = await self.load(taken=taken)
        handles: list[Handle] = []
        try:
            for definition in definitions:
                handles.append(registry.register(definition))
        except CodemodeError:
            for handle in handles:
                handle.dispose()
            raise
        self._handles.extend(handles)
        return [d.name for d in definitions]
