"""The ``{"mcpServers": ...}`` file: accepted shapes, expansion, every problem listed, masking."""

from __future__ import annotations

import json

import pytest

from codemode.mcp import (
    DEFAULT_UPSTREAM_LIMITS,
    McpConfigError,
    UpstreamLimits,
    load_config,
    parse_config,
)


def test_stdio_and_http_entries_in_file_order() -> None:
    servers = parse_config(
        {
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-fs", "/tmp"], "env": {"A": "1"}, "autoApprove": []},
                "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
                "off": {"command": "nope", "disabled": True},
            }
        }
    )
    assert list(servers) == ["fs", "remote"]
    fs, remote = servers["fs"], servers["remote"]
    assert (fs.transport, fs.command, fs.args, dict(fs.env)) == ("stdio", "npx", ("-y", "server-fs", "/tmp"), {"A": "1"})
    assert (remote.transport, remote.url, dict(remote.headers)) == ("http", "https://example.com/mcp", {"Authorization": "Bearer x"})


def test_codemode_keys_timeout_and_concurrency() -> None:
    s = parse_config({"mcpServers": {"a": {"command": "x", "timeout": 2.5, "concurrencySafe": True}}})["a"]
    assert (s.timeout, s.concurrency_safe) == (2.5, True)


def test_vscode_servers_key_is_accepted() -> None:
    assert list(parse_config({"servers": {"a": {"url": "http://127.0.0.1:1/mcp"}}})) == ["a"]


def test_environment_expansion_with_default() -> None:
    s = parse_config(
        {"mcpServers": {"a": {"command": "${BIN}", "args": ["--k=${KEY}", "${MISSING:-dflt}"], "env": {"T": "${KEY}"}}}},
        environ={"BIN": "srv", "KEY": "s3cret"},
    )["a"]
    assert (s.command, s.args, dict(s.env)) == ("srv", ("--k=s3cret", "dflt"), {"T": "s3cret"})


def test_every_problem_is_listed_with_its_server() -> None:
    with pytest.raises(McpConfigError) as info:
        parse_config(
            {
                "mcpServers": {
                    "both": {"command": "x", "url": "http://h/mcp"},
                    "none": {"args": []},
                    "badargs": {"command": "x", "args": "oops"},
                    "badurl": {"url": "ftp://h"},
                    "sse": {"type": "sse", "url": "http://h/sse"},
                    "t": {"command": "x", "timeout": 0},
                    "var": {"command": "${NOPE}"},
                }
            },
            source="cfg.json",
            environ={},
        )
    err = info.value
    assert err.problems == [
        "server 'both': give either a command (stdio) or a url (HTTP), not both",
        "server 'none': needs a command (stdio) or a url (streamable HTTP)",
        "server 'badargs': args must be a list of strings",
        "server 'badurl': url must start with http:// or https://",
        "server 'sse': type 'sse' is not supported (use \"stdio\" with a command, or \"http\" with a url)",
        "server 't': timeout must be a number of seconds > 0, got 0",
        "server 'var': command: environment variable NOPE is not set",
    ]
    assert str(err).startswith("invalid MCP configuration cfg.json:\n- server 'both'")


def test_shape_errors() -> None:
    with pytest.raises(McpConfigError, match="expected a JSON object"):
        parse_config([])
    with pytest.raises(McpConfigError, match='"mcpServers" object'):
        parse_config({"other": {}})


def test_load_config_reports_missing_and_bad_files(tmp_path) -> None:
    with pytest.raises(McpConfigError, match="cannot read the file"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(McpConfigError, match="not JSON"):
        load_config(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}), encoding="utf-8")
    assert list(load_config(good)) == ["a"]


def test_repr_masks_secrets() -> None:
    servers = parse_config(
        {
            "mcpServers": {
                "a": {"command": "srv", "env": {"TOKEN": "s3cret"}},
                "b": {"url": "https://user:pw@h/mcp?key=s3cret", "headers": {"Authorization": "s3cret"}},
            }
        }
    )
    text = repr(servers)
    assert "s3cret" not in text and "pw" not in text
    assert "'TOKEN': '***'" in text and "'Authorization': '***'" in text


def test_limits_defaults_and_validation() -> None:
    assert DEFAULT_UPSTREAM_LIMITS == UpstreamLimits()
    assert repr(DEFAULT_UPSTREAM_LIMITS) == "UpstreamLimits(call_timeout=60, connect_timeout=30, ping_timeout=5)"
    with pytest.raises(ValueError, match="call_timeout must be a finite number of seconds > 0, got -1"):
        UpstreamLimits(call_timeout=-1)
    with pytest.raises(ValueError, match="ping_timeout"):
        UpstreamLimits(ping_timeout=float("inf"))


def test_load_config_reports_numbers_and_nesting_no_reader_takes(tmp_path) -> None:
    big = tmp_path / "big.json"
    big.write_text('{"mcpServers": {"a": {"command": "x", "timeout": ' + "9" * 5000 + "}}}", encoding="utf-8")
    with pytest.raises(McpConfigError) as caught:
        load_config(big)
    assert str(caught.value) == (
        f"invalid MCP configuration {big}: not JSON: an integer of 5000 digits is longer than JSON numbers "
        "here may be; send it as a string"
    )
