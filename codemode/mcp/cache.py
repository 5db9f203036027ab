"""Cached upstream tool lists, so that a run starts no MCP server whose tools it does not call.

The SDK text and pre-flight need every server's tool list, but a program usually calls the tools
of one server, or of none. ``ToolListStore`` keeps each server's last ``tools/list`` answer on
disk; a provider given a store builds its tools from a cached list without starting the server,
and starts it only when a program calls one of its tools. The first start then lists the tools
again and the store follows the server (see ``McpProvider``).

Where: one directory (``CODEMODE_TOOL_CACHE``, else ``$XDG_CACHE_HOME/codemode/mcp-tools``, else
``~/.cache/codemode/mcp-tools``), one file per server configuration, named by a hash of its key:
the transport, command, arguments, working directory, URL, and the *names* (never the values) of
its environment variables and headers. The server's version is stored with its list and checked
when the server next starts. The file holds no command line, no argument and no environment
value: only the key's hash, the server's name and version, and its tools.

Format (``FORMAT``, ``VERSION``): ``{"format": "codemode.mcp.tool-list", "version": 1, "key":
"<sha256>", "server": {"name", "version"}, "tools": [<MCP Tool objects>], "dropped": {name: why},
"resources": bool}``. Files are written atomically (a temporary file in the same directory, then
``os.replace``), so a reader sees a whole old list or a whole new one. A file that cannot be read,
is not this format, has another version, belongs to another key or user, or is writable by
others fails soft: it is treated as missing (the server is listed live), with one warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import messages as m
from .config import ServerConfig
from .tools import ToolJSON

__all__ = ["CACHE_ENV", "FORMAT", "VERSION", "CachedToolList", "ToolListStore", "cache_key", "default_cache_dir"]

logger = logging.getLogger("codemode.mcp")

FORMAT = "codemode.mcp.tool-list"
VERSION = 1
#: The environment variable naming the cache directory.
CACHE_ENV = "CODEMODE_TOOL_CACHE"
#: A cached list larger than this is not read (a real one is a few hundred KiB at most).
MAX_CACHE_FILE = 16 * 1024 * 1024


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """``$CODEMODE_TOOL_CACHE``, else ``$XDG_CACHE_HOME/codemode/mcp-tools``, else
    ``~/.cache/codemode/mcp-tools``; None when there is no home to put it in."""
    env = os.environ if environ is None else environ
    if env.get(CACHE_ENV):
        return Path(env[CACHE_ENV]).expanduser()
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "codemode" / "mcp-tools"
    try:
        home = Path.home()
    except (KeyError, RuntimeError):
        return None
    return home / ".cache" / "codemode" / "mcp-tools"


def cache_key(config: ServerConfig) -> str:
    """The hash a server's cached list is filed under: what decides which server process (or
    endpoint) answers, with environment and header names but not their values."""
    key = {
        "transport": config.transport,
        "command": config.command,
        "args": list(config.args),
        "cwd": config.cwd,
        "env": sorted(config.env),
        "url": config.url,
        "headers": sorted(config.headers),
    }
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedToolList:
    """One server's stored ``tools/list`` answer."""

    tools: list[ToolJSON]  # as MCP's JSON spells them (``name``, ``inputSchema``, ...)
    server_version: str | None = None
    dropped: dict[str, str] = field(default_factory=dict)
    resources: bool = False


