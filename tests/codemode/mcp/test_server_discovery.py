"""codemode's MCP server for real clients: 2 KB descriptions, discovery tools, progress,
tools/list_changed, and upstream tools that need a capability codemode lacks."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcpkit import FAST, HERE, write_config

from codemode import CodeMode, Registry, define_tool, to_mcp
from codemode.code_mode.discovery import DESCRIPTION_BUDGET
from codemode.mcp import build_server, load_mcp_tools
from codemode.mcp import messages as m

sys.path.insert(0, str(HERE.parent))
from catalogkit import five_servers, many_tools  # noqa: E402

pytestmark = pytest.mark.anyio


def text_of(result) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def _mode(definitions) -> CodeMode:
    registry = Registry(mode="code")
    for definition in definitions:
        registry.register(definition)
    return CodeMode(registry, backend="inprocess")


@pytest.mark.parametrize("catalogue", [five_servers, lambda: many_tools(150)], ids=["five-servers", "150-tools"])
async def test_description_and_instructions_fit_2kb(catalogue) -> None:
    mode = _mode(catalogue())
    async with Client(build_server(mode)) as client:
        (run_code, search, get) = (await client.list_tools()).tools
        assert run_code.name == "run_code" and len(run_code.description) <= DESCRIPTION_BUDGET
        assert run_code.description.startswith(m.RUN_CODE_MCP_LEAD)
        assert "tools.search(" in run_code.description
        assert len(client.instructions or "") < DESCRIPTION_BUDGET and "search_tools" in client.instructions
        assert search.annotations.read_only_hint and get.annotations.read_only_hint
    async with Client(build_server(mode, sdk="full")) as client:
        full = (await client.list_tools()).tools[0].description
        assert len(full) > DESCRIPTION_BUDGET and mode.sdk().text in full
    with pytest.raises(ValueError, match="sdk must be one of full, compact, auto"):
        build_server(mode, sdk="all")  # type: ignore[arg-type]


async def test_search_tools_and_get_tool_sdk_return_sdk_text() -> None:
    mode = _mode(five_servers())
    async with Client(build_server(mode)) as client:
        found = await client.call_tool("search_tools", {"query": "convert time zones", "limit": 1})
        assert not found.is_error and text_of(found) == mode.sdk().describe("time__convert_time")
        none = await client.call_tool("search_tools", {"query": "zebra"})
        assert not none.is_error and text_of(none) == m.NO_MATCHES.format(query="zebra")
        got = await client.call_tool("get_tool_sdk", {"names": ["git__git_log", "gti_log"]})
        assert not got.is_error
        assert text_of(got).startswith(mode.sdk().describe("git__git_log"))
        assert "unknown tool 'gti_log'" in text_of(got)
        bad = await client.call_tool("get_tool_sdk", {"names": ["nope"]})
        assert bad.is_error and "unknown tool 'nope'" in text_of(bad)
        run = await client.call_tool("run_code", {"description": "Find then call", "code": (
            "hit = (await tools.search('current time in a timezone', limit=1))[0]['name']\n"
            "r = await tools[hit](timezone='UTC')\nprint(hit, r['arguments'])")})
        assert text_of(run) == "time__get_current_time {'timezone': 'UTC'}"


async def test_progress_notifications_during_a_run() -> None:
    async def slow(args, ctx):
        await anyio.sleep(0.05)
        return {"ok": True}

    mode = _mode([define_tool(name="step", description="One slow step.", execute=slow,
                              output={"schema": {"type": "object"}}, is_concurrency_safe=True)])
    reports: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        reports.append((value, message))

    code = "for _ in range(3):\n    await tools.step()\nprint('done')"
    async with Client(build_server(mode)) as client:
        result = await client.call_tool("run_code", {"code": code, "description": "Three steps"},
                                        progress_callback=progress)
        assert text_of(result) == "done"
        quiet = len(reports)
        await client.call_tool("run_code", {"code": "print(1)", "description": "No token"})
        assert len(reports) == quiet  # no progress token, no progress
    values = [v for v, _ in reports]
    assert values == sorted(values) and len(set(values)) == len(values)  # strictly rising
    messages = [text for _, text in reports]
    assert "3 sub-calls started, 3 finished" in messages[-1]
    assert any("1 sub-calls started, 0 finished" in t for t in messages)


async def _answer(args, ctx):
    return "hi"


@pytest.mark.parametrize("mode_name", ["legacy", "auto"])
async def test_tools_list_changed_reaches_the_client(mode_name: str) -> None:
    mode = _mode(many_tools(3))
    heard = anyio.Event()

    async def on_message(message) -> None:
        if type(message).__name__ == "ToolListChangedNotification":
            heard.set()

    async with Client(build_server(mode), mode=mode_name, message_handler=on_message) as client:
        before = (await client.list_tools()).tools[0].description
        if client.protocol_version.startswith("2026"):
            async with client.listen(tools_list_changed=True) as sub:
                mode.registry.register(define_tool(name="greet", description="Say hello.", execute=_answer))
                with anyio.fail_after(5):
                    async for _event in sub:
                        break
        else:
            mode.registry.register(define_tool(name="greet", description="Say hello.", execute=_answer))
            with anyio.fail_after(5):
                await heard.wait()
        after = (await client.list_tools()).tools[0].description
        assert "greet" not in before and "greet" in after


async def test_tools_needing_tasks_are_hidden_with_one_line(tmp_path: Path, monkeypatch) -> None:
    """The tool list is scripted (the 2026 protocol drops ``execution``; 2025-11-25 servers send it)."""
    import mcp_types as types

    from codemode.mcp.upstream import UpstreamServer

    schema = {"type": "object", "properties": {}}

    async def scripted_tools(self) -> list[types.Tool]:
        return [
            types.Tool(name="plain", description="An ordinary tool.", input_schema=schema,
                       annotations=types.ToolAnnotations(read_only_hint=True, title="Plain")),
            types.Tool(name="needs_task", description="Only runs as a task.", input_schema=schema,
                       execution=types.ToolExecution(task_support="required")),
            types.Tool(name="maybe_task", description="Runs either way.", input_schema=schema,
                       execution=types.ToolExecution(task_support="optional")),
        ]

    monkeypatch.setattr(UpstreamServer, "tools", scripted_tools)
    config = write_config(tmp_path / "mcp.json", {"tasks": {"command": "unused-never-started"}})
    registry = Registry(mode="code")
    err = io.StringIO()
    provider = await load_mcp_tools(registry, str(config), limits=FAST, stderr=err)
    try:
        assert [d.name for d in registry.visible()] == ["tasks__maybe_task", "tasks__plain"]
        assert err.getvalue() == (
            "codemode: warning: MCP tool 'needs_task' of server 'tasks' is hidden: it requires "
            "task-augmented execution, which codemode does not offer.\n"
        )
        assert list(provider.hidden) == ["tasks/needs_task"]
        assert to_mcp(registry.visible())[1]["annotations"] == {"readOnlyHint": True, "title": "Plain"}
    finally:
        await provider.aclose()
