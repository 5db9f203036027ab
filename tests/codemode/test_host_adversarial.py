"""Adversarial review of the HOST side: workspace tools, the bridge, record/replay and the MCP server.

The model (so a prompt-injected attacker) controls every tool argument and the snippet. Each case
asserts the refusal or error AND the absence of the effect: a secret file outside the root never
shows up in any output or event, nothing outside the root is written, the host never hangs.
The holes this review found are fixed; each case asserts the fixed behaviour.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import anyio
import pytest

import sandbox
from codemode import CodeMode, Registry, ToolCall, register_workspace
from codemode.cli import main as cli_main

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SECRET = "s3cr3t-outside-the-root-7f1c"
REPO = Path(__file__).resolve().parents[2]
FAST = sandbox.Limits(wall_time=2.0, cpu_time=2.0)


# --- fixtures and helpers ----------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """``tmp_path/ws`` is the root; ``tmp_path/secret.txt`` and ``tmp_path/outdir`` sit outside."""
    ws = tmp_path / "ws"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_text("x = 1\n")
    (ws / "README.md").write_text("hello\n")
    (tmp_path / "secret.txt").write_text(SECRET + "\n")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "inner_secret.txt").write_text(SECRET + "\n")
    os.symlink(tmp_path / "secret.txt", ws / "escape.txt")  # file symlink out
    os.symlink(tmp_path / "outdir", ws / "outlink")  # directory symlink out
    os.symlink("chain2", ws / "chain1")  # chain: chain1 -> chain2 -> ../secret.txt
    os.symlink("../secret.txt", ws / "chain2")
    os.symlink("/dev/zero", ws / "zero")
    os.symlink("/proc/self/root", ws / "procroot")
    os.symlink("/", ws / "slash")
    os.symlink(tmp_path / "nowhere.txt", ws / "dangling_out")  # dangling, points outside
    return ws


def registry_for(root: Path, **kw: Any) -> Registry:
    registry = Registry()
    register_workspace(registry, root, **kw)
    return registry


async def call(registry: Registry, name: str, **args: Any) -> Any:
    with anyio.fail_after(10):
        return await registry.execute(ToolCall("t", name, args))


def everything(registry: Registry, *results: Any) -> str:
    """All model-visible text of ``results`` plus every event of the registry, as one string."""
    parts = [r.text for r in results] + [json.dumps(e, default=repr) for e in registry.events.read()]
    return "\n".join(parts)


def code_mode(root: Path, *, backend: str = "inprocess", mode: str = "code", **kw: Any) -> CodeMode:
    registry = Registry(mode=mode)  # type: ignore[arg-type]
    register_workspace(registry, root, **kw)
    return CodeMode(registry, backend=backend, limits=FAST)


def outside_files(tmp_path: Path, root: Path) -> dict[str, bytes]:
    """Every regular file under ``tmp_path`` but outside ``root``, with its bytes."""
    out = {}
    for dirpath, _dirs, files in os.walk(tmp_path):
        if Path(dirpath).is_relative_to(root):
            continue
        for f in files:
            p = Path(dirpath) / f
            if p.is_file() and not p.is_symlink():
                out[str(p)] = p.read_bytes()
    return out


# --- 1. path escapes -----------------------------------------------------------------------------

ESCAPES = [
    "../secret.txt",
    "pkg/../../secret.txt",
    "./././../secret.txt",
    "escape.txt",
    "chain1",
    "chain2",
    "outlink/inner_secret.txt",
    "outlink",
    "procroot/etc/passwd",
    "slash/etc/passwd",
    "/etc/passwd",
    "/proc/self/root/etc/passwd",
    "/proc/self/cwd/README.md",
    "//etc/passwd",
    "zero",
    "dangling_out",
]


@pytest.mark.parametrize("tool", ["read_file", "stat", "list_dir"])
@pytest.mark.parametrize("path", ESCAPES)
async def test_escaping_paths_are_refused(root: Path, tool: str, path: str) -> None:
    reg = registry_for(root)
    r = await call(reg, tool, path=path)
    assert r.is_error
    assert r.text == f"{tool} failed: WorkspaceError: path {path!r} is outside the workspace root"
    assert SECRET not in everything(reg, r)


async def test_absolute_secret_path_and_root_relative_tricks(root: Path, tmp_path: Path) -> None:
    reg = registry_for(root)
    secret_abs = str(tmp_path / "secret.txt")
    for path in (secret_abs, str(root) + "/../secret.txt", str(root) + "/escape.txt", f"/proc/self/root{secret_abs}"):
        r = await call(reg, "read_file", path=path)
        assert r.is_error and "outside the workspace root" in r.text
    assert SECRET not in everything(reg)
    # an absolute path that really is inside the root works and shows a relative path
    ok = await call(reg, "read_file", path=str(root / "README.md"))
    assert not ok.is_error and ok.value["path"] == "README.md" and str(root) not in ok.text


@pytest.mark.parametrize(
    "path",
    ["~/secret.txt", "~root/.bashrc", "$HOME/x", "%2e%2e/secret.txt", "\uff0e\uff0e/secret.txt",
     "..\u2215secret.txt", "..\\secret.txt", ".\u200b./secret.txt", "file:///etc/passwd"],
)
async def test_tilde_env_url_and_unicode_lookalikes_are_plain_names(root: Path, path: str) -> None:
    reg = registry_for(root)
    r = await call(reg, "read_file", path=path)
    assert r.is_error and "no such file or directory" in r.text
    assert SECRET not in everything(reg, r)


@pytest.mark.parametrize("path", ["\x00", "README.md\x00.png", "../secret.txt\x00", "pkg/\x00/../a.py"])
@pytest.mark.parametrize("tool", ["read_file", "stat", "list_dir", "grep"])
async def test_nul_bytes_are_refused(root: Path, path: str, tool: str) -> None:
    reg = registry_for(root)
    args = {"pattern": "x", "path": path} if tool == "grep" else {"path": path}
    r = await call(reg, tool, **args)
    assert r.is_error and "outside the workspace root" in r.text
    assert SECRET not in everything(reg, r)


async def test_walks_never_leave_the_root(root: Path) -> None:
    reg = registry_for(root)
    g = await call(reg, "grep", pattern=SECRET[:6])
    assert not g.is_error and list(g.value["matches"]) == []
    for pattern in ("**", "**/*", "**/**/**", "/**", "../**", "../*", "*", "outlink/*", "**/inner_secret.txt", "*secret*"):
        r = await call(reg, "glob", pattern=pattern)
        assert not r.is_error, r.text
        assert not any("secret" in m or m.startswith(("outlink/", "slash/", "procroot/")) for m in r.value["matches"])
    for path in ("..", "/", "outlink", "slash", "procroot", "/tmp"):
        assert (await call(reg, "glob", pattern="*", path=path)).is_error
        assert (await call(reg, "grep", pattern="s3cr3t", path=path)).is_error
    glob_out = await call(reg, "grep", pattern="s3cr3t", glob="../*")
    assert list(glob_out.value["matches"]) == []
    assert SECRET not in everything(reg)


async def test_escapes_from_a_snippet_in_process(root: Path) -> None:
    mode = code_mode(root)
    code = textwrap.dedent(
        """
        got = []
        for p in ["../secret.txt", "escape.txt", "chain1", "outlink/inner_secret.txt", "/proc/self/root/etc/passwd"]:
            try:
                got.append((await tools.read_file(path=p))["content"])
            except Exception as e:
                got.append(type(e).__name__ + ":" + str(e))
        hits = await tools.grep(pattern="s3cr3t")
        return {"got": got, "hits": hits["matches"]}
        """
    )
    with anyio.fail_after(15):
        run = await mode.run(code)
    assert run.ok, run.text
    assert all("outside the workspace root" in g for g in run.result.value["got"])
    assert run.result.value["hits"] == []
    assert SECRET not in everything(mode.registry) and SECRET not in run.text


async def test_escapes_from_a_snippet_worker_backend(root: Path) -> None:
    mode = code_mode(root, backend="worker")
    code = (
        "out = []\n"
        "for p in ['../secret.txt', 'escape.txt', 'outlink/inner_secret.txt']:\n"
        "    try:\n"
        "        out.append(await tools.read_file(path=p))\n"
        "    except Exception as e:\n"
        "        out.append(str(e))\n"
        "return out\n"
    )
    with anyio.fail_after(20):
        run = await mode.run(code)
    assert run.ok, run.text
    assert all("outside the workspace root" in g for g in run.result.value)
    assert SECRET not in everything(mode.registry) and SECRET not in run.text


# --- 2. host details in error text ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "x" * 300}),  # ENAMETOOLONG
        ("stat", {"path": "d/" * 3000 + "x"}),  # ENAMETOOLONG on the whole path
        ("write_file", {"path": "y" * 300, "content": "x"}),
        ("write_file", {"path": "README.md/child", "content": "x"}),  # FileExistsError from mkdir
    ],
)
async def test_errors_never_name_the_host_root(root: Path, tool: str, args: dict[str, Any]) -> None:
    reg = registry_for(root, allow_write=True)
    r = await call(reg, tool, **args)
    assert r.is_error
    assert str(root) not in r.text, r.text


async def test_symlink_loop_is_a_clean_refusal_and_does_not_break_walks(root: Path) -> None:
    os.symlink("loop_b", root / "loop_a")
    os.symlink("loop_a", root / "loop_b")
    reg = registry_for(root)
    r = await call(reg, "read_file", path="loop_a")
    g = await call(reg, "glob", pattern="*.py")
    gr = await call(reg, "grep", pattern="x = 1")
    assert r.is_error and str(root) not in r.text, r.text
    assert not g.is_error and list(g.value["matches"]) == ["pkg/a.py"], g.text
    assert not gr.is_error and [m["path"] for m in gr.value["matches"]] == ["pkg/a.py"], gr.text


# --- 3. special files --------------------------------------------------------------------------


async def test_fifo_is_refused_by_read_file_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    reg = registry_for(root)
    r = await call(reg, "read_file", path="pipe")
    assert r.is_error and "is not a regular file" in r.text
    st = await call(reg, "stat", path="pipe")
    assert st.value["type"] == "other"
    ls = await call(reg, "list_dir", path=".")
    assert {e["name"]: e["type"] for e in ls.value["entries"]}["pipe"] == "other"


def _unblock_fifo(path: Path) -> None:
    """Give a reader blocked in open() on ``path`` an EOF, so no host thread stays stuck."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return
    os.close(fd)


