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
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

__all__ = ["ToolListNotifier"]

logger = logging.getLogger("codemode.mcp")


class ToolListNotifier:
    """Watches ``registry`` while the server runs (``lifespan``) and notifies clients."""

    def __init__(self, registry: Any) -> None:
        self.registry = registry
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self._sessions: weakref.WeakSet[Any] = weakref.WeakSet()
        self._send, self._receive = anyio.create_memory_object_stream[None](max_buffer_size=1)

    def seen(self, session: Any) -> None:
        try:
            self._sessions.add(session)
        except TypeError:  # not weak-referenceable: such a session is not told
            pass

    def _changed(self) -> None:
        try:
            self._send.send_nowait(None)
        except anyio.WouldBlock:
            pass  # a notification is already due

    async def _pump(self) -> None:
        async for _ in self._receive:
            await self.bus.publish(ToolsListChanged())
            for session in list(self._sessions):
                try:
                    await session.send_tool_list_changed()
                except Exception:
                    logger.debug("could not send tools/list_changed", exc_info=True)
                    self._sessions.discard(session)

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
