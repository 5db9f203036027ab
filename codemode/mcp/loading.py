"""Start the servers of MCP client configuration files and register their tools on a registry.

``load_mcp_tools`` (and its ``async with`` form ``mcp_tools``) is what ``--mcp-config`` runs; a
host calls it the same way. A server that fails to start is reported and skipped. By default the
servers' tool lists are cached in the user's cache directory (``codemode.mcp.cache``), so after
the first load a server starts only when a program calls one of its tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import anyio

from ..registry.output import visible
from ..registry.registry import Registry
from .cache import ToolListStore
from .config import (
    DEFAULT_UPSTREAM_LIMITS,
    McpConfigError,
    ServerConfig,
    UpstreamLimits,
    load_config,
)
from .provider import McpProvider

__all__ = ["load_mcp_tools", "mcp_tools"]

WARNING = "codemode: warning: {message}\n"


def _servers(paths: Sequence[str]) -> list[ServerConfig]:
    """Every server of every file; a name in two files is a configuration error."""
    seen: dict[str, str] = {}
    out: list[ServerConfig] = []
    problems: list[str] = []
    for path in paths:
        for name, config in load_config(path).items():
            if name in seen:
                problems.append(f"server {name!r} is defined in both {seen[name]} and {path}")
                continue
            seen[name] = path
            out.append(config)
    if problems:
        raise McpConfigError(", ".join(paths), problems)
    return out


async def load_mcp_tools(
    registry: Registry,
    config_paths: str | Sequence[str],
    *,
    limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
    stderr: TextIO | None = None,
    progress: TextIO | None = None,
    cache: ToolListStore | str | Path | bool = True,
    refresh: bool = False,
    stderr_lines: Callable[[str, str], None] | None = None,
) -> McpProvider:
    """Register the configured servers' tools on ``registry``, starting the servers whose tool
    lists are not cached (in parallel).

    Returns the provider; ``await provider.aclose()`` (from the same task) unregisters the
    tools and stops the servers. A server that fails to start is reported on ``stderr`` and
    skipped. ``progress`` (a terminal) gets one line, rewritten in place, while they start.
    ``cache``: ``True`` (the default) keeps tool lists in the user's cache directory, a path or a
    ``ToolListStore`` somewhere else, ``False`` nowhere (every server starts at load);
    ``refresh=True`` lists every server live and rewrites its cached list. Cache warnings and
    the notice that a server contradicted its cached list go to ``stderr``. ``stderr_lines``
    gets stdio servers' stderr line by line (see ``McpProvider``).
    Raises ``McpConfigError`` for a bad file, ``RegistrationError`` for a name clash.
    """
    paths = [config_paths] if isinstance(config_paths, str) else list(config_paths)

    def warn(message: str) -> None:
        if stderr is not None:
            stderr.write(WARNING.format(message=visible(message)))
            stderr.flush()

    store = _store(cache, refresh, warn)
    provider = McpProvider(_servers(paths), limits=limits, cache=store, notify=warn if stderr is not None else None,
                           stderr_lines=stderr_lines)
    await provider.start()
    try:
        async with anyio.create_task_group() as tg:
            shown: list[bool] = []
            if progress is not None and provider.servers:
                tg.start_soon(_show_start, provider, progress, shown)
            await provider.register(registry)
            tg.cancel_scope.cancel()
        if shown:
            progress.write("\r\033[K")  # type: ignore[union-attr]
            progress.flush()  # type: ignore[union-attr]
    except BaseException:
        await provider.aclose()
        raise
    if stderr is not None:
        for message in [*provider.failures.values(), *provider.hidden.values()]:
            stderr.write(WARNING.format(message=visible(message)))  # upstream text
    return provider


def _store(cache: ToolListStore | str | Path | bool, refresh: bool, warn: Callable[[str], None]) -> ToolListStore | None:
    if isinstance(cache, ToolListStore):
        return ToolListStore(cache.directory, refresh=True, warn=cache.warn) if refresh else cache
    if cache is True:
        return ToolListStore.default(refresh=refresh, warn=warn)
    if cache is False:
        return None
    return ToolListStore(cache, refresh=refresh, warn=warn)


START_PROGRESS = "\r[codemode] starting {count} MCP server{s}: {ready} ready, {elapsed:.1f} s"
#: The start line appears after this many seconds and is rewritten this often.
START_PROGRESS_AFTER = 0.3
START_PROGRESS_EVERY = 0.2


async def _show_start(provider: McpProvider, out: TextIO, shown: list[bool]) -> None:
    started = anyio.current_time()
    await anyio.sleep(START_PROGRESS_AFTER)
    servers = [s for s in provider.servers.values() if s.name not in provider.from_cache]
    if not servers:
        return  # every list came from the cache: nothing is starting
    while True:
        ready = sum(1 for s in servers if s.connected)
        count = len(servers)
        out.write(START_PROGRESS.format(count=count, s="" if count == 1 else "s", ready=ready,
                                        elapsed=anyio.current_time() - started))
        out.flush()
        shown.append(True)
        await anyio.sleep(START_PROGRESS_EVERY)


@asynccontextmanager
async def mcp_tools(
    registry: Registry,
    config_paths: str | Sequence[str] | None,
    *,
    limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
    stderr: TextIO | None = None,
    progress: TextIO | None = None,
    cache: ToolListStore | str | Path | bool = True,
    refresh: bool = False,
    stderr_lines: Callable[[str, str], None] | None = None,
) -> AsyncIterator[McpProvider | None]:
    """``load_mcp_tools`` for the length of a ``with`` block; yields ``None`` without paths."""
    if not config_paths:
        yield None
        return
    provider = await load_mcp_tools(registry, config_paths, limits=limits, stderr=stderr, progress=progress,
                                    cache=cache, refresh=refresh, stderr_lines=stderr_lines)
    try:
        yield provider
    finally:
        await provider.aclose()
