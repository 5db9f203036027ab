"""A small MCP server for the tests, written with the ``mcp`` SDK and run over stdio.

    python upstream_server.py [NAME]

Tools: ``add`` (structured output), ``shout`` (text), ``rendezvous`` (returns only once two calls
are in flight: proof of parallel calls), ``picture`` (image + embedded resource + link),
``sound`` (audio), ``fail`` (``isError``), ``crash`` (the process exits mid-call), ``hang``
(blocks the event loop: no ping answered), ``slow`` (awaits: pings still answered),
``read-file.v2`` (a name that needs mapping) and ``pid``.
"""

from __future__ import annotations

import base64
import os
import sys
import time

import anyio
import mcp_types as types
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel

NAME = sys.argv[1] if len(sys.argv) > 1 else "upstream"
server = MCPServer(NAME)
READ_ONLY = types.ToolAnnotations(read_only_hint=True)
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()

_arrived = 0
_both = anyio.Event()


class Sum(BaseModel):
    total: int
    terms: list[int]


@server.tool(annotations=READ_ONLY)
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return Sum(total=a + b, terms=[a, b])


@server.tool(structured_output=False)
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper() + "!"


@server.tool(annotations=READ_ONLY, structured_output=False)
async def rendezvous(label: str) -> str:
    """Wait until a second call arrives, then answer."""
    global _arrived
    _arrived += 1
    if _arrived >= 2:
        _both.set()
    with anyio.fail_after(10):
        await _both.wait()
    return f"met:{label}"


@server.tool(structured_output=False)
def picture() -> list[types.ContentBlock]:
    """An image, an embedded text resource and a resource link."""
    return [
        types.TextContent(type="text", text="a picture"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(uri="memo://note", mime_type="text/plain", text="remember"),
        ),
        types.ResourceLink(type="resource_link", uri="file:///tmp/report.csv", name="report.csv"),
    ]


@server.tool(structured_output=False)
def sound() -> list[types.ContentBlock]:
    """A short audio clip."""
    return [types.AudioContent(type="audio", data=base64.b64encode(b"RIFF0000").decode(), mime_type="audio/wav")]


@server.tool(structured_output=False)
def fail(reason: str) -> str:
    """Always fails with the reason."""
    raise ToolError(f"cannot comply: {reason}")


@server.tool(structured_output=False)
async def crash() -> str:
    """The process exits while the call is in flight."""
    os._exit(3)


@server.tool(structured_output=False)
async def hang(seconds: float = 30.0) -> str:
    """Blocks the whole event loop: the server answers nothing, not even a ping."""
    time.sleep(seconds)
    return "woke up"


@server.tool(structured_output=False)
async def slow(seconds: float = 30.0) -> str:
    """Takes its time without blocking the server."""
    await anyio.sleep(seconds)
    return "done"


@server.tool(name="read-file.v2", structured_output=False)
def read_file_v2(path: str) -> str:
    """A tool whose name is not an identifier."""
    return f"contents of {path}"


@server.tool(annotations=READ_ONLY)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


if __name__ == "__main__":
    server.run("stdio")
