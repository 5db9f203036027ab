"""Start the servers of MCP client configuration files and register their tools on a registry.

``load_mcp_tools`` (and its ``async with`` form ``mcp_tools``) is what ``--mcp-config`` runs; a
host calls it the same way. A server that fails to start is reported and skipped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import TextIO

import anyio

from ..registry.output import visible
from ..registry.registry import Registry
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
) -> McpProvider:
    """Start the configured servers (in parallel) and register their tools on ``registry``.

    Returns the provider; ``await provider.aclose()`` (from the same task) unregisters the
    tools and stops the servers. A server that fails to start is reported on ``stderr`` and
    skipped. ``progress`` (a terminal) gets one line, rewritten in place, while they start.
    Raises ``McpConfigError`` for a bad file, ``RegistrationError`` for a name clash.
    """
    paths = [config_paths] if isinstance(config_paths, str) else list(config_paths)
    provider = McpProvider(_servers(paths), limits=limits)
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


START_PROGRESS = "\r[codemode] starting {count} MCP server{s}: {ready} ready, {elapsed:.1f} s"
#: The start line appears after this many seconds and is rewritten this often.
START_PROGRESS_AFTER = 0.3
START_PROGRESS_EVERY = 0.2


async def _show_start(provider: McpProvider, out: TextIO, shown: list[bool]) -> None:
    started = anyio.current_time()
    servers = list(provider.servers.values())
    await anyio.sleep(START_PROGRESS_AFTER)
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
) -> AsyncIterator[McpProvider | None]:
    """``load_mcp_tools`` for the length of a ``with`` block; yields ``None`` without paths."""
    if not config_paths:
        yield None
        return
    provider = await load_mcp_tools(registry, config_paths, limits=limits, stderr=stderr, progress=progress)
    try:
        yield provider
    finally:
        await provider.aclose()
