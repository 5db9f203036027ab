"""The workspace write policy: with ``allow_write``, nothing a common tool runs or loads is written.

Each entry is tried through the tools as a model would, and the test asserts the refusal AND the
absence of the effect with the real tool: ``git status`` runs no ``core.fsmonitor`` command, a
virtualenv's Python loads no ``.pth`` file. Each real-tool check has a control that writes the
same files directly and shows the effect does happen, so the checks can fail.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import anyio
import pytest

from codemode import DEFAULT_WRITE_POLICY, Registry, ToolCall, WritePolicy, register_workspace

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

GIT = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def tools(root: Path, policy: WritePolicy = DEFAULT_WRITE_POLICY) -> Registry:
    registry = Registry()
    register_workspace(registry, root, allow_write=True, write_policy=policy)
    return registry


async def call(registry: Registry, name: str, **args: Any) -> Any:
    with anyio.fail_after(20):
        return await registry.execute(ToolCall("t", name, args))


async def refused(registry: Registry, path: str, content: str = "x\n", **extra: Any) -> str:
    result = await call(registry, "write_file", path=path, content=content, overwrite=True, **extra)
    assert result.is_error, f"{path} was written"
    assert f"writing {path!r} is not allowed" in result.text
    return result.text


def git_status(directory: Path) -> None:
    subprocess.run(["git", "status"], cwd=directory, env=GIT, capture_output=True, timeout=30)


def fsmonitor_config(marker: Path) -> str:
    return f"[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfsmonitor = touch {marker}\n"


def make_git_dir(path: Path) -> None:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], env=GIT, check=True, timeout=30)


# --- git metadata ------------------------------------------------------------------------------


def test_control_git_runs_fsmonitor_from_a_gitfile_target(tmp_path: Path) -> None:
    """Control: the attack below, written directly, makes ``git status`` run the command."""
    marker = tmp_path / "pwned"
    make_git_dir(tmp_path / "gitx")
    (tmp_path / "gitx" / "config").write_text(fsmonitor_config(marker))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text("gitdir: ../gitx\n")
    git_status(tmp_path / "sub")
    assert marker.exists()


async def test_gitfile_pointer_and_a_new_git_dir_are_refused(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    reg = tools(root)
    assert not (await call(reg, "write_file", path="gitx/HEAD", content="ref: refs/heads/main\n")).is_error
    assert not (await call(reg, "write_file", path="gitx/objects/keep", content="")).is_error
    text = await refused(reg, "gitx/refs/heads/keep")  # the third marker would make gitx a git dir
    assert "'gitx' is, or would become, a git directory" in text
    assert not (await call(reg, "write_file", path="gitx/config", content=fsmonitor_config(marker))).is_error
    assert "version-control metadata" in await refused(reg, "sub/.git", "gitdir: ../gitx\n")
    assert "gitfile pointer" in await refused(reg, "sub/pointer", "gitdir: ../gitx\n")
    assert not (root / "gitx" / "refs").exists() and not (root / "sub").exists()
    (root / "sub").mkdir()
    git_status(root / "sub")
    git_status(root / "gitx")
    assert not marker.exists()


async def test_a_git_dir_behind_an_existing_gitfile_is_refused(root: Path, tmp_path: Path) -> None:
    """A gitfile (a worktree or submodule checkout) points at a git dir by any name."""
    marker = tmp_path / "pwned"
    make_git_dir(root / "modules" / "lib")
    subprocess.run(["git", "config", "--file", str(root / "modules" / "lib" / "config"), "core.bare", "false"],
                   env=GIT, check=True)
    before = (root / "modules" / "lib" / "config").read_text()
    (root / "lib").mkdir()
    (root / "lib" / ".git").write_text("gitdir: ../modules/lib\n")
    reg = tools(root)
    text = await refused(reg, "modules/lib/config", fsmonitor_config(marker))
    assert "'modules/lib' is, or would become, a git directory" in text
    edit = await call(reg, "edit_file", path="modules/lib/config", old="bare = false",
                      new=f"bare = false\n\tfsmonitor = touch {marker}")
    assert edit.is_error and "is not allowed" in edit.text
    await refused(reg, "modules/lib/hooks/post-checkout", f"#!/bin/sh\ntouch {marker}\n")
    await refused(reg, "lib/.git", "gitdir: ../elsewhere\n")
    assert (root / "modules" / "lib" / "config").read_text() == before
    assert (root / "lib" / ".git").read_text() == "gitdir: ../modules/lib\n"
    git_status(root / "lib")
    assert not marker.exists()


@pytest.mark.parametrize("path", [".git/config", ".git", "sub/.git/hooks/pre-commit", ".GIT/config", ".git./config",
                                  ".hg/hgrc", ".svn/entries"])
async def test_vcs_metadata_by_any_spelling_is_refused(root: Path, path: str) -> None:
    assert "version-control metadata" in await refused(tools(root), path)
    assert not (root / path).exists() and not (root / path.split("/")[0]).exists()


async def test_writes_into_a_real_repository_s_git_dir_are_refused(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    subprocess.run(["git", "init", "-q", str(root)], env=GIT, check=True)
    before = (root / ".git" / "config").read_text()
    reg = tools(root)
    edit = await call(reg, "edit_file", path=".git/config", old="bare = false",
                      new=f"bare = false\n\tfsmonitor = touch {marker}")
    assert edit.is_error and "version-control metadata" in edit.text
    await refused(reg, ".git/hooks/post-checkout", f"#!/bin/sh\ntouch {marker}\n")
    assert (root / ".git" / "config").read_text() == before
    git_status(root)
    assert not marker.exists()
    assert not (await call(reg, "write_file", path="src/ok.txt", content="fine\n")).is_error


# --- virtualenvs and Python startup files ------------------------------------------------------


def _site_packages(venv: Path) -> Path:
    relative = Path(sysconfig.get_path("purelib")).relative_to(sysconfig.get_path("data"))
    return venv / relative


def _make_venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=90)
    return _site_packages(path)


def _start(python: Path, marker: Path, **env: str) -> None:
    subprocess.run([str(python), "-c", "pass"], env={"PATH": "/usr/bin:/bin", **env}, timeout=60, check=True)
    _ = marker


def test_control_a_venv_python_runs_a_pth_file(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    site = _make_venv(tmp_path / "env")
    (site / "evil.pth").write_text(f"import os; open({str(marker)!r}, 'w').close()\n")
    _start(tmp_path / "env" / "bin" / "python", marker)
    assert marker.exists()


async def test_a_virtualenv_by_any_name_is_refused(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    site = _make_venv(root / "tools")  # not named venv or .venv: found by its pyvenv.cfg
    rel_site = site.relative_to(root).as_posix()
    payload = f"import os; open({str(marker)!r}, 'w').close()\n"
    reg = tools(root)
    assert "'tools' is a virtualenv (it has pyvenv.cfg)" in await refused(reg, f"{rel_site}/evil.py", payload)
    await refused(reg, f"{rel_site}/evil.pth", payload)
    await refused(reg, f"{rel_site}/sitecustomize.py", payload)
    activate = await call(reg, "edit_file", path="tools/bin/activate", old="deactivate", new="deactivate; touch x")
    assert activate.is_error and "virtualenv" in activate.text
    assert not any(p.name.startswith(("evil", "sitecustomize")) for p in site.iterdir())
    _start(root / "tools" / "bin" / "python", marker)
    assert not marker.exists()


def test_control_python_loads_startup_files_from_a_site_dir(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    _start(Path(sys.executable), marker, PYTHONPATH=str(tmp_path / "ws"))
    assert marker.exists()


@pytest.mark.parametrize("path", ["evil.pth", "pkg/EVIL.PTH", "sitecustomize.py", "lib/usercustomize.py",
                                  "pyvenv.cfg", "pkg/__pycache__/mod.cpython-311.pyc", "mod.pyc"])
async def test_python_startup_files_are_refused_anywhere(root: Path, tmp_path: Path, path: str) -> None:
    marker = tmp_path / "pwned"
    payload = f"import os; open({str(marker)!r}, 'w').close()\n"
    await refused(tools(root), path, payload)
    assert not (root / path).exists()
    for directory in {root, (root / path).parent}:
        code = f"import site; site.addsitedir({str(directory)!r})"
        subprocess.run([sys.executable, "-c", code], env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(directory)},
                       timeout=60, check=True)
    assert not marker.exists()


async def test_a_directory_named_like_a_venv_without_pyvenv_cfg_is_writable(root: Path) -> None:
    reg = tools(root)
    r = await call(reg, "write_file", path="env/notes.txt", content="plain directory\n")
    assert not r.is_error and (root / "env" / "notes.txt").read_text() == "plain directory\n"


# --- direnv and editors ------------------------------------------------------------------------


@pytest.mark.parametrize("path", [".envrc", "sub/.envrc", ".vscode/tasks.json", ".vscode/settings.json",
                                  "sub/.idea/workspace.xml", ".VSCode/launch.json"])
async def test_direnv_and_editor_files_are_refused(root: Path, path: str) -> None:
    await refused(tools(root), path, '{"tasks": [{"command": "touch pwned", "runOptions": {"runOn": "folderOpen"}}]}')
    assert not (root / path).exists() and not (root / path).parent.joinpath(".vscode").exists()


# --- what other tools load from the directory they run in -------------------------------------


@pytest.mark.parametrize("path", [".pdbrc", "sub/ipython_config.py", ".npmrc", ".yarnrc.yml", ".exrc", ".nvim.lua",
                                  ".pre-commit-config.yaml", ".gitlab-ci.yml", ".cargo/config.toml",
                                  ".github/workflows/ci.yml", ".devcontainer/devcontainer.json", ".zed/tasks.json",
                                  ".husky/pre-commit", ".circleci/config.yml", "lefthook.yml", ".gitea/workflows/x.yml",
                                  "azure-pipelines.yml", ".pnpmfile.cjs"])
async def test_files_other_tools_load_where_they_run_are_refused(root: Path, path: str) -> None:
    await refused(tools(root), path, "echo pwned\n")
    assert not (root / path).exists()


def _python_m(root: Path, marker: Path) -> None:
    subprocess.run([sys.executable, "-m", "json.tool", "--help"], cwd=root, capture_output=True, timeout=60,
                   env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})


def test_control_python_m_imports_a_module_from_the_directory_it_runs_in(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    _python_m(tmp_path, marker)
    assert marker.exists()


@pytest.mark.parametrize("path", ["json.py", "json/__init__.py", "pip/__init__.py", "pytest.py"])
async def test_a_top_level_module_that_shadows_an_installed_one_is_refused(root: Path, tmp_path: Path, path: str) -> None:
    marker = tmp_path / "pwned"
    text = await refused(tools(root), path, f"open({str(marker)!r}, 'w').close()\n")
    assert "would stand in for the installed module" in text
    _python_m(root, marker)
    assert not marker.exists() and not (root / path).exists()


@pytest.mark.parametrize("path", ["mypkg_not_installed/__init__.py", "src/json.py", "json_tools.py", "test/__init__.py",
                                  "tests/conftest.py", "notes/pip.py", "run.py", "tests/__init__.py", "config.py",
                                  "sandbox/__init__.py"])
async def test_modules_that_shadow_nothing_a_tool_runs_are_writable(root: Path, path: str) -> None:
    r = await call(tools(root), "write_file", path=path, content="x = 1\n")
    assert not r.is_error, r.text
    assert (root / path).read_text() == "x = 1\n"


async def test_an_existing_editor_task_file_is_not_changed(root: Path) -> None:
    (root / ".vscode").mkdir()
    (root / ".vscode" / "tasks.json").write_text('{"tasks": []}')
    r = await call(tools(root), "edit_file", path=".vscode/tasks.json", old="[]", new='[{"command": "touch pwned"}]')
    assert r.is_error and "editor, container or CI settings" in r.text
    assert (root / ".vscode" / "tasks.json").read_text() == '{"tasks": []}'


async def test_a_symlink_into_protected_metadata_is_refused(root: Path) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    os.symlink(".git/config", root / "notes.txt")
    r = await call(tools(root), "write_file", path="notes.txt", content="[core]\n\tfsmonitor = x\n", overwrite=True)
    assert r.is_error and "version-control metadata" in r.text
    assert (root / ".git" / "config").read_text() == "[core]\n"


# --- a host's own policy -----------------------------------------------------------------------


async def test_a_host_passes_its_own_policy(root: Path) -> None:
    relaxed = dataclasses.replace(DEFAULT_WRITE_POLICY, editor_dirs=frozenset())
    r = await call(tools(root, relaxed), "write_file", path=".vscode/settings.json", content="{}")
    assert not r.is_error and (root / ".vscode" / "settings.json").read_text() == "{}"
    await refused(tools(root, relaxed), ".git/config")

    class ReadOnlyDocs(WritePolicy):
        def refusal(self, root: Path, path: Path, content: bytes) -> str | None:
            if path.relative_to(root).parts[:1] == ("docs",):
                return "docs are generated"
            return super().refusal(root, path, content)

    strict = tools(root, ReadOnlyDocs())
    assert "docs are generated" in await refused(strict, "docs/index.md")
    assert not (root / "docs").exists()
    assert not (await call(strict, "write_file", path="src/a.py", content="x = 1\n")).is_error


def test_policy_is_an_immutable_value() -> None:
    assert WritePolicy() == DEFAULT_WRITE_POLICY
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_WRITE_POLICY.git_dirs = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        WritePolicy(frozenset())  # type: ignore[misc]  # keyword-only


# --- races: the check and the write are one step per workspace ----------------------------------


def worktree_config(marker: Path) -> str:
    """A git dir's config whose work tree is its parent: ``git status`` inside it runs fsmonitor."""
    return fsmonitor_config(marker) + "\tworktree = ..\n"


