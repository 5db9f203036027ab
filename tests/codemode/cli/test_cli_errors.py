"""Every bad input to the ``codemode`` command: its exit code, its one line, never a traceback.

The table below is the contract of docs/codemode.md ("Exit codes and error kinds"): 0 success,
1 the run (or check) failed, 2 usage, input or configuration error, 130 interrupted. Each case
runs the command in-process (``main``), except where a real process is the point (stdin bytes,
Ctrl-C, ``python -m codemode``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import pytest

from codemode.cli import main

REPO = Path(__file__).resolve().parents[3]
INPROCESS = ("--backend", "inprocess")


def run_cli(*argv: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """``main`` with a byte stdin (it has a ``buffer``, as a real one does)."""
    out, err = io.StringIO(), io.StringIO()
    inp = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="surrogateescape")
    code = main(list(argv), stdout=out, stderr=err, stdin=inp)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """The inputs of the table, in ``tmp_path``."""
    (tmp_path / "ws").mkdir()
    (tmp_path / "ok.py").write_text("print(1)\n")
    (tmp_path / "binary.py").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\xd0\xff")
    (tmp_path / "latin1.py").write_bytes('print("café")\n'.encode("latin-1"))
    (tmp_path / "empty.py").write_bytes(b"")
    (tmp_path / "blank.py").write_text("  \n\t\n")
    (tmp_path / "syntax.py").write_text("x = 1\ny = (\n")
    (tmp_path / "policy.py").write_text("x = (lambda: 0).__globals__\n")
    (tmp_path / "nul.py").write_bytes(b"x = 1\x00\n")
    (tmp_path / "writes.py").write_text('await tools.write_file(path="made.txt", content="x")\n')
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbfprint('bom')\n")
    (tmp_path / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (tmp_path / "latin1.json").write_bytes('{"mcpServers": {"caf\xe9": {"command": "x"}}}'.encode("latin-1"))
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "notjson.json").write_text("{mcpServers: 1}")
    (tmp_path / "noservers.json").write_text('{"servers": 3}')
    (tmp_path / "badserver.json").write_text('{"mcpServers": {"a": {}}}')
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    (tmp_path / "notrecord.jsonl").write_text('{"x": 1}\n')
    (tmp_path / "rec.jsonl").write_text(
        '{"name": "stat", "arguments": {"path": "a"}, "status": "ok", "is_error": false, "content": [{"type": "text", "text": "x"}]}\n'
    )
    (tmp_path / "other.py").write_text('await tools.glob(pattern="*")\n')
    return tmp_path


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    code: int
    line: str  # the last line of stderr, exactly ({t} is the tmp directory)
    stdin: bytes = b""
    usage: str = ""  # for a command-line error: the usage it starts with


def case(*argv: str, code: int, line: str, stdin: bytes = b"", usage: str = "", id: str) -> object:
    return pytest.param(Case(argv, code, line, stdin, usage), id=id)


def arg(command: str, flag: str, value: str, expected: str, id: str, *extra: str) -> object:
    """A bounded number given out of bounds: argparse names the flag; the usage is the command's."""
    line = f"codemode {command}: error: argument {flag}: {expected}, got {value!r}"
    return case(*command.split(), *extra, flag, value, code=2, line=line, usage=f"usage: codemode {command} ", id=id)


TIMEOUT = "expected a number from 0.01 to 86400 seconds"
MEMORY = "expected a whole number from 16 to 1048576 MiB"
CALLS = "expected a whole number from 0 to 1000000"
PARALLEL = "expected a whole number from 1 to 1000"
MCP_TIMEOUT = "expected a number from 0.001 to 86400 seconds"
NOT_UTF8 = "codemode: error: cannot read {name}: it is not UTF-8 text (byte 0x{byte} at offset {offset})"

