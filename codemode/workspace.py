"""The built-in workspace tools: read-only file access (and optional writes) confined to one root.

Every path a model gives is resolved (symlinks followed) and must stay inside the root, or the
call fails naming the path as given; results show paths relative to the root with ``/``
separators, so the host's absolute paths never reach the model. Walks (``glob``, ``grep``) skip
version-control and tool caches (``IGNORED_DIRS``) and never follow a symlink out of the root.
The read-only tools are concurrency-safe and do their file work in a thread, so a snippet that
gathers them really overlaps them.
"""

from __future__ import annotations

import fnmatch
import os
import stat as stat_module
import time
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread
import regex

from .definition import ToolDefinition, define_tool
from .presentation import diff_card, generic_card
from .registry import Registry

__all__ = ["IGNORED_DIRS", "WorkspaceError", "register_workspace", "workspace_tools"]

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
#: read_file loads at most this much; larger files are for grep or a narrower tool.
MAX_READ_FILE_BYTES = 32 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192
#: Wall-clock budget for the pattern matching of one glob or grep call. Model-written patterns run
#: on the host: the `regex` engine honours a timeout and releases the GIL while it matches, so a
#: catastrophic pattern such as (a+)+$ costs one bounded, interruptible thread, not the host.
MATCH_SECONDS = 10.0

OUTSIDE_ROOT = "path {path!r} is outside the workspace root"
NOT_FOUND = "no such file or directory: {path!r}"
NOT_A_FILE = "{path!r} is not a regular file"
NOT_A_DIR = "{path!r} is not a directory"
BINARY_FILE = "{path!r} looks binary (it has NUL bytes); it cannot be read as text"
BAD_REGEX = "invalid regular expression {pattern!r}: {error}"
MATCH_TOO_SLOW = (
    "the pattern took longer than {seconds:g} s to match; simplify it "
    "(nested quantifiers such as (a+)+ backtrack exponentially)"
)
TOO_LARGE = "{path!r} is {size} bytes; read_file reads files up to {limit} bytes (use grep to find lines)"
WRITE_PROTECTED = "writing under {part!r} is not allowed (version control, virtualenvs and caches are off limits)"
HARD_LINKED = "{path!r} has other hard links; it cannot be written through the workspace"
ACCESS_FAILED = "cannot access {path!r}: {reason}"
SYMLINK_LOOP = "symlink loop"
OLD_NOT_FOUND = "old text not found in {path!r}; read the file and copy the text exactly"
OLD_NOT_UNIQUE = "old text occurs {count} times in {path!r}; add context or pass count={count}"
FILE_EXISTS = "{path!r} already exists; pass overwrite=true to replace it"


class WorkspaceError(Exception):
    """A workspace tool refused a request; the message is model-facing and names no host path."""


