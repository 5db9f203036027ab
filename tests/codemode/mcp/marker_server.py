"""A raw JSON-RPC MCP server for the tool-cache tests and the start-up benchmark: it tells when
it starts, and lists the tools a file names.

    python marker_server.py MARKER [--delay S] [--tools FILE] [--version V]

On start it appends one line (its pid) to ``MARKER``: the test's proof that a process started,
seen from the server's side. ``--delay`` sleeps before answering ``initialize`` (a slow-starting
server, as ``npx`` ones are); it writes a line to stderr before and after it. ``--tools`` names a JSON list of tool names, read at each
``tools/list`` (default ``["echo"]``), or an object ``{"version": V, "tools": [...]}`` (an upgrade
in place: the same command and arguments, another version); each tool answers ``<name>:<text>``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path


def option(name: str, default: str | None = None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


MARKER = sys.argv[1]
DELAY = float(option("--delay", "0") or 0)
TOOLS = option("--tools")
VERSION = option("--version", "1.0")


def listing() -> object:
    return json.loads(Path(TOOLS).read_text(encoding="utf-8")) if TOOLS else ["echo"]


def version() -> str:
    found = listing()
    return str(found.get("version", VERSION)) if isinstance(found, dict) else str(VERSION)


def tools() -> list[dict]:
    found = listing()
    names = found["tools"] if isinstance(found, dict) else found
    return [{
        "name": name,
        "description": f"Answer with {name} and the text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    } for name in names]


def send(ident: object, result: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    with open(MARKER, "a", encoding="utf-8") as marker:
        marker.write(f"{os.getpid()}\n")
    sys.stderr.write("marker server: starting\n")
    sys.stderr.flush()
    time.sleep(DELAY)
    sys.stderr.write("marker server: ready\n")
    sys.stderr.flush()
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        method, ident = message.get("method"), message["id"]
        if method == "initialize":
            send(ident, {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                         "serverInfo": {"name": "marker", "version": version()}})
        elif method == "tools/list":
            send(ident, {"tools": tools()})
        elif method == "tools/call":
            params = message.get("params") or {}
            text = f"{params.get('name')}:{(params.get('arguments') or {}).get('text', '')}"
            send(ident, {"content": [{"type": "text", "text": text}]})
        elif method == "ping":
            send(ident, {})
        else:
            error = {"code": -32601, "message": "Method not found"}
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