async def test_grep_over_a_directory_with_a_fifo_does_not_block(root: Path) -> None:
    os.mkfifo(root / "pkg" / "pipe")
    reg = registry_for(root)
    try:
        with anyio.fail_after(3):
            r = await reg.execute(ToolCall("t", "grep", {"pattern": "x = 1"}))
        assert not r.is_error and [m["path"] for m in r.value["matches"]] == ["pkg/a.py"]
    finally:
        for _ in range(20):  # the abandoned thread may not have reached open() yet
            _unblock_fifo(root / "pkg" / "pipe")
            await anyio.sleep(0.02)


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
async def test_a_fifo_in_the_tree_is_skipped_and_the_run_completes(root: Path, backend: str) -> None:
    """Walks yield regular files only (and open without blocking), so a FIFO never blocks."""
    os.mkfifo(root / "pipe")
    mode = code_mode(root, backend=backend)
    try:
        with anyio.fail_after(15):
            run = await mode.run("return await tools.grep(pattern='x = 1')", limits=sandbox.Limits(wall_time=5, cpu_time=5))
        assert run.result.error is None, run.result
        assert [m["path"] for m in run.result.value["matches"]] == ["pkg/a.py"]
    finally:
        for _ in range(5):
            _unblock_fifo(root / "pipe")
            await anyio.sleep(0.02)