class Workspace:
    """The root and the path checks every workspace tool shares."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        resolved = Path(root).resolve()
        if not resolved.is_dir():
            raise ValueError(f"workspace root {str(root)!r} is not a directory")
        self.root = resolved

    def resolve(self, path: str) -> Path:
        """The real path for ``path`` (relative to the root, or absolute inside it).

        Raises ``WorkspaceError`` when it, or a symlink on the way, leads outside the root.
        """
        if "\x00" in path:
            raise WorkspaceError(OUTSIDE_ROOT.format(path=path))
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

    def walk(self, start: Path) -> Iterator[Path]:
        """Files under ``start`` in sorted order; ignored dirs and escaping symlinks skipped."""
        if start.is_file():
            yield start
            return
        for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
            base = Path(dirpath)
            dirnames[:] = sorted(
                d for d in dirnames if d not in IGNORED_DIRS and not d.endswith(IGNORED_DIR_SUFFIXES)
            )
            for name in sorted(filenames):
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


def _read_checked(ws: Workspace, real: Path, shown: str, limit: int) -> bytes | None:
    """The bytes of a regular file inside the root, or None if it is larger than ``limit``.

    The file is opened without following a final symlink and without blocking, and the opened
    descriptor's own path and type are checked, so a path swapped for a symlink or a FIFO
    between the check and the open is refused."""
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
        if st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def _read_text(ws: Workspace, real: Path, shown: str) -> str:
    data = _read_checked(ws, real, shown, MAX_READ_FILE_BYTES)
    if data is None or len(data) > MAX_READ_FILE_BYTES:
        raise WorkspaceError(
            TOO_LARGE.format(path=shown, size=real.stat().st_size, limit=MAX_READ_FILE_BYTES)
        )
    if _is_binary(data[:BINARY_SNIFF_BYTES]):
        raise WorkspaceError(BINARY_FILE.format(path=shown))
    return data.decode("utf-8", errors="replace")


# --- read-only tools ---------------------------------------------------------------------------


def _read_file(ws: Workspace, path: str, offset: int, limit: int) -> dict[str, Any]:
    real = ws.resolve(path)
    lines = _read_text(ws, real, path).splitlines()
    start = max(offset, 1)
    chosen = lines[start - 1 : start - 1 + limit]
    text = "\n".join(line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…" for line in chosen)
    end = start + len(chosen) - 1 if chosen else start - 1
    return {
        "path": ws.show(real),
        "content": text,
        "start_line": start,
        "end_line": end,
        "total_lines": len(lines),
        "truncated": end < len(lines),
    }


def _list_dir(ws: Workspace, path: str) -> dict[str, Any]:
    real = ws.resolve(path)
    if not real.exists():
        raise WorkspaceError(NOT_FOUND.format(path=path))
    if not real.is_dir():
        raise WorkspaceError(NOT_A_DIR.format(path=path))
    entries = []
    for child in sorted(real.iterdir(), key=lambda p: p.name):
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


class _Deadline:
    """The matching budget of one glob or grep call."""

    __slots__ = ("end",)

    def __init__(self) -> None:
        self.end = time.monotonic() + MATCH_SECONDS

    def search(self, pattern: Any, text: str, *, whole: bool = False) -> bool:
        remaining = self.end - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            found = (pattern.fullmatch if whole else pattern.search)(
                text, concurrent=True, timeout=remaining
            )
        except TimeoutError:
            raise WorkspaceError(MATCH_TOO_SLOW.format(seconds=MATCH_SECONDS)) from None
        return found is not None


def _glob(ws: Workspace, pattern: str, path: str, limit: int) -> dict[str, Any]:
    base = ws.resolve(path)
    if not base.is_dir():
        raise WorkspaceError(NOT_A_DIR.format(path=path))
    matcher = _glob_matcher(pattern, _Deadline())
    matches: list[str] = []
    truncated = False
    for file in ws.walk(base):
        rel = file.relative_to(base).as_posix()
        if matcher(rel):
            if len(matches) >= limit:
                truncated = True
                break
            matches.append(ws.relative(file))
    return {"matches": matches, "truncated": truncated}


def _glob_matcher(pattern: str, deadline: _Deadline) -> Any:
    """``**`` spans directories, ``*`` and ``?`` stay within one; a pattern without ``/`` matches
    the file name at any depth (``*.py``)."""
    if "/" not in pattern:
        compiled = regex.compile(fnmatch.translate(pattern))
        return lambda rel: deadline.search(compiled, rel.rsplit("/", 1)[-1], whole=True)
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
    compiled = regex.compile(out, regex.DOTALL)
    return lambda rel: deadline.search(compiled, rel, whole=True)


def _grep(
    ws: Workspace, pattern: str, path: str, glob: str | None, ignore_case: bool, limit: int
) -> dict[str, Any]:
    try:
        compiled = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except (regex.error, OverflowError, ValueError) as exc:
        raise WorkspaceError(BAD_REGEX.format(pattern=pattern, error=exc)) from None
    base = ws.resolve(path)
    if not base.exists():
        raise WorkspaceError(NOT_FOUND.format(path=path))
    deadline = _Deadline()
    matcher = _glob_matcher(glob, deadline) if glob else None
    matches: list[dict[str, Any]] = []
    searched = 0
    truncated = False
    for file in ws.walk(base):
        if matcher is not None and not matcher(file.relative_to(base).as_posix() if base.is_dir() else file.name):
            continue
        try:  # a symlink inside the root is read as its (checked) target
            data = _read_checked(ws, file.resolve(), ws.relative(file), MAX_GREP_FILE_BYTES)
        except (OSError, RuntimeError, WorkspaceError):
            continue
        if data is None or len(data) > MAX_GREP_FILE_BYTES:
            continue
        if _is_binary(data[:BINARY_SNIFF_BYTES]):
            continue
        searched += 1
        rel = ws.relative(file)
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if deadline.search(compiled, line):
                if len(matches) >= limit:
                    truncated = True
                    break
                text = line.strip()
                matches.append({"path": rel, "line": number, "text": text[:MAX_LINE_CHARS]})
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


def _check_writable(ws: Workspace, real: Path, shown: str) -> None:
    """Refuse writes under version control, virtualenvs and caches (a `.git/hooks` file or a
    `.git/config` entry runs code on the host later), and through hard links (the same file may
    live outside the root)."""
    for part in real.relative_to(ws.root).parts[:-1] if real != ws.root else ():
        if part in IGNORED_DIRS or part.endswith(IGNORED_DIR_SUFFIXES):
            raise WorkspaceError(WRITE_PROTECTED.format(part=part))
    try:
        st = real.lstat()
    except FileNotFoundError:
        return
    if stat_module.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise WorkspaceError(HARD_LINKED.format(path=shown))


def _write_file(ws: Workspace, path: str, content: str, overwrite: bool) -> dict[str, Any]:
    real = ws.resolve(path)
    _check_writable(ws, real, path)
    existed = real.exists()
    if existed and not real.is_file():
        raise WorkspaceError(NOT_A_FILE.format(path=path))
    if existed and not overwrite:
        raise WorkspaceError(FILE_EXISTS.format(path=path))
    real.parent.mkdir(parents=True, exist_ok=True)
    data = content.encode("utf-8")
    _write_checked(ws, real, path, data)
    return {"path": ws.show(real), "bytes_written": len(data), "created": not existed}


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


def _edit_file(ws: Workspace, path: str, old: str, new: str, count: int) -> dict[str, Any]:
    real = ws.resolve(path)
    _check_writable(ws, real, path)
    text = _read_text(ws, real, path)
    found = text.count(old) if old else 0
    if found == 0:
        raise WorkspaceError(OLD_NOT_FOUND.format(path=path))
    if found != count:
        raise WorkspaceError(OLD_NOT_UNIQUE.format(count=found, path=path))
    _write_checked(ws, real, path, text.replace(old, new).encode("utf-8"))
    return {"path": ws.show(real), "replacements": found}


# --- definitions -------------------------------------------------------------------------------


async def _threaded(fn: Any, *args: Any) -> Any:
    """Run a tool body in a thread; an OS error becomes a WorkspaceError whose text has the
    error's reason but not its host path."""
    try:
        return await anyio.to_thread.run_sync(partial(fn, *args), abandon_on_cancel=True)
    except OSError as exc:
        raise WorkspaceError(f"the file operation failed: {exc.strerror or type(exc).__name__}") from None
    except RuntimeError:  # pathlib's symlink-loop error names the host path
        raise WorkspaceError(f"the file operation failed: {SYMLINK_LOOP}") from None


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


