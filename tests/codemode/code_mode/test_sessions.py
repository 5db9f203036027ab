"""Code Mode sessions: the opt-in API, run_code's restart argument and description, the reset
sentence in the model's text, session events, MCP sessions, and --session record/replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from bridgekit import cli
from mcp import Client

import sandbox
from codemode import (
    EVENT_SESSION_CLOSE,
    EVENT_SESSION_RESET,
    EVENT_SESSION_START,
    CodeMode,
    Registry,
    define_tool,
    derive_messages,
)
from codemode.code_mode import messages as m
from codemode.mcp import build_server, serve_http

pytestmark = pytest.mark.anyio
FAST = sandbox.Limits(wall_time=10, cpu_time=10)


def make_registry(fetched: list[int]) -> Registry:
    registry = Registry(mode="code")

    async def fetch(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
        fetched.append(1)
        return {"rows": [{"id": i, "secret": f"INTERMEDIATE-{i}"} for i in range(50)]}

    registry.register(define_tool(name="fetch", description="Fetch rows.", parameters={}, execute=fetch,
                                  output={"schema": {"type": "object"}}))
    return registry


def call(code: str, n: int = 1, **extra: Any) -> dict[str, Any]:
    return {"id": f"c{n}", "name": "run_code", "arguments": {"code": code, "description": "Do a step", **extra}}


def run_code_schema(mode: CodeMode) -> dict[str, Any]:
    return mode.model_tools(format="json_schema")[0]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_a_conversation_keeps_its_variables_and_the_model_sees_only_what_is_printed(backend: str) -> None:
    fetched: list[int] = []
    registry = make_registry(fetched)
    async with CodeMode(registry, sessions=True, backend=backend, limits=FAST) as mode:
        first = await mode.handle(call("data = await tools.fetch()\nprint(len(data['rows']))"), session="conv-42")
        assert first.text == "50"
        chat = mode.session("conv-42")
        second = await chat.handle(call("return [r['id'] for r in data['rows'] if r['id'] % 20 == 0]", 2))
        assert not second.is_error and json.loads(second.text) == [0, 20, 40]
        assert fetched == [1]  # the second step paid for no tool call
        other = await mode.handle(call("return data", 3), session="conv-7")
        assert other.is_error and "NameError: name 'data' is not defined" in other.text
        one_shot = await mode.handle(call("return data", 4))
        assert one_shot.is_error and "NameError" in one_shot.text
        # The rows stayed inside the session: no intermediate value entered the model's history.
        history = json.dumps(derive_messages(registry.events))
        assert "INTERMEDIATE-" not in history
        assert set(mode.sessions) == {"conv-42", "conv-7"}
    assert mode.sessions == {}


async def test_run_code_takes_restart_and_says_so_only_with_sessions() -> None:
    registry = make_registry([])
    plain = CodeMode(registry, backend="inprocess")
    schema = run_code_schema(plain)
    assert set(schema["parameters"]["properties"]) == {"code", "description"}
    assert m.RUN_CODE_SESSION not in schema["description"]
    with pytest.raises(ValueError, match="sessions are off; create the CodeMode with sessions=True"):
        await plain.handle(call("return 1"), session="k")
    plain.close()
    mode = CodeMode(registry, backend="inprocess", sessions=sandbox.SessionLimits(max_runs=5))
    schema = run_code_schema(mode)
    assert schema["parameters"]["properties"]["restart"] == {"type": "boolean", "description": m.RUN_CODE_RESTART}
    assert schema["parameters"]["required"] == ["code", "description"]
    assert schema["description"].endswith(" " + m.RUN_CODE_SESSION)
    assert m.RUN_CODE_SESSION == (
        "Variables, functions and imports a program defines stay defined in later run_code calls "
        "of this conversation; pass `restart: true` to start from nothing."
    )
    with pytest.raises(TypeError, match="sessions must be a bool or a sandbox.SessionLimits"):
        CodeMode(Registry(), sessions="yes")  # type: ignore[arg-type]
    mode.close()


async def test_restart_reset_and_close_are_events_and_the_reset_is_one_sentence_for_the_model() -> None:
    registry = make_registry([])
    mode = CodeMode(registry, sessions=True, limits=FAST)
    try:
        await mode.handle(call("kept = 1"), session="s")
        restarted = await mode.handle(call("return kept", 2, restart=True), session="s")
        assert restarted.is_error and "NameError" in restarted.text
        await mode.handle(call("kept = 2", 3), session="s")
        stopped = await mode.handle(call("while True:\n    pass", 4), session="s",
                                    limits=sandbox.Limits(wall_time=0.5, cpu_time=0.3))
        assert stopped.is_error
        assert stopped.text.splitlines()[-1] == (
            "Note: the session was reset because the run hit its time limit; variables defined earlier are gone."
        )
        assert stopped.text.startswith("Error: code run failed (timeout):")
        fresh = await mode.handle(call("return kept", 5), session="s")
        assert "NameError" in fresh.text and "Note:" not in fresh.text
        mode.close_session("s")
        events = [(e["type"], e.get("session"), e.get("reason")) for e in registry.events.read()
                  if e["type"].startswith("session/")]
        assert events == [
            (EVENT_SESSION_START, "s", None),
            (EVENT_SESSION_RESET, "s", "restart"),
            (EVENT_SESSION_START, "s", None),
            (EVENT_SESSION_RESET, "s", "the session was reset because the run hit its time limit; "
                                       "variables defined earlier are gone"),
            (EVENT_SESSION_START, "s", None),
            (EVENT_SESSION_CLOSE, "s", None),
        ]
        assert "s" not in mode.sessions
    finally:
        mode.close()


async def test_host_runs_in_a_session_and_a_closed_session_kills_its_worker() -> None:
    mode = CodeMode(make_registry([]), sessions=True, limits=FAST)
    chat = mode.session("host")
    try:
        assert (await chat.run("n = 20")).ok
        report = await chat.run("return n + 1")
        assert report.ok and report.result.value == 21
        pid = chat.sandbox.pid  # type: ignore[attr-defined]
        assert pid is not None and Path(f"/proc/{pid}").exists()
        chat.close()
        assert chat.closed and chat.sandbox.pid is None  # type: ignore[attr-defined]
        assert mode.session("host") is not chat  # a new session under the same key
    finally:
        mode.close()


async def test_each_mcp_connection_gets_its_own_session_closed_with_it() -> None:
    registry = make_registry([])
    mode = CodeMode(registry, sessions=True, backend="inprocess", limits=FAST)
    server = build_server(mode, sessions=True)
    text = lambda r: "\n".join(b.text for b in r.content if b.type == "text")  # noqa: E731
    async with Client(server) as one, Client(server) as two:
        listed = await one.list_tools()
        assert "restart" in listed.tools[0].input_schema["properties"]
        assert m.RUN_CODE_SESSION in listed.tools[0].description
        assert not (await one.call_tool("run_code", {"code": "mine = 'one'", "description": "Keep a value"})).is_error
        assert text(await one.call_tool("run_code", {"code": "return mine", "description": "Read it"})) == "one"
        other = await two.call_tool("run_code", {"code": "return mine", "description": "Read it"})
        assert other.is_error and "NameError" in text(other)
        assert len(mode.sessions) == 2
    for _ in range(100):
        if not mode.sessions:
            break
        await anyio.sleep(0.02)
    assert mode.sessions == {}  # both ended with their connections
    closes = [e for e in registry.events.read() if e["type"] == EVENT_SESSION_CLOSE]
    assert len(closes) == 2
    mode.close()


async def test_each_mcp_http_session_id_gets_its_own_session() -> None:
    registry = make_registry([])
    mode = CodeMode(registry, sessions=True, backend="inprocess", limits=FAST)
    server = build_server(mode, sessions=True)
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{port}/mcp"
        async with Client(url, mode="legacy") as one, Client(url, mode="legacy") as two:
            await one.call_tool("run_code", {"code": "mine = 'one'", "description": "Keep a value"})
            await two.call_tool("run_code", {"code": "mine = 'two'", "description": "Keep a value"})
            a = await one.call_tool("run_code", {"code": "return mine", "description": "Read it"})
            b = await two.call_tool("run_code", {"code": "return mine", "description": "Read it"})
            assert [a.content[0].text, b.content[0].text] == ["one", "two"]
            assert len(mode.sessions) == 2
        for _ in range(100):  # the sessions end with their MCP sessions (the clients' DELETE)
            if not mode.sessions:
                break
            await anyio.sleep(0.02)
        assert mode.sessions == {}
        # Stateless HTTP has no session id to tell clients apart: its runs are one-shot.
        async with Client(url) as stateless:
            await stateless.call_tool("run_code", {"code": "mine = 'x'", "description": "Keep a value"})
            again = await stateless.call_tool("run_code", {"code": "return mine", "description": "Read it"})
            assert again.is_error and "NameError" in again.content[0].text
        assert mode.sessions == {}
        tg.cancel_scope.cancel()
    mode.close()


def test_build_server_with_sessions_needs_a_session_code_mode() -> None:
    mode = CodeMode(Registry(mode="code"), backend="inprocess")
    with pytest.raises(ValueError, match="sessions=True needs a CodeMode made with sessions=True"):
        build_server(mode, sessions=True)
    mode.close()


def test_cli_session_runs_files_in_order_and_records_and_replays_them(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("one\ntwo\n")
    first, second = tmp_path / "first.py", tmp_path / "second.py"
    first.write_text("f = await tools.read_file(path='a.txt')\nprint(f['total_lines'])\n")
    second.write_text("s = await tools.stat(path='a.txt')\nreturn [f['content'].split(), s['size']]\n")
    record = tmp_path / "calls.jsonl"
    code, out, err = cli("run", "--session", str(first), str(second), "--root", str(root),
                         "--record", str(record), "--backend", "inprocess")
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "2" and json.loads("\n".join(out.splitlines()[1:])) == [["one", "two"], 8]
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(line["run"], line["name"]) for line in lines] == [(1, "read_file"), (2, "stat")]
    empty = tmp_path / "empty"
    empty.mkdir()  # nothing to read: the replay answers every sub-call
    code, replayed, err = cli("run", "--session", str(first), str(second), "--root", str(empty),
                              "--replay", str(record), "--backend", "inprocess")
    assert (code, replayed, err) == (0, out, "")
    code, _, err = cli("run", "--session", str(second), str(first), "--root", str(empty),
                       "--replay", str(record), "--backend", "inprocess")
    assert code == 1 and "replay mismatch at sub-call 1" in err
    code, _, err = cli("run", str(first), str(second))
    assert code == 2 and "more than one file needs --session" in err
