"""The ``codemode`` command: run/sdk/tools/check, options, record/replay, --json, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bridgekit import cli

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("# TODO one\n# FIXME two\n")
    (root / "notes.md").write_text("TODO three\n")
    return root


def snippet(tmp_path: Path, text: str, name: str = "s.py") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


BACKEND = ("--backend", "inprocess")


def test_run_prints_what_the_model_would_read(ws: Path, tmp_path: Path) -> None:
    file = snippet(tmp_path, 'r = await tools.grep(pattern="TODO")\nprint(len(r["matches"]))\nreturn "ok"')
    assert cli("run", file, "--root", str(ws), *BACKEND) == (0, "2\nok\n", "")


def test_run_from_stdin_with_json_output(ws: Path) -> None:
    code, out, err = cli("run", "-", "--root", str(ws), "--json", *BACKEND, stdin='return (await tools.stat(path="notes.md"))["size"]')
    assert code == 0 and err == ""
    payload = json.loads(out)
    assert set(payload) == {"ok", "result", "logs", "error", "calls", "attachments", "sdk_hash", "jail"}
    assert payload["attachments"] == []
    assert payload["ok"] is True and payload["result"] == 11 and payload["error"] is None
    assert payload["jail"] == "none"  # the in-process backend has no jail
    assert [(c["id"], c["name"], c["arguments"], c["is_error"]) for c in payload["calls"]] == [
        ("cli:code:1", "stat", {"path": "notes.md"}, False)
    ]
    assert len(payload["sdk_hash"]) == 64


def test_failed_run_exits_1_and_names_the_file(ws: Path, tmp_path: Path) -> None:
    file = snippet(tmp_path, 'print("first")\nx = 1 / 0\n', "bad.py")
    code, out, err = cli("run", file, "--root", str(ws), *BACKEND)
    assert code == 1 and out == "first\n"
    assert err.startswith(f"{file}: Error: code run failed (exception): ")
    assert "line 2" in err
    code, out, _ = cli("run", file, "--root", str(ws), "--json", *BACKEND)
    payload = json.loads(out)
    assert code == 1 and payload["ok"] is False and payload["error"]["kind"] == "exception" and payload["logs"] == ["first"]


def test_preflight_and_no_preflight(ws: Path, tmp_path: Path) -> None:
    file = snippet(tmp_path, 'await tools.gerp(pattern="x")')
    code, _, err = cli("run", file, "--root", str(ws), *BACKEND)
    assert code == 1 and "(preflight)" in err and "line 1, col 7: unknown tool 'gerp'" in err
    code, _, err = cli("run", file, "--root", str(ws), "--no-preflight", *BACKEND)
    assert code == 1 and "(exception)" in err and "did you mean 'grep'?" in err


def test_limits_from_options(ws: Path, tmp_path: Path) -> None:
    many = snippet(tmp_path, 'for i in range(3):\n    await tools.stat(path="notes.md")')
    code, _, err = cli("run", many, "--root", str(ws), "--max-tool-calls", "2", *BACKEND)
    assert code == 1 and "(call-limit)" in err
    slow = snippet(tmp_path, "import asyncio\nawait asyncio.sleep(5)", "slow.py")
    code, _, err = cli("run", slow, "--root", str(ws), "--timeout", "0.2", *BACKEND)
    assert code == 1 and "(timeout)" in err


def test_trace_prints_a_tree_on_stderr(ws: Path, tmp_path: Path) -> None:
    file = snippet(tmp_path, 'import asyncio\ntry:\n    await tools.read_file(path="../x")\nexcept ToolCallError:\n    pass\nawait tools.stat(path="notes.md")')
    code, _, err = cli("run", file, "--root", str(ws), "--trace", *BACKEND)
    lines = err.splitlines()
    assert code == 0
    assert lines[0].startswith("run_code cli ") and lines[0].endswith(" ok")
    assert lines[1].startswith('├─ 1 read_file({"path": "../x"}) ') and "error: read_file failed: WorkspaceError: path '../x' is outside" in lines[1]
    assert lines[2].startswith('└─ 2 stat({"path": "notes.md"}) ') and lines[2].endswith(" ok")


def test_record_then_replay_and_mismatch(ws: Path, tmp_path: Path) -> None:
    file = snippet(tmp_path, 'r = await tools.grep(pattern="TODO")\nreturn [m["path"] for m in r["matches"]]')
    rec = tmp_path / "calls.jsonl"
    code, live, _ = cli("run", file, "--root", str(ws), "--record", str(rec), *BACKEND)
    assert code == 0
    (line,) = [json.loads(x) for x in rec.read_text().splitlines()]
    assert line["id"] == "cli:code:1" and line["name"] == "grep" and line["value"]["matches"]
    (ws / "notes.md").unlink()  # replay must not touch the tools
    assert cli("run", file, "--root", str(ws), "--replay", str(rec), *BACKEND) == (0, live, "")
    other = snippet(tmp_path, 'await tools.grep(pattern="FIXME")', "other.py")
    code, _, err = cli("run", other, "--root", str(ws), "--replay", str(rec), *BACKEND)
    assert code == 1
    assert "replay mismatch at sub-call 1: the recording has grep({\"pattern\": \"TODO\"}), the run made grep({\"pattern\": \"FIXME\"})" in err
    twice = snippet(tmp_path, 'await tools.grep(pattern="TODO")\nawait tools.grep(pattern="TODO")', "twice.py")
    code, _, err = cli("run", twice, "--root", str(ws), "--replay", str(rec), *BACKEND)
    assert code == 1 and "the recording has no more calls" in err


def test_usage_errors_exit_2(ws: Path, tmp_path: Path) -> None:
    assert cli("run", str(tmp_path / "missing.py"), *BACKEND)[0] == 2
    assert cli("run", "-", "--root", str(tmp_path / "nope"), stdin="x = 1")[0] == 2
    assert cli("run", "-", "--tools", "no.such.module", stdin="x = 1")[0] == 2
    assert cli("run", "-", "--timeout", "0", "--root", str(ws), stdin="x = 1")[0] == 2
    assert cli("run", "-", "--record", "a", "--replay", "b")[0] == 2
    assert cli("bogus")[0] == 2
    assert cli("run", "-", "--replay", str(tmp_path / "none.jsonl"), stdin="x = 1")[0] == 2


def test_sdk_tools_and_check(ws: Path, tmp_path: Path) -> None:
    code, out, _ = cli("sdk", "--root", str(ws))
    assert code == 0 and "async def grep(" in out and "write_file" not in out
    code, digest, _ = cli("sdk", "--root", str(ws), "--hash")
    assert code == 0 and len(digest.strip()) == 64
    assert "write_file" in cli("sdk", "--root", str(ws), "--allow-write")[1]
    code, out, _ = cli("tools", "--root", str(ws))
    assert code == 0 and [line.split(":")[0] for line in out.splitlines()] == ["glob", "grep", "list_dir", "read_file", "stat"]
    good = snippet(tmp_path, 'await tools.grep(pattern="x")', "good.py")
    assert cli("check", good, "--root", str(ws)) == (0, f"{good}: ok\n", "")
    bad = snippet(tmp_path, 'x = 1\nawait tools.grep(patern="x")', "bad.py")
    code, out, _ = cli("check", bad, "--root", str(ws))
    assert code == 1 and out.startswith(f"{bad}:2:7: missing-argument: ")


def test_check_and_run_report_a_refused_import_and_an_unawaited_gather(ws: Path, tmp_path: Path) -> None:
    importing = snippet(tmp_path, "import os\nprint(os.listdir('.'))", "importing.py")
    code, out, _ = cli("check", importing, "--root", str(ws))
    assert code == 1 and out.startswith(
        f"{importing}:1:1: import-not-allowed: module 'os' is not available in the sandbox; use the tools "
        "for what it would do, or one of the allowed modules: abc, asyncio, base64,"
    )
    code, out, err = cli("run", importing, "--root", str(ws), *BACKEND)
    assert code == 1 and "(preflight)" in err and "module 'os' is not available in the sandbox; use the tools" in err
    gathered = snippet(tmp_path, "rs = asyncio.gather(tools.grep(pattern='a'), tools.stat(path='.'))\nprint(rs)", "g.py")
    code, out, _ = cli("check", gathered, "--root", str(ws))
    assert (code, out) == (1, f"{gathered}:1:6: not-awaited: asyncio.gather(...) is not awaited but its result is used "
                              "on line 2; write `await asyncio.gather(...)`\n")
    code, out, err = cli("run", gathered, "--root", str(ws), *BACKEND)
    assert code == 1 and "_GatheringFuture" not in out + err and "(preflight)" in err
    assert "asyncio.gather(...) is not awaited but its result is used on line 2" in err


def test_tools_plugin_file(tmp_path: Path) -> None:
    plugin = tmp_path / "plug.py"
    plugin.write_text(
        "from codemode import define_tool\n"
        "async def hello(args, ctx):\n    return 'hi ' + args['who']\n"
        "def apply(registry):\n"
        "    registry.register(define_tool(name='hello', description='Greet.', parameters={'who': {'type': 'string', 'required': True}},"
        " output={'schema': {'type': 'string'}}, execute=hello))\n"
    )
    assert cli("tools", "--tools", str(plugin)) == (0, "hello: Greet.\n", "")
    assert cli("run", "-", "--tools", str(plugin), *BACKEND, stdin='return await tools.hello(who="you")') == (0, "hi you\n", "")


@pytest.mark.timeout(900)
def test_main_job_command_on_this_repository_with_the_worker_backend() -> None:
    # The repository holds whatever virtual environment CI made in it (tens of thousands of
    # files the report globs and greps): 26 s of a default 30 s run on a busy 2-core machine.
    # This test is about the main job working, so the run gets room for a much slower machine.
    code, out, err = cli("run", str(REPO / "examples" / "todo_report.py"), "--root", str(REPO), "--timeout", "300")
    assert code == 0, err
    assert " markers (" in out.splitlines()[0] and " files" in out.splitlines()[0]


def test_a_tool_result_with_a_lone_surrogate_is_printed_traced_and_recorded(tmp_path: Path) -> None:
    plugin = tmp_path / "plug.py"
    plugin.write_text(
        "from codemode import define_tool\n"
        "async def hello(args, ctx):\n    return [{'type': 'text', 'text': 'hi \\udc80' + args['who']}]\n"
        "def apply(registry):\n"
        "    registry.register(define_tool(name='hello', description='Greet.', parameters={'who': {'type': 'string', 'required': True}},"
        " execute=hello))\n"
    )
    rec = tmp_path / "calls.jsonl"
    snippet_text = 'return await tools.hello(who="\\udfff")'
    code, out, err = cli("run", "-", "--tools", str(plugin), "--trace", "--record", str(rec), *BACKEND, stdin=snippet_text)
    assert (code, out) == (0, "hi \\udc80\\udfff\n")
    assert err.startswith("run_code cli ") and '1 hello({"who": "\\\\udfff"})' in err
    (record,) = [json.loads(line) for line in rec.read_text(encoding="utf-8").splitlines()]
    assert record["arguments"] == {"who": "\\udfff"}
    replayed = cli("run", "-", "--tools", str(plugin), "--replay", str(rec), *BACKEND, stdin=snippet_text)
    assert replayed[0] == 0
