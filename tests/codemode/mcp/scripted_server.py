"""A hand-written MCP server for the tests: raw JSON-RPC lines over stdio, no SDK, so it can
send what the SDK's own server never would.

    python scripted_server.py SCENARIO [N]

Every scenario answers ``initialize`` (``server/discover`` is refused, as a 2025 server does),
lists ``echo`` (``tools/call`` answers with the text it was given) and:

- ``bad-tools``: next to ``echo``, tools the protocol or codemode refuses: an ``inputSchema``
  without ``"type"``, a number for a name, a string for a tool, an ``inputSchema`` of type
  ``"string"``, a missing ``inputSchema``, and ``unusable`` (valid MCP, but its schema is not a
  JSON Schema codemode accepts);
- ``bad-page``: a ``tools/list`` answer whose ``tools`` is not a list (the whole server is bad);
- ``deep``: a ``tools/list`` answer nested ``N`` levels deep (default 5,000);
- ``deep-call``: ``echo`` answers ``tools/call`` with a result nested ``N`` levels deep;
- ``noisy``: prints a plain log line to stdout before each answer (against the spec, but common);
- ``ansi``: a tool, a description, a bad tool's name and a server name full of terminal control sequences.
"""

from __future__ import annotations

import json
import sys

SCENARIO = sys.argv[1] if len(sys.argv) > 1 else "bad-tools"
DEPTH = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
ANSI = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;owned\x07"

ECHO = {
    "name": "echo",
    "description": "Echo a text.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
}
BAD = [
    {"name": "no_type", "description": "Schema without a type.", "inputSchema": {"properties": {}}},
    {"name": 42, "inputSchema": {"type": "object"}},
    "not a tool",
    {"name": "string_schema", "inputSchema": {"type": "string"}},
    {"name": "no_schema"},
    {"name": "unusable", "inputSchema": {"type": "object", "properties": {"a": {"type": 12}}}},
]


def nested(depth: int) -> str:
    """A JSON object ``depth`` levels deep, written without recursion."""
    return '{"a":' * depth + "{}" + "}" * depth


def tools() -> str:
    if SCENARIO == "bad-tools":
        return json.dumps({"tools": [ECHO, *BAD]})
    if SCENARIO == "bad-page":
        return json.dumps({"tools": {"echo": ECHO}})
    if SCENARIO == "deep":
        return '{"tools": [' + json.dumps(ECHO) + ', {"name": "deep", "inputSchema": {"type": "object", ' \
            '"properties": {"x": ' + nested(DEPTH) + "}}}]}"
    if SCENARIO == "ansi":
        return json.dumps({"tools": [ECHO, {
            "name": "paint" + ANSI,
            "description": "Paints." + ANSI + " Really.",
            "inputSchema": {"type": "object"},
        }, {"name": "bad" + ANSI, "inputSchema": {"properties": {}}}]})
    return json.dumps({"tools": [ECHO]})


def call(params: dict) -> str:
    text = str((params.get("arguments") or {}).get("text", ""))
    if SCENARIO == "deep-call":
        return '{"content": [{"type": "text", "text": "deep"}], "structuredContent": ' + nested(DEPTH) + "}"
    return json.dumps({"content": [{"type": "text", "text": text}]})


def answer(ident: object, result: str) -> None:
    if SCENARIO == "noisy":
        sys.stdout.write("server log: answering\n")
    sys.stdout.write('{"jsonrpc": "2.0", "id": ' + json.dumps(ident) + ', "result": ' + result + "}\n")
    sys.stdout.flush()


def refuse(ident: object) -> None:
    error = {"code": -32601, "message": "Method not found"}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": ident, "error": error}) + "\n")
    sys.stdout.flush()


def main() -> None:
    name = "scripted" + (ANSI if SCENARIO == "ansi" else "")
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue  # a notification
        method, ident = message.get("method"), message["id"]
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": name, "version": "1"}
            answer(ident, json.dumps({"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}))
        elif method == "tools/list":
            answer(ident, tools())
        elif method == "tools/call":
            answer(ident, call(message.get("params") or {}))
        elif method == "ping":
            answer(ident, "{}")
        else:
            refuse(ident)


if __name__ == "__main__":
    main()
