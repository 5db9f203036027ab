"""`asyncio`: the sandbox scheduler's own versions (see `sandbox.scheduler`); never the real
module, its loop, futures or tasks."""

from __future__ import annotations

from typing import Any

from .base import ShimContext

NAME = "asyncio"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    return dict(ctx.asyncio_attrs)
