"""Following an upstream server's tool list: ``tools/list_changed`` (or a 2026 listen event) and
restarts re-list its tools, the registry and the SDK follow, and ``mcp serve`` clients hear it."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcpkit import FAST, dynamic_entry, write_config

from codemode import CodeMode, Registry, ToolCall
from codemode.mcp import McpProvider, parse_config

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parents[3]
ERAS = {"2026-listen": (), "2025-notification": ("--legacy",)}


async def until(registry: Registry, predicate: Callable[[], bool]) -> None:
    """Wait (at most 15 s) for a registry change after which ``predicate()`` holds."""
    changed = anyio.Event()

    def wake() -> None:
        changed.set()

    with registry.on_change(wake), anyio.fail_after(15):
        while not predicate():
            await changed.wait()
            changed = anyio.Event()


def text_of(result) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


@pytest.mark.parametrize("era", list(ERAS))
async def test_added_changed_and_removed_tools_reach_the_registry_and_the_sdk(era: str) -> None:
    registry = Registry()
    mode = CodeMode(registry, mode="both", backend="inprocess")
    config = parse_config({"mcpServers": {"dyn": dynamic_entry("dyn", "--no-resources", *ERAS[era])}})
    async with McpProvider(config, limits=FAST) as provider:
        await provider.register(registry)
        assert [d.name for d in registry.visible()] == ["dyn__echo", "dyn__grow", "dyn__prune", "dyn__quit", "run_code"]

        grown = await registry.execute(ToolCall("g1", "dyn__grow", {"name": "fresh"}))
        assert grown.text == "added fresh"
        await until(registry, lambda: registry.get("dyn__fresh") is not None)
        assert provider.upstream["dyn__fresh"] == ("dyn", "fresh")
        assert "async def dyn__fresh(self)" in mode.sdk().text
        assert "A tool added at runtime." in mode.sdk().describe("dyn__fresh")
        run = await mode.run("return await tools.dyn__fresh()", description="Call the new tool")
        assert run.ok and run.text == "I am fresh"

        await registry.execute(ToolCall("g2", "dyn__grow", {"name": "fresh", "description": "Reworded now."}))
        await until(registry, lambda: getattr(registry.get("dyn__fresh"), "description", "") == "Reworded now.")
        assert "Reworded now." in mode.sdk().describe("dyn__fresh")
        assert "A tool added at runtime." not in mode.sdk().describe("dyn__fresh")
        assert [d.name for d in provider.definitions].count("dyn__fresh") == 1

        await registry.execute(ToolCall("p1", "dyn__prune", {"name": "fresh"}))
        await until(registry, lambda: registry.get("dyn__fresh") is None)
        assert "dyn__fresh" not in mode.sdk().text and "dyn__fresh" not in provider.upstream
        gone = await mode.run("return await tools.dyn__fresh()", description="Call the removed tool")
        assert not gone.ok and "unknown tool 'dyn__fresh'" in gone.text
        assert [d.name for d in registry.visible()] == ["dyn__echo", "dyn__grow", "dyn__prune", "dyn__quit", "run_code"]
    assert registry.get("dyn__echo") is None  # closing the provider unregisters what it added


async def test_a_restarted_server_is_listed_again() -> None:
    """Changes made while a server was down were never announced: a restart re-lists it."""
    registry = Registry()
    async with McpProvider(parse_config({"mcpServers": {"dyn": dynamic_entry("dyn", "--no-resources")}}),
                           limits=FAST) as provider:
        await provider.register(registry)
        await registry.execute(ToolCall("g", "dyn__grow", {"name": "fresh"}))
        await until(registry, lambda: registry.get("dyn__fresh") is not None)
        crashed = await registry.execute(ToolCall("q", "dyn__quit", {}))
        assert crashed.is_error and "stopped while dyn__quit was running" in crashed.text
        echoed = await registry.execute(ToolCall("e", "dyn__echo", {"text": "back"}))  # restarts it
        assert echoed.text == "back" and provider.servers["dyn"].starts == 2
        await until(registry, lambda: registry.get("dyn__fresh") is None)  # the new process lacks it
        assert "dyn__fresh" not in provider.upstream and registry.get("dyn__echo") is not None


@pytest.mark.parametrize("client_mode", ["legacy", "auto"])
async def test_mcp_serve_clients_hear_that_an_upstream_tool_list_changed(tmp_path: Path, client_mode: str) -> None:
    config = write_config(tmp_path / "mcp.json", {"dyn": dynamic_entry("dyn", "--no-resources")})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codemode.mcp", "serve", "--root", str(tmp_path), "--mcp-config", str(config),
              "--tool-cache", str(tmp_path / "tool-cache"),
              "--sdk", "full", "--timeout", "20"],
        cwd=str(REPO),
    )
    heard = anyio.Event()

    async def on_message(message) -> None:
        if type(message).__name__ == "ToolListChangedNotification":
            heard.set()

    grow = {"code": "return await tools.dyn__grow(name='fresh')", "description": "Add a tool upstream"}
    with anyio.fail_after(60):
        async with Client(params, mode=client_mode, message_handler=on_message) as client:
            before = (await client.list_tools()).tools[0].description
            assert "async def dyn__echo(" in before and "dyn__fresh" not in before
            if client.protocol_version.startswith("2026"):
                async with client.listen(tools_list_changed=True) as sub:
                    assert text_of(await client.call_tool("run_code", grow)) == "added fresh"
                    async for _event in sub:
                        break
            else:
                assert text_of(await client.call_tool("run_code", grow)) == "added fresh"
                await heard.wait()
            after = (await client.list_tools()).tools[0].description
            assert "async def dyn__fresh(self)" in after
            fresh = await client.call_tool("run_code", {"code": "return await tools.dyn__fresh()",
                                                        "description": "Call the new tool"})
            assert not fresh.is_error and text_of(fresh) == "I am fresh"
