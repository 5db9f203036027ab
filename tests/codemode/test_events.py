"""The event log and derive_messages: vocabulary, JSONL round trip, sub-calls kept out of history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codemode import (
    EVENT_CODE_DISPATCH,
    EVENT_CODE_DISPATCH_START,
    EventLog,
    JsonlEventLog,
    MemoryEventLog,
    Registry,
    ToolCall,
    derive_messages,
)

pytestmark = pytest.mark.anyio


async def test_call_and_result_events(registry: Registry) -> None:
    await registry.execute(ToolCall("c1", "echo", {"path": "/a"}), agent="main")
    call, result = registry.events.read()
    assert {k: v for k, v in call.items() if k != "ts"} == {
        "type": "tool/call",
        "call_id": "c1",
        "name": "echo",
        "arguments": {"path": "/a"},
        "agent": "main",
        "parent_call_id": None,
        "root_call_id": "c1",
    }
    assert result["type"] == "tool/result" and result["call_id"] == "c1"
    assert result["is_error"] is False and result["value"] == {"path": "/a", "limit": None}
    assert isinstance(call["ts"], float)


async def test_jsonl_log_round_trips_into_the_same_messages(tmp_path: Path, make_echo) -> None:
    path = tmp_path / "session.jsonl"
    memory = MemoryEventLog()
    jsonl = JsonlEventLog(path)
    results = []
    for log in (memory, jsonl):
        reg = Registry(log=log)
        reg.register(make_echo())
        log.append({"type": "message", "message": {"role": "user", "content": "read /a please"}})
        log.append({"type": "message", "message": {"role": "assistant", "content": "Reading."}})
        await reg.execute(ToolCall("c1", "echo", {"path": "/a"}))
        await reg.execute(ToolCall("c2", "echo", {}))
        results.append(derive_messages(log))
    assert isinstance(jsonl, EventLog) and isinstance(memory, EventLog)
    assert results[0] == results[1] == derive_messages(JsonlEventLog(path).read())
    assert results[0] == [
        {"role": "user", "content": "read /a please"},
        {
            "role": "assistant",
            "content": "Reading.",
            "tool_calls": [{"id": "c1", "name": "echo", "arguments": {"path": "/a"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "echo",
            "content": [{"type": "text", "text": '{"path": "/a", "limit": null}'}],
            "is_error": False,
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c2", "name": "echo", "arguments": {}}]},
        {
            "role": "tool",
            "tool_call_id": "c2",
            "name": "echo",
            "content": [
                {
                    "type": "text",
                    "text": "Invalid arguments for echo:\n- $: 'path' is a required property\nFix them and call echo again.",
                }
            ],
            "is_error": True,
        },
    ]
    lines = path.read_text().splitlines()
    assert [json.loads(line)["type"] for line in lines] == [
        "message", "message", "tool/call", "tool/result", "tool/call", "tool/result",
    ]


async def test_sub_call_events_never_enter_history(registry: Registry) -> None:
    log = registry.events
    await registry.execute(ToolCall("outer", "echo", {"path": "/a"}))
    parent_token = {}

    def capture(ctx):
        parent_token["t"] = ctx.token

    with registry.on_pre_execute(capture):
        await registry.execute(ToolCall("run1", "echo", {"path": "/b"}))
    log.append({"type": EVENT_CODE_DISPATCH_START, "call_id": "run1:code:1", "parent_call_id": "run1"})
    sub = await registry.execute(ToolCall("run1:code:1", "echo", {"path": "/c"}), parent=parent_token["t"])
    log.append({"type": EVENT_CODE_DISPATCH, "call_id": "run1:code:1", "parent_call_id": "run1"})
    log.append({"type": "ui/progress", "percent": 50})
    assert not sub.is_error
    ids = [m.get("tool_call_id") or m["tool_calls"][0]["id"] for m in derive_messages(log)]
    assert ids == ["outer", "outer", "run1", "run1"]
    sub_events = [e for e in log.read() if e.get("call_id") == "run1:code:1" and e["type"].startswith("tool/")]
    assert [e["type"] for e in sub_events] == [
        "tool/code-dispatch-start", "tool/call", "tool/result", "tool/code-dispatch",
    ]
    assert all(e["parent_call_id"] == "run1" for e in sub_events)
    assert sub_events[1]["root_call_id"] == "run1"


async def test_parallel_calls_share_one_assistant_message(registry: Registry) -> None:
    await registry.execute_batch([ToolCall("a", "echo", {"path": "/a"}), ToolCall("b", "echo", {"path": "/b"})])
    messages = derive_messages(registry.events)
    assert [m["role"] for m in messages] == ["assistant", "tool", "tool"]
    assert [c["id"] for c in messages[0]["tool_calls"]] == ["a", "b"]


def test_jsonl_log_survives_odd_values_and_torn_lines(tmp_path: Path) -> None:
    log = JsonlEventLog(tmp_path / "log.jsonl")
    assert log.read() == []
    log.append({"type": "x", "value": {1, 2}})
    with (tmp_path / "log.jsonl").open("a") as fh:
        fh.write('{"type": "torn"')
    assert log.read() == [{"type": "x", "value": "{1, 2}"}]
    assert repr(log) == "JsonlEventLog('log.jsonl')"
