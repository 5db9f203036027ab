"""Screen what an upstream MCP server sends before the SDK's session reads it.

The SDK checks a ``tools/list`` page as a whole: one tool whose ``inputSchema`` has no
``"type"`` fails the page, and with it every tool of that server. ``ScreenedTransport`` sits
between the transport and the session and drops, from each ``tools/list`` answer, exactly the
tools the protocol refuses, with the reason (``ToolScreen.dropped``); the rest reach the session
as if the server had listed only them, so calling them works as usual.

A message the transport could not read at all (JSON nested thousands of levels deep, a cut or
garbled JSON-RPC object) would leave the request it answers waiting for its whole time-out: the
screen records why (``ToolScreen.unreadable``) and ends the stream, so every request in flight
fails at once with ``CONNECTION_CLOSED`` and the server restarts on the next call. A line that
is not a JSON object at all (a server logging to stdout, against the spec) is skipped, as the
SDK skips it. The SDK's own traceback for such a line is cut to one line: codemode reports the
failure in its own words.
"""

from __future__ import annotations

import logging
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

__all__ = ["ScreenedTransport", "ToolScreen"]

logger = logging.getLogger("codemode.mcp")

#: The version the SDK assumes before a handshake settles one.
_FALLBACK_VERSION = "2025-11-25"
_LIST_TOOLS = "tools/list"
#: At most this many characters of a server's text go into a reason.
_DETAIL_CHARS = 120


class ToolScreen:
    """What the screen of one connection saw: ``dropped`` maps a tool's name (``#<index>`` when
    it has none) to why it was dropped; ``unreadable`` says why the stream was ended, if it was."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.dropped: dict[str, str] = {}
        self.unreadable: str | None = None
        self._listing: set[Any] = set()

    def sent(self, item: SessionMessage) -> None:
        message = item.message
        if isinstance(message, types.JSONRPCRequest) and message.method == _LIST_TOOLS:
            self._listing.add(message.id)

    def received(self, item: SessionMessage) -> SessionMessage:
        message = item.message
        if isinstance(message, types.JSONRPCResponse) and message.id in self._listing:
            self._listing.discard(message.id)
            self._screen_page(message.result)
        elif isinstance(message, types.JSONRPCError):
            self._listing.discard(message.id)
        return item

    def _screen_page(self, page: dict[str, Any]) -> None:
        """Drop the tools the protocol refuses, in place; a page that is wrong as a whole is
        left for the session to refuse (its server then has no tools)."""
        version = self.version or _FALLBACK_VERSION
        tools = page.get("tools")
        if not isinstance(tools, list) or _refusal(version, page) is None:
            return
        rest = {k: v for k, v in page.items() if k != "tools"}
        if _refusal(version, {**rest, "tools": []}) is not None:
            return
        kept: list[Any] = []
        for index, tool in enumerate(tools):
            reason = _refusal(version, {**rest, "tools": [tool]}) or _monolith_refusal(tool)
            if reason is None:
                kept.append(tool)
                continue
            name = tool.get("name") if isinstance(tool, dict) else None
            key = name if isinstance(name, str) and name else f"#{index + 1}"  # its place in the list
            self.dropped[key] = reason
        page["tools"] = kept

    def garbled(self, exc: Exception) -> bool:
        """Whether ``exc`` (a message the transport could not read) was meant as a message;
        if so, remember why, for the error the callers get."""
        line = _unread_input(exc)
        if isinstance(line, str) and not line.lstrip().startswith("{"):
            return False  # a log line on stdout, not an answer
        self.unreadable = _unreadable_reason(exc)
        return True


def _refusal(version: str, page: dict[str, Any]) -> str | None:
    """Why the SDK would refuse ``page`` as a ``tools/list`` answer, or None."""
    try:
        validate_server_result(_LIST_TOOLS, version, page)
    except (KeyError, ValueError) as exc:  # ValidationError is a ValueError
        if isinstance(exc, ValidationError):
            return _validation_reason(exc)
        return None  # a version or method the SDK does not check
    except RecursionError:
        return "nested too deeply"
    return None


def _monolith_refusal(tool: Any) -> str | None:
    try:
        types.Tool.model_validate(tool, by_name=False)
    except ValidationError as exc:
        return _validation_reason(exc, skip=0)
    except RecursionError:
        return "nested too deeply"
    return None


def _validation_reason(exc: ValidationError, *, skip: int = 2) -> str:
    """The first problem, where it is in the tool: ``inputSchema.type: field required``."""
    errors = exc.errors(include_url=False)
    if not errors:
        return "not a valid tool"
    first = errors[0]
    where = ".".join(str(part) for part in first["loc"][skip:] if not isinstance(part, int))
    if not where:
        return "not a JSON object with a name and an inputSchema"
    return f"{where}: {str(first['msg']).lower()}"[:_DETAIL_CHARS]


def _unread_input(exc: BaseException) -> Any:
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        if errors:
            return errors[0].get("input")
    return None


def _unreadable_reason(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        text = str(errors[0]["msg"]) if errors else ""
        if "recursion limit" in text:
            return "JSON nested too deeply"
        if errors and errors[0]["type"] == "json_invalid":
            return "not valid JSON"
        return "not a JSON-RPC message"
    return type(exc).__name__


class _ScreenedRead:
    """The session's read stream: answers pass the screen; an unreadable one ends the stream."""

    def __init__(self, inner: Any, screen: ToolScreen) -> None:
        self._inner = inner
        self._screen = screen

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        if self._screen.unreadable is not None:
            raise anyio.EndOfStream
        item = await self._inner.receive()
        if isinstance(item, Exception):
            if self._screen.garbled(item):
                logger.debug("MCP server sent a message codemode cannot read (%s)", self._screen.unreadable)
                raise anyio.EndOfStream
            return item
        return self._screen.received(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _ScreenedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _ScreenedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _ScreenedWrite:
    """The session's write stream: notes which requests are ``tools/list``."""

    def __init__(self, inner: Any, screen: ToolScreen) -> None:
        self._inner = inner
        self._screen = screen

    async def send(self, item: SessionMessage, /) -> None:
        self._screen.sent(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _ScreenedWrite:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class ScreenedTransport:
    """An SDK ``Transport`` (an async context manager of the two streams) around another one."""

    def __init__(self, inner: AbstractAsyncContextManager[Any], screen: ToolScreen) -> None:
        self._inner = inner
        self.screen = screen

    async def __aenter__(self) -> tuple[_ScreenedRead, _ScreenedWrite]:
        read, write = await self._inner.__aenter__()
        return _ScreenedRead(read, self.screen), _ScreenedWrite(write, self.screen)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        return await self._inner.__aexit__(exc_type, exc, tb)


class _OneLine(logging.Filter):
    """The SDK's traceback for a message it could not read, on every such line, would bury the
    one line codemode writes about it: a parse failure is left to codemode (the screen reports
    the ones that matter), any other traceback is cut to one line. ``codemode.mcp`` at DEBUG
    keeps them whole."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or logger.isEnabledFor(logging.DEBUG):
            return True
        if isinstance(error, ValueError):  # pydantic's ValidationError: a line it could not parse
            return False
        record.msg = f"{record.getMessage()} ({type(error).__name__})"
        record.args = ()
        record.exc_info = None
        record.exc_text = None
        return True


for _name in ("mcp.client.stdio", "mcp.client.streamable_http"):
    logging.getLogger(_name).addFilter(_OneLine())