TABLE = [
    # -- the snippet: unreadable, not UTF-8, empty ------------------------------------------
    case("run", "{t}/binary.py", *INPROCESS, code=2, line=NOT_UTF8.format(name="{t}/binary.py", byte="d0", offset=9), id="run-binary-file"),
    case("check", "{t}/binary.py", code=2, line=NOT_UTF8.format(name="{t}/binary.py", byte="d0", offset=9), id="check-binary-file"),
    case("run", "{t}/latin1.py", *INPROCESS, code=2, line=NOT_UTF8.format(name="{t}/latin1.py", byte="e9", offset=10), id="run-latin1-file"),
    case("check", "{t}/latin1.py", code=2, line=NOT_UTF8.format(name="{t}/latin1.py", byte="e9", offset=10), id="check-latin1-file"),
    case("run", "-", *INPROCESS, stdin=b"\x93\x1b\xffprint(1)", code=2, line=NOT_UTF8.format(name="<stdin>", byte="93", offset=0), id="run-random-bytes-on-stdin"),
    case("check", "-", stdin=b"print('\xe9')", code=2, line=NOT_UTF8.format(name="<stdin>", byte="e9", offset=7), id="check-latin1-stdin"),
    case("run", "{t}/empty.py", *INPROCESS, code=2, line="codemode: error: {t}/empty.py is empty: there is no program to run", id="run-empty-file"),
    case("run", "{t}/blank.py", *INPROCESS, code=2, line="codemode: error: {t}/blank.py is empty: there is no program to run", id="run-blank-file"),
    case("run", "-", *INPROCESS, code=2, line="codemode: error: <stdin> is empty: there is no program to run", id="run-empty-stdin"),
    case("check", "{t}/empty.py", code=2, line="codemode: error: {t}/empty.py is empty: there is no program to check", id="check-empty-file"),
    case("run", "{t}/missing.py", *INPROCESS, code=2, line="codemode: error: cannot read {t}/missing.py: No such file or directory", id="run-missing-file"),
    case("check", "{t}/ws", code=2, line="codemode: error: cannot read {t}/ws: Is a directory", id="check-a-directory"),
    # -- a snippet the sandbox refuses: run and check agree, exit 1 --------------------------------
    case("run", "{t}/syntax.py", *INPROCESS, code=1, line="        ^", id="run-syntax-error"),
    case("check", "{t}/syntax.py", code=1, line="        ^", id="check-syntax-error"),
    case("run", "{t}/policy.py", *INPROCESS, code=1,
         line='{t}/policy.py: Error: code run failed (syntax): line 1: attribute "__globals__" is not allowed: names starting with "_" are private',
         id="run-policy-refusal"),
    case("check", "{t}/policy.py", code=1,
         line='{t}/policy.py: Error: code run failed (syntax): line 1: attribute "__globals__" is not allowed: names starting with "_" are private',
         id="check-policy-refusal"),
    case("check", "{t}/nul.py", code=1,
         line="{t}/nul.py: Error: code run failed (syntax): invalid syntax: source code string cannot contain null bytes",
         id="check-null-byte"),
    # -- --mcp-config ------------------------------------------------------------------------------
    case("tools", "--mcp-config", "{t}/binary.json", code=2,
         line="codemode: error: invalid MCP configuration {t}/binary.json: not UTF-8 text (byte 0x89 at offset 0)", id="mcp-config-binary"),
    case("run", "{t}/ok.py", *INPROCESS, "--mcp-config", "{t}/latin1.json", code=2,
         line="codemode: error: invalid MCP configuration {t}/latin1.json: not UTF-8 text (byte 0xe9 at offset 20)", id="mcp-config-latin1"),
    case("sdk", "--mcp-config", "{t}/deep.json", code=2,
         line="codemode: error: invalid MCP configuration {t}/deep.json: not a configuration: JSON nested too deeply to read",
         id="mcp-config-100000-deep"),
    case("check", "{t}/ok.py", "--mcp-config", "{t}/missing.json", code=2,
         line="codemode: error: invalid MCP configuration {t}/missing.json: cannot read the file: No such file or directory",
         id="mcp-config-missing"),
    case("tools", "--mcp-config", "{t}/noservers.json", code=2,
         line='codemode: error: invalid MCP configuration {t}/noservers.json: expected an "mcpServers" object mapping names to servers',
         id="mcp-config-without-servers"),
    case("tools", "--mcp-config", "{t}/badserver.json", code=2,
         line="codemode: error: invalid MCP configuration {t}/badserver.json: server 'a': needs a command (stdio) or a url (streamable HTTP)",
         id="mcp-config-bad-server"),
    # -- numbers, named by their flag ----------------------------------------------------------------
    arg("run", "--timeout", "nan", TIMEOUT, "timeout-nan", "{t}/ok.py"),
    arg("run", "--timeout", "inf", TIMEOUT, "timeout-inf", "{t}/ok.py"),
    arg("run", "--timeout", "1e300", TIMEOUT, "timeout-1e300", "{t}/ok.py"),
    arg("run", "--timeout", "-1", TIMEOUT, "timeout-negative", "{t}/ok.py"),
    arg("run", "--timeout", "0", TIMEOUT, "timeout-zero", "{t}/ok.py"),
    arg("run", "--timeout", "soon", TIMEOUT, "timeout-not-a-number", "{t}/ok.py"),
    arg("run", "--memory", "nan", MEMORY, "memory-nan", "{t}/ok.py"),
    arg("run", "--memory", "8", MEMORY, "memory-too-small", "{t}/ok.py"),
    arg("run", "--memory", "99999999999999", MEMORY, "memory-absurd", "{t}/ok.py"),
    arg("run", "--max-tool-calls", "-5", CALLS, "max-tool-calls-negative", "{t}/ok.py"),
    arg("run", "--max-tool-calls", "1e23", CALLS, "max-tool-calls-float", "{t}/ok.py"),
    arg("run", "--max-tool-calls", str(10**23), CALLS, "max-tool-calls-absurd", "{t}/ok.py"),
    arg("run", "--max-parallel", "0", PARALLEL, "max-parallel-zero", "{t}/ok.py"),
    arg("run", "--max-parallel", str(10**14), PARALLEL, "max-parallel-absurd", "{t}/ok.py"),
    arg("run", "--mcp-timeout", "-3", MCP_TIMEOUT, "mcp-timeout-negative-without-config", "{t}/ok.py"),
    arg("tools", "--mcp-timeout", "nan", MCP_TIMEOUT, "mcp-timeout-nan"),
    arg("mcp serve", "--max-concurrent", "0", PARALLEL, "max-concurrent-zero"),
    arg("mcp serve", "--timeout", "inf", TIMEOUT, "serve-timeout-inf"),
    # -- output paths, checked before anything runs ------------------------------------------------
    case("run", "{t}/writes.py", *INPROCESS, "--root", "{t}/ws", "--allow-write", "--record", "{t}/missing/x.jsonl", code=2,
         line="codemode: error: --record: cannot write {t}/missing/x.jsonl: No such file or directory", id="record-into-a-missing-directory"),
    case("run", "{t}/writes.py", *INPROCESS, "--root", "{t}/ws", "--allow-write", "--record", "{t}/ws", code=2,
         line="codemode: error: --record: cannot write {t}/ws: Is a directory", id="record-onto-a-directory"),
    case("mcp", "serve", "--root", "{t}/ws", "--event-log", "{t}/missing/events.jsonl", code=2,
         line="codemode: error: --event-log: cannot write {t}/missing/events.jsonl: No such file or directory", id="event-log-into-a-missing-directory"),
    # -- recordings ------------------------------------------------------------------------------------
    case("run", "{t}/ok.py", *INPROCESS, "--replay", "{t}/missing.jsonl", code=2,
         line="codemode: error: cannot read recording {t}/missing.jsonl: No such file or directory", id="replay-missing"),
    case("run", "{t}/ok.py", *INPROCESS, "--replay", "{t}/deep.jsonl", code=2,
         line="codemode: error: cannot read recording {t}/deep.jsonl: RecursionError", id="replay-100000-deep"),
    case("run", "{t}/ok.py", *INPROCESS, "--replay", "{t}/notrecord.jsonl", code=2,
         line="codemode: error: cannot read recording {t}/notrecord.jsonl: record 1 is not a recorded sub-call (an object with name, arguments, is_error and content)",
         id="replay-not-a-recording"),
    case("run", "{t}/other.py", *INPROCESS, "--root", "{t}/ws", "--replay", "{t}/rec.jsonl", code=1,
         line='{t}/other.py: Error: code run failed (replay-mismatch): replay mismatch at sub-call 1: the recording has stat({"path": "a"}), the run made glob({"pattern": "*"})',
         id="replay-mismatch"),
    # -- tools and roots ---------------------------------------------------------------------------------
    case("run", "{t}/ok.py", *INPROCESS, "--root", "{t}/nope", code=2,
         line="codemode: error: workspace root '{t}/nope' is not a directory", id="root-missing"),
    case("tools", "--tools", "no.such.module", code=2,
         line="codemode: error: plugin module 'no.such.module' cannot be imported: No module named 'no'", id="tools-missing-module"),
    # -- the command line itself ---------------------------------------------------------------------------
    case("run", "{t}/ok.py", "--bogus", code=2, line="codemode run: error: unrecognized arguments: --bogus", usage="usage: codemode run ", id="unknown-option-gets-run-usage"),
    case("mcp", "serve", "--bogus", code=2, line="codemode mcp serve: error: unrecognized arguments: --bogus", usage="usage: codemode mcp serve ", id="unknown-option-gets-serve-usage"),
    case("run", code=2, line="codemode run: error: the following arguments are required: file", usage="usage: codemode run ", id="run-without-a-file"),
    case("bogus", code=2, line="codemode: error: argument COMMAND: invalid choice: 'bogus' (choose from 'run', 'sdk', 'tools', 'doctor', 'check', 'mcp')",
         usage="usage: codemode ", id="unknown-command"),
    case("run", "-", "--record", "a", "--replay", "b", code=2,
         line="codemode run: error: argument --replay: not allowed with argument --record", usage="usage: codemode run ", id="record-and-replay"),
    case("mcp", "serve", "--root", "{t}/ws", "--http", "nope:x", code=2,
         line="codemode: error: --http expects HOST:PORT with a port from 0 to 65535, got 'nope:x'", id="http-bad-address"),
]


