"""``McpProvider``: the tools of configured MCP servers, brought into a registry.

Nothing connects until ``load()`` (or ``register()``), which starts every server at once and
lists its tools; a server that fails to start is reported in ``failures`` and the others load.
With a ``ToolListStore`` (``cache=``), a server whose list is cached is not started at load: its
tools come from the cache, and the server starts when a program first calls one of them. That
first start lists the tools again; when they differ from the cached list the registry follows
the server, the store is updated, and ``notify`` gets one line saying so (this run's SDK was
already built from the cached list).
Each tool is a plain registered tool, so every call goes through the registry pipeline (policies,
guards, approvals, validation, observers) whether the model or a snippet makes it.

When a server says its tool list changed (and after it restarts), the provider lists that
server's tools again and updates the registry: new tools are registered, removed ones
unregistered, changed ones replaced under the same name. The registry's change listeners (the
MCP server's ``tools/list_changed``) hear about it.

The provider owns a task group, so use it as ``async with McpProvider(...) as provider:``, or
call ``await provider.start()`` and ``await provider.aclose()`` from the same task.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from functools import partial
from typing import IO, TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup

from ..registry.definition import ToolDefinition
from ..registry.errors import CodemodeError, RegistrationError
from ..registry.hooks import Handle
from ..registry.registry import Registry
from . import messages as m
from .cache import CachedToolList, ToolListStore
from .config import DEFAULT_UPSTREAM_LIMITS, ServerConfig, UpstreamLimits
from .resources import LIST_RESOURCES, READ_RESOURCE, ResourceIndex, resource_tools
from .tools import ToolJSON, missing_capability, namespace_names, tool_definition, tool_json
from .upstream import UpstreamError, UpstreamServer

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["McpProvider"]

logger = logging.getLogger("codemode.mcp")


class McpProvider:
    """Upstream MCP servers and the registry tools made from theirs.

    After ``load()``: ``definitions`` (sorted by name), ``upstream`` (registry name ->
    ``(server, upstream tool name)``), ``failures`` (server -> why it has no tools; a tool whose
    schemas the registry refuses is listed under ``"<server>/<tool>"``), ``hidden``
    (``"<server>/<tool>"`` -> the one line saying which capability it needs that codemode
    lacks), ``servers`` and ``resources`` (the ``ResourceIndex``; when a server lists resources,
    ``definitions`` also holds ``read_resource`` and ``list_resources``), and ``from_cache``
    (the servers whose tools came from ``cache`` and that were therefore not started).

    ``notify(line)`` gets the one-line notices for the user (a cached list the server then
    contradicted); by default they go to the ``codemode.mcp`` logger. ``stderr_lines(server,
    line)``, when given, gets what stdio servers write to their stderr, line by line, instead of
    that going to codemode's stderr directly.
    """

    def __init__(
        self,
        servers: Mapping[str, ServerConfig] | Iterable[ServerConfig],
        *,
        limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
        errlog: IO[str] | int | None = None,
        cache: ToolListStore | None = None,
        notify: Callable[[str], None] | None = None,
        stderr_lines: Callable[[str, str], None] | None = None,
    ) -> None:
        configs = list(servers.values()) if isinstance(servers, Mapping) else list(servers)
        self.limits = limits
        self.cache = cache
        self.notify = notify if notify is not None else logger.warning
        self.from_cache: set[str] = set()
        self._cached: dict[str, list[ToolJSON]] = {}  # from_cache server -> its cached list, until checked
        self._cached_version: dict[str, str | None] = {}  # ... and the server version it was cached from
        self.servers: dict[str, UpstreamServer] = {
            c.name: UpstreamServer(c, self._spawn, limits=limits, errlog=errlog, stderr_lines=stderr_lines)
            for c in configs
        }
        self.definitions: list[ToolDefinition] = []
        self.upstream: dict[str, tuple[str, str]] = {}
        self.failures: dict[str, str] = {}
        self.hidden: dict[str, str] = {}
        self._tg: TaskGroup | None = None
        self._handles: dict[str, Handle] = {}
        self._registry: Registry | None = None
        self._listed: dict[str, ToolJSON] = {}  # registry name -> the upstream tool it runs
        self._refreshing: set[str] = set()
        self._stale: set[str] = set()
        self.resources = ResourceIndex(self.servers)
        self._loaded = False
        for server in self.servers.values():
            server.on_tools_changed = partial(self._tools_changed, server.name)

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
        for handle in self._handles.values():
            handle.dispose()
        self._handles.clear()
        self._registry = None
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
        """Start every server in parallel (those with a cached list excepted), list their tools
        and build the definitions.

        ``taken`` names registry tools the new names must avoid. Idempotent.
        """
        if self._loaded:
            return self.definitions
        await self.start()
        listed: dict[str, list[ToolJSON]] = {}
        cached_offering: list[str] = []
        for server in self.servers.values():
            entry = self.cache.get(server.config) if self.cache is not None else None
            if entry is not None:
                listed[server.name] = entry.tools
                server.dropped = dict(entry.dropped)
                server.server_version = entry.server_version
                server.unverified = True
                self.from_cache.add(server.name)
                self._cached[server.name] = entry.tools
                self._cached_version[server.name] = entry.server_version
                if entry.resources:
                    cached_offering.append(server.name)

        async def list_one(server: UpstreamServer) -> None:
            try:
                listed[server.name] = [tool_json(t) for t in await server.tools()]
            except UpstreamError as exc:
                reason = getattr(exc, "reason", "")
                self.failures[server.name] = (
                    m.UPSTREAM_LOAD_FAILED.format(server=server.name, reason=reason) if reason else exc.message
                )
                logger.debug("MCP server %r: %s", server.name, exc.message)

        live = [s for s in self.servers.values() if s.name not in self.from_cache]
        async with anyio.create_task_group() as tg:
            for server in live:
                tg.start_soon(list_one, server)
        usable = {name: self._usable(name, tools) for name, tools in sorted(listed.items())}
        self._add([(name, tool) for name, tools in usable.items() for tool in tools], taken)
        await self.resources.refresh([s.name for s in live if s.name in listed])
        if cached_offering:  # listed when first needed, which starts those servers
            self.resources.offering = sorted({*self.resources.offering, *cached_offering})
        for server in live:
            if server.name in listed:
                self._store(server.name, listed[server.name])
        if self.resources.offering:
            used = {*taken, *(d.name for d in self.definitions)}
            read_name = _free(READ_RESOURCE, used)
            self.definitions.extend(resource_tools(self.resources, read_name, _free(LIST_RESOURCES, used | {read_name})))
            self.definitions.sort(key=lambda d: d.name)
        self._loaded = True
        return self.definitions

    def _usable(self, server_name: str, tools: list[ToolJSON]) -> list[ToolJSON]:
        """The tools codemode can call; the others go to ``hidden`` with the reason, and the
        ones the protocol refused (dropped by the server's screen) to ``failures``."""
        prefix = f"{server_name}/"
        for found in (self.hidden, self.failures):
            for key in [k for k in found if k.startswith(prefix)]:
                del found[key]
        for tool_name, why in self.servers[server_name].dropped.items():
            self.failures[prefix + tool_name] = m.TOOL_SKIPPED.format(tool=tool_name, server=server_name, reason=why)
            logger.debug("MCP tool %s%s dropped: %s", prefix, tool_name, why)
        usable = []
        for tool in tools:
            reason = missing_capability(tool)
            if reason is None:
                usable.append(tool)
            else:
                self.hidden[prefix + tool["name"]] = m.TOOL_HIDDEN.format(tool=tool["name"], server=server_name,
                                                                        reason=reason)
        return usable

    def _add(self, tools: list[tuple[str, ToolJSON]], taken: Iterable[str]) -> None:
        """Name, define and (once registered) register ``(server, tool)`` pairs; the names are
        given in sorted order, so the same tools always get the same names."""
        names = namespace_names([(s, t["name"]) for s, t in tools], [*taken, *(d.name for d in self.definitions)])
        for server_name, tool in tools:
            server = self.servers[server_name]
            name = names[(server_name, tool["name"])]
            key = f"{server_name}/{tool['name']}"
            self.failures.pop(key, None)
            try:
                definition = tool_definition(server, tool, name)
                if self._registry is not None:
                    self._handles[name] = self._registry.register(definition)
            except (CodemodeError, ValueError, TypeError, RecursionError) as exc:
                why = _why_refused(exc)
                self.failures[key] = m.TOOL_SKIPPED.format(tool=tool["name"], server=server_name, reason=why)
                logger.debug("MCP tool %s skipped: %s", key, why)
                continue
            self.upstream[name] = (server_name, tool["name"])
            self._listed[name] = tool
            self.definitions.append(definition)
        self.definitions.sort(key=lambda d: d.name)

    def _remove(self, name: str) -> None:
        handle = self._handles.pop(name, None)
        if handle is not None:
            handle.dispose()
        del self.upstream[name]
        del self._listed[name]
        self.definitions = [d for d in self.definitions if d.name != name]

    # --- following upstream changes ----------------------------------------------------------------

    def _tools_changed(self, server_name: str) -> None:
        """A server announced a new tool list (or restarted): list it again, once at a time."""
        if not self._loaded or self._tg is None:
            return  # load() is about to list it anyway
        if server_name in self._refreshing:
            self._stale.add(server_name)
            return
        self._refreshing.add(server_name)
        self._spawn(partial(self._refresh, server_name))

    async def _refresh(self, server_name: str) -> None:
        server = self.servers[server_name]
        try:
            while True:
                self._stale.discard(server_name)
                try:
                    tools = [tool_json(t) for t in await server.tools()]
                except UpstreamError as exc:  # keep the tools it had; a call will report the failure
                    logger.warning("MCP server %r: could not list its changed tools: %s", server_name, exc.message)
                    return
                if self._tg is not None:
                    if server.unverified:
                        server.unverified = False
                        cached = {t["name"]: t for t in self._cached.pop(server_name, [])}
                        changes = _changes(cached, tools)
                        was = self._cached_version.pop(server_name, None)
                        if changes and was != server.server_version:
                            changes += f"; version {server.server_version}, the list was cached from {was}"
                        if changes:
                            self.notify(m.CACHE_DISAGREES.format(server=server_name, changes=changes))
                    self.update(server_name, tools)
                    self._store(server_name, tools)
                if server_name not in self._stale:
                    return
        finally:
            self._refreshing.discard(server_name)

    def _store(self, server_name: str, tools: list[ToolJSON]) -> None:
        """Keep ``tools`` (a full, live ``tools/list`` answer) in the cache, if there is one."""
        if self.cache is None:
            return
        server = self.servers[server_name]
        entry = CachedToolList(list(tools), server.server_version, dict(server.dropped),
                               server_name in self.resources.offering)
        self.cache.put(server.config, entry)

    def update(self, server_name: str, tools: Iterable[types.Tool | ToolJSON]) -> list[str]:
        """Apply a new tool list of ``server_name``: new tools are added, removed ones dropped,
        changed ones replaced under the same name; returns the registry names that changed."""
        self.failures.pop(server_name, None)  # it answered: a failed start is over
        usable = {t["name"]: t for t in self._usable(server_name, [tool_json(t) for t in tools])}
        current = {upstream: name for name, (s, upstream) in self.upstream.items() if s == server_name}
        changed: list[str] = []
        for upstream, name in current.items():
            tool = usable.get(upstream)
            if tool is None or tool != self._listed[name]:
                self._remove(name)
                changed.append(name)
        kept = {upstream for upstream, name in current.items() if name in self.upstream}
        added = [t for upstream, t in usable.items() if upstream not in kept]
        taken = [d.name for d in self._registry.visible()] if self._registry is not None else []
        before = set(self.upstream)
        # A changed tool keeps its name: it is free again, and sorts first among candidates.
        self._add([(server_name, t) for t in added], [n for n in taken if n not in changed])
        changed.extend(n for n in self.upstream if n not in before and n not in changed)
        return sorted(changed)

    async def register(self, registry: Registry) -> list[str]:
        """``load()`` avoiding the registry's names, then register every tool; returns the names.

        Raises ``RegistrationError`` if a name was taken in between (nothing stays registered).
        """
        taken = [d.name for d in registry.visible()]
        definitions = await self.load(taken=taken)
        handles: dict[str, Handle] = {}
        try:
            for definition in definitions:
                handles[definition.name] = registry.register(definition)
        except RegistrationError:
            for handle in handles.values():
                handle.dispose()
            raise
        self._handles.update(handles)
        self._registry = registry
        return [d.name for d in definitions]


def _why_refused(exc: Exception) -> str:
    """One line saying why the registry refused an upstream tool's definition."""
    if isinstance(exc, RecursionError):
        return "its schemas nest too deeply"
    problems = getattr(exc, "problems", None)
    if isinstance(problems, list) and problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return str(problems[0]) + more
    return " ".join(str(exc).split())


def _free(name: str, used: set[str]) -> str:
    """``name``, or the first of ``name_2``, ``name_3``, ... that is not ``used``."""
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}_{n}", n + 1
    return candidate


def _changes(before: Mapping[str, ToolJSON], after: list[ToolJSON]) -> str:
    """``1 added, 2 removed, 1 changed`` between two lists of one server ('' when equal)."""
    now = {t["name"]: t for t in after}
    added = sum(1 for name in now if name not in before)
    removed = sum(1 for name in before if name not in now)
    changed = sum(1 for name, t in now.items() if name in before and t != before[name])
    parts = [f"{n} {what}" for n, what in ((added, "added"), (removed, "removed"), (changed, "changed")) if n]
    return ", ".join(parts)
