"""codemode's own MCP server, driven by the ``mcp`` SDK's client over stdio and streamable HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcpkit import FAST, server_entry, write_config

from codemode import CodeMode, Registry, ToolCall, define_tool
from codemode.mcp import SDK_URI, build_server, mcp_tools, serve_http

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parents[3]


def text_of(result) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


async def test_stdio_server_with_builtin_and_upstream_tools(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    config = write_config(tmp_path / "mcp.json", {"up": server_entry()})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codemode.mcp", "serve", "--root", str(tmp_path), "--mcp-config", str(config),
              "--tool-cache", str(tmp_path / "tool-cache"),
              "--max-concurrent", "2", "--timeout", "20", "--sdk", "full"],
        cwd=str(REPO),
    )
    with anyio.fail_after(40):
        async with Client(params) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["run_code", "search_tools", "get_tool_sdk"]
            tool = listed.tools[0]
            assert tool.input_schema["required"] == ["code", "description"]
            assert "async def up__add(self, *, a: int, b: int)" in tool.description
            assert "async def read_file(" in tool.description

            code = (
                "f = await tools.read_file(path='notes.txt')\n"
                "s = await tools.up__add(a=2, b=40)\n"
                "print(len(f['content'].splitlines()), s['total'])\n"
            )
            ok = await client.call_tool("run_code", {"code": code, "description": "Count lines and add"})
            assert not ok.is_error, text_of(ok)
            assert text_of(ok) == "2 42"

            bad = await client.call_tool("run_code", {"code": "x = 1 +", "description": "Broken program"})
            assert bad.is_error
            assert text_of(bad).startswith("Error: code run failed (syntax):")

            failing = await client.call_tool(
                "run_code", {"code": "await tools.up__fail(reason='nope')", "description": "Call a failing tool"}
            )
            assert failing.is_error and "cannot comply: nope" in text_of(failing)

            missing = await client.call_tool("run_code", {"description": "No code"})
            assert missing.is_error and "Invalid arguments for run_code" in text_of(missing)

            # Two run_code calls at once: each waits at the upstream rendezvous for the other.
            meet = "return await tools.up__rendezvous(label={!r})"
            results: list[str] = []

            async def one(label: str) -> None:
                r = await client.call_tool("run_code", {"code": meet.format(label), "description": "Meet"})
                results.append(text_of(r))

            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "a")
                tg.start_soon(one, "b")
            assert sorted(results) == ["met:a", "met:b"]

            still = await client.call_tool("run_code", {"code": "return 6 * 7", "description": "Multiply"})
            assert not still.is_error and text_of(still) == "42"

            resources = await client.list_resources()
            assert [str(r.uri) for r in resources.resources] == [SDK_URI]
            sdk = await client.read_resource(SDK_URI)
            assert "async def up__add(" in sdk.contents[0].text
            prompts = await client.list_prompts()
            assert [p.name for p in prompts.prompts] == ["codemode"]
            prompt = await client.get_prompt("codemode")
            assert prompt.messages[0].content.text.startswith("## Code Mode\n")


def _pictures() -> list:
    async def snap(args, ctx):
        return [{"type": "text", "text": "snap"}, {"type": "image", "mime_type": "image/png", "data": "aGk="}]

    return [define_tool(name="snap", description="Take a picture.", parameters={}, execute=snap,
                        is_concurrency_safe=True)]


async def test_http_server_matches_in_process_text_and_caps_concurrency(tmp_path: Path) -> None:
    registry = Registry(mode="code")
    for definition in _pictures():
        registry.register(definition)
    config = write_config(tmp_path / "mcp.json", {"up": server_entry()})
    async with mcp_tools(registry, str(config), limits=FAST):
        mode = CodeMode(registry, backend="inprocess")
        server = build_server(mode, max_concurrent=1)
        async with anyio.create_task_group() as tg:
            port = await tg.start(serve_http, server, "127.0.0.1", 0)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                code = "import asyncio\nr = await tools.snap()\nprint(r)\nreturn (await tools.up__add(a=1, b=1))['total']"
                ok = await client.call_tool("run_code", {"code": code, "description": "Snap and add"})
                assert not ok.is_error
                assert [b.type for b in ok.content] == ["text", "image"]
                assert text_of(ok) == "snap\n[image: image/png, 2 bytes]\n2"

                failing = "raise ValueError('boom')"
                remote = await client.call_tool("run_code", {"code": failing, "description": "Fail on purpose"})
                local = await mode.handle(ToolCall("local", "run_code", {"code": failing, "description": "Fail"}))
                assert remote.is_error and local.is_error
                assert text_of(remote) == local.text

                # max_concurrent=1: a second run waits, so two rendezvous runs cannot meet.
                meet = "return await tools.up__rendezvous(label='solo')"
                with anyio.move_on_after(2) as scope:
                    async with anyio.create_task_group() as inner:
                        for _ in range(2):
                            inner.start_soon(client.call_tool, "run_code", {"code": meet, "description": "Meet"})
                assert scope.cancelled_caught
            tg.cancel_scope.cancel()


async def test_unknown_tool_resource_and_prompt_are_refused() -> None:
    registry = Registry(mode="code")
    mode = CodeMode(registry, backend="inprocess")
    server = build_server(mode)
    async with Client(server) as client:
        other = await client.call_tool("grep", {})
        assert other.is_error
        assert text_of(other) == "Unknown tool 'grep'. Available tools: run_code, search_tools, get_tool_sdk."
        with pytest.raises(MCPError, match="Unknown resource"):
            await client.read_resource("codemode://other")
        with pytest.raises(MCPError, match="Unknown prompt"):
            await client.get_prompt("other")


def test_build_server_checks_its_arguments() -> None:
    registry = Registry(mode="code")
    mode = CodeMode(registry, backend="inprocess")
    with pytest.raises(ValueError, match="max_concurrent must be an int >= 1, got 0"):
        build_server(mode, max_concurrent=0)
    mode.close()
    with pytest.raises(ValueError, match="no run_code"):
        build_server(mode)


async def test_streamable_http_upstream_is_imported_and_called() -> None:
    """codemode's own HTTP server, used as an upstream over a real streamable HTTP session."""
    from codemode.mcp import McpProvider, parse_config

    inner = Registry(mode="code")
    for definition in _pictures():
        inner.register(definition)
    inner_mode = CodeMode(inner, backend="inprocess")
    server = build_server(inner_mode)
    async with anyio.create_task_group() as tg:
        port = await tg.start(serve_http, server, "127.0.0.1", 0)
        outer = Registry()
        config = parse_config({"mcpServers": {"cm": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}}})
        async with McpProvider(config, limits=FAST) as provider:
            # Its SDK resource (codemode://sdk) brings the resource tools along.
            assert await provider.register(outer) == [
                "cm__get_tool_sdk", "cm__run_code", "cm__search_tools", "list_resources", "read_resource"
            ]
            sdk = await outer.execute(ToolCall("s", "read_resource", {"uri": SDK_URI}))
            assert not sdk.is_error and sdk.text == inner_mode.sdk().text
            result = await outer.execute(ToolCall("h", "cm__run_code", {"code": "print(1 + 1)", "description": "Add"}))
            assert not result.is_error and result.text == "2"
            failed = await outer.execute(ToolCall("i", "cm__run_code", {"code": "1/0", "description": "Divide"}))
            assert failed.is_error and failed.text.startswith("Error: code run failed (exception)")
        tg.cancel_scope.cancel()
