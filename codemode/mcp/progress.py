"""Progress of one ``run_code`` call, for an MCP client that sent a progress token.

Sub-calls report as they start and finish (from the bridge's callback, in the run's task), and a
tick reports the seconds elapsed while nothing else happens. ``progress`` is the seconds elapsed,
so it only grows, as MCP requires; ``message`` says what happened, e.g.
``3 sub-calls started, 2 finished; 4.2 s``. A failing send never fails the run.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..code_mode.bridge import SubCall
from . import messages as m

__all__ = ["DEFAULT_TICK", "RunProgress"]

logger = logging.getLogger("codemode.mcp")

DEFAULT_TICK = 1.0
_STEP = 0.001  # the smallest rise between two reports

Report = Callable[[float, float | None, str | None], Awaitable[None]]


class RunProgress:
    """Counts a run's sub-calls and sends progress through ``report(progress, total, message)``."""

    def __init__(self, report: Report, *, tick: float = DEFAULT_TICK) -> None:
        self._report = report
        self._tick = tick
        self._started_at = time.monotonic()
        self._last = 0.0
        self.started = 0
        self.finished = 0
        self._send, self._receive = anyio.create_memory_object_stream[None](max_buffer_size=1)

    def on_sub_call(self, record: SubCall) -> None:
        """The bridge's callback: once as a sub-call starts, once as it ends."""
        if record.status == "running":
            self.started += 1
        else:
            self.finished += 1
        try:
            self._send.send_nowait(None)
        except anyio.WouldBlock:
            pass  # a report is already due; it will carry the new counts

    async def pump(self) -> None:
        """Send a report on every change and at every tick, until cancelled."""
        while True:
            with anyio.move_on_after(self._tick):
                await self._receive.receive()
            await self.send()

    async def send(self) -> None:
        elapsed = time.monotonic() - self._started_at
        progress = round(max(elapsed, self._last + _STEP), 3)
        self._last = progress
        message = m.RUN_PROGRESS.format(started=self.started, finished=self.finished, seconds=elapsed)
        try:
            await self._report(progress, None, message)
        except Exception:
            logger.debug("progress report failed", exc_info=True)


async def with_progress(report: Report | None, run: Callable[[Callable[[SubCall], None] | None], Awaitable[Any]],
                        *, tick: float = DEFAULT_TICK) -> Any:
    """``await run(on_sub_call)`` while reporting progress (just ``run(None)`` without ``report``)."""
    if report is None:
        return await run(None)
    progress = RunProgress(report, tick=tick)
    async with anyio.create_task_group() as tg:
        tg.start_soon(progress.pump)
        try:
            return await run(progress.on_sub_call)
        finally:
            tg.cancel_scope.cancel()
