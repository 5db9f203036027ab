"""The values of ``mcp serve``: defaults, the HTTP address, the loopback check, the event log,
and ``ServeLimits`` (sessions, their memory budget, the drain timeout).

Importable without the SDK (the CLI builds its parser from these on every invocation) and free
of argparse: the command line itself lives in ``codemode.cli.mcp``.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, fields, replace
from typing import Any

from ..registry.events import EventLog, JsonlEventLog, MemoryEventLog

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "DEFAULT_SERVE_LIMITS",
    "LOOPBACK",
    "SERVER_LOG_MAX_BYTES",
    "SERVER_LOG_MAX_EVENTS",
    "ServeLimits",
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
MIB = 1024 * 1024


@dataclass(frozen=True, kw_only=True, slots=True)
class ServeLimits:
    """What one ``mcp serve`` replica keeps and how it stops.

    max_sessions: code sessions (one worker each) alive at once. Past it, the least recently
        used idle session is closed (its next call says so); when every one is busy, the new
        one is refused. [8]
    session_memory_budget: bytes all session workers may reserve together; each reserves its
        ``SessionLimits.memory`` (its hard limit), so at most ``budget // memory`` sessions
        live, whatever ``max_sessions`` says. [4 GiB]
    drain_timeout: seconds runs in flight may take to finish once a drain starts (SIGTERM);
        then they are cancelled. [30]
    transport_sessions: MCP transport sessions (cheap, no worker) a replica keeps; past it
        the SDK answers 503 to a new one. [1,000]
    """

    max_sessions: int = 8
    session_memory_budget: int = 4096 * MIB
    drain_timeout: float = 30.0
    transport_sessions: int = 1000

    def __post_init__(self) -> None:
        problems = []
        for f in fields(self):
            value, lo = getattr(self, f.name), _SERVE_BOUNDS[f.name]
            integral = f.name != "drain_timeout"
            if isinstance(value, bool) or not isinstance(value, int if integral else (int, float)):
                problems.append(f"{f.name} must be {'an int' if integral else 'a number'}, got {value!r}")
            elif not (lo <= value and math.isfinite(value)):
                problems.append(f"{f.name} must be >= {lo} and finite, got {value!r}")
        if problems:
            raise ValueError("invalid ServeLimits: " + "; ".join(problems))

    def replace(self, **changes: Any) -> ServeLimits:
        """A copy with some fields changed (validated like a new instance)."""
        return replace(self, **changes)

    def session_cap(self, session_memory: int) -> int:
        """Sessions that may live at once when each reserves ``session_memory`` bytes (at least 1)."""
        return max(1, min(self.max_sessions, self.session_memory_budget // max(1, session_memory)))

    def __repr__(self) -> str:
        changed = [f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if getattr(self, f.name) != f.default]
        return f"ServeLimits({', '.join(changed)})"


_SERVE_BOUNDS: dict[str, float] = {"max_sessions": 1, "session_memory_budget": 16 * MIB, "drain_timeout": 0,
                                   "transport_sessions": 1}
DEFAULT_SERVE_LIMITS = ServeLimits()


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