class _SlowPolicy(WritePolicy):
    """The default policy, taking its time: two writers that both pass the check would both write."""

    def refusal(self, root: Path, path: Path, content: bytes) -> str | None:
        import time

        reason = super().refusal(root, path, content)
        time.sleep(0.3)
        return reason


class _RacedPolicy(WritePolicy):
    """The default policy; right after it passes a write of ``refs/...``, another writer (another
    process, say) creates the other parts of a git directory next to it."""

    def refusal(self, root: Path, path: Path, content: bytes) -> str | None:
        reason = super().refusal(root, path, content)
        if reason is None and path.name == "main" and not (root / "gitx" / "HEAD").exists():
            (root / "gitx" / "objects").mkdir(parents=True)
            (root / "gitx" / "HEAD").write_text("ref: refs/heads/main\n")
        return reason


async def test_two_concurrent_writers_cannot_complete_a_git_dir(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    reg = tools(root, _SlowPolicy())
    assert not (await call(reg, "write_file", path="gitx/config", content=worktree_config(marker))).is_error
    assert not (await call(reg, "write_file", path="gitx/HEAD", content="ref: refs/heads/main\n")).is_error
    results: dict[str, Any] = {}

    async def write(path: str) -> None:
        results[path] = await call(reg, "write_file", path=path, content="x\n")

    async with anyio.create_task_group() as tg:
        tg.start_soon(write, "gitx/objects/keep")
        tg.start_soon(write, "gitx/refs/heads/main")
    refused_ = [p for p, r in results.items() if r.is_error]
    assert len(refused_) == 1, {p: r.text for p, r in results.items()}
    assert "'gitx' is, or would become, a git directory" in results[refused_[0]].text
    assert not (root / refused_[0]).exists() and not (root / refused_[0].split("/")[1]).exists()
    git_status(root / "gitx")
    assert not marker.exists()


async def test_a_write_that_completes_a_git_dir_with_parts_written_meanwhile_is_undone(root: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    reg = tools(root, _RacedPolicy())
    assert not (await call(reg, "write_file", path="gitx/config", content=worktree_config(marker))).is_error
    result = await call(reg, "write_file", path="gitx/refs/heads/main", content="0" * 40 + "\n")
    assert result.is_error and "'gitx' is, or would become, a git directory" in result.text
    assert not (root / "gitx" / "refs").exists()  # the file and the directories it needed are gone
    git_status(root / "gitx")
    assert not marker.exists()


def test_control_the_raced_tree_runs_fsmonitor(tmp_path: Path) -> None:
    """Control: the tree the raced writers would leave, made directly, runs the command."""
    marker = tmp_path / "pwned"
    gitx = tmp_path / "gitx"
    (gitx / "objects").mkdir(parents=True)
    (gitx / "refs" / "heads").mkdir(parents=True)
    (gitx / "HEAD").write_text("ref: refs/heads/main\n")
    (gitx / "config").write_text(worktree_config(marker))
    (gitx / "refs" / "heads" / "main").write_text("x\n")
    git_status(gitx)
    assert marker.exists()


async def test_a_write_that_completes_a_virtualenv_is_undone(root: Path) -> None:
    class Raced(WritePolicy):
        def refusal(self, root_: Path, path: Path, content: bytes) -> str | None:
            reason = super().refusal(root_, path, content)
            if reason is None and path.name == "evil.pth" and not (root_ / "env" / "pyvenv.cfg").exists():
                (root_ / "env").mkdir(exist_ok=True)
                (root_ / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
            return reason

    reg = tools(root, dataclasses.replace(Raced(), startup_suffixes=(".pyc",)))
    result = await call(reg, "write_file", path="env/lib/evil.pth", content="import os\n")
    assert result.is_error and "'env' is a virtualenv (it has pyvenv.cfg)" in result.text
    assert not (root / "env" / "lib").exists()


def test_whether_a_module_shadows_is_decided_the_same_wherever_the_host_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # It was decided with the host process's own import path: `run.py` was refused when the host
    # ran from `/` (a directory `/run`), and asking the finders for a model-chosen name ran their
    # code (setuptools' distutils hook cleared `distutils` from the host). A fixed list decides.
    import importlib.util

    def asked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the host's finders were asked")

    monkeypatch.setattr(importlib.util, "find_spec", asked)
    monkeypatch.chdir("/")
    monkeypatch.syspath_prepend("/")
    root = tmp_path / "ws"
    root.mkdir()
    assert DEFAULT_WRITE_POLICY.refusal(root, root / "run.py", b"") is None
    assert DEFAULT_WRITE_POLICY.refusal(root, root / "pip.py", b"") is not None

