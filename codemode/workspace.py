"""The built-in workspace tools: read-only file access (and optional writes) confined to one root.

Every path a model gives is resolved (symlinks followed) and must stay inside the root, or the
call fails naming the path as given; results show paths relative to the root with ``/``
separators, so the host's absolute paths never reach the model. Walks (``glob``, ``grep``) skip
version-control and tool caches (``IGNORED_DIRS``) and never follow a symlink out of the root.
The read-only tools are concurrency-safe and do their file work in a thread, so a snippet that
gathers them really overlaps them.

The model controls every argument, so every tool bounds its work: a call works until the run's
deadline (``ExecutionContext.deadline()``; ``UNBOUNDED_CALL_SECONDS`` for a call outside any
run) and stops as soon as its caller is cancelled; grep patterns are capped in length and in
compiled size before they are compiled; reads and writes are capped at ``MAX_FILE_BYTES``.
Writes follow a ``WritePolicy``: nothing a common tool would run or load is created or changed.
"""

from __future__ import annotations

import codecs
import fnmatch
import math
import os
import re
import stat as stat_module
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
import regex

from .registry.calls import ExecutionContext
from .registry.definition import ToolDefinition, define_tool
from .registry.presentation import diff_card, generic_card
from .registry.registry import Registry

__all__ = [
    "DEFAULT_WRITE_POLICY",
    "IGNORED_DIRS",
    "WorkspaceError",
    "WritePolicy",
    "register_workspace",
    "workspace_tools",
]

#: Directories walks never enter: version control, virtualenvs, caches and build output.
IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".mypy_cache",
     ".pytest_cache", ".ruff_cache", ".tox", ".hypothesis", ".eggs", "build", "dist"}
)
#: Directory-name suffixes walks never enter (``pip install -e`` leaves ``NAME.egg-info``).
IGNORED_DIR_SUFFIXES = (".egg-info",)
MAX_READ_LINES = 2000
MAX_LINE_CHARS = 2000
MAX_GREP_FILE_BYTES = 2 * 1024 * 1024
#: The workspace file-size cap: read_file loads at most this much, and write_file/edit_file
#: refuse to produce a larger file (checked before any byte is written).
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_READ_FILE_BYTES = MAX_FILE_BYTES
BINARY_SNIFF_BYTES = 8192
#: read_file scans a file in chunks of this size for the lines it returns, so what it holds is
#: the chunk and the window, never the whole file or a list of all its lines.
READ_CHUNK_BYTES = 64 * 1024
#: What all workspace calls of this process may hold of file data at once (a read window's
#: chunk, a searched file, an edited file and its result): concurrent calls, from one run or
#: from many runs of one ``mcp serve``, wait for their share until their deadline.
MAX_HELD_BYTES = 96 * 1024 * 1024
#: Paths deeper than this many components are refused before anything is resolved or created.
MAX_PATH_DEPTH = 64
#: The time a call outside any run (a direct call, no deadline) may work. Inside a run, a call
#: works until the run's own deadline.
UNBOUNDED_CALL_SECONDS = 10.0
#: Model-written patterns are compiled on the host: their length and their size once counted
#: repeats are unrolled (``(?:a{3000}){3000}`` is 17 characters and 9 million units) are capped
#: before compiling, since compiling cannot be interrupted.
MAX_PATTERN_CHARS = 4096
MAX_PATTERN_SIZE = 50_000
#: A single match runs in slices that double, so a call whose run has ended stops within about
#: the time it has already spent on that one match (the regex engine cannot be interrupted).
FIRST_MATCH_SLICE = 0.05

#: MCP tool annotations, as the tools truly behave: the read-only tools only look at local files;
#: the write tools change them (``edit_file`` twice may edit twice; ``write_file`` twice writes
#: the same bytes, or fails without effect when the file exists).
_READ_ONLY = {"readOnlyHint": True, "openWorldHint": False}
_WRITES = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}


def _annotations(title: str, base: Mapping[str, Any], **hints: bool) -> dict[str, Any]:
    return {"title": title, **base, **hints}


OUTSIDE_ROOT = "path {path!r} is outside the workspace root"
NOT_FOUND = "no such file or directory: {path!r}"
NOT_A_FILE = "{path!r} is not a regular file"
NOT_A_DIR = "{path!r} is not a directory"
BINARY_FILE = "{path!r} looks binary (it has NUL bytes); it cannot be read as text"
BAD_REGEX = "invalid regular expression {pattern!r}: {error}"
PATTERN_TOO_LONG = "the pattern is {size} characters; patterns are limited to {limit}"
PATTERN_TOO_BIG = (
    "the pattern unrolls to more than {limit} units (counted repeats multiply what they repeat); "
    "use smaller repeat counts or + and *"
)
MATCH_TOO_SLOW = (
    "the pattern did not finish matching in the {seconds:.1f} s this call had; simplify it "
    "(nested quantifiers such as (a+)+ backtrack exponentially)"
)
OUT_OF_TIME = "the call ran out of time after {seconds:.1f} s; search a narrower path or glob"
TOO_LARGE = "{path!r} is {size} bytes; read_file reads files up to {limit} bytes (use grep to find lines)"
RESULT_TOO_LARGE = "the result would be {size} bytes; files are limited to {limit} bytes, so nothing was written"
WRITE_REFUSED = (
    "writing {path!r} is not allowed: {reason} (the workspace never writes what git, Python, "
    "direnv or an editor would run or load)"
)
HARD_LINKED = "{path!r} has other hard links (the same file may live outside the root); it cannot be read or written through the workspace"
ACCESS_FAILED = "cannot access {path!r}: {reason}"
SYMLINK_LOOP = "symlink loop"
TOO_DEEP = "path {path!r} is too deep ({depth} components); workspace paths have at most {limit}"
BUSY = "the workspace is busy with other calls' file data and none was free for {seconds:.1f} s; try again with fewer calls at once"
OLD_NOT_FOUND = "old text not found in {path!r}; read the file and copy the text exactly"
OLD_NOT_UNIQUE = "old text occurs {count} times in {path!r}; add context or pass count={count}"
FILE_EXISTS = "{path!r} already exists; pass overwrite=true to replace it"


class WorkspaceError(Exception):
    """A workspace tool refused a request; the message is model-facing and names no host path."""

    #: The pipeline shows this message as written (the paths in it are the model's own).
    model_facing = True


