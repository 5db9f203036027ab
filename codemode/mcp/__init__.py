"""codemode.mcp: MCP in both directions, on the official ``mcp`` SDK.

Upstream, ``McpProvider`` turns the tools of configured MCP servers into registry tools (so every
call takes the registry pipeline); downstream, ``build_server`` offers a ``CodeMode`` as an MCP server
with one tool, ``run_code``. Dependencies point one way: this package imports ``codemode`` and
``mcp``; nothing in ``codemode`` outside it imports ``mcp``.
"""

from .cli import (
    add_mcp_config_option,
    add_mcp_parser,
    load_mcp_tools,
    mcp_serve_main,
    mcp_tools,
    with_mcp_tools,
)
from .config import (
    DEFAULT_UPSTREAM_LIMITS,
    McpConfigError,
    ServerConfig,
    UpstreamLimits,
    load_config,
    parse_config,
)
from .provider import McpProvider
from .server import SDK_URI, build_server, serve_http, serve_stdio
from .tools import from_mcp_content, namespace_names, namespaced_name, to_mcp_content
from .upstream import (
    UpstreamCrashed,
    UpstreamError,
    UpstreamInvalidResult,
    UpstreamRefused,
    UpstreamServer,
    UpstreamTimeout,
    UpstreamUnavailable,
)

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

for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type) or callable(_obj) and hasattr(_obj, "__code__"):
        _obj.__module__ = __name__
del _name, _obj