async def test_binary_files_are_refused_and_skipped(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01" + SECRET.encode())
    reg = registry_for(root)
    r = await call(reg, "read_file", path="blob.bin")
    assert r.is_error and "looks binary" in r.text
    g = await call(reg, "grep", pattern="s3cr3t")
    assert list(g.value["matches"]) == []
    assert SECRET not in everything(reg, r, g)


class _ReadSpy:
    """Replaces ``Path.read_bytes``: records how many bytes each read would load, loads none over 1 MiB."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sizes: list[int] = []
        original = Path.read_bytes

        def read_bytes(path: Path) -> bytes:
            size = path.stat().st_size
            self.sizes.append(size)
            if size > 1024 * 1024:
                raise MemoryError(f"would load {size} bytes")
            return original(path)

        monkeypatch.setattr(Path, "read_bytes", read_bytes)


async def test_grep_skips_a_huge_sparse_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(root / "huge.log", "wb") as fh:
        fh.truncate(4 * 1024**3)  # 4 GiB, sparse
    spy = _ReadSpy(monkeypatch)
    reg = registry_for(root)
    g = await call(reg, "grep", pattern="x = 1")
    assert not g.is_error and [m["path"] for m in g.value["matches"]] == ["pkg/a.py"]
    assert not spy.sizes or max(spy.sizes) < 1024 * 1024


async def test_read_file_does_not_load_a_huge_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with open(root / "huge.log", "wb") as fh:
        fh.truncate(4 * 1024**3)
    spy = _ReadSpy(monkeypatch)
    reg = registry_for(root)
    r = await call(reg, "read_file", path="huge.log", limit=1)
    assert spy.sizes == [] or max(spy.sizes) < 64 * 1024 * 1024, f"read_file tried to load {spy.sizes} bytes: {r.text}"


# --- 4. catastrophic patterns (the host's event loop) -------------------------------------------

_FREEZE_SCRIPT = textwrap.dedent(
    """
    import sys, anyio, sandbox
    from codemode import CodeMode, Registry, register_workspace

    async def main():
        reg = Registry(mode="code")
        register_workspace(reg, sys.argv[1])
        mode = CodeMode(reg, backend=sys.argv[2], limits=sandbox.Limits(wall_time=0.5, cpu_time=1))
        if sys.argv[2] == "worker":
            # Start the worker template first: on a busy machine its start-up alone can take
            # longer than the run's wall time, which the tools' deadline counts from.
            sandbox.get_runtime("worker").jail_status()
        print("START", flush=True)
        run = await mode.run(sys.argv[3])
        print("RETURNED", run.result.error.kind if run.result.error else None, flush=True)

    anyio.run(main)
    """
)
#: Only a guard against a hung child (then the test fails): how long it took is never asserted.
_HANG_GUARD = 90


def _run_freeze(root: Path, backend: str, code: str) -> str:
    """Run ``code`` in a fresh host process; its stdout (what it printed before a hang, if one)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _FREEZE_SCRIPT, str(root), backend, code],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO,
    )
    try:
        out, _ = proc.communicate(timeout=_HANG_GUARD)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def test_freeze_harness_control(tmp_path: Path) -> None:
    """Control for the two cases below: the harness works and a busy snippet is ended by the timeout."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a" * 40 + "b\n")
    # On a loaded machine the grep itself may use up the 0.5 s: the loop still meets the timeout.
    code = "try:\n    await tools.grep(pattern='a+b$')\nexcept Exception:\n    pass\nwhile True:\n    pass"
    out = _run_freeze(ws, "worker", code)
    assert "RETURNED timeout" in out, out


def test_catastrophic_grep_regex_does_not_freeze_the_host(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a" * 40 + "b\n")
    out = _run_freeze(ws, "inprocess", "return await tools.grep(pattern='(a+)+$')")
    assert "START" in out
    assert "RETURNED" in out, out  # answered (a result, a match timeout or the run's timeout): not frozen


def test_catastrophic_glob_does_not_freeze_the_host_worker_backend(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ("a" * 200)).mkdir(parents=True)
    (ws / ("a" * 200) / "f").write_text("x\n")
    pattern = "*a" * 14 + "/z"
    out = _run_freeze(ws, "worker", f"return await tools.glob(pattern={pattern!r})")
    assert "START" in out
    assert "RETURNED" in out, out


async def test_grep_limit_bounds_the_result(root: Path) -> None:
    (root / "many.txt").write_text("hit\n" * 5000)
    reg = registry_for(root)
    r = await call(reg, "grep", pattern="hit", limit=10)
    assert len(r.value["matches"]) == 10 and r.value["truncated"]
    g = await call(reg, "glob", pattern="**", limit=1)
    assert len(g.value["matches"]) == 1 and g.value["truncated"]
    bad = await call(reg, "grep", pattern="hit", limit=0)
    assert bad.is_error and "Invalid arguments" in bad.text


async def test_read_file_limit_cannot_exceed_the_documented_cap(root: Path) -> None:
    (root / "long.txt").write_text(("z" * 5000 + "\n") * 3)
    reg = registry_for(root)
    assert (await call(reg, "read_file", path="long.txt", limit=10**9)).is_error
    r = await call(reg, "read_file", path="long.txt")
    assert all(len(line) <= 2001 for line in r.value["content"].splitlines())


async def test_invalid_regex_is_an_error_not_a_crash(root: Path) -> None:
    reg = registry_for(root)
    for pattern in ("(", "[z-a]", "\\"):
        r = await call(reg, "grep", pattern=pattern)
        assert r.is_error and "invalid regular expression" in r.text and str(root) not in r.text
    # The regex engine takes a huge repeat count as written (it matches nothing here): a clean result.
    r = await call(reg, "grep", pattern="a{99999999999}")
    assert str(root) not in r.text


# --- 5. writes (allow_write) -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["../evil.txt", "pkg/../../evil.txt", "escape.txt", "chain1", "outlink/evil.txt", "outlink/inner_secret.txt",
     "dangling_out", "slash/tmp/evil.txt", "/tmp/evil-codemode.txt", "procroot/tmp/evil-codemode.txt", "zero"],
)
@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_writes_cannot_leave_the_root(root: Path, tmp_path: Path, path: str, tool: str) -> None:
    before = outside_files(tmp_path, root)
    reg = registry_for(root, allow_write=True)
    if tool == "write_file":
        r = await call(reg, tool, path=path, content="PWNED", overwrite=True)
    else:
        r = await call(reg, tool, path=path, old=SECRET, new="PWNED")
    assert r.is_error and "outside the workspace root" in r.text
    assert outside_files(tmp_path, root) == before
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "nowhere.txt").exists()
    assert not Path("/tmp/evil-codemode.txt").exists()


async def test_write_tools_absent_without_allow_write(root: Path) -> None:
    reg = registry_for(root)
    r = await call(reg, "write_file", path="new.txt", content="x")
    assert r.is_error and not (root / "new.txt").exists()
    mode = code_mode(root)
    run = await mode.run("return await tools.write_file(path='new.txt', content='x')")
    assert not run.ok and not (root / "new.txt").exists()


async def test_write_into_a_fifo_is_refused(root: Path) -> None:
    os.mkfifo(root / "pipe")
    reg = registry_for(root, allow_write=True)
    r = await call(reg, "write_file", path="pipe", content="x", overwrite=True)
    assert r.is_error and "is not a regular file" in r.text


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
async def test_writes_do_not_go_through_hard_links(root: Path, tmp_path: Path, tool: str) -> None:
    os.link(tmp_path / "secret.txt", root / "hard.txt")
    reg = registry_for(root, allow_write=True)
    if tool == "write_file":
        await call(reg, tool, path="hard.txt", content="PWNED", overwrite=True)
    else:
        await call(reg, tool, path="hard.txt", old=SECRET, new="PWNED")
    assert (tmp_path / "secret.txt").read_text() == SECRET + "\n"


async def test_writes_into_git_metadata_are_refused(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n\tbare = false\n")
    reg = registry_for(root, allow_write=True)
    e = await call(reg, "edit_file", path=".git/config", old="bare = false", new="bare = false\n\tfsmonitor = touch /tmp/pwned")
    w = await call(reg, "write_file", path=".git/hooks/post-checkout", content="#!/bin/sh\ntouch /tmp/pwned\n")
    assert e.is_error and w.is_error
    assert "fsmonitor" not in (root / ".git" / "config").read_text()


async def test_toctou_directory_swapped_for_a_symlink_after_the_check(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Simulates a concurrent writer (another process in the tree) winning the race deterministically."""
    from codemode import workspace

    (root / "d").mkdir()
    (root / "d" / "inner_secret.txt").write_text("harmless\n")
    original = workspace.Workspace.resolve

    def racy(self: Any, path: str) -> Path:
        real = original(self, path)
        (root / "d" / "inner_secret.txt").unlink()
        (root / "d").rmdir()
        os.symlink(tmp_path / "outdir", root / "d")  # swapped after the check
        return real

    monkeypatch.setattr(workspace.Workspace, "resolve", racy)
    reg = registry_for(root)
    r = await call(reg, "read_file", path="d/inner_secret.txt")
    assert SECRET not in r.text


