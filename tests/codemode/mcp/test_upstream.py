"""Upstream MCP tools over a real stdio session: import, SDK, pipeline calls, content, failures."""

from __future__ import annotations

import sys

import anyio
import pytest
from mcpkit import FAST, server_entry

import sdk_gen
from codemode import CodeMode, Registry, ToolCall, deny
from codemode.code_mode.bridge import build_sdk
from codemode.mcp import McpProvider, UpstreamLimits, parse_config

pytestmark = pytest.mark.anyio


async def test_tools_are_imported_with_schemas_and_namespaced(upstream) -> None:
    registry, provider = upstream
    names = [d.name for d in registry.visible()]
    assert names == sorted(
        f"up__{n}" for n in
        ["add", "crash", "fail", "hang", "picture", "pid", "read_file_v2", "rendezvous", "shout", "slow", "sound"]
    )
    assert provider.upstream["up__read_file_v2"] == ("up", "read-file.v2")
    assert provider.failures == {}
    add = registry.get("up__add")
    assert add.parameters_schema["required"] == ("a", "b")
    assert add.output_schema["properties"]["total"] == {"title": "Total", "type": "integer"}
    assert add.is_concurrency_safe({}) is True  # readOnlyHint
    assert registry.get("up__shout").output_schema is None
    assert registry.get("up__shout").is_concurrency_safe({}) is False
    sdk = build_sdk(registry.visible())
    assert "async def up__add(self, *, a: int, b: int)" in sdk.text
    assert "Add two integers." in sdk.text
    assert sdk.method_names["up__read_file_v2"] == "up__read_file_v2"
    assert sdk_gen.check("r = await tools.up__add(a=1, b=2)\nreturn r['total']", sdk) == []


async def test_calls_go_through_the_pipeline(upstream) -> None:
    registry, _ = upstream
    result = await registry.execute(ToolCall("c1", "up__add", {"a": 2, "b": 3}))
    assert not result.is_error
    assert result.value == {"total": 5, "terms": (2, 3)}  # structuredContent is the canonical value
    assert '"total": 5' in result.text  # the upstream text block is what the model sees
    bad = await registry.execute(ToolCall("c2", "up__add", {"a": "two"}))
    assert bad.meta["error"] == "invalid_arguments"  # refused before anything is sent upstream
    with registry.add_guard(lambda ctx: deny("no shouting") if ctx.name == "up__shout" else None):
        denied = await registry.execute(ToolCall("c3", "up__shout", {"text": "hi"}))
    assert denied.text == "Call to up__shout was denied: no shouting"
    ok = await registry.execute(ToolCall("c4", "up__shout", {"text": "hi"}))
    assert ok.text == "HI!" and ok.value is None
    kinds = [(e["type"], e["call_id"]) for e in registry.events.read()]
    assert ("tool/result", "c4") in kinds


async def test_two_calls_run_in_parallel(upstream) -> None:
    registry, _ = upstream
    calls = [ToolCall(f"r{i}", "up__rendezvous", {"label": str(i)}) for i in range(2)]
    with anyio.fail_after(8):  # rendezvous only answers once both calls are in flight
        results = await registry.execute_batch(calls)
    assert [r.text for r in results] == ["met:0", "met:1"]


async def test_content_blocks_and_upstream_errors(upstream) -> None:
    registry, _ = upstream
    picture = await registry.execute(ToolCall("p", "up__picture", {}))
    assert [b["type"] for b in picture.content] == ["text", "image", "resource", "resource"]
    assert picture.content[2]["text"] == "remember" and picture.content[3]["name"] == "report.csv"
    sound = await registry.execute(ToolCall("s", "up__sound", {}))
    assert sound.content[0]["type"] == "audio" and sound.content[0]["mime_type"] == "audio/wav"
    failed = await registry.execute(ToolCall("f", "up__fail", {"reason": "no"}))
    assert failed.is_error and failed.meta["error"] == "tool_error"
    assert "cannot comply: no" in failed.text


