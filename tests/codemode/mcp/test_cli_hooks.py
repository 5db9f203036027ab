"""The CLI hooks: --mcp-config on any command, parse_http, mcp serve's exit codes; public API."""

from __future__ import annotations

import argparse
import inspect
import io
import sys
from pathlib import Path

import pytest
from mcpkit import server_entry, write_config

import codemode.mcp
from codemode import CodeMode, Registry
from codemode.cli.mcp import add_mcp_parser, main, mcp_serve_main, with_mcp_tools
from codemode.cli.options import add_mcp_config_option
from codemode.mcp.options import parse_http


def test_public_api_matches_all() -> None:
    for name in codemode.mcp.__all__:
        getattr(codemode.mcp, name)  # the SDK-backed names load on first access
    public = {n for n, o in vars(codemode.mcp).items() if not n.startswith("_") and not inspect.ismodule(o)}
    assert public - {"Any", "import_module"} == set(codemode.mcp.__all__)
    assert len(codemode.mcp.__all__) == len(set(codemode.mcp.__all__))
    for name in codemode.mcp.__all__:
        obj = getattr(codemode.mcp, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "codemode.mcp", name


def test_the_cli_options_do_not_import_the_sdk() -> None:
    import subprocess

    code = (
        "import argparse, sys\n"
        "from codemode.cli.mcp import add_mcp_parser\n"
        "from codemode.cli.options import add_mcp_config_option\n"
        "from codemode.mcp import load_config\n"
        "p = argparse.ArgumentParser(); add_mcp_config_option(p)\n"
        "add_mcp_parser(argparse.ArgumentParser().add_subparsers())\n"
        "print('mcp' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("value", "expected"),
    [("8000", ("127.0.0.1", 8000)), (":0", ("127.0.0.1", 0)), ("0.0.0.0:9", ("0.0.0.0", 9)), ("[::1]:80", ("::1", 80))],
)
def test_parse_http(value: str, expected: tuple[str, int]) -> None:
    assert parse_http(value) == expected


@pytest.mark.parametrize("value", ["host:", "host:http", "1:70000"])
def test_parse_http_refuses(value: str) -> None:
    with pytest.raises(ValueError, match="--http expects HOST:PORT"):
        parse_http(value)


def test_with_mcp_tools_registers_for_the_call_only(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_mcp_config_option(parser)
    config = write_config(tmp_path / "mcp.json", {"up": server_entry(), "off": {"command": "x", "disabled": True}})
    args = parser.parse_args(["--mcp-config", str(config), "--mcp-timeout", "5"])
    registry = Registry(mode="code")
    mode = CodeMode(registry, backend="inprocess")
    text = with_mcp_tools(args, registry, lambda: mode.sdk().text)
    assert "async def up__add(" in text and "async def up__shout(" in text
    assert registry.get("up__add") is None  # gone once the servers stopped
    assert with_mcp_tools(parser.parse_args([]), registry, lambda: "plain") == "plain"


def test_config_errors_exit_2_naming_every_problem(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    add_mcp_parser(parser.add_subparsers(dest="command"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"mcpServers": {"a": {}, "b": {"url": "ftp://x"}}}', encoding="utf-8")
    err = io.StringIO()
    args = parser.parse_args(["mcp", "serve", "--root", str(tmp_path), "--mcp-config", str(bad)])
    assert mcp_serve_main(args, stderr=err) == 2
    assert err.getvalue() == (
        f"codemode: error: invalid MCP configuration {bad}:\n"
        "- server 'a': needs a command (stdio) or a url (streamable HTTP)\n"
        "- server 'b': url must start with http:// or https://\n"
    )
    err = io.StringIO()
    args = parser.parse_args(["mcp", "serve", "--http", "nope:x"])
    assert mcp_serve_main(args, stderr=err) == 2
    assert "--http expects HOST:PORT" in err.getvalue()


def test_same_server_in_two_files_is_an_error(tmp_path: Path) -> None:
    one = write_config(tmp_path / "one.json", {"up": server_entry()})
    two = write_config(tmp_path / "two.json", {"up": server_entry()})
    parser = argparse.ArgumentParser()
    add_mcp_config_option(parser)
    args = parser.parse_args(["--mcp-config", str(one), "--mcp-config", str(two)])
    with pytest.raises(ValueError, match=f"server 'up' is defined in both {one} and {two}"):
        with_mcp_tools(args, Registry(), lambda: None)


def test_module_entry_point_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    assert "--mcp-config FILE" in capsys.readouterr().out
