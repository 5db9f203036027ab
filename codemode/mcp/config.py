"""The MCP client configuration file: the de-facto ``{"mcpServers": {...}}`` shape.

The same file an MCP client (Claude Desktop, Claude Code, Cursor, ...) already has can be pointed
at directly, so entries from other tools are accepted as they are: keys codemode does not use
(``autoApprove``, ``alwaysAllow``, ...) are ignored, ``"disabled": true`` skips a server, and
``${VAR}`` / ``${VAR:-default}`` in ``command``, ``args``, ``env``, ``url`` and ``headers`` expand
from the environment. Two optional keys are codemode's own: ``timeout`` (seconds per call) and
``concurrencySafe`` (let a snippet run this server's tools in parallel).

A bad file fails at load with ``McpConfigError``, listing every problem at once.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..registry.errors import CodemodeError
from ..registry.jsontext import JSONTextError, parse_json

__all__ = [
    "DEFAULT_UPSTREAM_LIMITS",
    "McpConfigError",
    "ServerConfig",
    "UpstreamLimits",
    "load_config",
    "parse_config",
]

Transport = Literal["stdio", "http"]

_HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamableHttp"})
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_MASK = "***"


class McpConfigError(CodemodeError, ValueError):
    """The MCP configuration is invalid; ``problems`` lists every one, each naming its server."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = list(problems)
        if len(self.problems) == 1:  # one problem, one line
            super().__init__(f"invalid MCP configuration {source}: {self.problems[0]}")
            return
        lines = "\n".join(f"- {p}" for p in self.problems)
        super().__init__(f"invalid MCP configuration {source}:\n{lines}")


@dataclass(frozen=True, slots=True, kw_only=True)
class UpstreamLimits:
    """How long codemode waits on upstream MCP servers, in seconds.

    ``call_timeout`` bounds one ``tools/call`` (default 60; a server's ``timeout`` key overrides
    it); ``connect_timeout`` bounds starting a server and listing its tools (default 30);
    ``ping_timeout`` bounds the ping that tells a hung server from a slow call (default 5).
    """

    call_timeout: float = 60.0
    connect_timeout: float = 30.0
    ping_timeout: float = 5.0

    def __post_init__(self) -> None:
        for name in ("call_timeout", "connect_timeout", "ping_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                math.isfinite(value) and value > 0
            ):
                raise ValueError(f"{name} must be a finite number of seconds > 0, got {value!r}")

    def __repr__(self) -> str:
        return (
            f"UpstreamLimits(call_timeout={self.call_timeout:g}, "
            f"connect_timeout={self.connect_timeout:g}, ping_timeout={self.ping_timeout:g})"
        )


DEFAULT_UPSTREAM_LIMITS = UpstreamLimits()


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """One upstream server: a stdio ``command`` (with ``args``, ``env``, ``cwd``) or a ``url``.

    ``env`` and ``headers`` often hold secrets: the repr shows their keys only.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    concurrency_safe: bool | None = None

    @property
    def transport(self) -> Transport:
        return "stdio" if self.command is not None else "http"

    def __repr__(self) -> str:
        if self.command is not None:
            target = f"command={self.command!r}, args={list(self.args)!r}"
            if self.env:
                target += ", env={" + ", ".join(f"{k!r}: {_MASK!r}" for k in sorted(self.env)) + "}"
        else:
            target = f"url={_mask_url(self.url or '')!r}"
            if self.headers:
                target += ", headers={" + ", ".join(f"{k!r}: {_MASK!r}" for k in sorted(self.headers)) + "}"
        return f"ServerConfig(name={self.name!r}, {target})"


def _mask_url(url: str) -> str:
    """Drop userinfo and the query string, which may carry credentials."""
    url = re.sub(r"//[^/@]*@", "//" + _MASK + "@", url, count=1)
    return url.split("?", 1)[0] + ("?" + _MASK if "?" in url else "")


def load_config(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> dict[str, ServerConfig]:
    """Read an MCP configuration file; raises ``McpConfigError`` for a missing or bad file."""
    source = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise McpConfigError(source, [f"cannot read the file: {exc.strerror or exc}"]) from exc
    try:
        text = raw.decode("utf-8-sig")  # an editor's byte-order mark is not an error
    except UnicodeDecodeError as exc:
        problem = f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        raise McpConfigError(source, [problem]) from None
    try:
        data = parse_json(text)
    except JSONTextError as exc:
        if exc.reason == "nested too deeply":
            raise McpConfigError(source, ["not a configuration: JSON nested too deeply to read"]) from None
        raise McpConfigError(source, [f"not JSON: {exc.reason}"]) from None
    return parse_config(data, source=source, environ=environ)


def parse_config(
    data: Any, *, source: str = "<config>", environ: Mapping[str, str] | None = None
) -> dict[str, ServerConfig]:
    """Turn the parsed JSON into ``{name: ServerConfig}`` in file order, skipping disabled servers."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    if not isinstance(data, Mapping):
        raise McpConfigError(source, [f"expected a JSON object, got {type(data).__name__}"])
    servers = data.get("mcpServers")
    if servers is None and "servers" in data:  # VS Code spells it this way
        servers = data["servers"]
    if not isinstance(servers, Mapping):
        raise McpConfigError(source, ['expected an "mcpServers" object mapping names to servers'])
    result: dict[str, ServerConfig] = {}
    for name, entry in servers.items():
        config = _server(str(name), entry, env, problems)
        if config is not None:
            result[config.name] = config
    if problems:
        raise McpConfigError(source, problems)
    return result