async def test_snippet_calls_upstream_tools_in_parallel_with_placeholders(upstream) -> None:
    registry, _ = upstream
    mode = CodeMode(registry, mode="code", backend="inprocess")
    assert "up__rendezvous" in mode.system_prompt()
    code = (
        "import asyncio\n"
        "a, b = await asyncio.gather(tools.up__rendezvous(label='x'), tools.up__rendezvous(label='y'))\n"
        "s = await tools.up__add(a=1, b=2)\n"
        "p = await tools.up__picture()\n"
        "print(a, b, s['total'])\n"
        "print(p)\n"
    )
    with anyio.fail_after(15):
        run = await mode.run(code)
    assert run.ok, run.text
    assert run.text.splitlines()[0] == "met:x met:y 3"
    assert "[image: image/png, 24 bytes]" in run.text and "[resource: memo://note]" in run.text
    assert [c.name for c in run.calls] == ["up__rendezvous", "up__rendezvous", "up__add", "up__picture"]
    failed = await mode.run("await tools.up__fail(reason='nope')")
    assert not failed.ok and "cannot comply: nope" in failed.text
    mode.close()


async def test_crash_mid_call_is_reported_and_the_server_restarts(upstream) -> None:
    registry, provider = upstream
    first = (await registry.execute(ToolCall("a", "up__pid", {}))).value["result"]
    crashed = await registry.execute(ToolCall("b", "up__crash", {}))
    assert crashed.is_error and crashed.meta["error"] == "tool_error"
    assert crashed.text == (
        "MCP server 'up' stopped while up__crash was running (the connection closed); "
        "the call may or may not have taken effect. The server restarts on the next call."
    )
    again = await registry.execute(ToolCall("c", "up__pid", {}))
    assert not again.is_error and again.value["result"] != first
    assert provider.servers["up"].starts == 2


async def test_hung_server_times_out_and_restarts_but_a_slow_call_does_not() -> None:
    limits = UpstreamLimits(call_timeout=1.0, connect_timeout=20.0, ping_timeout=0.5)
    registry = Registry()
    config = parse_config({"mcpServers": {"up": server_entry()}})
    async with McpProvider(config, limits=limits) as provider:
        await provider.register(registry)
        first = (await registry.execute(ToolCall("a", "up__pid", {}))).value["result"]
        slow = await registry.execute(ToolCall("b", "up__slow", {"seconds": 20}))
        assert slow.meta["error"] == "timeout"
        assert slow.text == (
            "up__slow did not finish within 1 s (MCP server 'up' is still responding); "
            "the call was cancelled. Try a smaller request."
        )
        same = (await registry.execute(ToolCall("c", "up__pid", {}))).value["result"]
        assert same == first and provider.servers["up"].starts == 1
        hung = await registry.execute(ToolCall("d", "up__hang", {"seconds": 20}))
        assert hung.meta["error"] == "timeout"
        assert hung.text == (
            "MCP server 'up' stopped responding: up__hang got no answer within 1 s and "
            "the server did not answer a ping. The server restarts on the next call."
        )
        after = await registry.execute(ToolCall("e", "up__pid", {}))
        assert not after.is_error and after.value["result"] != first
        assert provider.servers["up"].starts == 2


async def test_a_server_that_cannot_start_leaves_the_others_working() -> None:
    config = parse_config(
        {
            "mcpServers": {
                "up": server_entry(),
                "ghost": {"command": "/nonexistent/codemode-mcp-server"},
                "quitter": {"command": sys.executable, "args": ["-c", "import sys; sys.exit(1)"]},
            }
        }
    )
    registry = Registry()
    async with McpProvider(config, limits=FAST) as provider:
        names = await provider.register(registry)
        assert "up__add" in names and not [n for n in names if not n.startswith("up__")]
        assert provider.failures == {
            "ghost": "MCP server 'ghost' could not be started (its command was not found); "
            "its tools are not available in this session.",
            "quitter": "MCP server 'quitter' could not be started (it exited or closed the connection "
            "during start-up); its tools are not available in this session.",
        }
        assert "/nonexistent" not in " ".join(provider.failures.values())
    assert registry.visible() == []  # closing the provider unregisters its tools


async def test_close_stops_the_processes_and_later_calls_fail_cleanly(upstream) -> None:
    registry, provider = upstream
    server = provider.servers["up"]
    await provider.aclose()
    assert registry.get("up__add") is None
    with pytest.raises(Exception, match="is closed"):
        await server.call("add", {"a": 1, "b": 1})




async def test_a_server_that_died_while_idle_restarts_without_an_error(upstream) -> None:
    import os
    import signal

    registry, provider = upstream
    first = (await registry.execute(ToolCall("a", "up__pid", {}))).value["result"]
    os.kill(first, signal.SIGKILL)
    with anyio.fail_after(5):
        while provider.servers["up"]._conn.usable():
            await anyio.sleep(0.02)
    again = await registry.execute(ToolCall("b", "up__pid", {}))
    assert not again.is_error and again.value["result"] != first
    assert provider.servers["up"].starts == 2