def _name_key(name: str) -> str:
    """How a file system that ignores case and trailing dots or spaces (macOS, Windows) sees a name."""
    return name.casefold().rstrip(" .") or name


_GIT_DIR_MARKERS = ("HEAD", "objects", "refs")


@dataclass(frozen=True, kw_only=True, slots=True)
class WritePolicy:
    """What ``write_file`` and ``edit_file`` refuse to create or change: anything a common tool
    runs or loads just because it exists in the workspace. The one place this list lives; the
    defaults (``DEFAULT_WRITE_POLICY``) are described in SECURITY.md.

    - ``vcs_dirs``: a path component with one of these names, directory or file (``.git`` as a
      gitfile pointer too): git runs ``core.fsmonitor``, hooks and filters from its metadata;
    - ``git_dirs``: any directory git would treat as a git dir (``HEAD`` with ``objects`` and
      ``refs``, or with ``commondir``), or that the write would make one; and any file whose
      content is a gitfile pointer (``gitdir: ...``);
    - ``virtualenvs``: anything inside a directory holding ``pyvenv.cfg`` (whatever its name);
    - ``startup_files`` / ``startup_suffixes``: files Python or direnv load from wherever they
      are (``.pth``, ``sitecustomize.py``, ``usercustomize.py``, ``pyvenv.cfg``, ``.envrc``,
      bytecode);
    - ``loaded_files``: files other common tools load from the directory they run in and run
      what they name or contain: pdb's ``.pdbrc``, IPython's ``ipython_config.py``, npm's and
      yarn's ``.npmrc``/``.yarnrc``/``.yarnrc.yml``, vim's and neovim's
      ``.exrc``/``.nvimrc``/``.nvim.lua``, pre-commit's ``.pre-commit-config.yaml`` (run by ``git
      commit``), GitLab's ``.gitlab-ci.yml``;
    - ``editor_dirs``: editor, container and CI settings that can run commands (``.vscode/``,
      ``.idea/``, ``.zed/``, ``.devcontainer/``, ``.github/``, ``.gitlab/``, ``.circleci/``,
      ``.husky/``, cargo's ``.cargo/``);
    - ``shadowed_modules``: at the top of the root, ``NAME.py`` or ``NAME/__init__.py`` where
      ``NAME`` is a standard-library module (but ``test``) or a common tool's
      (``PYTHON_M_TOOLS``): ``python -m pytest`` (or ``pip``...) run there imports it in place of
      the real one;
    - ``tool_dirs``: caches and dependency trees that tools manage (``IGNORED_DIRS``).

    It is a list of what common tools load on their own, not a proof. Code that a command the
    user runs to run the project's code executes (a test and pytest's ``conftest.py``, a build
    script, a ``package.json`` script) is written like any other source: running it is the
    user's call, as it is for every file the model edits.

    Names compare case-insensitively, ignoring trailing dots and spaces. A host that needs
    something else passes its own instance (``dataclasses.replace`` one field) or a subclass
    overriding ``refusal``.
    """

    vcs_dirs: frozenset[str] = frozenset({".git", ".hg", ".svn"})
    editor_dirs: frozenset[str] = frozenset(
        {".vscode", ".idea", ".zed", ".devcontainer", ".github", ".gitlab", ".gitea", ".forgejo", ".circleci",
         ".buildkite", ".woodpecker", ".husky", ".cargo"}
    )
    tool_dirs: frozenset[str] = IGNORED_DIRS - {".git", ".hg", ".svn"}
    tool_dir_suffixes: tuple[str, ...] = IGNORED_DIR_SUFFIXES
    startup_files: frozenset[str] = frozenset(
        {"sitecustomize.py", "usercustomize.py", "pyvenv.cfg", ".envrc"}
    )
    startup_suffixes: tuple[str, ...] = (".pth", ".pyc")
    loaded_files: frozenset[str] = frozenset(
        {".pdbrc", "ipython_config.py", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".exrc", ".nvimrc",
         ".nvim.lua", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", ".gitlab-ci.yml", ".travis.yml",
         ".drone.yml", "bitbucket-pipelines.yml", "azure-pipelines.yml", "Jenkinsfile"}
    )
    git_dirs: bool = True
    virtualenvs: bool = True
    shadowed_modules: bool = True

    def refusal(self, root: Path, path: Path, content: bytes) -> str | None:
        """Why writing ``content`` to ``path`` (a resolved path under ``root``) is refused, or
        None. The reason is model-facing and names only root-relative parts."""
        parts = path.relative_to(root).parts
        vcs = {_name_key(n) for n in self.vcs_dirs}
        editor = {_name_key(n) for n in self.editor_dirs}
        tools = {_name_key(n) for n in self.tool_dirs}
        for part in parts:
            key = _name_key(part)
            if key in vcs:
                return f"{part!r} is version-control metadata"
            if key in editor:
                return f"{part!r} holds editor, container or CI settings, which can run commands"
            if key in tools or key.endswith(self.tool_dir_suffixes):
                return f"{part!r} is a cache or dependency directory that tools manage"
        name = _name_key(parts[-1]) if parts else ""
        if name in {_name_key(n) for n in self.startup_files} or name.endswith(self.startup_suffixes):
            return f"{parts[-1]!r} is loaded by Python or direnv wherever it is"
        if name in {_name_key(n) for n in self.loaded_files}:
            return f"{parts[-1]!r} is loaded by a common tool run in its directory"
        module = _top_level_module(parts)
        if self.shadowed_modules and module is not None and _shadows(module, root):
            return f"{module!r} would stand in for the installed module of that name in `python -m` run here"
        if self.git_dirs and content.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"gitdir:"):
            return "the content is a gitfile pointer, which git would follow"
        directory = root
        for depth, part in enumerate(parts):
            shown = "." if depth == 0 else "/".join(parts[:depth])
            if self.virtualenvs and os.path.lexists(directory / "pyvenv.cfg"):
                return f"{shown!r} is a virtualenv (it has pyvenv.cfg)"
            if self.git_dirs and _git_dir_after(directory, part):
                return f"{shown!r} is, or would become, a git directory (HEAD, objects and refs)"
            directory = directory / part
        return None


def _top_level_module(parts: tuple[str, ...]) -> str | None:
    """The module a file at the top of the root defines (`json.py`, `pip/__init__.py`), if any,
    named as a file system that drops trailing dots and spaces (Windows) would store it."""
    names = [part.rstrip(" .") or part for part in parts]
    if len(names) == 1 and names[0].endswith(".py"):
        return names[0][:-3]
    if len(names) == 2 and names[1] == "__init__.py":
        return names[0]
    return None


