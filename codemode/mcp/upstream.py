"""Client sessions to upstream MCP servers: lazy, restartable, with a deadline on every call.

Each ``UpstreamServer`` owns at most one live connection. The connection is opened on first use
by an *owner task* in the provider's task group, because the SDK's ``Client`` (and the stdio
subprocess under it) must be entered and left in one task, while calls arrive from many. A call
that finds no connection, or a dead one, starts a new one; the old one winds down in the
background (stdin closed, then SIGTERM/SIGKILL to the process group, as the SDK does).

What a failed call raises, for ``tools.py`` to turn into error results::

    UpstreamError                 .message is the model-facing text, .kind the ErrorKind
    ├── UpstreamUnavailable       the server could not be started (retried on the next call)
    ├── UpstreamCrashed           the connection closed mid-call; restart on the next call
    ├── UpstreamTimeout           no answer in time; .hung when a ping failed too (restart)
    ├── UpstreamRefused           the server answered with a JSON-RPC error
    └── UpstreamInvalidResult     the result broke the protocol or the tool's output schema

A slow call on a healthy server only costs that call: after a time-out codemode pings the server,
and restarts it only when the ping gets no answer either.

A stdio server's stderr goes to codemode's stderr, or, with ``stderr_lines``, through a pipe
codemode reads: each line is handed to that callback with the server's name (the CLI prefixes
it and keeps it off its progress line).

A server that says its tool list changed (``notifications/tools/list_changed``, or a
``subscriptions/listen`` event on 2026-07-28 connections, which the owner task keeps open)
makes ``on_tools_changed()`` fire; so does every restart, since changes made while the server
was down were never announced. The provider re-lists the tools then.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import warnings
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import IO, TYPE_CHECKING, Any, TypeVar

import anyio

from ..registry.messages import ErrorKind
from . import lazy_sdk as sdk
from . import messages as m
from .config import DEFAULT_UPSTREAM_LIMITS, ServerConfig, UpstreamLimits

if TYPE_CHECKING:  # the SDK loads on first use (``lazy_sdk``): a cached tool list needs none of it
    import mcp_types as types
    from mcp import Client
    from mcp.shared.exceptions import MCPError
    from pydantic import ValidationError

__all__ = [
    "UpstreamCrashed",
    "UpstreamError",
    "UpstreamInvalidResult",
    "UpstreamRefused",
    "UpstreamServer",
    "UpstreamTimeout",
    "UpstreamUnavailable",
]

logger = logging.getLogger("codemode.mcp")

CLIENT_NAME = "codemode"
CLIENT_VERSION = "0.1.0"
_LIST_PAGES = 100  # a paginator that never ends cannot hang start-up
_STDERR_LINE = 8192  # bytes of a relayed stderr line kept before it is shown in pieces

Spawn = Callable[[Callable[[], Awaitable[None]]], None]
T = TypeVar("T")


class UpstreamError(Exception):
    """A call to an upstream tool gave no result; ``message`` is written for the model."""

    kind: ErrorKind = ErrorKind.TOOL_ERROR

    def __init__(self, server: str, name: str, message: str) -> None:
        super().__init__(message)
        self.server = server
        self.name = name
        self.message = message


class UpstreamUnavailable(UpstreamError):
    """The server could not be started or did not finish the MCP handshake in time."""

    def __init__(self, server: str, name: str, message: str, *, reason: str = "") -> None:
        super().__init__(server, name, message)
        self.reason = reason


class UpstreamCrashed(UpstreamError):
    """The connection closed while the call was in flight (process exit, HTTP stream gone)."""


class UpstreamTimeout(UpstreamError):
    """No answer within the call timeout; ``hung`` when the server failed a ping too."""

    kind = ErrorKind.TIMEOUT

    def __init__(self, server: str, name: str, message: str, *, hung: bool) -> None:
        super().__init__(server, name, message)
        self.hung = hung


class UpstreamRefused(UpstreamError):
    """The server answered the call with a JSON-RPC error (unknown tool, bad params, ...)."""


class UpstreamInvalidResult(UpstreamError):
    """The result did not parse, or broke the tool's declared output schema."""

    kind = ErrorKind.INVALID_OUTPUT


