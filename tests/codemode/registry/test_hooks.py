"""Every hook point in pipeline order, with its decisions, failures and disposal."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from codemode import (
    ErrorKind,
    Registry,
    ToolCall,
    allow,
    ask,
    block,
    deny,
    replace_content,
    replace_value,
    text_block,
)

pytestmark = pytest.mark.anyio

ARGS = {"path": "/a"}


async def run(reg: Registry, args: Any = ARGS):
    return await reg.execute(ToolCall("c1", "echo", args))


async def test_hooks_run_in_pipeline_order(registry: Registry) -> None:
    order: list[str] = []

    def pre(ctx):
        order.append("pre")

    async def guard(ctx):
        order.append("guard")

    async def wrapper(ctx, call_next):
        order.append("wrap-in")
        value = await call_next()
        order.append("wrap-out")
        return value

    def post(ctx, result):
        order.append("post")

    def observer(result, ctx):
        order.append("observe")

    for handle in (
        registry.on_pre_execute(pre),
        registry.add_guard(guard),
        registry.wrap_execute(wrapper),
        registry.on_post_execute(post),
        registry.on_result(observer),
    ):
        assert not handle.disposed
    result = await run(registry)
    assert not result.is_error
    assert order == ["pre", "guard", "wrap-in", "wrap-out", "post", "observe"]


async def test_pre_execute_denial_still_runs_observers(registry: Registry) -> None:
    seen: list[Any] = []
    registry.on_pre_execute(lambda ctx: deny("writes outside the workspace are not allowed"))
    registry.on_result(lambda result, ctx: seen.append(result))
    result = await run(registry)
    assert result.error == ErrorKind.DENIED
    assert result.text == "Call to echo was denied: writes outside the workspace are not allowed"
    assert seen == [result]


async def test_first_denial_wins_over_later_allows(registry: Registry) -> None:
    registry.on_pre_execute(lambda ctx: deny("first"))
    registry.on_pre_execute(lambda ctx: allow())
    registry.on_pre_execute(lambda ctx: deny("second"))
    assert (await run(registry)).text == "Call to echo was denied: first"


async def test_ask_without_approval_service_is_denied(registry: Registry) -> None:
    registry.on_pre_execute(lambda ctx: ask("deleting files needs a human"))
    result = await run(registry)
    assert result.error == ErrorKind.DENIED
    assert result.text == (
        "Call to echo was denied: approval required (deleting files needs a human)"
        " but no approval service is registered"
    )


async def test_ask_goes_to_the_approval_service(registry: Registry) -> None:
    asked: list[str] = []

    async def approve(ctx, reason):
        asked.append(reason)
        return ctx.arguments["path"] == "/a"

    registry.on_pre_execute(lambda ctx: ask("check path"))
    with registry.set_approval_service(approve):
        assert not (await run(registry)).is_error
        refused = await run(registry, {"path": "/b"})
        assert refused.text == "Call to echo was denied: approval refused (check path)"
    assert asked == ["check path", "check path"]
    assert (await run(registry)).error == ErrorKind.DENIED  # service disposed


async def test_a_deny_after_an_ask_wins_without_asking(registry: Registry) -> None:
    asked: list[str] = []
    registry.set_approval_service(lambda ctx, reason: asked.append(reason) or True)
    registry.on_pre_execute(lambda ctx: ask("maybe"))
    registry.on_pre_execute(lambda ctx: deny("no"))
    assert (await run(registry)).text == "Call to echo was denied: no"
    assert asked == []


async def test_guard_denies_after_an_allowing_pre_execute(registry: Registry) -> None:
    ran: list[bool] = []
    registry.on_pre_execute(lambda ctx: allow())
    registry.add_guard(lambda ctx: deny("budget of 0 calls exhausted"))
    registry.add_guard(lambda ctx: ran.append(True))
    result = await run(registry)
    assert result.text == "Call to echo was denied: budget of 0 calls exhausted"
    assert ran == []  # monotonic: nothing after the first denial runs


async def test_failing_policy_hooks_fail_closed(registry: Registry) -> None:
    def broken(ctx):
        raise RuntimeError("policy db down")

    with registry.on_pre_execute(broken):
        assert (await run(registry)).text == (
            "Call to echo was denied: pre_execute hook failed: RuntimeError: policy db down"
        )
    with registry.add_guard(broken):
        assert (await run(registry)).text == (
            "Call to echo was denied: guard hook failed: RuntimeError: policy db down"
        )
    assert not (await run(registry)).is_error


async def test_wrapper_sets_a_deadline(registry: Registry, make_echo) -> None:
    async def slow(args, ctx):
        await anyio.sleep(5)
        return {"path": "never"}

    registry.register(make_echo("slow", execute=slow))

    async def deadline(ctx, call_next):
        with anyio.fail_after(0.05):
            return await call_next()

    registry.wrap_execute(deadline)
    with anyio.fail_after(2):
        result = await registry.execute(ToolCall("c1", "slow", ARGS))
    assert result.error == ErrorKind.TIMEOUT
    assert result.text == "slow timed out before it finished."
    assert not (await run(registry)).is_error  # fast calls pass the same wrapper


async def test_wrappers_nest_first_registered_outermost(registry: Registry) -> None:
    order: list[str] = []

    def named(tag):
        async def wrapper(ctx, call_next):
            order.append(tag)
            return await call_next()

        return wrapper

    registry.wrap_execute(named("outer"))
    registry.wrap_execute(named("inner"))
    await run(registry)
    assert order == ["outer", "inner"]


async def test_wrapper_retries(registry: Registry, make_echo) -> None:
    attempts: list[int] = []

    async def flaky(args, ctx):
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("reset")
        return {"path": "ok"}

    registry.register(make_echo("flaky", execute=flaky))

    async def retry(ctx, call_next):
        for _ in range(2):
            try:
                return await call_next()
            except ConnectionError:
                pass
        return await call_next()

    registry.wrap_execute(retry)
    result = await registry.execute(ToolCall("c1", "flaky", ARGS))
    assert result.value == {"path": "ok"} and len(attempts) == 3


async def test_post_execute_block_still_runs_observers(registry: Registry) -> None:
    seen: list[Any] = []
    registry.on_post_execute(lambda ctx, result: block("output contains a secret; redact and retry"))
    registry.on_result(lambda result, ctx: seen.append(result.error))
    result = await run(registry)
    assert result.error == ErrorKind.BLOCKED
    assert result.text == "Result of echo was blocked: output contains a secret; redact and retry"
    assert result.value is None
    assert seen == ["blocked"]


async def test_post_execute_replaces_content(registry: Registry) -> None:
    registry.on_post_execute(lambda ctx, result: replace_content([text_block("redacted")]))
    result = await run(registry)
    assert result.text == "redacted"
    assert result.value == {"path": "/a", "limit": None}


async def test_post_execute_replaced_value_is_revalidated_and_rerendered(registry: Registry) -> None:
    registry.on_post_execute(lambda ctx, result: replace_value({"path": "/b", "limit": 1}))
    result = await run(registry)
    assert result.value == {"path": "/b", "limit": 1}
    assert result.text == '{"path": "/b", "limit": 1}'


async def test_post_execute_invalid_replacement_is_an_error(registry: Registry) -> None:
    registry.on_post_execute(lambda ctx, result: replace_value({"path": 7}))
    result = await run(registry)
    assert result.error == ErrorKind.INVALID_OUTPUT
    assert result.text == "echo returned an invalid result: $.path: 7 is not of type 'string'"


async def test_post_execute_listeners_chain(registry: Registry) -> None:
    texts: list[str] = []
    registry.on_post_execute(lambda ctx, result: replace_content([text_block("first")]))

    async def second(ctx, result):
        texts.append(result.text)

    registry.on_post_execute(second)
    assert (await run(registry)).text == "first"
    assert texts == ["first"]


async def test_failing_observer_is_logged_and_changes_nothing(registry: Registry, caplog) -> None:
    seen: list[Any] = []

    def broken(result, ctx):
        raise RuntimeError("metrics backend down")

    registry.on_result(broken)
    registry.on_result(lambda result, ctx: seen.append(result))
    with caplog.at_level(logging.ERROR, logger="codemode"):
        result = await run(registry)
    assert not result.is_error
    assert seen == [result]
    assert "result observer" in caplog.text and "metrics backend down" in caplog.text


async def test_disposed_hooks_stop_running(registry: Registry) -> None:
    handle = registry.on_pre_execute(lambda ctx: deny("off"))
    assert (await run(registry)).is_error
    handle.dispose()
    handle.dispose()  # idempotent
    assert not (await run(registry)).is_error


async def test_same_function_registered_twice_disposes_one(registry: Registry) -> None:
    calls: list[int] = []

    def pre(ctx):
        calls.append(1)

    first = registry.on_pre_execute(pre)
    registry.on_pre_execute(pre)
    first.dispose()
    await run(registry)
    assert calls == [1]


async def test_hooks_see_the_execution_context(registry: Registry) -> None:
    seen: list[Any] = []
    registry.on_pre_execute(lambda ctx: seen.append((ctx.call_id, ctx.name, dict(ctx.arguments), ctx.agent)))
    await registry.execute(ToolCall("c9", "echo", ARGS), agent=None)
    assert seen == [("c9", "echo", {"path": "/a"}, None)]


def test_hook_registration_needs_a_callable(registry: Registry) -> None:
    with pytest.raises(TypeError, match="pre_execute hook must be callable"):
        registry.on_pre_execute("nope")  # type: ignore[arg-type]


async def test_hooks_returning_the_wrong_thing_fail_closed(registry: Registry) -> None:
    with registry.on_pre_execute(lambda ctx: True):
        assert (await run(registry)).text == (
            "Call to echo was denied: pre_execute hook returned bool, expected Decision"
        )
    with registry.add_guard(lambda ctx: ask("hm")):
        assert (await run(registry)).text == (
            "Call to echo was denied: guard hook returned ask('hm'), expected allow() or deny()"
        )
    with registry.on_post_execute(lambda ctx, result: "ok"):
        assert (await run(registry)).text == (
            "Result of echo was blocked: post_execute hook returned str, expected PostDecision"
        )
    assert not (await run(registry)).is_error