#: Tools people run as `python -m NAME` in a project, besides the standard library's: a module
#: of that name at the top of the workspace would run in their place. A fixed list, not the host
#: process's own import path, which depends on how the host was started (a review had `run.py`
#: refused because the host ran from `/`) and whose finders run code for any name asked.
PYTHON_M_TOOLS = frozenset({
    "pip", "pytest", "setuptools", "wheel", "build", "twine", "virtualenv", "pipx", "poetry", "pdm", "hatch",
    "uv", "tox", "nox", "coverage", "mypy", "ruff", "black", "isort", "flake8", "pylint", "pyflakes", "pycodestyle",
    "IPython", "jupyter", "notebook", "sphinx", "django", "flask", "uvicorn", "gunicorn", "celery", "pre_commit",
})


def _shadows(module: str, root: Path) -> bool:
    """Whether `module` at the top of the workspace would stand in for a module `python -m` run
    there looks for: a standard-library one (but `test`, the interpreter's own test suite, which
    nothing imports on its own) or a common tool's (`PYTHON_M_TOOLS`)."""
    return module.isidentifier() and module != "test" and (
        module in sys.stdlib_module_names or module in PYTHON_M_TOOLS)


def _git_dir_after(directory: Path, created: str) -> bool:
    """Whether ``directory`` looks like a git dir to git once ``created`` exists in it."""
    def present(name: str) -> bool:
        return name == created or os.path.lexists(directory / name)

    if not present("HEAD"):
        return False
    return (present("objects") and present("refs")) or present("commondir")


#: The policy of ``workspace_tools(..., allow_write=True)`` unless the host passes its own.
DEFAULT_WRITE_POLICY = WritePolicy()


class _Budget:
    """How long one tool call may work: until its deadline, or until it is stopped (its caller
    was cancelled, say because the run ended). Checked between files and around every match."""

    __slots__ = ("start", "end", "stopped")

    def __init__(self, seconds: float) -> None:
        self.start = time.monotonic()
        self.end = self.start + max(0.0, seconds)
        self.stopped = threading.Event()

    @classmethod
    def for_call(cls) -> _Budget:
        """The budget of the current call: the run's remaining time, or UNBOUNDED_CALL_SECONDS."""
        remaining = ExecutionContext.deadline() - anyio.current_time()
        return cls(remaining if math.isfinite(remaining) else UNBOUNDED_CALL_SECONDS)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def stop(self) -> None:
        self.stopped.set()

    def check(self) -> None:
        """Raise ``WorkspaceError`` once the call is stopped or out of time."""
        if self.stopped.is_set() or time.monotonic() >= self.end:
            raise WorkspaceError(OUT_OF_TIME.format(seconds=self.seconds))

    def search(self, pattern: Any, text: str, *, whole: bool = False) -> bool:
        """Whether ``pattern`` matches ``text``, in slices that double until the budget ends."""
        match = pattern.fullmatch if whole else pattern.search
        step = FIRST_MATCH_SLICE
        while True:
            remaining = self.end - time.monotonic()
            if self.stopped.is_set() or remaining <= 0:
                raise WorkspaceError(MATCH_TOO_SLOW.format(seconds=self.seconds))
            try:
                return match(text, concurrent=True, timeout=min(step, remaining)) is not None
            except TimeoutError:
                step *= 2


class _HeldBytes:
    """The file data all workspace calls of the process hold at once, capped at ``limit``.

    A call reserves what it is about to hold before reading (``hold``) and waits, until its
    budget ends, while others hold too much; one reservation larger than the whole cap waits
    for the cap alone. ``peak`` is the largest total ever held (for tests and benchmarks)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0
        self.peak = 0
        self._changed = threading.Condition()

    def hold(self, size: int, budget: _Budget | None) -> _Held:
        size = max(0, min(size, self.limit))
        end = budget.end if budget is not None else time.monotonic() + UNBOUNDED_CALL_SECONDS
        with self._changed:
            while self.held + size > self.limit:
                remaining = end - time.monotonic()
                if remaining <= 0 or (budget is not None and budget.stopped.is_set()):
                    seconds = budget.seconds if budget is not None else UNBOUNDED_CALL_SECONDS
                    raise WorkspaceError(BUSY.format(seconds=seconds))
                self._changed.wait(min(remaining, 0.05))
            self.held += size
            self.peak = max(self.peak, self.held)
        return _Held(self, size)

    def release(self, size: int) -> None:
        with self._changed:
            self.held -= size
            self._changed.notify_all()


class _Held:
    """One reservation; a context manager that gives it back."""

    __slots__ = ("_owner", "size")

    def __init__(self, owner: _HeldBytes, size: int) -> None:
        self._owner = owner
        self.size = size

    def __enter__(self) -> _Held:
        return self

    def __exit__(self, *exc: object) -> None:
        self._owner.release(self.size)
        self.size = 0


#: Shared by every workspace of the process.
HELD = _HeldBytes(MAX_HELD_BYTES)

#: One lock per workspace root, shared by every ``Workspace`` of that root in the process: the
#: write policy's check, the directories a write creates and the write itself happen under it.
_ROOT_LOCKS: dict[Path, threading.Lock] = {}
_ROOT_LOCKS_GUARD = threading.Lock()


def _root_lock(root: Path) -> threading.Lock:
    with _ROOT_LOCKS_GUARD:
        return _ROOT_LOCKS.setdefault(root, threading.Lock())


def _shorten(path: str, limit: int = 80) -> str:
    return path if len(path) <= limit else path[: limit - 1] + "…"


class Workspace:
    """The root and the path checks every workspace tool shares."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            raise ValueError(f"workspace root {str(root)!r} is not a directory")
        self.root = resolved
        self.write_lock = _root_lock(resolved)

    def resolve(self, path: str) -> Path:
        """The real path for ``path`` (relative to the root, or absolute inside it).

        Raises ``WorkspaceError`` when it, or a symlink on the way, leads outside the root, or
        when it has more than ``MAX_PATH_DEPTH`` components (checked first).
        """
        if "\x00" in path:
            raise WorkspaceError(OUTSIDE_ROOT.format(path=path))
        depth = sum(1 for part in path.replace("\\", "/").split("/") if part not in ("", "."))
        if depth > MAX_PATH_DEPTH:
            raise WorkspaceError(TOO_DEEP.format(path=_shorten(path), depth=depth, limit=MAX_PATH_DEPTH))
        try:
            real = (self.root / path).resolve()
        except RuntimeError:
            raise WorkspaceError(ACCESS_FAILED.format(path=path, reason=SYMLINK_LOOP)) from None
        except OSError as exc:
            raise WorkspaceError(ACCESS_FAILED.format(path=path, reason=exc.strerror or "error")) from None
        if real != self.root and not real.is_relative_to(self.root):
            raise WorkspaceError(OUTSIDE_ROOT.format(path=path))
        return real

    def show(self, real: Path) -> str:
        rel = real.relative_to(self.root).as_posix()
        return rel if rel else "."

    def inside(self, path: Path) -> bool:
        try:
            real = path.resolve()
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop
            return False
        return real == self.root or real.is_relative_to(self.root)

    def walk(self, start: Path, budget: _Budget) -> Iterator[Path]:
        """Files under ``start`` in sorted order; ignored dirs and escaping symlinks skipped.
        Raises ``WorkspaceError`` when ``budget`` runs out, however large the tree."""
        if start.is_file():
            yield start
            return
        for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
            budget.check()
            base = Path(dirpath)
            dirnames[:] = sorted(
                d for d in dirnames if d not in IGNORED_DIRS and not d.endswith(IGNORED_DIR_SUFFIXES)
            )
            for name in sorted(filenames):
                budget.check()
                path = base / name
                if path.is_symlink() and not self.inside(path):
                    continue
                try:
                    if not stat_module.S_ISREG(path.stat().st_mode):
                        continue  # FIFOs, sockets, devices: reading one could block forever
                except OSError:
                    continue
                yield path

    def relative(self, path: Path) -> str:
        """``path`` (under the root, possibly a symlink) as the model sees it."""
        return path.relative_to(self.root).as_posix()


