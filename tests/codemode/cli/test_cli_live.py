"""``codemode run`` on a terminal: prints appear as they happen, and upstream servers' stderr
stays out of the progress line. Driven through a real pseudo-terminal.

No timing is asserted: "as they happen" is proved by a program that waits, after its first
print, for a file the test creates only once it has seen that print on the terminal (with the
print held back to the end, the run could never finish).
"""

from __future__ import annotations

import io
import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codemode.cli import main

REPO = Path(__file__).resolve().parents[3]
MARKER_SERVER = str(REPO / "tests" / "codemode" / "mcp" / "marker_server.py")
DEADLINE = 90.0  # seconds: generous, for a busy 2-core machine; never a measure of speed

WAIT_FOR_GO = (
    "import asyncio\n"
    "print('first \\x1b[31mred')\n"
    "while not (await tools.glob(pattern='go'))['matches']:\n"
    "    await asyncio.sleep(0.05)\n"
    "print('second')\n"
    "return 'done'\n"
)


class Terminal:
    """A child process whose stdout and stderr are one pseudo-terminal (as in a shell)."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.master, slave = pty.openpty()
        env = dict(os.environ, COLUMNS="200")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, cwd=cwd, env=env)
        os.close(slave)
        self.seen = b""

    def read_until(self, needle: bytes) -> bytes:
        end = time.monotonic() + DEADLINE
        while needle not in self.seen:
            if not self._read(end - time.monotonic()):
                raise AssertionError(f"{needle!r} never appeared; the terminal showed {self.seen!r}")
        return self.seen

    def finish(self) -> tuple[int, str]:
        end = time.monotonic() + DEADLINE
        while self._read(end - time.monotonic()):
            pass
        code = self.proc.wait(timeout=DEADLINE)
        os.close(self.master)
        return code, self.seen.decode("utf-8", "replace")

    def _read(self, timeout: float) -> bool:
        if timeout <= 0:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal (EIO)
            return False
        self.seen += chunk
        return bool(chunk)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
def test_prints_appear_on_a_terminal_as_they_happen(tmp_path: Path, backend: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    program = tmp_path / "wait.py"
    program.write_text(WAIT_FOR_GO, encoding="utf-8")
    term = Terminal([sys.executable, "-m", "codemode", "run", str(program), "--root", str(root),
                     "--backend", backend], REPO)
    try:
        before = term.read_until(b"first ")
        assert b"second" not in before
        (root / "go").write_text("", encoding="utf-8")
    finally:
        code, shown = term.finish()
    assert code == 0, shown
    lines = shown.replace("\r\n", "\n").split("\n")
    # Each print once, in order, controls made visible; the value after them, as at the end of a run.
    assert shown.count("first ") == 1 and shown.count("second") == 1
    assert "first \\x1b[31mred" in lines[0]
    assert "\x1b[31m" not in shown
    assert lines.index("second") < lines.index("done")


def test_pipes_and_json_still_get_everything_at_the_end(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("print('a')\nprint('b')\nreturn 3", encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["run", str(program), "--backend", "inprocess"], stdout=out, stderr=err) == 0
    assert out.getvalue() == "a\nb\n3\n"
    out = io.StringIO()
    assert main(["run", str(program), "--backend", "inprocess", "--json"], stdout=out, stderr=io.StringIO()) == 0
    assert json.loads(out.getvalue())["logs"] == ["a", "b"]


def test_a_failed_run_on_a_terminal_shows_each_print_once(tmp_path: Path) -> None:
    program = tmp_path / "bad.py"
    program.write_text("print('before')\nprint('partial', end='')\nx = 1 / 0\n", encoding="utf-8")
    term = Terminal([sys.executable, "-m", "codemode", "run", str(program), "--backend", "inprocess"], REPO)
    code, shown = term.finish()
    assert code == 1
    assert shown.count("before") == 1 and shown.count("partial") == 1
    assert "ZeroDivisionError" in shown


def _marker_config(tmp_path: Path) -> Path:
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [MARKER_SERVER, str(tmp_path / "a.started")]}
    config.write_text(json.dumps({"mcpServers": {"a": entry}}), encoding="utf-8")
    return config


def test_server_stderr_is_prefixed_and_kept_off_the_progress_line(tmp_path: Path) -> None:
    config = _marker_config(tmp_path)
    cache = ["--tool-cache", str(tmp_path / "cache")]
    assert main(["tools", "--mcp-config", str(config), *cache], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    program = tmp_path / "late.py"  # calls the (cached, so not yet started) server once the progress line shows
    program.write_text("import asyncio\nawait asyncio.sleep(2.5)\nprint(await tools.a__echo(text='x'))\n",
                       encoding="utf-8")
    term = Terminal([sys.executable, "-m", "codemode", "run", str(program), "--backend", "inprocess",
                     "--mcp-config", str(config), *cache], REPO)
    code, shown = term.finish()
    assert code == 0, shown
    assert "[codemode] running" in shown
    relayed = "[a] marker server: starting"
    assert shown.count(relayed) == 1
    at = shown.index(relayed)
    assert shown[at - len("\r\x1b[K"):at] == "\r\x1b[K"  # the progress line was cleared first
    assert shown[at + len(relayed):].startswith(("\r\n", "\n"))  # and the line is whole
    assert "echo:x" in shown


def test_server_stderr_without_a_terminal_is_prefixed(tmp_path: Path) -> None:
    config = _marker_config(tmp_path)
    err = io.StringIO()
    # A real file for stderr: the server's own stderr would otherwise go straight there.
    with open(tmp_path / "err.txt", "w+", encoding="utf-8") as stderr:
        assert main(["tools", "--mcp-config", str(config)], stdout=io.StringIO(), stderr=stderr) == 0
        stderr.seek(0)
        err.write(stderr.read())
    assert err.getvalue().splitlines() == ["[a] marker server: starting", "[a] marker server: ready"]


def test_server_stderr_during_start_up_is_kept_off_the_start_line(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    entry = {"command": sys.executable, "args": [MARKER_SERVER, str(tmp_path / "a.started"), "--delay", "1.5"]}
    config.write_text(json.dumps({"mcpServers": {"a": entry}}), encoding="utf-8")
    program = tmp_path / "p.py"
    program.write_text("print('ok')\n", encoding="utf-8")
    term = Terminal([sys.executable, "-m", "codemode", "run", str(program), "--backend", "inprocess",
                     "--mcp-config", str(config), "--tool-cache", str(tmp_path / "cache")], REPO)
    code, shown = term.finish()
    assert code == 0, shown
    assert "[codemode] starting 1 MCP server" in shown  # the start line was up while it slept
    relayed = "[a] marker server: ready"
    at = shown.index(relayed)
    assert shown[at - len("\r\x1b[K"):at] == "\r\x1b[K"


def test_a_session_of_files_on_a_terminal_shows_each_print_once(tmp_path: Path) -> None:
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("n = 41\nprint('from one')\n", encoding="utf-8")
    two.write_text("print('from two', n + 1)\nreturn 'end'\n", encoding="utf-8")
    term = Terminal([sys.executable, "-m", "codemode", "run", str(one), str(two), "--session",
                     "--backend", "inprocess"], REPO)
    code, shown = term.finish()
    assert code == 0, shown
    lines = [line for line in shown.replace("\r\n", "\n").split("\n") if line]
    assert lines == ["from one", "from two 42", "end"]
