"""Concurrent executions, batches, cancellation mid-call and nested sub-calls."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from codemode import ErrorKind, ExecutionToken, Registry, ToolCall

pytestmark = pytest.mark.anyio


async def test_concurrent_executions_do_not_interfere(make_echo) -> None:
    reg = Registry()
    seen: dict[str, Any] = {}

    async def body(args, ctx):
        await anyio.sleep(0.01 if args["path"] == "/0" else 0)
        seen[ctx.call_id] = (ctx.arguments["path"], ctx.token)
        return {"path": args["path"]}

    reg.register(make_echo(execute=body))
    results: dict[int, Any] = {}

    async def one(i: int) -> None:
        results[i] = await reg.execute(ToolCall(f"c{i}", "echo", {"path": f"/{i}"}))

    async with anyio.create_task_group() as tg:
        for i in range(20):
            tg.start_soon(one, i)
    assert all(results[i].value == {"path": f"/{i}"} for i in range(20))
    assert all(seen[f"c{i}"][0] == f"/{i}" for i in range(20))
    assert len({id(token) for _, token in seen.values()}) == 20
    events = reg.events.read()
    assert len(events) == 40
    for i in range(20):
        kinds = [e["type"] for e in events if e["call_id"] == f"c{i}"]
        assert kinds == ["tool/call", "tool/result"]


async def test_execute_batch_overlaps_only_safe_calls(make_echo) -> None:
    reg = Registry()
    active = 0
    peak = {"safe": 0, "unsafe": 0}

    def body_for(kind: str):
        async def body(args, ctx):
            nonlocal active
            active += 1
            peak[kind] = max(peak[kind], active)
            await anyio.sleep(0.01)
            active -= 1
            return {"path": args["path"]}

        return body

    reg.register(make_echo("read", execute=body_for("safe"), is_concurrency_safe=True))
    reg.register(make_echo("write", execute=body_for("unsafe")))
    calls = [ToolCall(f"r{i}", "read", {"path": f"/{i}"}) for i in range(3)]
    calls.append(ToolCall("w", "write", {"path": "/w"}))
    calls += [ToolCall(f"s{i}", "read", {"path": f"/s{i}"}) for i in range(2)]
    results = await reg.execute_batch(calls)
    assert [r.value["path"] for r in results] == ["/0", "/1", "/2", "/w", "/s0", "/s1"]
    assert peak == {"safe": 3, "unsafe": 1}


async def test_cancellation_mid_call_cancels_the_tool(make_echo) -> None:
    reg = Registry()
    started = anyio.Event()
    state: dict[str, Any] = {}

    async def slow(args, ctx):
        started.set()
        try:
            await anyio.sleep(10)
        except BaseException:
            state["cancelled"] = True
            raise
        return {"path": "never"}

    observed: list[Any] = []
    reg.register(make_echo("slow", execute=slow))
    reg.on_result(lambda result, ctx: observed.append(result.error))

    async with anyio.create_task_group() as tg:

        async def call() -> None:
            state["result"] = await reg.execute(ToolCall("c1", "slow", {"path": "/a"}))

        tg.start_soon(call)
        await started.wait()
        tg.cancel_scope.cancel()
    assert state == {"cancelled": True}  # the caller never got a result
    last = reg.events.read()[-1]
    assert last["type"] == "tool/result" and last["meta"]["error"] == ErrorKind.CANCELLED
    assert last["content"][0]["text"] == "Call to slow was cancelled."
    assert observed == ["cancelled"]


async def test_move_on_after_around_execute_cancels_the_tool(make_echo) -> None:
    reg = Registry()

    async def slow(args, ctx):
        await anyio.sleep(10)

    reg.register(make_echo("slow", execute=slow))
    with anyio.move_on_after(0.02) as scope:
        await reg.execute(ToolCall("c1", "slow", {"path": "/a"}))
    assert scope.cancelled_caught


async def test_sub_calls_inherit_agent_and_root(make_echo) -> None:
    reg = Registry()
    contexts: list[Any] = []

    async def outer(args, ctx):
        contexts.append(ctx)
        inner = await reg.execute(ToolCall(f"{ctx.call_id}:code:1", "inner", {"path": "/x"}), parent=ctx.token)
        return {"path": inner.value["path"]}

    async def inner(args, ctx):
        contexts.append(ctx)
        if args["path"] == "/x":
            await reg.execute(ToolCall(f"{ctx.call_id}:code:1", "inner", {"path": "/y"}), parent=ctx.token)
        return {"path": args["path"]}

    reg.register(make_echo("outer", execute=outer))
    reg.register(make_echo("inner", execute=inner))
    result = await reg.execute(ToolCall("run", "outer", {"path": "/a"}), agent="coder")
    assert result.value == {"path": "/x"}
    top, mid, deep = contexts
    assert (top.parent, top.root_call_id, top.agent) == (None, "run", "coder")
    assert (mid.parent is top.token, mid.root_call_id, mid.agent, mid.parent_call_id) == (True, "run", "coder", "run")
    assert (deep.parent is mid.token, deep.root_call_id, deep.parent_call_id) == (True, "run", "run:code:1")
    assert repr(top.token) == "<ExecutionToken>"
    with pytest.raises(AttributeError, match="read-only"):
        top.agent = "x"


async def test_parent_must_be_a_token(registry: Registry) -> None:
    with pytest.raises(TypeError, match="parent must be an ExecutionToken"):
        await registry.execute(ToolCall("c", "echo", {"path": "/a"}), parent="c0")  # type: ignore[arg-type]
    assert isinstance(ExecutionToken("a", "a", None), ExecutionToken)