def _entry_type(mode: int) -> str:
    if stat_module.S_ISDIR(mode):
        return "dir"
    if stat_module.S_ISREG(mode):
        return "file"
    return "other"


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head


#: Where the kernel says which file a descriptor really is (Linux); elsewhere the resolved path
#: checked before opening is all there is.
_PROC_FD = Path("/proc/self/fd")
_HAVE_PROC_FD = _PROC_FD.is_dir()


def _opened_inside(ws: Workspace, fd: int, real: Path) -> bool:
    """Whether the file behind ``fd`` is inside the root: checked on the open descriptor, so a
    path component swapped for a symlink after ``resolve`` cannot lead outside unnoticed."""
    opened = Path(os.readlink(_PROC_FD / str(fd))) if _HAVE_PROC_FD else real
    return opened == ws.root or opened.is_relative_to(ws.root)


def _open_checked(ws: Workspace, real: Path, shown: str) -> tuple[int, os.stat_result]:
    """A descriptor of a regular file inside the root, and its status; the caller closes it.

    The file is opened without following a final symlink and without blocking, and the opened
    descriptor's own path and type are checked, so a path swapped for a symlink or a FIFO
    between the check and the open is refused. A file with other hard links is refused, as for
    writes: the same file may live outside the root."""
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise WorkspaceError(NOT_FOUND.format(path=shown)) from None
    except OSError as exc:
        raise WorkspaceError(ACCESS_FAILED.format(path=shown, reason=exc.strerror or "error")) from None
    try:
        st = os.fstat(fd)
        if not _opened_inside(ws, fd, real):
            raise WorkspaceError(OUTSIDE_ROOT.format(path=shown))
        if not stat_module.S_ISREG(st.st_mode):
            raise WorkspaceError(NOT_A_FILE.format(path=shown))
        if st.st_nlink > 1:
            raise WorkspaceError(HARD_LINKED.format(path=shown))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _read_checked(
    ws: Workspace, real: Path, shown: str, limit: int, budget: _Budget | None = None, share: int = 1
) -> tuple[bytes | None, _Held]:
    """The bytes of a regular file inside the root (see ``_open_checked``), or None if it is
    larger than ``limit``, and the reservation of ``HELD`` the caller gives back when done with
    them: ``share`` times the file's size, taken once before reading (the caller's later copies,
    text and results, are in it: a second reservation while holding one could wait forever)."""
    fd, st = _open_checked(ws, real, shown)
    try:
        if st.st_size > limit:
            return None, HELD.hold(0, budget)
        reservation = HELD.hold(share * (st.st_size + 1), budget)
        try:
            with os.fdopen(fd, "rb", closefd=False) as f:
                return f.read(st.st_size + 1), reservation  # sized by the file, not by `limit`
        except BaseException:
            reservation.__exit__()
            raise
    finally:
        os.close(fd)


def _read_text(ws: Workspace, real: Path, shown: str, budget: _Budget | None = None, share: int = 1) -> tuple[str, _Held]:
    """The text of a file and its reservation of ``HELD`` (see ``_read_checked``)."""
    data, reservation = _read_checked(ws, real, shown, MAX_FILE_BYTES, budget, share)
    if data is None or len(data) > MAX_FILE_BYTES:
        reservation.__exit__()
        raise WorkspaceError(TOO_LARGE.format(path=shown, size=real.stat().st_size, limit=MAX_FILE_BYTES))
    if _is_binary(data[:BINARY_SNIFF_BYTES]):
        reservation.__exit__()
        raise WorkspaceError(BINARY_FILE.format(path=shown))
    return data.decode("utf-8", errors="replace"), reservation


# --- read-only tools ---------------------------------------------------------------------------


#: What ``str.splitlines`` splits on; read_file counts and cuts lines exactly as it does.
_LINE_BREAK = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_BREAK_CHARS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
_OTHER_BREAK = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _count_breaks(text: str) -> int:
    """How many line breaks ``text`` has (``\\r\\n`` is one): ``str.count`` when ``\\n`` is
    the only kind, as in almost every file."""
    if _OTHER_BREAK.search(text) is None:
        return text.count("\n")
    return _LINE_BREAK.subn("", text)[1]