@pytest.mark.parametrize("c", TABLE)
def test_every_bad_input_is_one_line_with_its_exit_code(files: Path, c: Case) -> None:
    argv = [a.replace("{t}", str(files)) for a in c.argv]
    code, out, err = run_cli(*argv, stdin=c.stdin)
    expected = c.line.replace("{t}", str(files))
    assert "Traceback" not in err and "Traceback" not in out
    assert code == c.code, err
    assert err.splitlines()[-1] == expected, err
    if c.usage:  # a command-line error: the called command's usage, then the one line
        assert err.startswith(c.usage), err
        assert err.count("error:") == 1
    elif c.code == 2:
        assert err == expected + "\n"
    assert not (files / "ws" / "made.txt").exists()  # nothing ran before the error


def test_run_and_check_give_the_same_line_for_a_snippet_the_sandbox_refuses(files: Path) -> None:
    for name in ("syntax.py", "policy.py"):
        run = run_cli("run", str(files / name), *INPROCESS)
        check = run_cli("check", str(files / name))
        assert run[0] == check[0] == 1
        assert run[2] == check[2] and run[2].startswith(f"{files / name}: Error: code run failed (syntax): line ")


def test_usage_errors_under_json_are_a_json_object_on_stdout(files: Path) -> None:
    code, out, err = run_cli("run", str(files / "empty.py"), "--json", *INPROCESS)
    assert code == 2
    assert json.loads(out) == {
        "ok": False, "result": None, "logs": [], "calls": [], "attachments": [], "sdk_hash": None, "jail": None,
        "error": {"kind": "usage", "message": f"{files / 'empty.py'} is empty: there is no program to run"},
    }
    code, out, err = run_cli("run", str(files / "ok.py"), "--json", "--timeout", "nan")
    assert code == 2 and err.startswith("usage: codemode run ")
    assert json.loads(out)["error"] == {
        "kind": "usage", "message": f"codemode run: argument --timeout: {TIMEOUT}, got 'nan'"
    }