class ToolListStore:
    """Tool lists on disk, one file per server configuration (see the module docstring).

    ``refresh=True`` (``--refresh-tools``) reads nothing, so every server is listed live, and
    writes what they answer. ``warn`` gets each one-line warning (a corrupt file, a directory
    that cannot be written); by default they go to the ``codemode.mcp`` logger. Never raises for
    a problem with the cache itself: the cost of a bad cache is only a server started at load.
    """

    def __init__(self, directory: str | os.PathLike[str], *, refresh: bool = False,
                 warn: Callable[[str], None] | None = None) -> None:
        self.directory = Path(directory)
        self.refresh = refresh
        self.warn = warn if warn is not None else logger.warning
        self._unwritable = False

    @classmethod
    def default(cls, *, refresh: bool = False, warn: Callable[[str], None] | None = None) -> ToolListStore | None:
        """The store in the user's cache directory (``default_cache_dir``), or None without one."""
        directory = default_cache_dir()
        return None if directory is None else cls(directory, refresh=refresh, warn=warn)

    def __repr__(self) -> str:
        return f"ToolListStore({str(self.directory)!r}{', refresh=True' if self.refresh else ''})"

    def path(self, config: ServerConfig) -> Path:
        return self.directory / f"{cache_key(config)}.json"

    def get(self, config: ServerConfig) -> CachedToolList | None:
        """The cached list of ``config``'s server, or None (missing, refreshing, or unusable)."""
        if self.refresh:
            return None
        path = self.path(config)
        try:
            with open(path, "rb") as file:
                info = os.fstat(file.fileno())
                problem = _foreign(info)
                if problem is None and info.st_size > MAX_CACHE_FILE:
                    problem = f"larger than {MAX_CACHE_FILE} bytes"
                data = None if problem else file.read(MAX_CACHE_FILE + 1)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            problem, data = f"cannot be read: {exc.strerror or exc}", None
        if problem is None:
            try:
                return _parse(data or b"", cache_key(config))
            except _Unusable as exc:
                problem = str(exc)
        self.warn(m.CACHE_IGNORED.format(server=config.name, path=path, problem=problem))
        return None

    def put(self, config: ServerConfig, entry: CachedToolList) -> None:
        """Store ``entry`` for ``config``'s server, atomically; a failure is one warning per store."""
        record = {
            "format": FORMAT,
            "version": VERSION,
            "key": cache_key(config),
            "server": {"name": config.name, "version": entry.server_version},
            "tools": [dict(t) for t in entry.tools],
            "dropped": dict(entry.dropped),
            "resources": entry.resources,
        }
        path = self.path(config)
        try:
            text = json.dumps(record, ensure_ascii=False, sort_keys=True)
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as file:
                    file.write(text)
                    file.flush()
                    os.fsync(file.fileno())
                os.replace(temp, path)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        except (OSError, TypeError, ValueError) as exc:
            if not self._unwritable:
                self._unwritable = True
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
                self.warn(m.CACHE_UNWRITABLE.format(directory=self.directory, problem=reason))


class _Unusable(Exception):
    """Why a cache file cannot be used (one short phrase)."""


def _foreign(info: os.stat_result) -> str | None:
    """A file another user could have written is not believed: its tools would reach the SDK."""
    if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        return "owned by another user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "writable by other users"
    return None


def _parse(data: bytes, key: str) -> CachedToolList:
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _Unusable("not valid JSON") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise _Unusable("not a codemode tool list")
    if record.get("version") != VERSION:
        raise _Unusable(f"format version {record.get('version')!r}, this codemode reads {VERSION}")
    if record.get("key") != key:
        raise _Unusable("written for another server configuration")
    server, tools, dropped = record.get("server"), record.get("tools"), record.get("dropped", {})
    if not isinstance(server, dict) or not isinstance(tools, list) or not isinstance(dropped, dict):
        raise _Unusable("its fields have the wrong types")
    version = server.get("version")
    if version is not None and not isinstance(version, str):
        raise _Unusable("its fields have the wrong types")
    if not all(_tool_shaped(t) for t in tools):
        raise _Unusable("a tool in it is not a valid MCP tool")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in dropped.items()):
        raise _Unusable("its fields have the wrong types")
    return CachedToolList(tools, version, dict(dropped), record.get("resources") is True)


#: Optional fields of a tool and the JSON type each must have.
_TOOL_FIELDS = {"description": str, "title": str, "outputSchema": dict, "annotations": dict, "execution": dict}


def _tool_shaped(tool: object) -> bool:
    """What building a registry tool reads is there with the right types (the registry then
    checks the schemas themselves, as for a live list)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        return False
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return False
    return all(key not in tool or isinstance(tool[key], kind) for key, kind in _TOOL_FIELDS.items())