class _Connection:
    """One session's lifetime, shared between its owner task and the callers."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.ready = anyio.Event()
        self.stop = anyio.Event()
        self.done = anyio.Event()
        self.scope = anyio.CancelScope()
        self.error: BaseException | None = None
        self.dead = False
        self.screen = sdk.ToolScreen()

    def usable(self) -> bool:
        if self.dead or self.stop.is_set() or self.client is None:
            return False
        # The SDK has no public "is the connection still open": a server that died while idle
        # shows only as a closed dispatcher. Missing attributes read as alive; the call then
        # reports the crash itself.
        dispatcher = getattr(self.client.session, "_dispatcher", None)
        return not getattr(dispatcher, "_closed", False)


def _errlog() -> IO[str] | int:
    """Where a stdio server's stderr goes: ours when it is a real file, else nowhere."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return subprocess.DEVNULL
    return sys.stderr


class UpstreamServer:
    """One configured MCP server. ``tools()`` lists its tools, ``call()`` runs one.

    ``spawn(fn)`` starts ``fn`` in a long-lived task group (the provider's); connection owner
    tasks run there. ``starts`` counts connections opened, so ``starts - 1`` are restarts.
    """

    def __init__(
        self,
        config: ServerConfig,
        spawn: Spawn,
        *,
        limits: UpstreamLimits = DEFAULT_UPSTREAM_LIMITS,
        errlog: IO[str] | int | None = None,
        stderr_lines: Callable[[str, str], None] | None = None,
    ) -> None:
        self.config = config
        #: Gets ``(server, line)`` for each line a stdio server writes to its stderr; None: the
        #: server writes to ``errlog`` (default: codemode's own stderr) directly.
        self.stderr_lines = stderr_lines
        self.name = config.name
        self.limits = limits
        self.call_timeout = config.timeout if config.timeout is not None else limits.call_timeout
        self.starts = 0
        self._spawn = spawn
        self._errlog = errlog
        self._conn: _Connection | None = None
        self._lock = anyio.Lock()
        self._closed = False
        self._retired: list[_Connection] = []
        #: Called (synchronously) when the server announces a new tool list, and on restarts.
        self.on_tools_changed: Callable[[], None] | None = None
        #: The tools the last ``tools()`` dropped because the protocol refuses them: name -> why.
        self.dropped: dict[str, str] = {}
        #: Set by the provider when this server's tools came from a cached list: its first start
        #: then fires ``on_tools_changed`` too, so the list is checked against the server.
        self.unverified = False
        #: ``serverInfo.version`` of the last connection that said one.
        self.server_version: str | None = None

    @property
    def connected(self) -> bool:
        """Whether a live session to the server is open now (the CLI's start line counts these)."""
        return not self._closed and self._conn is not None and self._conn.usable()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "connected" if self.connected else "idle"
        return f"UpstreamServer({self.name!r}, {self.config.transport}, {state}, starts={self.starts})"

    # --- connection lifecycle ------------------------------------------------------------------

    async def _client(self, name: str) -> Client:
        conn = self._conn
        if conn is not None and conn.usable():
            return conn.client  # type: ignore[return-value]
        async with self._lock:
            conn = self._conn
            if conn is not None and conn.usable():
                return conn.client  # type: ignore[return-value]
            if self._closed:
                raise UpstreamUnavailable(self.name, name, m.UPSTREAM_CLOSED.format(server=self.name, name=name))
            if conn is not None:
                self._retire(conn)
            conn = _Connection()
            self._conn = conn
            self.starts += 1
            self._spawn(lambda: self._own(conn))
            with anyio.move_on_after(self.limits.connect_timeout):
                await conn.ready.wait()
            if conn.client is None or conn.dead:
                reason = self._start_reason(conn)
                self._retire(conn)
                self._conn = None
                raise UpstreamUnavailable(
                    self.name, name, m.UPSTREAM_START_FAILED.format(server=self.name, reason=reason, name=name),
                    reason=reason,
                )
            return conn.client

    def _start_reason(self, conn: _Connection) -> str:
        error = conn.error
        if error is None:
            return m.REASON_START_TIMEOUT.format(timeout=self.limits.connect_timeout)
        leaves = _leaves(error)
        if any(isinstance(e, FileNotFoundError) for e in leaves):
            return m.REASON_NOT_FOUND
        if self.config.transport == "http":
            return m.REASON_HTTP
        return m.REASON_EXITED

    async def _own(self, conn: _Connection) -> None:
        """Hold one ``Client`` open until ``conn.stop``; never raises into the task group."""
        try:
            with conn.scope:
                async with AsyncExitStack() as stack:
                    transport = sdk.ScreenedTransport(await self._transport(stack), conn.screen)
                    client = sdk.Client(
                        transport,
                        client_info=sdk.types.Implementation(name=CLIENT_NAME, version=CLIENT_VERSION),
                        message_handler=self._on_message,
                        cache=None,
                    )
                    conn.client = await stack.enter_async_context(client)
                    conn.screen.version = conn.client.protocol_version
                    info = getattr(conn.client, "server_info", None)
                    version = getattr(info, "version", None)
                    self.server_version = version if isinstance(version, str) else self.server_version
                    conn.ready.set()
                    if self.starts > 1 or self.unverified:
                        self._tools_changed()
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(self._listen, conn.client)
                        await conn.stop.wait()
                        tg.cancel_scope.cancel()
        except Exception as exc:  # a failed start or a broken transport: the callers report it
            conn.error = exc
            logger.debug("MCP server %r: connection ended: %s", self.name, _describe(exc))
        finally:
            conn.dead = True
            conn.ready.set()
            conn.done.set()

    def _tools_changed(self) -> None:
        if self.on_tools_changed is not None:
            self.on_tools_changed()

    async def _on_message(self, message: Any) -> None:
        """The session's notifications; a 2026 listen stream's events arrive here too."""
        if isinstance(message, sdk.types.ToolListChangedNotification):
            self._tools_changed()
        await anyio.lowlevel.checkpoint()

    async def _listen(self, client: Client) -> None:
        """Keep a ``subscriptions/listen`` stream for tool changes open (2026-07-28 servers
        announce changes only there); a lost stream only costs the announcements."""
        tools = client.server_capabilities.tools
        if client.protocol_version not in sdk.MODERN_PROTOCOL_VERSIONS or tools is None or not tools.list_changed:
            return
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    pass  # each event also reaches _on_message
        except Exception as exc:
            logger.debug("MCP server %r: tool-change subscription ended: %s", self.name, _describe(exc))

    async def _transport(self, stack: AsyncExitStack) -> Any:
        config = self.config
        if config.transport == "stdio":
            params = sdk.StdioServerParameters(
                command=config.command or "", args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
            )
            if self.stderr_lines is not None:
                return sdk.stdio_client(params, self._relay(stack))
            errlog = self._errlog if self._errlog is not None else _errlog()
            return sdk.stdio_client(params, errlog)  # type: ignore[arg-type]
        http = await stack.enter_async_context(sdk.create_mcp_http_client(headers=dict(config.headers) or None))
        return sdk.streamable_http_client(config.url or "", http_client=http)

    def _relay(self, stack: AsyncExitStack) -> IO[str]:
        """A pipe for the server's stderr, read line by line by a task of its own. Our copy of
        the write end closes with the connection; the reader stops at end of file, when the
        server (and whatever it started with the same stderr) has gone too."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        writer = os.fdopen(write_fd, "w")
        stack.callback(writer.close)
        self._spawn(lambda: self._read_stderr(read_fd))
        return writer

    async def _read_stderr(self, fd: int) -> None:
        pending = b""
        try:
            while True:
                await anyio.wait_readable(fd)
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    break
                *lines, pending = (pending + chunk).split(b"\n")
                if len(pending) > _STDERR_LINE:  # a line without end is shown in pieces
                    lines.append(pending)
                    pending = b""
                for line in lines:
                    self._stderr_line(line)
        except OSError as exc:
            logger.debug("MCP server %r: stderr relay ended: %s", self.name, exc)
        finally:
            if pending:
                self._stderr_line(pending)
            os.close(fd)

    def _stderr_line(self, data: bytes) -> None:
        callback = self.stderr_lines
        if callback is None:
            return
        try:
            callback(self.name, data.decode("utf-8", "replace").rstrip("\r"))
        except Exception as exc:  # a broken display costs the line, never the connection
            logger.debug("MCP server %r: stderr line dropped: %s", self.name, exc)

    def _retire(self, conn: _Connection) -> None:
        """Let a connection wind down in its owner task; callers still on it get CONNECTION_CLOSED."""
        conn.stop.set()
        if not conn.ready.is_set():
            conn.scope.cancel()
        if not conn.done.is_set():
            self._retired.append(conn)
        self._retired = [c for c in self._retired if not c.done.is_set()]

    def _broken(self, conn: _Connection | None) -> None:
        if conn is not None and self._conn is conn:
            self._retire(conn)
            self._conn = None

    async def aclose(self) -> None:
        """Stop the server (if started) and wait for its process to go; idempotent."""
        self._closed = True
        conns = list(self._retired)
        if self._conn is not None:
            conns.append(self._conn)
            self._retire(self._conn)
            self._conn = None
        for conn in conns:
            await conn.done.wait()
        self._retired.clear()

    # --- requests --------------------------------------------------------------------------------

    async def tools(self) -> list[types.Tool]:
        """Every tool the server lists (all pages) that the protocol accepts; ``dropped`` says
        which it left out and why. Raises ``UpstreamError`` subclasses."""
        client = await self._client("tools/list")
        conn = self._conn
        tools: list[types.Tool] = []
        cursor: str | None = None
        screen = conn.screen if conn is not None else sdk.ToolScreen()
        screen.dropped.clear()
        try:
            with anyio.fail_after(self.limits.connect_timeout):
                for _ in range(_LIST_PAGES):
                    page = await client.list_tools(cursor=cursor)
                    tools.extend(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        break
        except TimeoutError:
            self._broken(conn)
            raise self._unlisted(m.REASON_START_TIMEOUT.format(timeout=self.limits.connect_timeout)) from None
        except sdk.MCPError as exc:
            error = self._translate(exc, conn, "tools/list")
            if screen.unreadable is None:
                raise error from exc
            raise self._unlisted(m.REASON_UNREADABLE.format(detail=screen.unreadable)) from exc
        except (sdk.ValidationError, RecursionError) as exc:  # the page as a whole broke the protocol
            detail = "nested too deeply" if isinstance(exc, RecursionError) else _first_problem(exc)
            raise self._unlisted(m.REASON_BAD_LISTING.format(detail=detail)) from None
        self.dropped = dict(screen.dropped)
        return tools

    def _unlisted(self, reason: str) -> UpstreamUnavailable:
        text = m.UPSTREAM_START_FAILED.format(server=self.name, reason=reason, name="tools/list")
        return UpstreamUnavailable(self.name, "tools/list", text, reason=reason)

    async def call(self, tool: str, arguments: dict[str, Any], *, name: str | None = None) -> types.CallToolResult:
        """Run ``tool`` upstream within the call timeout; ``name`` is what the model called it."""

        # The SDK's own deadline sends the courtesy cancel; the request's outer deadline is a
        # backstop for a transport that never returns from a write.
        def send(client: Client, timeout: float) -> Awaitable[types.CallToolResult]:
            return client.call_tool(tool, arguments, read_timeout_seconds=timeout)

        return await self._request(name or tool, send)

    async def read_resource(self, uri: str, *, name: str) -> types.ReadResourceResult:
        """Read one resource within the call timeout; ``name`` is how errors refer to it."""

        async def read(client: Client, timeout: float) -> types.ReadResourceResult:
            with anyio.fail_after(timeout):
                return await client.read_resource(uri)

        return await self._request(name, read)

    async def resources(self, *, name: str) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
        """Every resource and resource template the server lists (``([], [])`` when it does not
        offer resources), within the call timeout."""

        async def listing(client: Client, timeout: float) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
            with anyio.fail_after(timeout):
                return await pages(client)

        async def pages(client: Client) -> tuple[list[types.Resource], list[types.ResourceTemplate]]:
            if client.server_capabilities.resources is None:
                return [], []
            resources: list[types.Resource] = []
            templates: list[types.ResourceTemplate] = []
            cursor: str | None = None
            for _ in range(_LIST_PAGES):
                page = await client.list_resources(cursor=cursor)
                resources.extend(page.resources)
                if not (cursor := page.next_cursor):
                    break
            cursor = None
            try:
                for _ in range(_LIST_PAGES):
                    more = await client.list_resource_templates(cursor=cursor)
                    templates.extend(more.resource_templates)
                    if not (cursor := more.next_cursor):
                        break
            except sdk.MCPError as exc:  # templates are optional; a server may not know the method
                if exc.code == sdk.CONNECTION_CLOSED:
                    raise
                logger.debug("MCP server %r: no resource templates: %s", self.name, exc.message)
            return resources, templates

        return await self._request(name, listing)

    async def _request(self, shown: str, send: Callable[[Client, float], Awaitable[T]]) -> T:
        """One request within the call timeout, failures translated to ``UpstreamError``."""
        client = await self._client(shown)
        conn = self._conn
        timeout = self.call_timeout
        try:
            with anyio.fail_after(timeout + self.limits.ping_timeout):
                return await send(client, timeout)
        except sdk.MCPError as exc:
            error = self._translate(exc, conn, shown)
            if isinstance(error, UpstreamTimeout):
                error = await self._timed_out(conn, client, shown, timeout)
            raise error from exc
        except TimeoutError:
            raise await self._timed_out(conn, client, shown, timeout) from None
        except (RuntimeError, sdk.ValidationError) as exc:  # the SDK's result and schema checks
            detail = _describe(exc).splitlines()[0]
            raise UpstreamInvalidResult(
                self.name, shown, m.UPSTREAM_INVALID.format(server=self.name, name=shown, detail=detail)
            ) from exc

    def _translate(self, exc: MCPError, conn: _Connection | None, name: str) -> UpstreamError:
        """A JSON-RPC error as the failure it means; a time-out is settled by ``_timed_out``."""
        if exc.code == sdk.CONNECTION_CLOSED:
            self._broken(conn)
            if conn is not None and conn.screen.unreadable is not None:
                text = m.UPSTREAM_UNREADABLE.format(server=self.name, name=name, detail=conn.screen.unreadable)
                return UpstreamCrashed(self.name, name, text)
            return UpstreamCrashed(self.name, name, m.UPSTREAM_CRASHED.format(server=self.name, name=name))
        if exc.code == sdk.REQUEST_TIMEOUT:
            return UpstreamTimeout(self.name, name, exc.message, hung=False)
        return UpstreamRefused(self.name, name, m.UPSTREAM_REFUSED.format(server=self.name, name=name, message=exc.message))

    async def _timed_out(self, conn: _Connection | None, client: Client, name: str, timeout: float) -> UpstreamTimeout:
        if await self._answers_ping(client):
            text = m.UPSTREAM_SLOW.format(server=self.name, name=name, timeout=timeout)
            return UpstreamTimeout(self.name, name, text, hung=False)
        logger.warning("MCP server %r did not answer a ping after %s timed out; restarting it", self.name, name)
        self._broken(conn)
        text = m.UPSTREAM_HUNG.format(server=self.name, name=name, timeout=timeout)
        return UpstreamTimeout(self.name, name, text, hung=True)

    async def _answers_ping(self, client: Client) -> bool:
        """Any answer, even an error, proves the server is alive."""
        try:
            with anyio.fail_after(self.limits.ping_timeout), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.send_ping()
        except sdk.MCPError as exc:
            return exc.code not in (sdk.CONNECTION_CLOSED, sdk.REQUEST_TIMEOUT)
        except TimeoutError:
            return False
        except Exception:
            return False
        return True


def _leaves(exc: BaseException) -> list[BaseException]:
    """The non-group exceptions inside ``exc`` (anyio wraps task failures in groups)."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    out = [exc]
    if exc.__cause__ is not None:
        out.extend(_leaves(exc.__cause__))
    return out


def _first_problem(exc: ValidationError) -> str:
    """``tools: input should be a valid list``: where and what, in one short line."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "not a valid answer"
    where = ".".join(str(part) for part in errors[0]["loc"])
    text = f"{where}: {str(errors[0]['msg']).lower()}" if where else str(errors[0]["msg"]).lower()
    return text[:120]


def _describe(exc: BaseException) -> str:
    leaves = _leaves(exc)
    first = leaves[0] if leaves else exc
    text = str(first)
    return f"{type(first).__name__}: {text}" if text else type(first).__name__
