"""Upstream servers that send what the protocol refuses: a bad tool costs only that tool, a bad
listing only its server, an unreadable answer fails at once (no time-out) and without a
traceback. Real stdio sessions to ``scripted_server.py``, which writes raw JSON-RPC."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcpkit import FAST, server_entry, write_config

from codemode import Registry, ToolCall
from codemode.mcp import McpProvider, UpstreamLimits, parse_config

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
SCRIPTED = str(HERE / "scripted_server.py")
REPO = HERE.parents[2]
#: Time-outs far beyond the test's own limit: a run that waited for one would fail the test.
PATIENT = UpstreamLimits(call_timeout=600.0, connect_timeout=600.0, ping_timeout=1.0)
WORKSPACE_TOOLS = ["glob", "grep", "list_dir", "read_file", "stat"]  # read-only without --allow-write


def scripted(scenario: str, *extra: str) -> dict[str, object]:
    return {"command": sys.executable, "args": [SCRIPTED, scenario, *extra]}


BAD_TOOL_WARNINGS = {
    "s/no_type": "MCP tool 'no_type' of server 's' is skipped: inputSchema.type: field required.",
    "s/#3": "MCP tool '#3' of server 's' is skipped: name: input should be a valid string.",
    "s/#4": "MCP tool '#4' of server 's' is skipped: not a JSON object with a name and an inputSchema.",
    "s/string_schema": "MCP tool 'string_schema' of server 's' is skipped: inputSchema.type: input should be 'object'.",
    "s/no_schema": "MCP tool 'no_schema' of server 's' is skipped: inputSchema: field required.",
    "s/unusable": "MCP tool 'unusable' of server 's' is skipped: parameters_schema $.properties.a.type: "
    "12 is not valid under any of the given schemas.",
}


async def test_a_bad_tool_costs_only_that_tool() -> None:
    registry = Registry()
    config = parse_config({"mcpServers": {"s": scripted("bad-tools"), "up": server_entry()}})
    async with McpProvider(config, limits=FAST) as provider:
        names = await provider.register(registry)
        assert "s__echo" in names and "up__add" in names
        assert [n for n in names if n.startswith("s__")] == ["s__echo"]
        assert provider.failures == BAD_TOOL_WARNINGS
        echoed = await registry.execute(ToolCall("e", "s__echo", {"text": "still here"}))
        assert not echoed.is_error and echoed.text == "still here"
        added = await registry.execute(ToolCall("a", "up__add", {"a": 1, "b": 2}))
        assert added.value["total"] == 3
        assert provider.servers["s"].starts == 1  # calling the good tool did not re-list or restart


async def test_a_bad_listing_costs_only_its_server() -> None:
    registry = Registry()
    config = parse_config({"mcpServers": {"s": scripted("bad-page"), "up": server_entry()}})
    async with McpProvider(config, limits=FAST) as provider:
        names = await provider.register(registry)
        assert names and all(n.startswith("up__") for n in names)
        assert provider.failures == {
            "s": "MCP server 's' could not be started (its tools/list answer is not valid MCP: "
            "tools: input should be a valid list); its tools are not available in this session."
        }


async def test_a_listing_nested_thousands_deep_fails_at_once() -> None:
    registry = Registry()
    config = parse_config({"mcpServers": {"s": scripted("deep", "5000"), "up": server_entry()}})
    with anyio.fail_after(120):  # the connect time-out is 600 s: only the screen ends it sooner
        async with McpProvider(config, limits=PATIENT) as provider:
            names = await provider.register(registry)
            assert "up__add" in names and not [n for n in names if n.startswith("s__")]
            assert provider.failures == {
                "s": "MCP server 's' could not be started (it sent an answer codemode cannot read: "
                "JSON nested too deeply); its tools are not available in this session."
            }


async def test_a_call_answered_thousands_deep_fails_at_once_and_the_server_restarts() -> None:
    registry = Registry()
    config = parse_config({"mcpServers": {"s": scripted("deep-call", "5000")}})
    with anyio.fail_after(120):  # the call time-out is 600 s
        async with McpProvider(config, limits=PATIENT) as provider:
            await provider.register(registry)
            first = await registry.execute(ToolCall("a", "s__echo", {"text": "x"}))
            assert first.is_error and first.meta["error"] == "tool_error"
            assert first.text == (
                "MCP server 's' sent an answer codemode cannot read (JSON nested too deeply); s__echo "
                "failed. The server restarts on the next call."
            )
            again = await registry.execute(ToolCall("b", "s__echo", {"text": "x"}))
            assert again.is_error and provider.servers["s"].starts == 2


async def test_log_lines_on_stdout_are_skipped_not_fatal() -> None:
    registry = Registry()
    config = parse_config({"mcpServers": {"s": scripted("noisy")}})
    async with McpProvider(config, limits=FAST) as provider:
        assert await provider.register(registry) == ["s__echo"]
        echoed = await registry.execute(ToolCall("e", "s__echo", {"text": "hi"}))
        assert echoed.text == "hi" and provider.servers["s"].starts == 1


def cli(*argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codemode", *argv], input=stdin, capture_output=True, text=True,
        cwd=str(REPO), timeout=300,
    )


@pytest.mark.parametrize(
    ("scenario", "warnings"),
    [
        ("bad-tools", [f"codemode: warning: {w}" for w in BAD_TOOL_WARNINGS.values()]),
        ("deep", ["codemode: warning: MCP server 's' could not be started (it sent an answer codemode "
                  "cannot read: JSON nested too deeply); its tools are not available in this session."]),
        ("noisy", []),
    ],
)
def test_cli_tools_lists_the_rest_with_one_warning_line_each(tmp_path: Path, scenario: str, warnings: list[str]) -> None:
    config = write_config(tmp_path / "mcp.json", {"s": scripted(scenario)})
    done = cli("tools", "--root", str(tmp_path), "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == warnings
    listed = [line.split(":", 1)[0] for line in done.stdout.splitlines()]
    assert [n for n in listed if not n.startswith("s__")] == WORKSPACE_TOOLS
    assert ("s__echo" in listed) == (scenario != "deep")


def test_cli_run_uses_the_workspace_and_the_good_tools_of_a_sloppy_server(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n", encoding="utf-8")
    config = write_config(tmp_path / "mcp.json", {"s": scripted("bad-tools")})
    code = "f = await tools.read_file(path='a.txt')\nr = await tools.s__echo(text='ok')\nprint(f['total_lines'], r)\n"
    done = cli("run", "-", "--backend", "inprocess", "--root", str(tmp_path), "--mcp-config", str(config), stdin=code)
    assert done.returncode == 0, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0].startswith("2 ")


async def test_mcp_serve_keeps_serving_next_to_a_sloppy_server(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"s": scripted("bad-tools"), "d": scripted("deep")})
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codemode.mcp", "serve", "--root", str(tmp_path), "--mcp-config", str(config),
              "--tool-cache", str(tmp_path / "tool-cache"), "--sdk", "full"],
        cwd=str(REPO),
    )
    with anyio.fail_after(120):
        async with Client(params) as client:
            listed = await client.list_tools()
            run_code = listed.tools[0]
            assert "async def s__echo(" in run_code.description
            assert "async def read_file(" in run_code.description and "no_type" not in run_code.description
            done = await client.call_tool("run_code", {"code": "return await tools.s__echo(text='up')",
                                                       "description": "Echo"})
            assert not done.is_error and done.content[0].text == "up"


def test_cli_shows_upstream_control_characters_as_escapes(tmp_path: Path) -> None:
    """A server's tool names, descriptions and warnings cannot drive the terminal (OSC 52, title, clear)."""
    config = write_config(tmp_path / "mcp.json", {"s": scripted("ansi")})
    done = cli("tools", "--root", str(tmp_path), "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert "\x1b" not in stream and "\x07" not in stream
    assert "Paints.\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J" in done.stdout
    [warning] = done.stderr.splitlines()
    assert warning.startswith("codemode: warning: MCP tool 'bad\\x1b]52;") and "skipped" in warning
