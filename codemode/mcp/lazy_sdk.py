"""The MCP SDK, imported on first use.

With cached tool lists (``codemode.mcp.cache``) a command whose program calls no upstream tool
connects to no server, so it should not pay for importing the SDK either: ``mcp`` and
``mcp_types`` take about 0.4 s to import, most of a short ``codemode run``. The modules that
build registry tools from a cached list (``provider``, ``upstream``, ``tools``, ``resources``)
reach the SDK only through the names below, each imported the first time it is read.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: name -> (module, attribute); attribute None means the module itself.
_WHERE: dict[str, tuple[str, str | None]] = {
    "types": ("mcp_types", None),
    "Client": ("mcp", "Client"),
    "StdioServerParameters": ("mcp.client.stdio", "StdioServerParameters"),
    "stdio_client": ("mcp.client.stdio", "stdio_client"),
    "streamable_http_client": ("mcp.client.streamable_http", "streamable_http_client"),
    "create_mcp_http_client": ("mcp.shared._httpx_utils", "create_mcp_http_client"),
    "MCPError": ("mcp.shared.exceptions", "MCPError"),
    "CONNECTION_CLOSED": ("mcp_types.jsonrpc", "CONNECTION_CLOSED"),
    "REQUEST_TIMEOUT": ("mcp_types.jsonrpc", "REQUEST_TIMEOUT"),
    "MODERN_PROTOCOL_VERSIONS": ("mcp_types.version", "MODERN_PROTOCOL_VERSIONS"),
    "ValidationError": ("pydantic", "ValidationError"),
    "ScreenedTransport": ("codemode.mcp.screen", "ScreenedTransport"),
    "ToolScreen": ("codemode.mcp.screen", "ToolScreen"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = import_module(where[0])
    value = module if where[1] is None else getattr(module, where[1])
    globals()[name] = value
    return value