# --- 6. argument validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"path": 5},
        {"path": None},
        {"path": ["README.md"]},
        {"path": {"$ref": "#"}},
        {"path": "README.md", "extra": 1},
        {"path": "README.md", "offset": -1},
        {"path": "README.md", "offset": 1.5},
        {"path": "README.md", "limit": True},
        {"path": "x" * 1_000_000},
    ],
)
async def test_bad_read_file_arguments_are_error_results(root: Path, args: dict[str, Any]) -> None:
    reg = registry_for(root)
    r = await call(reg, "read_file", **args)
    assert r.is_error
    assert str(root) not in r.text or "x" * 100 in r.text  # the huge path case is covered above


async def test_huge_offset_is_an_empty_window_not_a_crash(root: Path) -> None:
    reg = registry_for(root)
    r = await call(reg, "read_file", path="README.md", offset=10**400)
    assert not r.is_error and r.value["content"] == "" and r.value["total_lines"] == 1


@pytest.mark.parametrize("tool", ["read_file", "run_code"])
async def test_deeply_nested_arguments_are_an_error_result(root: Path, tool: str) -> None:
    mode = code_mode(root, mode="both")
    nested: Any = []
    for _ in range(700):
        nested = [nested]
    arguments = {"path": nested} if tool == "read_file" else {"code": nested, "description": "Deep"}
    with anyio.fail_after(10):
        out = await mode.handle({"id": "deep", "name": tool, "arguments": arguments})
    assert out.is_error


