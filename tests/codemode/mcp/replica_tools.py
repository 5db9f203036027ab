"""Tools of the replicas the scale-out test starts (``--tools replica_tools.py``): ``nap`` keeps
a run in flight, ``whoami`` names the replica (``CODEMODE_TEST_REPLICA``) that served it."""

from __future__ import annotations

import os
from typing import Any

import anyio

from codemode import Registry, define_tool


def apply(registry: Registry) -> None:
    async def nap(args: Any, ctx: Any) -> list[dict[str, str]]:
        await anyio.sleep(float(args["seconds"]))
        return [{"type": "text", "text": "rested"}]

    async def whoami(args: Any, ctx: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": os.environ.get("CODEMODE_TEST_REPLICA", "?")}]

    registry.register(define_tool(name="nap", description="Sleep a while.", parameters={"seconds": {"type": "number"}},
                                  execute=nap, is_concurrency_safe=True))
    registry.register(define_tool(name="whoami", description="The replica's name.", parameters={},
                                  execute=whoami, is_concurrency_safe=True))
