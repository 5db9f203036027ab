"""Built-in workspace tools: confinement to the root, symlink escapes, outputs, write gating."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from codemode import CodeMode, Registry, ToolCall, register_workspace, workspace_tools

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "pkg" / "sub").mkdir(parents=True)
    (ws / "pkg" / "a.py").write_text("import os\n# TODO: tidy\nx = 1\n")
    (ws / "pkg" / "sub" / "b.py").write_text("# FIXME later\n")
    (ws / "README.md").write_text("hello\nTODO docs\n")
    (ws / "blob.bin").write_bytes(b"\x00\x01TODO")
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("TODO in git\n")
    (tmp_path / "secret.txt").write_text("TODO secret\n")
    os.symlink(tmp_path / "secret.txt", ws / "escape.txt")
    os.symlink(tmp_path, ws / "up")
    os.symlink(ws / "README.md", ws / "inner.md")
    return ws


def registry_for(root: Path, **kw: Any) -> Registry:
    registry = Registry()
    register_workspace(registry, root, **kw)
    return registry


async def call(registry: Registry, name: str, **args: Any) -> Any:
    return await registry.execute(ToolCall("t", name, args))


async def test_read_file_with_offset_and_limit(root: Path) -> None:
    reg = registry_for(root)
    r = await call(reg, "read_file", path="pkg/a.py", offset=2, limit=1)
    assert not r.is_error
    assert dict(r.value) == {"path": "pkg/a.py", "content": "# TODO: tidy", "start_line": 2, "end_line": 2,
                             "total_lines": 3, "truncated": True}
    assert r.text == "pkg/a.py (lines 2-2 of 3)\n# TODO: tidy"
    inner = await call(reg, "read_file", path="inner.md")
    assert inner.value["path"] == "README.md"


@pytest.mark.parametrize("path", ["../secret.txt", "escape.txt", "up/secret.txt", str(Path("/etc/passwd")), "pkg/../../secret.txt"])
async def test_paths_escaping_the_root_are_refused(root: Path, path: str) -> None:
    reg = registry_for(root)
    r = await call(reg, "read_file", path=path)
    assert r.is_error
    assert r.text == f"read_file failed: WorkspaceError: path {path!r} is outside the workspace root"
    assert str(root) not in r.text or path.startswith("/")


async def test_missing_binary_and_directory_errors(root: Path) -> None:
    reg = registry_for(root)
    assert (await call(reg, "read_file", path="nope.txt")).text == "read_file failed: WorkspaceError: no such file or directory: 'nope.txt'"
    assert "looks binary" in (await call(reg, "read_file", path="blob.bin")).text
    assert "is not a regular file" in (await call(reg, "read_file", path="pkg")).text
    assert "is not a directory" in (await call(reg, "list_dir", path="README.md")).text
    assert "invalid regular expression" in (await call(reg, "grep", pattern="(")).text


async def test_list_dir_and_stat(root: Path) -> None:
    reg = registry_for(root)
    entries = {e["name"]: e["type"] for e in (await call(reg, "list_dir")).value["entries"]}
    assert entries["pkg"] == "dir" and entries["README.md"] == "file" and entries["escape.txt"] == "symlink"
    st = (await call(reg, "stat", path="pkg/a.py")).value
    assert st["type"] == "file" and st["size"] == len("import os\n# TODO: tidy\nx = 1\n")
    assert (await call(reg, "stat", path="escape.txt")).is_error


async def test_glob_skips_ignored_dirs_and_escaping_symlinks(root: Path) -> None:
    reg = registry_for(root)
    assert list((await call(reg, "glob", pattern="*.py")).value["matches"]) == ["pkg/a.py", "pkg/sub/b.py"]
    assert list((await call(reg, "glob", pattern="pkg/*.py")).value["matches"]) == ["pkg/a.py"]
    everything = list((await call(reg, "glob", pattern="**/*")).value["matches"])
    assert "escape.txt" not in everything and not any(p.startswith((".git", "up/")) for p in everything)
    assert "inner.md" in everything
    limited = (await call(reg, "glob", pattern="**/*", limit=1)).value
    assert limited["truncated"] and len(limited["matches"]) == 1


async def test_grep_returns_structured_matches(root: Path) -> None:
    reg = registry_for(root)
    r = await call(reg, "grep", pattern=r"TODO|FIXME")
    matches = [dict(m) for m in r.value["matches"]]
    assert {"path": "pkg/a.py", "line": 2, "text": "# TODO: tidy"} in matches
    assert {m["path"] for m in matches} == {"README.md", "inner.md", "pkg/a.py", "pkg/sub/b.py"}
    assert "pkg/a.py:2: # TODO: tidy" in r.text
    only_py = await call(reg, "grep", pattern="todo", ignore_case=True, glob="*.py", path="pkg")
    assert [m["path"] for m in only_py.value["matches"]] == ["pkg/a.py"]
    assert (await call(reg, "grep", pattern="TODO", path="../")).is_error


async def test_write_tools_exist_only_with_allow_write(root: Path) -> None:
    assert {t.name for t in workspace_tools(root)} == {"read_file", "list_dir", "glob", "grep", "stat"}
    assert all(t.concurrency_safe is True for t in workspace_tools(root))
    assert all(t.output_schema is not None for t in workspace_tools(root, allow_write=True))
    reg = registry_for(root, allow_write=True)
    w = await call(reg, "write_file", path="new/n.txt", content="one two")
    assert dict(w.value) == {"path": "new/n.txt", "bytes_written": 7, "created": True}
    assert "already exists" in (await call(reg, "write_file", path="new/n.txt", content="x")).text
    e = await call(reg, "edit_file", path="new/n.txt", old="two", new="three")
    assert e.value["replacements"] == 1 and (root / "new/n.txt").read_text() == "one three"
    assert "not found" in (await call(reg, "edit_file", path="new/n.txt", old="zzz", new="")).text
    assert (await call(reg, "write_file", path="../evil.txt", content="x")).is_error
    assert (await call(reg, "write_file", path="escape.txt", content="x", overwrite=True)).is_error
    assert not (root.parent / "evil.txt").exists()
    assert (root.parent / "secret.txt").read_text() == "TODO secret\n"


def test_mcp_exports_carry_the_tools_true_annotations(root: Path) -> None:
    """Validated against the real ``mcp`` types: what an MCP client would parse."""
    import mcp_types

    registry = registry_for(root, allow_write=True)
    tools = {t.name: t for t in (mcp_types.Tool.model_validate(e) for e in registry.schemas(format="mcp"))}
    assert set(tools) == {"read_file", "list_dir", "glob", "grep", "stat", "write_file", "edit_file"}
    for name in ("read_file", "list_dir", "glob", "grep", "stat"):
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is True and hints.open_world_hint is False, name
        assert hints.destructive_hint is None and hints.title
    for name, idempotent in (("write_file", True), ("edit_file", False)):
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is False and hints.destructive_hint is True, name
        assert hints.idempotent_hint is idempotent and hints.open_world_hint is False
    # The other exports are unchanged by annotations.
    assert all("annotations" not in e for e in registry.schemas(format="openai"))


def test_bad_root_fails_at_construction(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not a directory"):
        workspace_tools(tmp_path / "missing")


async def test_glob_and_grep_in_parallel_from_a_snippet(root: Path) -> None:
    registry = Registry(mode="code")
    register_workspace(registry, root)
    mode = CodeMode(registry, backend="inprocess")
    code = """
import asyncio
files, hits = await asyncio.gather(tools.glob(pattern="*.py"), tools.grep(pattern="TODO|FIXME", glob="*.py"))
return {"files": len(files["matches"]), "hits": [m["path"] for m in hits["matches"]]}
"""
    out = await mode.handle({"id": "x", "name": "run_code", "arguments": {"code": code, "description": "Count markers"}})
    assert json.loads(out.text) == {"files": 2, "hits": ["pkg/a.py", "pkg/sub/b.py"]}