async def test_deeply_nested_arguments_from_a_snippet(root: Path) -> None:
    mode = code_mode(root)
    code = "x = []\nfor _ in range(150):\n    x = [x]\nreturn await tools.read_file(path=x)\n"
    with anyio.fail_after(10):
        run = await mode.run(code)
    assert not run.ok
    assert run.calls == ()  # refused before it was numbered


async def test_huge_string_argument_from_a_snippet_is_bounded(root: Path) -> None:
    mode = code_mode(root)
    with anyio.fail_after(15):
        run = await mode.run("return await tools.grep(pattern='a' * 5_000_000)")
    assert not run.ok
    assert run.calls == ()


# --- 7. record / replay files ------------------------------------------------------------------


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    rc = cli_main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(""))
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture
def snippet(root: Path, tmp_path: Path) -> Path:
    f = tmp_path / "s.py"
    f.write_text('r = await tools.read_file(path="README.md")\nprint(r["content"])\n')
    return f


GOOD_LINE = {"id": "cli:code:1", "n": 1, "name": "read_file", "arguments": {"path": "README.md"}, "status": "ok",
             "is_error": False, "content": [{"type": "text", "text": "x"}], "value": None, "duration_ms": 1}


@pytest.mark.parametrize(
    "body",
    [
        b"not json\n",
        b'{"status": "ok"\n',
        json.dumps({**GOOD_LINE, "status": "queued"}).encode() + b"\n",
    ],
    ids=["garbage", "torn", "no-usable-record"],
)
def test_bad_recordings_exit_cleanly(root: Path, tmp_path: Path, snippet: Path, body: bytes) -> None:
    rec = tmp_path / "rec.jsonl"
    rec.write_bytes(body)
    rc, out, err = _cli("run", str(snippet), "--root", str(root), "--backend", "inprocess", "--replay", str(rec))
    assert rc in (1, 2), (rc, err)
    assert "Traceback (most recent call last)" not in err + out
    assert "hello" not in out  # the real tool never ran


