"""The ``--mcp-config`` and ``mcp serve`` command-line options, importable without the SDK.

``codemode/cli.py`` builds its parser on every invocation, so this module imports nothing from
``mcp``: the SDK loads only when a command actually uses an MCP option.
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Callable
from typing import Any

from ..events import EventLog, JsonlEventLog, MemoryEventLog
from .config import DEFAULT_UPSTREAM_LIMITS

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "LOOPBACK",
    "SERVER_LOG_MAX_BYTES",
    "SERVER_LOG_MAX_EVENTS",
    "add_mcp_config_option",
    "add_mcp_parser",
    "is_loopback",
    "parse_http",
    "server_event_log",
]

DEFAULT_MAX_CONCURRENT = 4
LOOPBACK = "127.0.0.1"
#: ``mcp serve`` keeps its events in a ring buffer of at most this many events and bytes
#: (``--event-log FILE.jsonl`` keeps every event on disk instead), so it can run for weeks.
SERVER_LOG_MAX_EVENTS = 10_000
SERVER_LOG_MAX_BYTES = 16 * 1024 * 1024
#: Bounds of --mcp-timeout (seconds) and --max-concurrent.
MCP_TIMEOUT_RANGE = (0.001, 86_400.0)
MAX_CONCURRENT_RANGE = (1, 1_000)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: ``localhost``, 127.0.0.0/8, ``::1`` (and
    IPv4-mapped loopback)."""
    if host.casefold() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def server_event_log(path: str | None) -> EventLog:
    """The event log of ``mcp serve``: every event in ``path`` (JSON lines), or a bounded ring."""
    if path:
        return JsonlEventLog(path)
    return MemoryEventLog(max_events=SERVER_LOG_MAX_EVENTS, max_bytes=SERVER_LOG_MAX_BYTES)


def add_mcp_config_option(parser: argparse.ArgumentParser) -> None:
    """``--mcp-config FILE`` (repeatable) and ``--mcp-timeout S`` on a subcommand."""
    parser.add_argument("--mcp-config", action="append", default=[], metavar="FILE",
                        help='an MCP client configuration ({"mcpServers": ...}); its servers\' tools load as '
                             "<server>__<tool>; repeatable (default: none)")
    from ..cli import number_option

    parser.add_argument("--mcp-timeout", type=number_option(float, *MCP_TIMEOUT_RANGE, "seconds"), metavar="S",
                        help=f"seconds per upstream MCP tool call (default {DEFAULT_UPSTREAM_LIMITS.call_timeout:g})")


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (loopback), ``[::1]:PORT``; raises ``ValueError``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http expects HOST:PORT with a port from 0 to 65535, got {value!r}")
    return host, int(port)


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
    from ..cli import number_option

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
    from ..cli import add_run_options

    add_run_options(serve)
    return serve


