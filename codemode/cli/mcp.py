"""``codemode mcp serve`` and ``--mcp-config FILE`` for every command.

    codemode mcp serve [--tools SPEC]... [--root DIR] [--allow-write] [--mcp-config FILE]...
                       [--mcp-timeout S] [--tool-cache DIR] [--refresh-tools] [--http HOST:PORT] [--max-concurrent N] [--event-log FILE.jsonl]
                       [--sdk full|compact|auto] [--sessions [--session-idle S]]
                       [--max-sessions N] [--session-memory-budget MIB] [--stateless] [--json-response]
                       [--drain-timeout S] [--allowed-host HOST]...
                       [--backend worker|inprocess] [--timeout S] [--memory MIB] [--max-tool-calls N]

``python -m codemode.mcp serve ...`` runs the same command (``main`` here) for clients that cannot
find the ``codemode`` script. Without ``--http`` the server speaks stdio (what MCP clients
launch); ``--http`` binds streamable HTTP at ``http://HOST:PORT/mcp``, loopback unless a host is
given. The MCP SDK loads only when a command uses an MCP option: building the parser never
imports it. Over HTTP, SIGTERM or SIGINT drains the server (runs in flight finish within
``--drain-timeout``) and it exits 0; ``docs/deploy.md`` shows replicas behind a load balancer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, TextIO, TypeVar

import anyio

import sandbox

from ..code_mode.agent import CodeMode
from ..mcp.config import DEFAULT_UPSTREAM_LIMITS, McpConfigError, UpstreamLimits
from ..mcp.options import (
    DEFAULT_MAX_CONCURRENT,
    DEFAULT_SERVE_LIMITS,
    MIB,
    ServeLimits,
    is_loopback,
    parse_http,
    server_event_log,
)
from ..registry.errors import CodemodeError
from ..registry.output import visible
from ..registry.registry import Registry
from ..workspace import register_workspace
from . import options
from .exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, INTERRUPTED_LINE, only_error
from .live import StatusLine, server_stderr
from .options import (
    add_mcp_config_option,
    add_run_options,
    limits_from_args,
    number_option,
    open_output,
    registry_from_args,
    require_jail,
    warn_unenforced,
)

__all__ = [
    "add_mcp_parser",
    "cache_options",
    "command",
    "config_tools",
    "main",
    "mcp_serve_main",
    "upstream_limits",
    "with_config_tools",
    "with_mcp_tools",
]

T = TypeVar("T")

NOT_LOOPBACK = (
    "codemode: warning: serving on {host}, which is not a loopback address; the MCP endpoint "
    "has no authentication, so anyone who can reach it can run code with your tools\n"
)
MAX_CONCURRENT_RANGE = (1, 1_000)
MAX_SESSIONS_RANGE = (1, 10_000)
SESSION_BUDGET_RANGE_MIB = (16, 16 * 1024 * 1024)
DRAIN_TIMEOUT_RANGE = (0, 86_400)
STATELESS_SESSIONS = (
    "--sessions and --stateless exclude each other: a stateless server keeps nothing between "
    "calls (sessions need a load balancer with affinity; see docs/deploy.md)"
)
HTTP_ONLY = "{flag} applies to --http only"


def upstream_limits(timeout: float | None) -> UpstreamLimits:
    if timeout is None:
        return DEFAULT_UPSTREAM_LIMITS
    try:
        return UpstreamLimits(call_timeout=timeout)
    except ValueError as exc:
        raise McpConfigError("--mcp-timeout", [str(exc)]) from exc


def cache_options(args: argparse.Namespace) -> dict[str, Any]:
    """``cache=`` and ``refresh=`` for ``mcp_tools`` from ``--tool-cache`` and ``--refresh-tools``."""
    directory = getattr(args, "tool_cache", None)
    return {"cache": directory if directory else True, "refresh": bool(getattr(args, "refresh_tools", False))}


def config_tools(args: argparse.Namespace, registry: Registry, stderr: TextIO, status: StatusLine | None = None) -> Any:
    """The ``--mcp-config`` tools for an ``async with`` block (a progress line on a terminal;
    servers' stderr prefixed with their names, above ``status`` when the command has one)."""
    from ..mcp.loading import mcp_tools  # loads the SDK

    limits = upstream_limits(args.mcp_timeout)
    progress = stderr if stderr.isatty() else None
    return mcp_tools(registry, args.mcp_config, limits=limits, stderr=stderr, progress=progress,
                     stderr_lines=server_stderr(stderr, status), **cache_options(args))


def with_config_tools(args: argparse.Namespace, registry: Registry, fn: Any, stderr: TextIO) -> Any:
    warn_unenforced(args, stderr)
    if not args.mcp_config:
        return fn()

    async def go() -> Any:
        async with config_tools(args, registry, stderr):
            return fn()

    return anyio.run(go)


def with_mcp_tools(args: argparse.Namespace, registry: Registry, fn: Callable[[], T], *, stderr: TextIO | None = None) -> T:
    """Call ``fn()`` with the ``--mcp-config`` tools registered (just ``fn()`` without them).

    For the synchronous commands (``sdk``, ``tools``, ``check``): runs an event loop for the
    servers' lifetime. Raises ``McpConfigError`` for a bad file or ``--mcp-timeout``.
    """
    paths = getattr(args, "mcp_config", None)
    if not paths:
        return fn()
    limits = upstream_limits(getattr(args, "mcp_timeout", None))

    from ..mcp.loading import mcp_tools  # loads the SDK

    async def go() -> T:
        relay = server_stderr(stderr if stderr is not None else sys.stderr)
        async with mcp_tools(registry, paths, limits=limits, stderr=stderr, stderr_lines=relay, **cache_options(args)):
            return fn()

    return anyio.run(go)


def add_mcp_parser(
    subparsers: Any, loading: Callable[[argparse.ArgumentParser], None] | None = None
) -> argparse.ArgumentParser:
    """Add ``mcp serve`` to the CLI's subparsers; ``loading`` adds ``--tools``/``--root`` (the
    CLI's own helper), else this module adds equivalent options. Returns the ``serve`` parser."""
    mcp = subparsers.add_parser("mcp", help="MCP: serve Code Mode to MCP clients")
    sub = mcp.add_subparsers(dest="mcp_command", metavar="COMMAND", help="what to do")
    serve = sub.add_parser("serve", help="serve run_code over MCP (stdio, or --http)")
    if loading is not None:
        loading(serve)
    else:
        serve.add_argument("--tools", action="append", default=[], metavar="SPEC",
                           help="module path or .py file with apply(registry); repeatable (default: workspace tools)")
        serve.add_argument("--root", default=".", metavar="DIR", help="workspace root (default: .)")
        serve.add_argument("--allow-write", action="store_true", help="add write_file and edit_file")
    if not any("--mcp-config" in a.option_strings for a in serve._actions):
        add_mcp_config_option(serve)
    serve.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP instead of stdio (host default 127.0.0.1)")
    serve.add_argument("--event-log", metavar="FILE.jsonl",
                       help="append every event to this file (default: the newest events in a bounded memory ring)")
    serve.add_argument("--max-concurrent", type=number_option(int, *MAX_CONCURRENT_RANGE),
                       default=DEFAULT_MAX_CONCURRENT, metavar="N",
                       help=f"run_code calls run at once (default {DEFAULT_MAX_CONCURRENT})")
    serve.add_argument("--sdk", choices=("full", "compact", "auto"), default="auto",
                       help="what the run_code description carries: the whole SDK, the 2 KB discovery text, "
                            "or the SDK when it fits 2 KB (auto, the default)")
    serve.add_argument("--sessions", action="store_true",
                       help="keep each MCP session's variables across its run_code calls (one worker "
                            "per session, ended with the MCP session or after --session-idle seconds)")
    serve.add_argument("--session-idle", type=float, metavar="S",
                       help="with --sessions: end a session after this many idle seconds (default 600)")
    serve.add_argument("--max-sessions", type=number_option(int, *MAX_SESSIONS_RANGE), metavar="N",
                       help=f"with --sessions: sessions alive at once; past it the least recently used idle one "
                            f"is closed (default {DEFAULT_SERVE_LIMITS.max_sessions})")
    serve.add_argument("--session-memory-budget", type=number_option(int, *SESSION_BUDGET_RANGE_MIB, "MiB"),
                       metavar="MIB",
                       help="with --sessions: memory all session workers may reserve together, each its "
                            f"session limit (default {DEFAULT_SERVE_LIMITS.session_memory_budget // MIB})")
    serve.add_argument("--stateless", action="store_true",
                       help="with --http: keep no MCP session between requests, so any replica behind a "
                            "round-robin load balancer can answer any call")
    serve.add_argument("--json-response", action="store_true",
                       help="with --http: answer each call with one JSON body instead of an SSE stream")
    serve.add_argument("--drain-timeout", type=number_option(float, *DRAIN_TIMEOUT_RANGE, "seconds"), metavar="S",
                       help="with --http: on SIGTERM/SIGINT, seconds runs in flight may take to finish "
                            f"before they are cancelled (default {DEFAULT_SERVE_LIMITS.drain_timeout:g})")
    serve.add_argument("--allowed-host", action="append", default=[], metavar="HOST",
                       help="with --http: also serve requests whose Host names HOST (the name a proxy "
                            "forwards); repeatable (default: only the bound address). Every other host stays refused")
    add_run_options(serve)
    return serve


def command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    """``codemode mcp serve``, with the CLI's registry (``--tools`` or the workspace tools)."""
    if args.event_log:
        open_output(args.event_log, "--event-log", "a").close()
    warn_unenforced(args, stderr)
    return mcp_serve_main(args, registry=registry_from_args(args, server_event_log(args.event_log)), stderr=stderr)


def _default_registry(args: argparse.Namespace) -> Registry:
    registry = Registry(mode="code", log=server_event_log(args.event_log))
    if args.tools:
        for spec in args.tools:
            registry.load_plugin(spec)
    else:
        register_workspace(registry, args.root, allow_write=args.allow_write)
    return registry


async def _serve(args: argparse.Namespace, registry: Registry, stderr: TextIO) -> None:
    from ..mcp.loading import mcp_tools  # loads the SDK
    from ..mcp.server import build_server, serve_http, serve_stdio

    address = parse_http(args.http) if args.http else None
    limits = upstream_limits(args.mcp_timeout)
    run_limits = limits_from_args(args)
    backend = options.backend_from_args(args)
    require_jail(backend)
    sessions = _session_limits(args)
    serve_limits = _serve_limits(args, sessions, http=address is not None)
    progress = stderr if stderr.isatty() else None
    async with mcp_tools(registry, args.mcp_config, limits=limits, stderr=stderr, progress=progress,
                         stderr_lines=server_stderr(stderr), **cache_options(args)):
        mode = CodeMode(
            registry,
            mode="code",
            limits=run_limits,
            max_parallel_sub_calls=args.max_parallel,
            backend=backend,
            sessions=sessions if sessions is not None else False,
        )
        server = build_server(mode, max_concurrent=args.max_concurrent, sdk=getattr(args, "sdk", "auto"),
                              sessions=sessions is not None, limits=serve_limits)
        if address is None:
            await serve_stdio(server)
            return
        host, port = address
        if not is_loopback(host):
            stderr.write(NOT_LOOPBACK.format(host=host))
        async with anyio.create_task_group() as tg:
            bound = await tg.start(partial(
                serve_http, server, host, port, stateless=getattr(args, "stateless", False),
                json_response=getattr(args, "json_response", False),
                allowed_hosts=tuple(getattr(args, "allowed_host", ()) or ()), drain_signals=True,
            ))
            shown = f"[{host}]" if ":" in host else host
            stderr.write(f"codemode: serving MCP at http://{shown}:{bound}/mcp\n")
            stderr.flush()
        stderr.write("codemode: drained; every run in flight has ended\n")


def _serve_limits(args: argparse.Namespace, sessions: sandbox.SessionLimits | None, *, http: bool) -> ServeLimits:
    """The ``ServeLimits`` of the command line; ``ValueError`` for options that cannot apply."""
    if not http:
        for flag, given in (("--stateless", getattr(args, "stateless", False)),
                            ("--json-response", getattr(args, "json_response", False)),
                            ("--drain-timeout", getattr(args, "drain_timeout", None) is not None),
                            ("--allowed-host", bool(getattr(args, "allowed_host", None)))):
            if given:
                raise ValueError(HTTP_ONLY.format(flag=flag))
    if sessions is not None and getattr(args, "stateless", False):
        raise ValueError(STATELESS_SESSIONS)
    changes: dict[str, Any] = {}
    for flag, field, scale in (("max_sessions", "max_sessions", 1),
                               ("session_memory_budget", "session_memory_budget", MIB)):
        value = getattr(args, flag, None)
        if value is not None:
            if sessions is None:
                raise ValueError(f"--{flag.replace('_', '-')} needs --sessions")
            changes[field] = value * scale
    if getattr(args, "drain_timeout", None) is not None:
        changes["drain_timeout"] = args.drain_timeout
    limits = DEFAULT_SERVE_LIMITS.replace(**changes) if changes else DEFAULT_SERVE_LIMITS
    if sessions is not None and limits.session_memory_budget < sessions.memory:
        raise ValueError(
            f"--session-memory-budget ({limits.session_memory_budget // MIB} MiB) is below one session's "
            f"memory limit ({sessions.memory // MIB} MiB): no session could start"
        )
    return limits


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
    err = stderr if stderr is not None else sys.stderr
    try:
        if args.http:
            parse_http(args.http)
        if registry is None:
            registry = _default_registry(args)
        anyio.run(_serve, args, registry, err)
    except (CodemodeError, ValueError, OSError, sandbox.JailError) as exc:
        err.write(visible(f"codemode: error: {exc}") + "\n")
        return EXIT_USAGE
    except BaseExceptionGroup as group:  # raised inside a task group, such as a busy port
        only = only_error(group)
        if isinstance(only, KeyboardInterrupt):
            err.write(INTERRUPTED_LINE)
            return EXIT_INTERRUPTED
        if not isinstance(only, (CodemodeError, ValueError, OSError)):
            raise
        err.write(visible(f"codemode: error: {only}") + "\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write(INTERRUPTED_LINE)
        return EXIT_INTERRUPTED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m codemode.mcp serve ...``: the same command under a parser of its own."""
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