@pytest.mark.parametrize(
    "body",
    [b"[1]\n", b'"x"\n', b"null\n", b"[" * 100_000 + b"]" * 100_000 + b"\n", b"\xff\xfe\n"],
    ids=["list", "string", "null", "deep", "not-utf8"],
)
def test_malformed_recordings_exit_2_without_traceback(root: Path, tmp_path: Path, snippet: Path, body: bytes) -> None:
    rec = tmp_path / "rec.jsonl"
    rec.write_bytes(body)
    try:
        rc, out, err = _cli("run", str(snippet), "--root", str(root), "--backend", "inprocess", "--replay", str(rec))
    except Exception as exc:  # noqa: BLE001 - the hole: main() raises instead of returning 2
        pytest.fail(f"codemode run --replay raised {type(exc).__name__}")
    assert rc == 2 and "cannot read recording" in err


def test_replay_record_with_missing_keys(root: Path, tmp_path: Path, snippet: Path, caplog: pytest.LogCaptureFixture) -> None:
    rec = tmp_path / "rec.jsonl"
    rec.write_text(json.dumps({"status": "ok", "name": "read_file"}) + "\n")
    rc, out, err = _cli("run", str(snippet), "--root", str(root), "--backend", "inprocess", "--replay", str(rec))
    assert rc in (1, 2)
    assert "hello" not in out
    assert "KeyError" not in err + caplog.text and "Traceback" not in caplog.text


