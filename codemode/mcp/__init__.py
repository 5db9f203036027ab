"""codemode.mcp: MCP in both directions, on the official ``mcp`` SDK.

Upstream, ``McpProvider`` turns the tools of configured MCP servers into registry tools (so every
call takes the registry pipeline); downstream, ``build_server`` offers a ``CodeMode`` as an MCP
server with one tool, ``run_code``. Dependencies point one way: this package imports
``codemode`` and ``mcp``; nothing in ``codemode`` outside it imports ``mcp``.

The configuration and command-line names import eagerly; the SDK-backed ones load on first
access (PEP 562), so ``codemode``'s CLI can add its MCP options without paying for the SDK.
"""

from importlib import import_module
from typing import Any

from .config import (
    DEFAULT_UPSTREAM_LIMITS,
    McpConfigError,
    ServerConfig,
    UpstreamLimits,
    load_config,
    parse_config,
)
from .options import add_mcp_config_option, add_mcp_parser

_LAZY = {
    "McpProvider": "provider",
    "UpstreamCrashed": "upstream",
    "UpstreamError": "upstream",
    "UpstreamInvalidResult": "upstream",
    "UpstreamRefused": "upstream",
    "UpstreamServer": "upstream",
    "UpstreamTimeout": "upstream",
    "UpstreamUnavailable": "upstream",
    "SDK_URI": "server",
    "build_server": "server",
    "serve_http": "server",
    "serve_stdio": "server",
    "from_mcp_content": "tools",
    "namespace_names": "tools",
    "namespaced_name": "tools",
    "to_mcp_content": "tools",
    "load_mcp_tools": "cli",
    "mcp_serve_main": "cli",
    "mcp_tools": "cli",
    "with_mcp_tools": "cli",
}

__all__ = [
    "DEFAULT_UPSTREAM_LIMITS",
    "SDK_URI",
    "McpConfigError",
    "McpProvider",
    "ServerConfig",
    "UpstreamCrashed",
    "UpstreamError",
    "UpstreamInvalidResult",
    "UpstreamLimits",
    "UpstreamRefused",
    "UpstreamServer",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "add_mcp_config_option",
    "add_mcp_parser",
    "build_server",
    "from_mcp_content",
    "load_config",
    "load_mcp_tools",
    "mcp_serve_main",
    "mcp_tools",
    "namespace_names",
    "namespaced_name",
    "parse_config",
    "serve_http",
    "serve_stdio",
    "to_mcp_content",
    "with_mcp_tools",
]


def _public(obj: Any) -> Any:
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__code__"):
        obj.__module__ = __name__
    return obj


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _public(getattr(import_module(f".{module}", __name__), name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


for _name in __all__:
    if _name not in _LAZY:
        _public(globals()[_name])
del _name
