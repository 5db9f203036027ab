"""CLI hooks: ``--mcp-config FILE`` for every command, and ``codemode mcp serve``.

    codemode mcp serve [--tools SPEC]... [--root DIR] [--allow-write] [--mcp-config FILE]...
                       [--mcp-timeout S] [--http HOST:PORT] [--max-concurrent N] [--event-log FILE.jsonl]
                       [--sdk full|compact|auto] [--sessions [--session-idle S]]
                       [--backend worker|inprocess] [--timeout S] [--memory MIB] [--max-tool-calls N]

``codemode/cli.py`` wires these in; ``python -m codemode.mcp serve ...`` runs the same command
for clients that cannot find the ``codemode`` script. Without ``--http`` the server speaks stdio (what MCP clients launch); ``--http`` binds
streamable HTTP at ``http://HOST:PORT/mcp``, loopback unless a host is given.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TextIO, TypeVar

import anyio

import sandbox

from ..agent import CodeMode
from ..errors import CodemodeError
from ..registry import Registry
from ..workspace import register_workspace
from .config import (
    DEFAULT_UPSTREAM_LIMITS,
    McpConfigError,
    ServerConfig,
    UpstreamLimits,
    load_config,
)
from .options import (
    add_mcp_config_option,
    add_mcp_parser,
    is_loopback,
    parse_http,
    server_event_log,
)
from .provider import McpProvider
from .server import build_server, serve_http, serve_stdio

__all__ = [
    "add_mcp_config_option",
    "add_mcp_parser",
    "load_mcp_tools",
    "main",
    "mcp_serve_main",
    "mcp_tools",
    "parse_http",
    "with_mcp_tools",
]

T = TypeVar("T")
EXIT_OK = 0
EXIT_USAGE = 2
WARNING = "codemode: warning: {message}\n"
NOT_LOOPBACK = (
    "codemode: warning: serving on {host}, which is not a loopback address; the MCP endpoint "
    "has no authentication, so anyone who can reach it can run code with your tools\n"
)


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


def upstream_limits(timeout: float | None) -> UpstreamLimits:
    if timeout is None:
        return DEFAULT_UPSTREAM_LIMITS
    try:
        return UpstreamLimits(call_timeout=timeout)
    except ValueError as exc:
        raise McpConfigError("--mcp-timeout", [str(exc)]) from exc


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
            stderr.write(WARNING.format(message=message))
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


def with_mcp_tools(args: argparse.Namespace, registry: Registry, fn: Callable[[], T], *, stderr: TextIO | None = None) -> T:
    """Call ``fn()`` with the ``--mcp-config`` tools registered (just ``fn()`` without them).

    For the synchronous commands (``sdk``, ``tools``, ``check``): runs an event loop for the
    servers' lifetime. Raises ``McpConfigError`` for a bad file or ``--mcp-timeout``.
    """
    paths = getattr(args, "mcp_config", None)
    if not paths:
        return fn()
    limits = upstream_limits(getattr(args, "mcp_timeout", None))

    async def go() -> T:
        async with mcp_tools(registry, paths, limits=limits, stderr=stderr):
            return fn()

    return anyio.run(go)


# --- codemode mcp serve ------------------------------------------------------------------------------


def _default_registry(args: argparse.Namespace) -> Registry:
    registry = Registry(mode="code", log=server_event_log(args.event_log))
    if args.tools:
        for spec in args.tools:
            registry.load_plugin(spec)
    else:
        register_workspace(registry, args.root, allow_write=args.allow_write)
    return registry


async def _serve(args: argparse.Namespace, registry: Registry, stderr: TextIO) -> None:
    address = parse_http(args.http) if args.http else None
    limits = upstream_limits(args.mcp_timeout)
    from ..cli import backend_from_args, limits_from_args, require_jail

    run_limits = limits_from_args(args)
    backend = backend_from_args(args)
    require_jail(backend)
    sessions = _session_limits(args)
    progress = stderr if stderr.isatty() else None
    async with mcp_tools(registry, args.mcp_config, limits=limits, stderr=stderr, progress=progress):
        mode = CodeMode(
            registry,
            mode="code",
            limits=run_limits,
            max_parallel_sub_calls=args.max_parallel,
            backend=backend,
            sessions=sessions if sessions is not None else False,
        )
        server = build_server(mode, max_concurrent=args.max_concurrent, sdk=getattr(args, "sdk", "auto"),
                              sessions=sessions is not None)
        if address is None:
            await serve_stdio(server)
            return
        host, port = address
        if not is_loopback(host):
            stderr.write(NOT_LOOPBACK.format(host=host))
        async with anyio.create_task_group() as tg:
            bound = await tg.start(serve_http, server, host, port)
            shown = f"[{host}]" if ":" in host else host
            stderr.write(f"codemode: serving MCP at http://{shown}:{bound}/mcp\n")
            stderr.flush()


def _session_limits(args: argparse.Namespace) -> sandbox.SessionLimits | None:
    """The limits of each code session with --sessions (None without it)."""
    idle = getattr(args, "session_idle", None)
    if not getattr(args, "sessions", False):
        if idle is not None:
            raise ValueError("--session-idle needs --sessions")
        return None
    if idle is None:
        return sandbox.DEFAULT_SESSION_LIMITS
    return sandbox.DEFAULT_SESSION_LIMITS.replace(idle_timeout=idle)


def mcp_serve_main(
    args: argparse.Namespace, *, registry: Registry | None = None, stderr: TextIO | None = None
) -> int:
    """Run ``codemode mcp serve`` until the client disconnects (stdio) or the process is
    interrupted (HTTP). ``registry`` is the CLI's (``--tools``/built-ins); without one, this
    module builds it the same way. Returns the exit code: 2 for a usage or configuration error,
    130 when interrupted (Ctrl-C), each with one line on ``stderr``."""
    from ..cli import EXIT_INTERRUPTED, INTERRUPTED_LINE, only_error

    err = stderr if stderr is not None else sys.stderr
    try:
        if args.http:
            parse_http(args.http)
        if registry is None:
            registry = _default_registry(args)
        anyio.run(_serve, args, registry, err)
    except (CodemodeError, ValueError, OSError, sandbox.JailError) as exc:
        err.write(f"codemode: error: {exc}\n")
        return EXIT_USAGE
    except BaseExceptionGroup as group:  # raised inside a task group, such as a busy port
        only = only_error(group)
        if isinstance(only, KeyboardInterrupt):
            err.write(INTERRUPTED_LINE)
            return EXIT_INTERRUPTED
        if not isinstance(only, (CodemodeError, ValueError, OSError)):
            raise
        err.write(f"codemode: error: {only}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write(INTERRUPTED_LINE)
        return EXIT_INTERRUPTED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m codemode.mcp serve ...``: the same command before ``codemode/cli.py`` wires it."""
    parser = argparse.ArgumentParser(prog="python -m codemode.mcp")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve run_code over MCP (stdio, or --http)")
    inner = argparse.ArgumentParser(add_help=False)
    inner_sub = inner.add_subparsers(dest="mcp_command")
    template = add_mcp_parser(inner_sub)
    for action in template._actions:
        if action.option_strings and action.dest != "help":
            serve._add_action(action)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return mcp_serve_main(args)
