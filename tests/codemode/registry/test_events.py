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
from codemode.registry.events import estimate_size

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


# --- the bounded (ring buffer) memory log --------------------------------------------------------


def test_a_ring_log_keeps_the_newest_events_up_to_its_count() -> None:
    log = MemoryEventLog(max_events=3)
    for i in range(5):
        log.append({"type": "message", "n": i})
    assert [e["n"] for e in log.read()] == [2, 3, 4] and log.dropped == 2 and len(log) == 3


def test_a_ring_log_keeps_its_size_under_the_byte_cap_and_always_the_newest() -> None:
    log = MemoryEventLog(max_bytes=5000)
    for i in range(50):
        log.append({"type": "message", "n": i, "text": "x" * 1000})
    kept = log.read()
    assert sum(estimate_size(e) for e in kept) <= 5000 and kept[-1]["n"] == 49 and log.dropped == 50 - len(kept)
    log.append({"type": "message", "text": "y" * 10000})  # larger than the cap on its own
    assert [e["text"][0] for e in log.read()] == ["y"]


def test_a_ring_log_counts_big_ints_by_their_digits() -> None:
    """A 4,000-digit int passes the sandbox's checks and takes about 1.7 KB; a review's tool
    calls filled a log capped at 8 MiB with 26 MiB of them, each counted as 8 bytes."""
    import sys

    big = 10**3900
    assert estimate_size(big) >= sys.getsizeof(big) - 28
    log = MemoryEventLog(max_bytes=100_000)
    for i in range(100):
        log.append({"type": "message", "args": [big + i]})
    assert len(log) < 60 and sum(sys.getsizeof(e["args"][0]) for e in log.read()) <= 100_000


@pytest.mark.parametrize("caps", [{"max_events": 0}, {"max_bytes": -1}, {"max_events": True}, {"max_bytes": 1.5}])
def test_a_ring_log_checks_its_caps(caps: dict) -> None:
    with pytest.raises(ValueError, match="must be an int >= 1 or None"):
        MemoryEventLog(**caps)


def test_the_default_memory_log_is_unbounded() -> None:
    log = MemoryEventLog()
    for i in range(20000):
        log.append({"type": "message", "n": i})
    assert len(log) == 20000 and log.dropped == 0


async def test_a_ring_log_bounds_what_many_runs_leave_behind(tmp_path: Path) -> None:
    from codemode import CodeMode, register_workspace

    (tmp_path / "big.txt").write_text(("z" * 99 + "\n") * 2000)  # 200 KB
    log = MemoryEventLog(max_bytes=1024 * 1024)
    registry = Registry(mode="code", log=log)
    register_workspace(registry, tmp_path)
    mode = CodeMode(registry, backend="inprocess")
    for i in range(15):
        run = await mode.run("return len((await tools.read_file(path='big.txt', limit=2000))['content'])", call_id=f"r{i}")
        assert run.ok and run.result.value == 199999
    kept = log.read()
    assert log.dropped > 0 and sum(estimate_size(e) for e in kept) <= 1024 * 1024
    assert kept[-1]["type"] == "tool/code-dispatch" or kept[-1]["call_id"].startswith("r14")


def test_jsonl_reader_skips_lines_no_json_reader_takes(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [
        b'{"type": "a"}',
        b'{"n": ' + b"9" * 5000 + b"}",  # over CPython's integer-string limit: a plain ValueError
        b"[" * 100_000,
        b'{"s": "\xff\xfe"}',  # not UTF-8
        b'{"type": "b"}',
        b'{"type": "c", "torn',
    ]
    path.write_bytes(b"\n".join(lines))
    assert [e["type"] for e in JsonlEventLog(path).read()] == ["a", "b"]


def test_a_registry_s_default_log_is_a_bounded_ring_and_memory_stays_flat() -> None:
    import tracemalloc
    from typing import Any

    import anyio

    from codemode import Registry, ToolCall, define_tool
    from codemode.registry.events import DEFAULT_LOG_MAX_EVENTS

    async def echo(args: Any, ctx: Any) -> dict[str, str]:
        return {"text": args["text"]}

    registry = Registry()
    registry.register(define_tool(name="echo", description="Echo.", execute=echo,
                                  parameters={"text": {"type": "string", "required": True}}))
    text = "x" * 500

    async def calls(n: int) -> None:
        for i in range(n):
            await registry.execute(ToolCall(str(i), "echo", {"text": text}))

    tracemalloc.start()  # traced from the start: what the ring evicts is freed under the tracer
    anyio.run(calls, DEFAULT_LOG_MAX_EVENTS)  # warm-up: the ring fills (two events a call)
    before = tracemalloc.get_traced_memory()[0]
    anyio.run(calls, 5_000)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(registry.events) == DEFAULT_LOG_MAX_EVENTS and registry.events.dropped >= 5_000
    # 10,000 more events of ~1 KiB each kept forever would be about 10 MiB.
    assert grown < 1024 * 1024, grown
    assert derive_messages(registry.events)[-1]["role"] == "tool"  # the newest history is there
