"""Shared helpers for the sandbox tests: a synchronous `run` over either backend and test bindings."""

from __future__ import annotations

from typing import Any

import anyio

import sandbox
from sandbox import Limits, RunResult

BACKENDS = ["inprocess", "worker"]


async def echo(*args: Any, **kwargs: Any) -> Any:
    if args and not kwargs:
        return args[0] if len(args) == 1 else list(args)
    return kwargs.get("x", kwargs)


async def fail(**kwargs: Any) -> Any:
    raise sandbox.BindingError("no such file: notes.txt")


async def explode(**kwargs: Any) -> Any:
    raise RuntimeError("/home/secret/path leaked?")


async def nap(x: Any = None, seconds: float = 0.02) -> Any:
    await anyio.sleep(seconds)
    return x


BINDINGS = {"echo": echo, "fail": fail, "explode": explode, "nap": nap}


def run(code: str, backend: str = "inprocess", *, bindings: dict[str, Any] | None = None,
        limits: Limits | None = None, **kwargs: Any) -> RunResult:
    async def go() -> RunResult:
        return await sandbox.run(
            code,
            bindings=BINDINGS if bindings is None else bindings,
            limits=limits or Limits(wall_time=10),
            backend=backend,
            **kwargs,
        )

    return anyio.run(go)
