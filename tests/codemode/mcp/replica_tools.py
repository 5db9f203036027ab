"""Tools of the replicas the scale-out test starts (``--tools replica_tools.py``): ``nap`` keeps
a run in flight, ``whoami`` names the replica (``CODEMODE_TEST_REPLICA``) that served it.

While it naps, ``nap`` keeps a file named for its replica in ``CODEMODE_TEST_NAPS`` (when set):
the test sends SIGTERM only once it sees a run napping on the replica it drains, so "the drained
replica answered after SIGTERM" does not depend on how fast a loaded machine admits a request."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import anyio

from codemode import Registry, define_tool

_NAPS = itertools.count()


def apply(registry: Registry) -> None:
    naps = os.environ.get("CODEMODE_TEST_NAPS")
    replica = os.environ.get("CODEMODE_TEST_REPLICA", "?")

    async def nap(args: Any, ctx: Any) -> list[dict[str, str]]:
        marker = Path(naps, f"{replica}.{os.getpid()}.{next(_NAPS)}") if naps else None
        if marker is not None:
            marker.touch()
        try:
            await anyio.sleep(float(args["seconds"]))
        finally:
            if marker is not None:
                marker.unlink(missing_ok=True)
        return [{"type": "text", "text": "rested"}]

    async def whoami(args: Any, ctx: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": replica}]

    registry.register(define_tool(name="nap", description="Sleep a while.", parameters={"seconds": {"type": "number"}},
                                  execute=nap, is_concurrency_safe=True))
    registry.register(define_tool(name="whoami", description="The replica's name.", parameters={},
                                  execute=whoami, is_concurrency_safe=True))
