"""Fixtures for the MCP tests: real stdio sessions to ``upstream_server.py``, short timeouts."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from mcpkit import FAST, server_entry  # noqa: E402

from codemode import Registry  # noqa: E402
from codemode.mcp import McpProvider, parse_config  # noqa: E402


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[Registry, McpProvider]]:
    """A registry with the ``up`` server's tools registered."""
    registry = Registry()
    async with McpProvider(parse_config({"mcpServers": {"up": server_entry()}}), limits=FAST) as provider:
        await provider.register(registry)
        yield registry, provider