def workspace_tools(root: str | os.PathLike[str] = ".", *, allow_write: bool = False) -> list[ToolDefinition]:
    """The workspace tools for ``root``; ``write_file`` and ``edit_file`` only with ``allow_write``.

    Raises ``ValueError`` when ``root`` is not a directory.
    """
    ws = Workspace(root)

    async def read_file(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_read_file, ws, args["path"], args["offset"], args["limit"])

    async def list_dir(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_list_dir, ws, args["path"])

    async def glob(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_glob, ws, args["pattern"], args["path"], args["limit"])

    async def grep(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(
            _grep, ws, args["pattern"], args["path"], args.get("glob"), args["ignore_case"], args["limit"]
        )

    async def stat(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_stat, ws, args["path"])

    tools = [
        define_tool(
            name="read_file",
            description="Read a text file, optionally a window of lines.",
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
            is_concurrency_safe=True,
            present_call=lambda a: generic_card(f"Read {a.get('path')}"),
        ),
        define_tool(
            name="list_dir",
            description="List a directory's entries (name, type, size).",
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
            is_concurrency_safe=True,
        ),
        define_tool(
            name="glob",
            description="Find files by glob pattern (`**/*.py`; a pattern without `/` matches names at any depth).",
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
            is_concurrency_safe=True,
        ),
        define_tool(
            name="grep",
            description="Search text files for a regular expression; returns path, line and text per match.",
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
            is_concurrency_safe=True,
        ),
        define_tool(
            name="stat",
            description="Type, size and modification time (Unix seconds) of a path.",
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
            is_concurrency_safe=True,
        ),
    ]
    if allow_write:
        tools.extend(_write_tools(ws))
    return tools


def _write_tools(ws: Workspace) -> list[ToolDefinition]:
    async def write_file(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_write_file, ws, args["path"], args["content"], args["overwrite"])

    async def edit_file(args: Mapping[str, Any], ctx: Any) -> Any:
        return await _threaded(_edit_file, ws, args["path"], args["old"], args["new"], args["count"])

    return [
        define_tool(
            name="write_file",
            description="Write a text file (parent directories are created).",
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
            present_call=lambda a: diff_card(str(a.get("path"))),
        ),
        define_tool(
            name="edit_file",
            description="Replace exact text in a file; `old` must occur exactly `count` times.",
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
            present_call=lambda a: diff_card(str(a.get("path"))),
        ),
    ]


def register_workspace(registry: Registry, root: str | os.PathLike[str] = ".", *, allow_write: bool = False) -> list[Any]:
    """Register the workspace tools on ``registry``; returns their handles."""
    return [registry.register(t) for t in workspace_tools(root, allow_write=allow_write)]
