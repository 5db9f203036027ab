"""Cached upstream tool lists: servers start only when a program calls their tools.

Each server here is ``marker_server.py``, which appends a line to its marker file when it starts:
the proof, from the server's side, of how many processes started. Every test has its own cache
directory (``CODEMODE_TOOL_CACHE``, set by the codemode conftest).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcpkit import DYNAMIC, FAST, HERE, write_config

from codemode import CodeMode, Registry
from codemode.cli import main
from codemode.mcp import mcp_tools, parse_config
from codemode.mcp.cache import FORMAT, VERSION, ToolListStore, cache_key

pytestmark = pytest.mark.anyio
MARKER_SERVER = str(HERE / "marker_server.py")
REPO = Path(__file__).resolve().parents[3]


def marker_entry(tmp: Path, name: str, tools: list[str] | None = None, *extra: str) -> dict:
    args = [MARKER_SERVER, str(tmp / f"{name}.started"), *extra]
    if tools is not None:
        listing = tmp / f"{name}.tools.json"
        listing.write_text(json.dumps(tools), encoding="utf-8")
        args += ["--tools", str(listing)]
    return {"command": sys.executable, "args": args}


def starts(tmp: Path, name: str) -> int:
    marker = tmp / f"{name}.started"
    return len(marker.read_text(encoding="utf-8").splitlines()) if marker.exists() else 0


def two_servers(tmp: Path) -> Path:
    return write_config(tmp / "mcp.json", {"a": marker_entry(tmp, "a"), "b": marker_entry(tmp, "b", ["ping", "pong"])})


def load_and(registry: Registry, config: Path, stderr: io.StringIO | None = None, **options):
    return mcp_tools(registry, [str(config)], limits=FAST, stderr=stderr, **options)


async def test_a_second_load_starts_no_server_and_has_the_same_tools(tmp_path: Path) -> None:
    config = two_servers(tmp_path)
    first = Registry(mode="code")
    async with load_and(first, config) as provider:
        assert provider.from_cache == set()
        sdk_first = CodeMode(first).sdk()
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)

    second = Registry(mode="code")
    async with load_and(second, config) as provider:
        assert provider.from_cache == {"a", "b"}
        assert sorted(d.name for d in second.visible()) == ["a__echo", "b__ping", "b__pong"]
        mode = CodeMode(second)
        assert mode.sdk().text == sdk_first.text  # byte-identical SDK text from the cache
        run = await mode.run("print(1 + 1)")
        assert run.text == "2"
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)


async def test_a_tool_call_starts_exactly_its_server(tmp_path: Path) -> None:
    config = two_servers(tmp_path)
    async with load_and(Registry(mode="code"), config):
        pass
    registry = Registry(mode="code")
    async with load_and(registry, config) as provider:
        run = await CodeMode(registry).run("print(await tools.b__pong(text='hi'))")
        assert run.text == "pong:hi"
        assert provider.servers["b"].connected and not provider.servers["a"].connected
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 2)


async def test_a_server_that_disagrees_with_its_cached_list_is_noticed_and_followed(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"m": marker_entry(tmp_path, "m", ["echo", "gone"])})
    async with load_and(Registry(mode="code"), config):
        pass
    (tmp_path / "m.tools.json").write_text(json.dumps(["echo", "fresh"]), encoding="utf-8")

    registry, err = Registry(mode="code"), io.StringIO()
    async with load_and(registry, config, err) as provider:
        assert "m__gone" in {d.name for d in registry.visible()}  # built from the cached list
        run = await CodeMode(registry).run("print(await tools.m__echo(text='x'))")
        assert run.text == "echo:x"
        with anyio.fail_after(20):
            while "m__fresh" not in provider.upstream:
                await anyio.sleep(0.05)
        names = {d.name for d in registry.visible()}
        assert "m__fresh" in names and "m__gone" not in names
    notices = [line for line in err.getvalue().splitlines() if "cached list" in line]
    assert notices == [
        "codemode: warning: MCP server 'm' now lists other tools than its cached list (1 added, 1 removed); "
        "this run's SDK was built from the cached list, and the next run uses the new one"
    ]

    third = Registry(mode="code")
    async with load_and(third, config) as provider:
        assert provider.from_cache == {"m"}
        assert {d.name for d in third.visible()} == {"m__echo", "m__fresh"}
    assert starts(tmp_path, "m") == 2


async def test_a_new_server_version_with_other_tools_is_named_in_the_notice(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"m": marker_entry(tmp_path, "m", ["echo"])})
    listing = tmp_path / "m.tools.json"
    listing.write_text(json.dumps({"version": "1.0", "tools": ["echo"]}), encoding="utf-8")
    async with load_and(Registry(mode="code"), config):
        pass
    # Upgraded in place (same command and arguments, so the same key): version 2.0 has one more tool.
    listing.write_text(json.dumps({"version": "2.0", "tools": ["echo", "more"]}), encoding="utf-8")
    registry, err = Registry(mode="code"), io.StringIO()
    async with load_and(registry, config, err) as provider:
        assert provider.from_cache == {"m"}
        await CodeMode(registry).run("await tools.m__echo(text='x')")
        with anyio.fail_after(20):
            while "m__more" not in provider.upstream:
                await anyio.sleep(0.05)
    assert "(1 added; version 2.0, the list was cached from 1.0)" in err.getvalue()


async def test_a_server_that_agrees_says_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"m": marker_entry(tmp_path, "m")})
    async with load_and(Registry(mode="code"), config):
        pass
    registry, err = Registry(mode="code"), io.StringIO()
    async with load_and(registry, config, err) as provider:
        await CodeMode(registry).run("await tools.m__echo(text='x')")
        with anyio.fail_after(20):
            while provider.servers["m"].unverified:
                await anyio.sleep(0.05)
    assert err.getvalue() == ""


async def test_list_changed_rewrites_the_cached_list(tmp_path: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"dyn": {"command": sys.executable,
                                                          "args": [DYNAMIC, "dyn", "--legacy", "--no-resources"]}})
    registry = Registry(mode="code")
    async with load_and(registry, config) as provider:
        await CodeMode(registry).run("await tools.dyn__grow(name='sprout')")
        with anyio.fail_after(20):
            while "dyn__sprout" not in provider.upstream:
                await anyio.sleep(0.05)
    later = Registry(mode="code")
    async with load_and(later, config) as provider:
        assert provider.from_cache == {"dyn"}
        assert "dyn__sprout" in {d.name for d in later.visible()}


async def test_refresh_lists_every_server_live(tmp_path: Path) -> None:
    config = two_servers(tmp_path)
    async with load_and(Registry(mode="code"), config):
        pass
    (tmp_path / "b.tools.json").write_text(json.dumps(["ping"]), encoding="utf-8")
    registry = Registry(mode="code")
    async with load_and(registry, config, refresh=True) as provider:
        assert provider.from_cache == set()
        assert {d.name for d in registry.visible()} == {"a__echo", "b__ping"}
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (2, 2)
    async with load_and(Registry(mode="code"), config) as provider:  # the refreshed list was stored
        assert set(provider.upstream) == {"a__echo", "b__ping"}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "not valid JSON"),
        (json.dumps({"format": "something.else", "version": 1}).encode(), "not a codemode tool list"),
        (json.dumps({"format": FORMAT, "version": 99}).encode(), "format version 99, this codemode reads 1"),
        ("KEY", "written for another server configuration"),
        ("BADTOOL", "a tool in it is not a valid MCP tool"),
    ],
)
async def test_a_corrupt_or_foreign_cache_file_is_ignored_with_one_warning(
    tmp_path: Path, tool_cache: Path, content: bytes | str, problem: str
) -> None:
    config = write_config(tmp_path / "mcp.json", {"m": marker_entry(tmp_path, "m")})
    server = parse_config(json.loads(config.read_text()))["m"]
    path = ToolListStore(tool_cache).path(server)
    path.parent.mkdir(parents=True, exist_ok=True)
    if content == "KEY":
        content = json.dumps({"format": FORMAT, "version": VERSION, "key": "0" * 64, "server": {}, "tools": []}).encode()
    elif content == "BADTOOL":
        content = json.dumps({"format": FORMAT, "version": VERSION, "key": cache_key(server), "server": {},
                              "tools": [{"name": 3}]}).encode()
    path.write_bytes(content)  # type: ignore[arg-type]

    registry, err = Registry(mode="code"), io.StringIO()
    async with load_and(registry, config, err) as provider:
        assert provider.from_cache == set()
        assert "m__echo" in {d.name for d in registry.visible()}
    assert err.getvalue() == (
        f"codemode: warning: ignoring the cached tool list of MCP server 'm' ({path}: {problem}); it is listed live\n"
    )
    assert starts(tmp_path, "m") == 1
    assert json.loads(path.read_text())["format"] == FORMAT  # rewritten whole
    async with load_and(Registry(mode="code"), config) as provider:
        assert provider.from_cache == {"m"}


async def test_a_cache_file_others_can_write_is_not_believed(tmp_path: Path, tool_cache: Path) -> None:
    config = write_config(tmp_path / "mcp.json", {"m": marker_entry(tmp_path, "m")})
    async with load_and(Registry(mode="code"), config):
        pass
    (file,) = tool_cache.glob("*.json")
    file.chmod(0o666)
    err = io.StringIO()
    async with load_and(Registry(mode="code"), config, err) as provider:
        assert provider.from_cache == set()
    assert "writable by other users" in err.getvalue()


async def test_an_unwritable_cache_directory_costs_one_warning(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    config = two_servers(tmp_path)
    registry, err = Registry(mode="code"), io.StringIO()
    async with load_and(registry, config, err, cache=blocker / "cache") as provider:
        assert provider.from_cache == set()
        assert len(registry.visible()) == 3
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("codemode: warning: cannot write MCP tool lists to ")


async def test_no_cache_starts_every_server(tmp_path: Path, tool_cache: Path) -> None:
    config = two_servers(tmp_path)
    for _ in range(2):
        async with load_and(Registry(mode="code"), config, cache=False):
            pass
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (2, 2)
    assert not tool_cache.exists()


def test_the_cache_file_holds_no_command_line_or_environment_value(tmp_path: Path, tool_cache: Path) -> None:
    entry = marker_entry(tmp_path, "m")
    entry["env"] = {"SECRET_TOKEN": "hunter2-value"}
    config = write_config(tmp_path / "mcp.json", {"m": entry})
    out, err = io.StringIO(), io.StringIO()
    assert main(["tools", "--mcp-config", str(config)], stdout=out, stderr=err) == 0
    (file,) = tool_cache.glob("*.json")
    text = file.read_text(encoding="utf-8")
    assert "hunter2" not in text and "SECRET_TOKEN" not in text and MARKER_SERVER not in text
    assert file.stat().st_mode & 0o077 == 0 and tool_cache.stat().st_mode & 0o077 == 0
    changed = dict(entry, env={"OTHER": "x"})  # another environment name: another key
    assert cache_key(parse_config({"mcpServers": {"m": changed}})["m"]) != cache_key(
        parse_config({"mcpServers": {"m": entry}})["m"])


def test_cli_run_twice_starts_the_servers_once_and_refresh_tools_again(tmp_path: Path) -> None:
    config = two_servers(tmp_path)
    program = tmp_path / "p.py"
    program.write_text("print('hi')\n", encoding="utf-8")
    argv = ["run", str(program), "--backend", "inprocess", "--mcp-config", str(config)]
    for _ in range(2):
        out, err = io.StringIO(), io.StringIO()
        assert main(argv, stdout=out, stderr=err) == 0, err.getvalue()
        assert out.getvalue() == "hi\n"
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)
    out, err = io.StringIO(), io.StringIO()
    assert main(["sdk", "--mcp-config", str(config)], stdout=out, stderr=err) == 0
    assert "async def b__pong(" in out.getvalue()
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)
    assert main([*argv, "--refresh-tools"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (2, 2)


def test_cli_tool_cache_option_names_the_directory(tmp_path: Path, tool_cache: Path) -> None:
    config = two_servers(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    assert main(["tools", "--mcp-config", str(config), "--tool-cache", str(elsewhere)],
                stdout=io.StringIO(), stderr=io.StringIO()) == 0
    assert len(list(elsewhere.glob("*.json"))) == 2 and not tool_cache.exists()


def test_cache_options_without_mcp_config_warn(tmp_path: Path) -> None:
    err = io.StringIO()
    assert main(["tools", "--refresh-tools", "--tool-cache", str(tmp_path)], stdout=io.StringIO(), stderr=err) == 0
    assert err.getvalue().splitlines() == [
        "codemode: warning: --tool-cache has no effect without --mcp-config",
        "codemode: warning: --refresh-tools has no effect without --mcp-config",
    ]


async def test_mcp_serve_starts_only_the_servers_a_run_calls(tmp_path: Path) -> None:
    config = two_servers(tmp_path)
    async with load_and(Registry(mode="code"), config):
        pass  # the first load, which fills the cache
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codemode.mcp", "serve", "--mcp-config", str(config), "--backend", "inprocess", "--sdk", "full"],
        cwd=str(REPO),
        env=dict(os.environ),  # the SDK's default environment would drop CODEMODE_TOOL_CACHE
    )
    with anyio.fail_after(60):
        async with Client(params) as client:
            listed = await client.list_tools()
            assert "async def b__pong(" in listed.tools[0].description
            assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)
            result = await client.call_tool("run_code", {"code": "print(await tools.a__echo(text='z'))",
                                                         "description": "Echo"})
            assert not result.is_error and result.content[0].text == "echo:z"
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (2, 1)


def test_with_every_list_cached_the_mcp_sdk_is_not_even_imported(tmp_path: Path, tool_cache: Path) -> None:
    config = two_servers(tmp_path)
    program = tmp_path / "p.py"
    program.write_text("print('hi')\n", encoding="utf-8")
    probe = (
        "import io, sys\n"
        "from codemode.cli import main\n"
        f"argv = ['run', {str(program)!r}, '--backend', 'inprocess', '--mcp-config', {str(config)!r}]\n"
        "out = io.StringIO()\n"
        "assert main(argv, stdout=out, stderr=io.StringIO()) == 0 and out.getvalue() == 'hi\\n'\n"
        "print(sorted(m for m in ('mcp', 'mcp_types') if m in sys.modules))\n"
    )
    env = dict(os.environ, CODEMODE_TOOL_CACHE=str(tool_cache))
    first = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert first.stdout.strip() == "['mcp', 'mcp_types']", first.stderr  # it had to list the servers
    again = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert again.stdout.strip() == "[]", again.stderr
    assert (starts(tmp_path, "a"), starts(tmp_path, "b")) == (1, 1)
