"""``codemode mcp serve`` over HTTP: DNS-rebinding protection on every loopback address, the
right loopback warning, a busy port as one line and exit code 2, and the bounded event log."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from codemode import CodeMode, JsonlEventLog, MemoryEventLog, Registry, define_tool
from codemode.mcp import build_server, serve_http
from codemode.mcp.options import (
    SERVER_LOG_MAX_BYTES,
    SERVER_LOG_MAX_EVENTS,
    is_loopback,
    server_event_log,
)

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parents[3]
ATTACKER = "rebind.attacker.example"
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_code", "arguments": {"code": "return await tools.probe()", "description": "Probe"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def probed() -> tuple[Registry, list[int]]:
    calls: list[int] = []

    async def probe(args: Any, ctx: Any) -> list[dict[str, str]]:
        calls.append(1)
        return [{"type": "text", "text": "ran"}]

    registry = Registry(mode="code")
    registry.register(define_tool(name="probe", description="Record a call.", parameters={}, execute=probe))
    return registry, calls


@pytest.mark.parametrize("host", ["127.0.0.2", "127.8.9.10", "::1", "localhost"])
async def test_every_loopback_address_refuses_other_hosts_and_origins(host: str) -> None:
    registry, calls = probed()
    server = build_server(CodeMode(registry, backend="inprocess"))
    shown = f"[{host}]" if ":" in host else host
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server, host, 0)
        url = f"http://{shown}:{port}/mcp"
        async with httpx2.AsyncClient(timeout=10) as client:
            for body in (INITIALIZE, CALL):
                wrong_host = await client.post(url, json=body, headers={**HEADERS, "host": f"{ATTACKER}:{port}"})
                assert wrong_host.status_code == 421
                wrong_origin = await client.post(url, json=body, headers={**HEADERS, "origin": f"http://{ATTACKER}:{port}"})
                assert wrong_origin.status_code == 403
            assert calls == [] and registry.events.read() == []  # nothing was served
            # Control: the same request naming the address itself is served.
            ok = await client.post(url, json=INITIALIZE, headers={**HEADERS, "origin": f"http://{shown}:{port}"})
            assert ok.status_code == 200 and "serverInfo" in ok.text
        tg.cancel_scope.cancel()


@pytest.mark.parametrize(
    ("host", "expected"),
    [("127.0.0.1", True), ("127.0.0.2", True), ("127.255.255.254", True), ("::1", True), ("::ffff:127.0.0.5", True),
     ("localhost", True), ("LOCALHOST", True), ("0.0.0.0", False), ("10.0.0.1", False), ("128.0.0.1", False),
     ("::", False), ("example.com", False), ("localhost.attacker.example", False)],
)
def test_is_loopback(host: str, expected: bool) -> None:
    assert is_loopback(host) is expected


def _serve(*argv: str, root: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "codemode.mcp", "serve", "--root", str(root), *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, cwd=REPO)


def _first_lines(proc: subprocess.Popen[str], until: str, limit: float = 30) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + limit
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if until in line:
            break
    return lines


@pytest.mark.parametrize(("host", "warned"), [("127.0.0.2", False), ("0.0.0.0", True)])
def test_the_loopback_warning_is_right(tmp_path: Path, host: str, warned: bool) -> None:
    proc = _serve("--http", f"{host}:0", root=tmp_path)
    try:
        lines = _first_lines(proc, "serving MCP at")
    finally:
        proc.kill()
        proc.wait()
    assert any(f"serving MCP at http://{host}:" in line for line in lines), lines
    assert any("not a loopback address" in line for line in lines) is warned


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _serve("--http", f"127.0.0.1:{port}", root=tmp_path)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err == f"codemode: error: cannot listen on 127.0.0.1:{port}: address already in use\n"


# --- the event log -------------------------------------------------------------------------------


def test_the_server_log_is_a_bounded_ring_unless_a_file_is_given(tmp_path: Path) -> None:
    ring = server_event_log(None)
    assert isinstance(ring, MemoryEventLog)
    assert (ring.max_events, ring.max_bytes) == (SERVER_LOG_MAX_EVENTS, SERVER_LOG_MAX_BYTES)
    disk = server_event_log(str(tmp_path / "events.jsonl"))
    assert isinstance(disk, JsonlEventLog)


async def test_event_log_file_records_every_event_of_a_served_run(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    (tmp_path / "notes.txt").write_text("alpha\u2028beta\n")
    log = tmp_path / "events.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codemode.mcp", "serve", "--root", str(tmp_path), "--event-log", str(log), "--backend", "inprocess"],
        cwd=str(REPO),
    )
    with anyio.fail_after(40):
        async with Client(params) as client:
            r = await client.call_tool("run_code", {"code": "return (await tools.read_file(path='notes.txt'))['content']",
                                                    "description": "Read the notes"})
            assert not r.is_error
    lines = log.read_text().splitlines()
    events = [json.loads(line) for line in lines]  # one event a line, even with U+2028 in the content
    kinds = [e["type"] for e in events]
    assert kinds.count("tool/call") == 2 and "tool/code-dispatch" in kinds


async def test_handshake_era_clients_over_http_are_told_the_tool_list_can_change() -> None:
    """The SDK's HTTP session manager builds default initialization options; ours say
    ``tools.listChanged`` (as the stdio server does), and the notification does arrive."""
    from mcp import Client

    registry, _ = probed()
    mode = CodeMode(registry, backend="inprocess")
    heard = anyio.Event()

    async def on_message(message: Any) -> None:
        if type(message).__name__ == "ToolListChangedNotification":
            heard.set()

    async def answer(args: Any, ctx: Any) -> str:
        return "hi"

    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, build_server(mode), "127.0.0.1", 0)
        async with Client(f"http://127.0.0.1:{port}/mcp", mode="legacy", message_handler=on_message) as client:
            assert not client.protocol_version.startswith("2026")
            assert client.server_capabilities.tools is not None
            assert client.server_capabilities.tools.list_changed is True
            before = (await client.list_tools()).tools[0].description
            registry.register(define_tool(name="greet", description="Say hello.", execute=answer))
            with anyio.fail_after(10):
                await heard.wait()
            after = (await client.list_tools()).tools[0].description
            assert "greet" not in before and "greet" in after
        tg.cancel_scope.cancel()