class _LineWindow:
    """Lines ``start`` to ``end`` of a text fed in pieces, and the count of all its lines, as
    ``text.splitlines()`` would give them, holding only the window (each line cut at
    ``MAX_LINE_CHARS``) and the piece at hand: a piece entirely before or after the window is
    only counted."""

    def __init__(self, start: int, end: int) -> None:
        self.start, self.end = start, end
        self.done = 0  # lines ended so far
        self.open = False  # the current line has characters
        self.current: list[str] = []
        self.current_chars = 0
        self.chosen: list[str] = []

    def _keep(self, text: str) -> None:
        room = MAX_LINE_CHARS + 1 - self.current_chars
        if room > 0 and text:
            self.current.append(text[:room])
            self.current_chars += min(room, len(text))

    def _finish(self) -> None:
        if self.start <= self.done + 1 <= self.end:
            line = "".join(self.current)
            self.chosen.append(line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…")
        self.current, self.current_chars = [], 0
        self.done += 1

    def feed(self, text: str) -> None:
        if not text:
            return
        breaks = _count_breaks(text)
        first, last = self.done + 1, self.done + breaks + 1  # the lines this piece touches
        if last < self.start or first > self.end:
            self.done += breaks
            self.open = text[-1] not in _BREAK_CHARS if breaks else True
            return
        position = 0
        for found in _LINE_BREAK.finditer(text):
            if self.start <= self.done + 1 <= self.end:
                self._keep(text[position:found.start()])
            self._finish()
            position = found.end()
        rest = text[position:]
        self.open = bool(rest)
        if rest and self.start <= self.done + 1 <= self.end:
            self._keep(rest)

    def close(self) -> int:
        """The total number of lines (a last line without a break counts)."""
        if self.open:
            self._finish()
        return self.done


def _read_file(ws: Workspace, budget: _Budget, path: str, offset: int, limit: int) -> dict[str, Any]:
    real = ws.resolve(path)
    start = max(offset, 1)
    window = _LineWindow(start, start + limit - 1)
    fd, st = _open_checked(ws, real, path)
    # The chunk (bytes and text) and the window, with room for the widest characters.
    share = 3 * READ_CHUNK_BYTES + 4 * limit * (MAX_LINE_CHARS + 1)
    try:
        if st.st_size > MAX_FILE_BYTES:
            raise WorkspaceError(TOO_LARGE.format(path=path, size=st.st_size, limit=MAX_FILE_BYTES))
        with HELD.hold(share, budget), os.fdopen(fd, "rb", buffering=0, closefd=False) as f:
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            held = ""  # a "\r" at a chunk's end may start a "\r\n" in the next one
            first = True
            read = 0
            while True:
                budget.check()
                raw = f.read(min(READ_CHUNK_BYTES, MAX_FILE_BYTES + 1 - read))
                read += len(raw)
                if first and _is_binary(raw[:BINARY_SNIFF_BYTES]):
                    raise WorkspaceError(BINARY_FILE.format(path=path))
                first = False
                text = held + decoder.decode(raw, final=not raw)
                held = ""
                if raw and text.endswith("\r"):
                    held, text = "\r", text[:-1]
                window.feed(text)
                if not raw:
                    break
                if read > MAX_FILE_BYTES:  # it grew since fstat
                    raise WorkspaceError(TOO_LARGE.format(path=path, size=read, limit=MAX_FILE_BYTES))
    finally:
        os.close(fd)
    total = window.close()
    chosen = window.chosen
    end = start + len(chosen) - 1 if chosen else start - 1
    return {
        "path": ws.show(real),
        "content": "\n".join(chosen),
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "truncated": end < total,
    }


def _lines(text: str) -> Iterator[str]:
    """``text.splitlines()`` one line at a time, never a list of them all."""
    position = 0
    for found in _LINE_BREAK.finditer(text):
        yield text[position:found.start()]
        position = found.end()
    if position < len(text):
        yield text[position:]


def _list_dir(ws: Workspace, budget: _Budget, path: str) -> dict[str, Any]:
    real = ws.resolve(path)
    if not real.exists():
        raise WorkspaceError(NOT_FOUND.format(path=path))
    if not real.is_dir():
        raise WorkspaceError(NOT_A_DIR.format(path=path))
    entries = []
    for child in sorted(real.iterdir(), key=lambda p: p.name):
        budget.check()
        try:
            st = child.lstat()
        except OSError:
            continue
        if stat_module.S_ISLNK(st.st_mode):
            kind = "symlink"
        else:
            kind = _entry_type(st.st_mode)
        entries.append({"name": child.name, "type": kind, "size": st.st_size if kind == "file" else None})
    return {"path": ws.show(real), "entries": entries}


def _glob(ws: Workspace, budget: _Budget, pattern: str, path: str, limit: int) -> dict[str, Any]:
    base = ws.resolve(path)
    if not base.is_dir():
        raise WorkspaceError(NOT_A_DIR.format(path=path))
    matcher = _glob_matcher(pattern, budget)
    matches: list[str] = []
    truncated = False
    for file in ws.walk(base, budget):
        rel = file.relative_to(base).as_posix()
        if matcher(rel):
            if len(matches) >= limit:
                truncated = True
                break
            matches.append(ws.relative(file))
    return {"matches": matches, "truncated": truncated}


def _glob_matcher(pattern: str, budget: _Budget) -> Any:
    """``**`` spans directories, ``*`` and ``?`` stay within one; a pattern without ``/`` matches
    the file name at any depth (``*.py``)."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise WorkspaceError(PATTERN_TOO_LONG.format(size=len(pattern), limit=MAX_PATTERN_CHARS))
    if "/" not in pattern:
        compiled = regex.compile(fnmatch.translate(pattern), cache_pattern=False)
        return lambda rel: budget.search(compiled, rel.rsplit("/", 1)[-1], whole=True)
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += regex.escape(pattern[i])
            i += 1
    compiled = regex.compile(out, regex.DOTALL, cache_pattern=False)
    return lambda rel: budget.search(compiled, rel, whole=True)


def _pattern_size(pattern: str, flags: int) -> int:
    """How large ``pattern`` grows once the engine unrolls its counted repeats: one unit per
    node of the parsed pattern, a repeat multiplying what it repeats by its upper count (the
    lower count plus one when open-ended). Parsing is cheap and linear; compiling is what grows.
    Raises ``regex.error`` for an invalid pattern. Uses the engine's own parser, so the count
    follows its syntax exactly (verbose mode, nested sets, comments)."""
    from regex import _regex_core as core
    from regex._main import _Info, _parse_pattern, _Source

    source = _Source(pattern)
    info = _Info(flags, source.char_type, {})
    source.ignore_space = bool(info.flags & regex.VERBOSE)
    try:
        tree = _parse_pattern(source, info)
    except core._UnscopedFlagSet:  # a global flag set mid-pattern: parse again with it
        source = _Source(pattern)
        info = _Info(info.global_flags, source.char_type, {})
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        tree = _parse_pattern(source, info)
    cap = MAX_PATTERN_SIZE + 1
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(tree, False)]
    while stack:  # post-order, iteratively: a deeply nested pattern cannot exhaust the stack
        node, done = stack.pop()
        children = [
            c for v in vars(node).values()
            for c in (v if isinstance(v, (list, tuple)) else (v,))
            if isinstance(c, core.RegexBase)
        ]
        if not done:
            stack.append((node, True))
            stack.extend((c, False) for c in children)
            continue
        size = 1 + sum(sizes.pop(id(c), 1) for c in children) + len(getattr(node, "characters", ()) or ())
        if hasattr(node, "min_count") and hasattr(node, "max_count"):
            count = node.max_count if node.max_count is not None else node.min_count + 1
            size *= max(1, count)
        sizes[id(node)] = min(size, cap)
    return sizes.get(id(tree), 1)


def _compile(pattern: str, flags: int, budget: _Budget) -> Any:
    """``pattern`` compiled, once its length and unrolled size are within the caps; compiling
    happens under the call's budget (checked before and after: compiling cannot be interrupted,
    which is why the size is capped first). The engine's cache is bypassed: model patterns would
    otherwise stay in the host's memory."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise WorkspaceError(PATTERN_TOO_LONG.format(size=len(pattern), limit=MAX_PATTERN_CHARS))
    try:
        if _pattern_size(pattern, flags) > MAX_PATTERN_SIZE:
            raise WorkspaceError(PATTERN_TOO_BIG.format(limit=MAX_PATTERN_SIZE))
        budget.check()
        compiled = regex.compile(pattern, flags, cache_pattern=False)
    except (regex.error, OverflowError, ValueError) as exc:
        raise WorkspaceError(BAD_REGEX.format(pattern=pattern, error=exc)) from None
    except RecursionError:
        raise WorkspaceError(BAD_REGEX.format(pattern=pattern, error="nested too deeply")) from None
    budget.check()
    return compiled


