"""The values of ``mcp serve``: defaults, the HTTP address, the loopback check, the event log.

Importable without the SDK (the CLI builds its parser from these on every invocation) and free
of argparse: the command line itself lives in ``codemode.cli.mcp``.
"""

from __future__ import annotations

import ipaddress

from ..registry.events import EventLog, JsonlEventLog, MemoryEventLog

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "LOOPBACK",
    "SERVER_LOG_MAX_BYTES",
    "SERVER_LOG_MAX_EVENTS",
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


def parse_http(value: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (loopback), ``[::1]:PORT``; raises ``ValueError``."""
    host, sep, port = value.rpartition(":")
    if not sep:
        host, port = "", value
    host = host.strip("[]") or LOOPBACK
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--http expects HOST:PORT with a port from 0 to 65535, got {value!r}")
    return host, int(port)
