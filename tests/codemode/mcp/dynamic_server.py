"""An MCP server for the tests whose tool list changes at runtime and that offers resources.

    python dynamic_server.py [NAME] [--legacy] [--no-resources]

Tools: ``grow(name, description)`` adds (or redefines) a tool ``name`` that answers its own name,
``prune(name)`` removes one; both tell the client the tool list changed, through
``subscriptions/listen`` (2026-07-28) or, with ``--legacy`` (the server then speaks only the
initialize-handshake protocol, as 2025 servers do), with ``notifications/tools/list_changed``. ``echo`` is always there; ``quit`` ends the process
mid-call (a restarted server has only its first tools again).

Resources (unless ``--no-resources``): ``memo://note`` (text), ``memo://logo.png`` (a PNG),
``memo://data.bin`` (octet-stream), ``memo://big`` (2 MiB of text), ``memo://gone`` (listed,
but reading it fails) and the template ``memo://notes/{key}``.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
NAME = ARGS[0] if ARGS else "dyn"
LEGACY = "--legacy" in sys.argv
RESOURCES = "--no-resources" not in sys.argv
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 24
BIG = "x" * (2 * 1024 * 1024)

server = MCPServer(NAME)


async def _changed(ctx: Context) -> None:
    if LEGACY:
        await ctx.request_context.session.send_tool_list_changed()
    else:
        await ctx.notify_tools_changed()


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Echo a text."""
    return text


@server.tool(structured_output=False)
async def quit() -> str:
    """The process exits while the call is in flight."""
    os._exit(3)


@server.tool(structured_output=False)
async def grow(name: str, ctx: Context, description: str = "A tool added at runtime.") -> str:
    """Add (or redefine) a tool that answers its own name."""
    if any(t.name == name for t in server._tool_manager.list_tools()):
        server.remove_tool(name)

    def answer() -> str:
        return f"I am {name}"

    server.add_tool(answer, name=name, description=description, structured_output=False)
    await _changed(ctx)
    return f"added {name}"


@server.tool(structured_output=False)
async def prune(name: str, ctx: Context) -> str:
    """Remove a tool."""
    server.remove_tool(name)
    await _changed(ctx)
    return f"removed {name}"


if RESOURCES:

    @server.resource("memo://note", name="note", description="A short note.", mime_type="text/plain")
    def note() -> str:
        return "remember the milk"

    @server.resource("memo://logo.png", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("memo://data.bin", name="data", mime_type="application/octet-stream")
    def data() -> bytes:
        return bytes(range(16))

    @server.resource("memo://big", name="big", mime_type="text/plain")
    def big() -> str:
        return BIG

    @server.resource("memo://gone", name="gone", mime_type="text/plain")
    def gone() -> str:
        raise ResourceError("the memo was shredded")

    @server.resource("memo://notes/{key}", name="notes", mime_type="text/plain")
    def notes(key: str) -> str:
        return f"note {key}"


async def _serve_legacy() -> None:
    """Serve stdio in the handshake era only (as 2025 servers do): the SDK's dual-era loop
    would otherwise answer a 2026 probe."""
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.runner import _serve_legacy_stream
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    options = low.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        await _serve_legacy_stream(
            low, read, write, lifespan_state=state, session_id=None, init_options=options, raise_exceptions=False
        )


if __name__ == "__main__":
    if LEGACY:
        anyio.run(_serve_legacy)
    else:
        server.run("stdio")