def _grep(
    ws: Workspace, budget: _Budget, pattern: str, path: str, glob: str | None, ignore_case: bool, limit: int
) -> dict[str, Any]:
    compiled = _compile(pattern, regex.IGNORECASE if ignore_case else 0, budget)
    base = ws.resolve(path)
    if not base.exists():
        raise WorkspaceError(NOT_FOUND.format(path=path))
    matcher = _glob_matcher(glob, budget) if glob else None
    matches: list[dict[str, Any]] = []
    searched = 0
    truncated = False
    for file in ws.walk(base, budget):
        if matcher is not None and not matcher(file.relative_to(base).as_posix() if base.is_dir() else file.name):
            continue
        try:  # a symlink inside the root is read as its (checked) target; the bytes and the text
            data, reservation = _read_checked(ws, file.resolve(), ws.relative(file), MAX_GREP_FILE_BYTES, budget, 5)
        except (OSError, RuntimeError, WorkspaceError) as exc:
            if isinstance(exc, WorkspaceError) and (budget.stopped.is_set() or exc.args[0].startswith("the workspace is busy")):
                raise
            continue
        with reservation:
            if data is None or len(data) > MAX_GREP_FILE_BYTES or _is_binary(data[:BINARY_SNIFF_BYTES]):
                continue
            searched += 1
            rel = ws.relative(file)
            text = data.decode("utf-8", errors="replace")
            del data
            for number, line in enumerate(_lines(text), 1):
                if budget.search(compiled, line):
                    if len(matches) >= limit:
                        truncated = True
                        break
                    matches.append({"path": rel, "line": number, "text": line.strip()[:MAX_LINE_CHARS]})
        if truncated:
            break
    return {"matches": matches, "files_searched": searched, "truncated": truncated}


def _stat(ws: Workspace, path: str) -> dict[str, Any]:
    real = ws.resolve(path)
    if not real.exists():
        raise WorkspaceError(NOT_FOUND.format(path=path))
    st = real.stat()
    return {
        "path": ws.show(real),
        "type": _entry_type(st.st_mode),
        "size": st.st_size,
        "modified": round(st.st_mtime, 3),
    }


# --- writing tools -----------------------------------------------------------------------------


def _check_writable(ws: Workspace, policy: WritePolicy, real: Path, shown: str, data: bytes) -> None:
    """Refuse, before anything is written: a result over the file-size cap, a path the write
    policy protects, and a file with other hard links (the same file may live outside the root)."""
    if len(data) > MAX_FILE_BYTES:
        raise WorkspaceError(RESULT_TOO_LARGE.format(size=len(data), limit=MAX_FILE_BYTES))
    reason = policy.refusal(ws.root, real, data) if real != ws.root else "it is the workspace root"
    if reason is not None:
        raise WorkspaceError(WRITE_REFUSED.format(path=shown, reason=reason))
    try:
        st = real.lstat()
    except FileNotFoundError:
        return
    if stat_module.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise WorkspaceError(HARD_LINKED.format(path=shown))


def _write_file(ws: Workspace, policy: WritePolicy, budget: _Budget, path: str, content: str, overwrite: bool) -> dict[str, Any]:
    real = ws.resolve(path)
    if len(content) > MAX_FILE_BYTES:  # even all-ASCII it is too large: refuse before encoding it
        raise WorkspaceError(RESULT_TOO_LARGE.format(size=len(content), limit=MAX_FILE_BYTES))
    with HELD.hold(4 * len(content), budget):
        data = content.encode("utf-8")
        with ws.write_lock:
            _check_writable(ws, policy, real, path, data)
            existed = real.exists()
            if existed and not real.is_file():
                raise WorkspaceError(NOT_A_FILE.format(path=path))
            if existed and not overwrite:
                raise WorkspaceError(FILE_EXISTS.format(path=path))
            made = _make_parents(ws, real.parent)
            try:
                _write_checked(ws, real, path, data)
            except BaseException:
                _undo(made)
                raise
            _recheck(ws, policy, real, path, data, [] if existed else [real], made)
    return {"path": ws.show(real), "bytes_written": len(data), "created": not existed}


