"""codemode.mcp: MCP in both directions, on the official ``mcp`` SDK.

Upstream, ``McpProvider`` turns the tools of configured MCP servers into registry tools (so every
call takes the registry pipeline); downstream, ``build_server`` offers a ``CodeMode`` as an MCP
server with one tool, ``run_code``. Dependencies point one way: this package imports
``codemode`` and ``mcp``; nothing in ``codemode`` outside it imports ``mcp``.

The configuration names import eagerly; the SDK-backed ones load on first access (PEP 562),
so ``codemode``'s CLI can add its MCP options without paying for the SDK. This package knows
nothing of the command line: ``codemode mcp serve`` and ``--mcp-config`` live in
``codemode.cli.mcp``. See README.md in this folder.
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
from .options import DEFAULT_SERVE_LIMITS, ServeLimits

_LAZY = {
    "McpProvider": "provider",
    "ToolListStore": "cache",
    "UpstreamCrashed": "upstream",
    "UpstreamError": "upstream",
    "UpstreamInvalidResult": "upstream",
    "UpstreamRefused": "upstream",
    "UpstreamServer": "upstream",
    "UpstreamTimeout": "upstream",
    "UpstreamUnavailable": "upstream",
    "SDK_URI": "server",
    "ServeController": "serving",
    "build_server": "server",
    "serve_http": "server",
    "serve_stdio": "server",
    "from_mcp_content": "tools",
    "namespace_names": "tools",
    "namespaced_name": "tools",
    "to_mcp_content": "tools",
    "load_mcp_tools": "loading",
    "mcp_tools": "loading",
}

__all__ = [
    "DEFAULT_SERVE_LIMITS",
    "DEFAULT_UPSTREAM_LIMITS",
    "SDK_URI",
    "McpConfigError",
    "McpProvider",
    "ServeController",
    "ServeLimits",
    "ServerConfig",
    "ToolListStore",
    "UpstreamCrashed",
    "UpstreamError",
    "UpstreamInvalidResult",
    "UpstreamLimits",
    "UpstreamRefused",
    "UpstreamServer",
    "UpstreamTimeout",
    "UpstreamUnavailable",
    "build_server",
    "from_mcp_content",
    "load_config",
    "load_mcp_tools",
    "mcp_tools",
    "namespace_names",
    "namespaced_name",
    "parse_config",
    "serve_http",
    "serve_stdio",
    "to_mcp_content",
]


def _public(obj: Any) -> Any:
    """The loop of the three packages' ``__init__``, for one object (the SDK-backed ones load late)."""
    if (isinstance(obj, type) or callable(obj) and hasattr(obj, "__code__")) and obj.__module__.startswith(
        __name__ + "."
    ):
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