def test_a_port_in_use_is_one_line_and_exit_2(files: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        code, _, err = run_cli("mcp", "serve", "--root", str(files / "ws"), "--http", f"127.0.0.1:{port}", *INPROCESS)
    assert (code, err) == (2, f"codemode: error: cannot listen on 127.0.0.1:{port}: address already in use\n")


def test_debug_adds_the_traceback_before_the_line(files: Path) -> None:
    code, _, err = run_cli("tools", "--mcp-config", str(files / "deep.json"), "--debug")
    assert code == 2
    assert err.startswith("Traceback (most recent call last):\n") and "McpConfigError" in err
    assert err.endswith(f"codemode: error: invalid MCP configuration {files / 'deep.json'}: not a configuration: JSON nested too deeply to read\n")


def test_an_internal_error_is_one_line_exit_1(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codemode.cli import tools as cli

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the bug")

    monkeypatch.setattr(cli, "command", broken)
    code, _, err = run_cli("tools")
    assert (code, err) == (1, "codemode: error: internal error: RuntimeError: the bug (this is a bug in codemode; --debug shows the traceback)\n")


def test_an_option_the_backend_cannot_enforce_is_warned_about(files: Path) -> None:
    code, out, err = run_cli("run", str(files / "ok.py"), *INPROCESS, "--memory", "128")
    assert (code, out) == (0, "1\n")
    assert err == (
        "codemode: warning: --memory is not enforced on the inprocess backend (it cannot cap memory "
        "inside this process); use --backend worker to enforce it\n"
    )
    code, _, err = run_cli("tools", "--mcp-timeout", "5")
    assert (code, err) == (0, "codemode: warning: --mcp-timeout has no effect without --mcp-config\n")


def test_a_byte_order_mark_is_not_an_error(files: Path) -> None:
    assert run_cli("run", str(files / "bom.py"), *INPROCESS) == (0, "bom\n", "")
    assert run_cli("check", str(files / "bom.py")) == (0, f"{files / 'bom.py'}: ok\n", "")


# --- the command a Python user expects ----------------------------------------------------------


def test_version_comes_from_the_package_metadata() -> None:
    import codemode

    assert codemode.__version__ == version("codemode")
    assert run_cli("--version") == (0, f"codemode {version('codemode')}\n", "")


def test_python_dash_m_codemode_is_the_command(files: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "codemode", "run", str(files / "ok.py"), *INPROCESS],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "1\n", "")
    proc = subprocess.run([sys.executable, "-m", "codemode", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.stdout == f"codemode {version('codemode')}\n"


@pytest.mark.parametrize(("argv", "listed"), [((), ["run", "sdk", "tools", "doctor", "check", "mcp"]), (("mcp",), ["serve"])])
def test_a_command_without_its_subcommand_lists_the_subcommands(argv: tuple[str, ...], listed: list[str]) -> None:
    code, out, err = run_cli(*argv)
    assert code == 2 and out == ""
    assert err.startswith(f"usage: codemode {' '.join(argv)}".rstrip() + " ")
    assert "mcp_command" not in err and "required" not in err
    for name in listed:
        assert f"\n    {name} " in err


def _parsers() -> list[tuple[str, object]]:
    import argparse

    from codemode.cli import _parser

    found = []
    todo = [("codemode", _parser())]
    while todo:
        name, parser = todo.pop()
        found.append((name, parser))
        for action in parser._actions:  # type: ignore[attr-defined]
            if isinstance(action, argparse._SubParsersAction):
                todo.extend((f"{name} {sub}", p) for sub, p in action.choices.items())
    return found


@pytest.mark.parametrize(("name", "parser"), _parsers(), ids=[n for n, _ in _parsers()])
def test_every_argument_has_help_and_every_value_option_its_default(name: str, parser: object) -> None:
    for action in parser._actions:  # type: ignore[attr-defined]
        if action.dest in ("help", "version") or action.nargs == 0 and action.help:
            continue
        assert action.help, f"{name}: {action.dest} has no help"
        if action.option_strings and action.nargs is None and action.dest not in ("record", "replay", "http", "event_log"):
            assert "default" in action.help, f"{name}: {action.option_strings[0]} does not show its default"


# --- attachments -------------------------------------------------------------------------------------


@pytest.fixture
def image_plugin(tmp_path: Path) -> Path:
    plugin = tmp_path / "img.py"
    plugin.write_text(
        "from codemode import define_tool, image_block\n"
        "async def snap(args, ctx):\n    return [{'type': 'text', 'text': 'shot'}, image_block('image/png', 'iVBORw==')]\n"
        "def apply(registry):\n"
        "    registry.register(define_tool(name='snap', description='Take a picture.', parameters={}, execute=snap))\n"
    )
    return plugin


def test_attachments_are_listed_in_text_and_json(image_plugin: Path) -> None:
    snippet = b"r = await tools.snap()\nprint(r)"
    code, out, err = run_cli("run", "-", "--tools", str(image_plugin), *INPROCESS, stdin=snippet)
    assert (code, err) == (0, "")
    assert out == "shot\n[image: image/png, 4 bytes]\n[attachment] [image: image/png, 4 bytes]\n"
    code, out, _ = run_cli("run", "-", "--tools", str(image_plugin), "--json", *INPROCESS, stdin=snippet)
    assert json.loads(out)["attachments"] == [{"type": "image", "mime_type": "image/png", "bytes": 4}]
    code, out, _ = run_cli("run", "-", "--tools", str(image_plugin), "--json", "--attachment-data", *INPROCESS, stdin=snippet)
    assert json.loads(out)["attachments"] == [{"type": "image", "mime_type": "image/png", "bytes": 4, "data": "iVBORw=="}]


# --- real processes: stdin bytes and Ctrl-C ------------------------------------------------------------


def test_random_bytes_on_a_real_stdin_are_one_line_exit_2(files: Path) -> None:
    data = bytes(range(128, 256)) * 2
    proc = subprocess.run([sys.executable, "-m", "codemode", "run", "-", *INPROCESS], input=data,
                          capture_output=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.decode() == "codemode: error: cannot read <stdin>: it is not UTF-8 text (byte 0x80 at offset 0)\n"


@pytest.mark.parametrize("extra", [(), ("--json",), ("--backend", "inprocess")], ids=["worker", "json", "inprocess"])
def test_ctrl_c_is_one_line_and_exit_130(files: Path, extra: tuple[str, ...]) -> None:
    script = files / "wait.py"
    marker = files / "ws" / "ran"
    # The snippet's first sub-call marks the run as started; only then is SIGINT sent.
    script.write_text('import asyncio\nawait tools.write_file(path="ran", content="x")\nawait asyncio.sleep(60)\n')
    proc = subprocess.Popen([sys.executable, "-m", "codemode", "run", str(script), "--root", str(files / "ws"),
                             "--allow-write", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        for _ in range(1200):  # until the run has started (or the process ended)
            if marker.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "the run never started"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err == "codemode: interrupted\n"
    if "--json" in extra:
        assert json.loads(out)["error"] == {"kind": "interrupted", "message": "interrupted"}


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_mcp_servers_starting_show_one_line_on_a_terminal(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))
    from mcpkit import server_entry, write_config

    import codemode.mcp.loading as mcp_cli

    monkeypatch.setattr(mcp_cli, "START_PROGRESS_AFTER", 0)
    config = write_config(files / "mcp.json", {"up": server_entry()})

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out, err = io.StringIO(), Terminal()
    code = main(["tools", "--mcp-config", str(config)], stdout=out, stderr=err, stdin=io.StringIO())
    assert code == 0 and "up__add" in out.getvalue()
    shown = err.getvalue()
    assert shown.startswith("\r[codemode] starting 1 MCP server: 0 ready, ")
    assert shown.endswith("\r\033[K") and "\n" not in shown  # one line, rewritten, then cleared


def test_a_reader_that_goes_away_is_not_an_error_message() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "codemode", "sdk"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before anything is written: the first write gets EPIPE
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 1
    assert err == b""
