"""Telling MCP clients that the tool set changed.

The ``run_code`` description carries the SDK, so any change of the registry's tools (an upstream
server's list changed, a plugin registered) changes what ``tools/list`` returns. The registry's
change listener is synchronous, so it only wakes a task the server's lifespan runs; that task
sends ``notifications/tools/list_changed`` to every session that has talked to the server
(handshake-era protocol versions) and publishes the event to ``subscriptions/listen`` streams
(2026-07-28 and later). A session that has gone away is dropped quietly.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

__all__ = ["ToolListNotifier"]

logger = logging.getLogger("codemode.mcp")

MAX_SESSIONS = 64


class ToolListNotifier:
    """Watches ``registry`` while the server runs (``lifespan``) and notifies clients."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._sessions: dict[int, Any] = {}
        self._send, self._receive = anyio.create_memory_object_stream[None](max_buffer_size=1)

    def seen(self, session: Any) -> None:
        """Remember the connection ``session`` belongs to (the SDK hands each request its own
        session object, so the latest one per connection is kept, at most ``MAX_SESSIONS``)."""
        key = id(getattr(session, "_connection", session))
        self._sessions.pop(key, None)
        self._sessions[key] = session
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.pop(next(iter(self._sessions)))

    def _changed(self) -> None:
        try:
            self._send.send_nowait(None)
        except anyio.WouldBlock:
            pass  # a notification is already due

    async def _pump(self) -> None:
        async for _ in self._receive:
            await self.bus.publish(ToolsListChanged())
            for key, session in list(self._sessions.items()):
                try:
                    await session.send_tool_list_changed()
                except Exception:  # the client has gone
                    logger.debug("could not send tools/list_changed", exc_info=True)
                    self._sessions.pop(key, None)

    @asynccontextmanager
    async def lifespan(self, server: Any) -> AsyncIterator[dict[str, Any]]:
        handle = self.registry.on_change(self._changed)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._pump)
                try:
                    yield {}
                finally:
                    tg.cancel_scope.cancel()
        finally:
            handle.dispose()