def _make_parents(ws: Workspace, directory: Path) -> list[Path]:
    """Create the missing directories up to ``directory``; returns them, outermost first."""
    missing: list[Path] = []
    while directory != ws.root and not directory.exists():
        missing.append(directory)
        directory = directory.parent
    missing.reverse()
    made: list[Path] = []
    try:
        for each in missing:
            each.mkdir()
            made.append(each)
    except BaseException:
        _undo(made)
        raise
    return made


def _undo(made: list[Path], files: list[Path] = ()) -> None:  # type: ignore[assignment]
    """Remove what a refused write created: its file, then its directories, innermost first."""
    for file in files:
        try:
            file.unlink()
        except OSError:
            pass
    for directory in reversed(made):
        try:
            directory.rmdir()
        except OSError:  # something else appeared in it meanwhile: leave it
            pass


def _recheck(
    ws: Workspace, policy: WritePolicy, real: Path, shown: str, data: bytes, files: list[Path], made: list[Path]
) -> None:
    """The policy once more, with the write done: a file or directory that completes a git
    directory, a virtualenv or a startup file together with parts someone else wrote (another
    process, a write outside this lock) is removed again and the write refused."""
    if not files and not made:
        return  # nothing new exists: the check before the write saw this very tree
    for created in [*made, *files]:
        reason = policy.refusal(ws.root, created, data if created == real else b"")
        if reason is not None:
            _undo(made, files)
            raise WorkspaceError(WRITE_REFUSED.format(path=shown, reason=reason))


