"""The real path: the bridge on the worker backend (forked, resource-limited processes)."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from bridgekit import NOTE, events, grep_tool, make_mode

import sandbox
from codemode import EVENT_CODE_DISPATCH, EVENT_CODE_DISPATCH_START, RUN_CODE, define_tool

pytestmark = pytest.mark.anyio


async def run(mode: Any, code: str) -> Any:
    return await mode.handle({"id": "w1", "name": RUN_CODE, "arguments": {"code": code, "description": "Use the worker"}})


async def test_round_trip_with_parallel_calls_values_and_placeholders() -> None:
    mode = make_mode(grep_tool(), NOTE, backend="worker")
    out = await run(mode, """
import asyncio
a, b = await asyncio.gather(tools.grep(pattern="x"), tools.grep({"pattern": "y", "limit": None}))
print(await tools.note(text="n"))
return [a["matches"][0]["text"], b["matches"][0]["text"]]
""")
    assert not out.is_error, out.text
    assert out.text == 'note n\n[image: image/png, 100 bytes]\n[\n  "x",\n  "y"\n]'
    assert len(out.attachments) == 1
    assert len(events(mode, EVENT_CODE_DISPATCH_START)) == len(events(mode, EVENT_CODE_DISPATCH)) == 3


async def test_tool_errors_and_bad_arguments_on_the_worker() -> None:
    mode = make_mode(backend="worker", preflight=False)
    out = await run(mode, """
try:
    await tools.grep(pattern=1)
except ToolCallError as e:
    print(e.tool_name, e.message.splitlines()[0])
return tools.list()
""")
    assert out.text == 'grep Invalid arguments for grep:\n[\n  "grep",\n  "search"\n]'
    assert events(mode, EVENT_CODE_DISPATCH_START) == []


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


async def test_crashed_worker_fails_the_run_and_writes_every_event() -> None:
    runtime = sandbox.WorkerRuntime(pool_size=0)

    async def kill_workers(args: Any, ctx: Any) -> Any:
        template = runtime._template
        assert template is not None
        for child in _children(template.process.pid):
            os.kill(child, signal.SIGKILL)
        return {}

    tool = define_tool(name="boom", description="Kill the worker.", parameters={},
                       output={"schema": {"type": "object"}}, execute=kill_workers)
    mode = make_mode(tool, backend=runtime)
    try:
        out = await run(mode, 'print("hi")\nawait tools.boom()\nreturn 1')
    finally:
        runtime.close()
    assert out.is_error
    assert out.text.startswith("Error: code run failed (crashed): ")
    assert len(events(mode, EVENT_CODE_DISPATCH_START)) == len(events(mode, EVENT_CODE_DISPATCH)) == 1


async def test_memory_limit_is_reported_as_a_failed_run() -> None:
    mode = make_mode(backend="worker", limits=sandbox.Limits(memory=32 * 1024 * 1024))
    out = await run(mode, 'x = "a" * (200 * 1024 * 1024)\nreturn len(x)')
    assert out.is_error
    kind = out.text.split("(", 1)[1].split(")", 1)[0]
    assert kind in ("memory", "crashed"), out.text
    assert json.dumps(out.run.result.to_json())
