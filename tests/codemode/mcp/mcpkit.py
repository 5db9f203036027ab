"""Helpers shared by the MCP tests (imported as ``from mcpkit import ...``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from codemode.mcp import UpstreamLimits

HERE = Path(__file__).parent
UPSTREAM = str(HERE / "upstream_server.py")
DYNAMIC = str(HERE / "dynamic_server.py")
FAST = UpstreamLimits(call_timeout=5.0, connect_timeout=20.0, ping_timeout=1.0)


def server_entry(name: str = "up", **extra: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [UPSTREAM, name], **extra}


def dynamic_entry(name: str = "dyn", *flags: str) -> dict[str, Any]:
    """``dynamic_server.py``: tools that change at runtime, resources (flags: ``--legacy``,
    ``--no-resources``)."""
    return {"command": sys.executable, "args": [DYNAMIC, name, *flags]}


def write_config(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path