@pytest.mark.parametrize(
    "record",
    [
        {**GOOD_LINE, "content": 5},
        {**GOOD_LINE, "content": [5]},
        {**GOOD_LINE, "content": [{"type": "image", "data": "zz"}], "is_error": True},
        {**GOOD_LINE, "value": {"nested": [[[[[]]]]]}},
        {**GOOD_LINE, "arguments": {"path": "README.md", "extra": "x"}},
    ],
    ids=["content-int", "block-int", "error-image", "value-odd", "args-mismatch"],
)
def test_wrong_typed_replay_records_fail_the_run_without_running_tools(root: Path, tmp_path: Path, snippet: Path, record: dict[str, Any]) -> None:
    rec = tmp_path / "rec.jsonl"
    rec.write_text(json.dumps(record) + "\n")
    rc, out, err = _cli("run", str(snippet), "--root", str(root), "--backend", "inprocess", "--replay", str(rec))
    assert rc in (0, 1, 2)
    assert "hello" not in out  # never the real file: replay runs no tool


def test_replay_never_reads_the_workspace(root: Path, tmp_path: Path) -> None:
    """A recording can make the snippet *see* anything, but it cannot make the host read a file."""
    f = tmp_path / "s.py"
    f.write_text('r = await tools.read_file(path="../secret.txt")\nprint(r["content"])\n')
    rec = tmp_path / "rec.jsonl"
    line = {**GOOD_LINE, "arguments": {"path": "../secret.txt"}, "value": {"path": "x", "content": "fake", "start_line": 1,
                                                                      "end_line": 1, "total_lines": 1, "truncated": False}}
    rec.write_text(json.dumps(line) + "\n")
    rc, out, err = _cli("run", str(f), "--root", str(root), "--backend", "inprocess", "--replay", str(rec))
    assert rc == 0 and out.strip() == "fake"
    assert SECRET not in out + err