def _write_checked(ws: Workspace, real: Path, shown: str, data: bytes) -> None:
    """Write through a descriptor whose real path is checked before anything is truncated."""
    try:
        fd = os.open(real, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise WorkspaceError(ACCESS_FAILED.format(path=shown, reason=exc.strerror or "error")) from None
    try:
        st = os.fstat(fd)
        if not _opened_inside(ws, fd, real) or not stat_module.S_ISREG(st.st_mode):
            raise WorkspaceError(OUTSIDE_ROOT.format(path=shown))
        if st.st_nlink > 1:
            raise WorkspaceError(HARD_LINKED.format(path=shown))
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def _edit_file(ws: Workspace, policy: WritePolicy, budget: _Budget, path: str, old: str, new: str, count: int) -> dict[str, Any]:
    real = ws.resolve(path)
    _check_writable(ws, policy, real, path, b"")  # the path first: a protected file is not even read
    # The bytes, the text, and the result as text and bytes, reserved before reading.
    text, reservation = _read_text(ws, real, path, budget, 9)
    with reservation:
        found = text.count(old) if old else 0
        if found == 0:
            raise WorkspaceError(OLD_NOT_FOUND.format(path=path))
        if found != count:
            raise WorkspaceError(OLD_NOT_UNIQUE.format(count=found, path=path))
        # The result's size, before building it: a short `old` and a long `new` multiply.
        size = len(text.encode("utf-8")) + found * (len(new.encode("utf-8")) - len(old.encode("utf-8")))
        if size > MAX_FILE_BYTES:
            raise WorkspaceError(RESULT_TOO_LARGE.format(size=size, limit=MAX_FILE_BYTES))
        data = text.replace(old, new).encode("utf-8")
        with ws.write_lock:
            _check_writable(ws, policy, real, path, data)
            _write_checked(ws, real, path, data)
    return {"path": ws.show(real), "replacements": found}


# --- definitions -------------------------------------------------------------------------------


async def _threaded(fn: Any, *args: Any, budget: _Budget | None = None) -> Any:
    """Run a tool body in a thread; an OS error becomes a WorkspaceError whose text has the
    error's reason but not its host path. When the caller is cancelled (its run ended), the
    thread is abandoned and its ``budget`` stopped, so its work ends at the next check and its
    result is discarded."""
    try:
        return await anyio.to_thread.run_sync(partial(fn, *args), abandon_on_cancel=True)
    except OSError as exc:
        raise WorkspaceError(f"the file operation failed: {exc.strerror or type(exc).__name__}") from None
    except RuntimeError:  # pathlib's symlink-loop error names the host path
        raise WorkspaceError(f"the file operation failed: {SYMLINK_LOOP}") from None
    finally:
        if budget is not None:
            budget.stop()


def _obj(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": required, "additionalProperties": False}


_PATH = {"type": "string", "description": "Path relative to the workspace root"}
_GREP_MATCH = _obj(
    {"path": {"type": "string"}, "line": {"type": "integer"}, "text": {"type": "string"}},
    ["path", "line", "text"],
)


def _render_read(args: Mapping[str, Any], value: Mapping[str, Any]) -> list[dict[str, Any]]:
    header = f"{value['path']} (lines {value['start_line']}-{value['end_line']} of {value['total_lines']})"
    return [{"type": "text", "text": header + "\n" + value["content"]}]


def _render_grep(args: Mapping[str, Any], value: Mapping[str, Any]) -> list[dict[str, Any]]:
    lines = [f"{m['path']}:{m['line']}: {m['text']}" for m in value["matches"]]
    if value["truncated"]:
        lines.append("(more matches not shown; narrow the pattern or raise limit)")
    return [{"type": "text", "text": "\n".join(lines) if lines else "(no matches)"}]


def _render_glob(args: Mapping[str, Any], value: Mapping[str, Any]) -> list[dict[str, Any]]:
    lines = list(value["matches"])
    if value["truncated"]:
        lines.append("(more files not shown; narrow the pattern or raise limit)")
    return [{"type": "text", "text": "\n".join(lines) if lines else "(no files)"}]


def workspace_tools(
    root: str | os.PathLike[str] = ".", *, allow_write: bool = False, write_policy: WritePolicy = DEFAULT_WRITE_POLICY
) -> list[ToolDefinition]:
    """The workspace tools for ``root``; ``write_file`` and ``edit_file`` only with ``allow_write``,
    refusing what ``write_policy`` protects.

    Raises ``ValueError`` when ``root`` is not a directory.
    """
    ws = Workspace(root)

    async def read_file(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(_read_file, ws, budget, args["path"], args["offset"], args["limit"], budget=budget)

    async def list_dir(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(_list_dir, ws, budget, args["path"], budget=budget)

    async def glob(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(_glob, ws, budget, args["pattern"], args["path"], args["limit"], budget=budget)

    async def grep(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(
            _grep, ws, budget, args["pattern"], args["path"], args.get("glob"), args["ignore_case"], args["limit"],
            budget=budget,
        )

    async def stat(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_stat, ws, args["path"])

    tools = [
        define_tool(
            name="read_file",
            description="Read a text file (or a window of its lines).",
            parameters_schema=_obj(
                {
                    "path": _PATH,
                    "offset": {"type": "integer", "minimum": 1, "default": 1, "description": "First line (1-based)"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_READ_LINES, "default": 400, "description": "Maximum number of lines"},
                },
                ["path"],
            ),
            output={
                "schema": _obj(
                    {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "start_line": {"type": "integer"},
                        "end_line": {"type": "integer"},
                        "total_lines": {"type": "integer"},
                        "truncated": {"type": "boolean"},
                    },
                    ["path", "content", "start_line", "end_line", "total_lines", "truncated"],
                ),
                "render": _render_read,
            },
            execute=read_file,
            annotations=_annotations("Read file", _READ_ONLY),
            is_concurrency_safe=True,
            present_call=lambda a: generic_card(f"Read {a.get('path')}"),
        ),
        define_tool(
            name="list_dir",
            description="List the files and folders in a directory (name, type, size).",
            parameters_schema=_obj({"path": {**_PATH, "default": "."}}, []),
            output={
                "schema": _obj(
                    {
                        "path": {"type": "string"},
                        "entries": {
                            "type": "array",
                            "items": _obj(
                                {
                                    "name": {"type": "string"},
                                    "type": {"enum": ["file", "dir", "symlink", "other"]},
                                    "size": {"type": ["integer", "null"]},
                                },
                                ["name", "type", "size"],
                            ),
                        },
                    },
                    ["path", "entries"],
                )
            },
            execute=list_dir,
            annotations=_annotations("List directory", _READ_ONLY),
            is_concurrency_safe=True,
        ),
        define_tool(
            name="glob",
            description="Find files by name with a glob pattern (`**/*.py`; a pattern without `/` matches names at any depth).",
            parameters_schema=_obj(
                {
                    "pattern": {"type": "string", "minLength": 1},
                    "path": {**_PATH, "default": ".", "description": "Directory to search"},
                    "limit": {"type": "integer", "minimum": 1, "default": 1000},
                },
                ["pattern"],
            ),
            output={
                "schema": _obj(
                    {"matches": {"type": "array", "items": {"type": "string"}}, "truncated": {"type": "boolean"}},
                    ["matches", "truncated"],
                ),
                "render": _render_glob,
            },
            execute=glob,
            annotations=_annotations("Find files", _READ_ONLY),
            is_concurrency_safe=True,
        ),
        define_tool(
            name="grep",
            description="Find text in files: search text files for a regular expression; returns path, line and text per match.",
            parameters_schema=_obj(
                {
                    "pattern": {"type": "string", "minLength": 1, "description": "Python regular expression"},
                    "path": {**_PATH, "default": ".", "description": "File or directory to search"},
                    "glob": {"type": "string", "description": "Only files matching this glob"},
                    "ignore_case": {"type": "boolean", "default": False},
                    "limit": {"type": "integer", "minimum": 1, "default": 500, "description": "Maximum matches"},
                },
                ["pattern"],
            ),
            output={
                "schema": _obj(
                    {
                        "matches": {"type": "array", "items": _GREP_MATCH},
                        "files_searched": {"type": "integer"},
                        "truncated": {"type": "boolean"},
                    },
                    ["matches", "files_searched", "truncated"],
                ),
                "render": _render_grep,
            },
            execute=grep,
            annotations=_annotations("Search files", _READ_ONLY),
            is_concurrency_safe=True,
        ),
        define_tool(
            name="stat",
            description="File or folder details: type, size and modification time (Unix seconds) of a path.",
            parameters_schema=_obj({"path": _PATH}, ["path"]),
            output={
                "schema": _obj(
                    {
                        "path": {"type": "string"},
                        "type": {"enum": ["file", "dir", "other"]},
                        "size": {"type": "integer"},
                        "modified": {"type": "number"},
                    },
                    ["path", "type", "size", "modified"],
                )
            },
            execute=stat,
            annotations=_annotations("File info", _READ_ONLY),
            is_concurrency_safe=True,
        ),
    ]
    if allow_write:
        tools.extend(_write_tools(ws, write_policy))
    return tools


def _write_tools(ws: Workspace, policy: WritePolicy) -> list[ToolDefinition]:
    async def write_file(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(
            _write_file, ws, policy, budget, args["path"], args["content"], args["overwrite"], budget=budget
        )

    async def edit_file(args: Mapping[str, Any], ctx: Any) -> Any:
        budget = _Budget.for_call()
        return await _threaded(
            _edit_file, ws, policy, budget, args["path"], args["old"], args["new"], args["count"], budget=budget
        )

    return [
        define_tool(
            name="write_file",
            description="Write (create or overwrite) a text file; parent folders are created.",
            parameters_schema=_obj(
                {
                    "path": _PATH,
                    "content": {"type": "string"},
                    "overwrite": {"type": "boolean", "default": False},
                },
                ["path", "content"],
            ),
            output={
                "schema": _obj(
                    {"path": {"type": "string"}, "bytes_written": {"type": "integer"}, "created": {"type": "boolean"}},
                    ["path", "bytes_written", "created"],
                )
            },
            execute=write_file,
            annotations=_annotations("Write file", _WRITES, idempotentHint=True),
            present_call=lambda a: diff_card(str(a.get("path"))),
        ),
        define_tool(
            name="edit_file",
            description="Edit a file by replacing exact text; `old` must occur exactly `count` times.",
            parameters_schema=_obj(
                {
                    "path": _PATH,
                    "old": {"type": "string", "minLength": 1},
                    "new": {"type": "string"},
                    "count": {"type": "integer", "minimum": 1, "default": 1},
                },
                ["path", "old", "new"],
            ),
            output={
                "schema": _obj({"path": {"type": "string"}, "replacements": {"type": "integer"}}, ["path", "replacements"])
            },
            execute=edit_file,
            annotations=_annotations("Edit file", _WRITES, idempotentHint=False),
            present_call=lambda a: diff_card(str(a.get("path"))),
        ),
    ]


def register_workspace(
    registry: Registry, root: str | os.PathLike[str] = ".", *, allow_write: bool = False,
    write_policy: WritePolicy = DEFAULT_WRITE_POLICY,
) -> list[Any]:
    """Register the workspace tools on ``registry``; returns their handles."""
    return [registry.register(t) for t in workspace_tools(root, allow_write=allow_write, write_policy=write_policy)]