def _server(name: str, entry: Any, environ: Mapping[str, str], problems: list[str]) -> ServerConfig | None:
    where = f"server {name!r}"
    if not name.strip():
        problems.append("a server has an empty name")
        return None
    if not isinstance(entry, Mapping):
        problems.append(f"{where}: expected an object, got {type(entry).__name__}")
        return None
    if entry.get("disabled") is True:
        return None
    start = len(problems)

    def text(key: str, value: Any) -> str | None:
        if not isinstance(value, str):
            problems.append(f"{where}: {key} must be a string, got {type(value).__name__}")
            return None
        return _expand(value, environ, f"{where}: {key}", problems)

    def strings(key: str, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            problems.append(f"{where}: {key} must be an object of strings")
            return {}
        out: dict[str, str] = {}
        for k, v in value.items():
            expanded = text(f"{key}.{k}", v)
            if expanded is not None:
                out[str(k)] = expanded
        return out

    kind = entry.get("type", entry.get("transport"))
    command, url = entry.get("command"), entry.get("url")
    if kind is not None and kind not in ("stdio", *_HTTP_TYPES):
        problems.append(
            f"{where}: type {kind!r} is not supported (use \"stdio\" with a command, or \"http\" with a url)"
        )
    if command is not None and url is not None:
        problems.append(f"{where}: give either a command (stdio) or a url (HTTP), not both")
    elif command is None and url is None:
        problems.append(f"{where}: needs a command (stdio) or a url (streamable HTTP)")
    before = len(problems)
    cmd = text("command", command) if command is not None else None
    if cmd is not None and not cmd.strip() and len(problems) == before:
        problems.append(f"{where}: command is empty")
    args: list[str] = []
    raw_args = entry.get("args", [])
    if not isinstance(raw_args, list):
        problems.append(f"{where}: args must be a list of strings")
    else:
        for i, arg in enumerate(raw_args):
            expanded = text(f"args[{i}]", arg)
            if expanded is not None:
                args.append(expanded)
    link = text("url", url) if url is not None else None
    if link is not None and not re.match(r"https?://", link):
        problems.append(f"{where}: url must start with http:// or https://")
    cwd = entry.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        problems.append(f"{where}: cwd must be a string")
    timeout = entry.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (math.isfinite(timeout) and timeout > 0)
    ):
        problems.append(f"{where}: timeout must be a number of seconds > 0, got {timeout!r}")
    safe = entry.get("concurrencySafe")
    if safe is not None and not isinstance(safe, bool):
        problems.append(f"{where}: concurrencySafe must be true or false")
    env = strings("env", entry.get("env"))
    headers = strings("headers", entry.get("headers"))
    if len(problems) > start:
        return None
    return ServerConfig(
        name=name,
        command=cmd,
        args=tuple(args),
        env=env,
        cwd=cwd,
        url=link,
        headers=headers,
        timeout=float(timeout) if timeout is not None else None,
        concurrency_safe=safe,
    )


def _expand(value: str, environ: Mapping[str, str], where: str, problems: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}``; an unset variable without a default is a problem."""

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        problems.append(f"{where}: environment variable {name} is not set")
        return ""

    return _VAR.sub(sub, value)