def test_record_file_holds_no_outside_content(root: Path, tmp_path: Path) -> None:
    f = tmp_path / "s.py"
    f.write_text(
        "for p in ['../secret.txt', 'escape.txt', 'README.md']:\n"
        "    try:\n"
        "        print((await tools.read_file(path=p))['content'])\n"
        "    except Exception as e:\n"
        "        print('refused')\n"
    )
    rec = tmp_path / "rec.jsonl"
    rc, out, err = _cli("run", str(f), "--root", str(root), "--backend", "inprocess", "--record", str(rec))
    assert rc == 0 and out.split() == ["refused", "refused", "hello"]
    assert SECRET not in rec.read_text() and SECRET not in out + err


# --- 8. the MCP server -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        None,
        {"code": 5, "description": "x"},
        {"code": "return 1", "description": ["x"]},
        {"code": "return 1", "description": "   "},
        {"code": "return 1", "description": "Add", "limits": {"wall_time": 9999}},
        {"code": "return 1", "description": "Add", "backend": "inprocess"},
        {"code": "", "description": "Empty"},
        {"code": "(" * 200_000, "description": "Deep"},
        {"code": [[[[[[[[[[]]]]]]]]]], "description": "Nested"},
    ],
)
async def test_mcp_server_refuses_bad_run_code_arguments_and_stays_up(root: Path, arguments: Any) -> None:
    from mcp import Client

    from codemode.mcp import build_server

    server = build_server(code_mode(root))
    with anyio.fail_after(20):
        async with Client(server) as client:
            bad = await client.call_tool("run_code", arguments)
            assert bad.is_error
            ok = await client.call_tool("run_code", {"code": "return 40 + 2", "description": "Add two numbers"})
            assert not ok.is_error and ok.content[0].text == "42"


async def test_mcp_server_escape_attempt_returns_refusal(root: Path) -> None:
    from mcp import Client

    from codemode.mcp import build_server

    server = build_server(code_mode(root))
    with anyio.fail_after(20):
        async with Client(server) as client:
            r = await client.call_tool("run_code", {"code": "return await tools.read_file(path='../secret.txt')",
                                                    "description": "Read a secret"})
    text = "\n".join(b.text for b in r.content if b.type == "text")
    assert r.is_error and "outside the workspace root" in text and SECRET not in text


async def test_oversized_code_is_refused_before_preflight(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sdk_gen
    from codemode.code_mode import bridge

    seen: list[int] = []
    original = sdk_gen.check

    def spy(code: str, sdk: Any) -> Any:
        seen.append(len(code))
        return original(code, sdk)

    monkeypatch.setattr(bridge.sdk_gen, "check", spy)
    mode = code_mode(root)
    big = "x = 1\n" * 40_000  # 240 KB, over the 100 KiB max_source
    with anyio.fail_after(20):
        run = await mode.run(big)
    assert not run.ok and "limit is" in run.text
    assert seen == [], f"pre-flight parsed {seen[0]} bytes before the size check"


# --- 9. events and what the program sees --------------------------------------------------------


async def test_program_never_sees_image_bytes_and_sub_events_stay_in_the_log(root: Path) -> None:
    from bridgekit import NOTE, PNG, make_mode

    mode = make_mode(NOTE)
    with anyio.fail_after(10):
        run = await mode.run("r = await tools.note(text='hi')\nreturn r")
    assert run.ok and PNG not in run.text and "[image: image/png, 100 bytes]" in run.text
    assert [a["data"] for a in run.attachments] == [PNG]
    # Not a doc claim, recorded for the report: dispatch events keep the full content, image bytes included.
    dispatch = [e for e in mode.registry.events.read() if e["type"] == "tool/code-dispatch"]
    assert len(dispatch) == 1 and any(b.get("type") == "image" for b in dispatch[0]["content"])
