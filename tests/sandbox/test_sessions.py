"""Sessions (`sandbox.open_session`): state across runs, per-run limits, reset, expiry, close.

Every test runs on both backends unless it is about the worker process itself (those are in
tests/security/test_sessions.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import sandbox
from sandbox.sessions import RESET_KINDS, reset_sentence

pytestmark = pytest.mark.anyio

FAST = sandbox.Limits(wall_time=5, cpu_time=5)


async def echo(**kwargs: Any) -> Any:
    return kwargs


def session(backend: str, **limits: Any) -> tuple[sandbox.Session, list[tuple[str, str | None]]]:
    events: list[tuple[str, str | None]] = []
    opened = sandbox.open_session(backend, limits=sandbox.SessionLimits(**limits),
                                  listener=lambda event, reason: events.append((event, reason)))
    return opened, events


async def test_variables_functions_classes_and_imports_persist(backend: str) -> None:
    s, _ = session(backend)
    try:
        first = await s.run(
            "import json, random\n"
            "rows = [{'n': i} for i in range(5)]\n"
            "total = 0\n"
            "def add(x):\n    global total\n    total += x\n    return total\n"
            "class Box:\n    def __init__(self, v):\n        self.v = v\n"
            "for row in rows:\n    add(row['n'])\n"
            "if (found := 3) > 2:\n    pass\n"
            "return total",
            limits=FAST,
        )
        assert first.ok and first.value == 10, first
        second = await s.run(
            "b = Box(add(5))\nb.v += 1\n"
            "return [total, b.v, json.dumps(rows[0]), found, row['n'], random.random() < 1]",
            limits=FAST,
        )
        assert second.ok, second
        assert second.value == [15, 16, '{"n": 0}', 3, 4, True]
        assert second.reset is None
    finally:
        s.close()


MISSING = "found = []\nfor probe in NAMES:\n    try:\n        LOOKUPS[probe]()\n        found.append(probe)\n    except NameError:\n        pass\nreturn found"


def missing(names: list[str]) -> str:
    """A snippet that returns which of `names` are defined (each looked up by a lambda)."""
    lookups = "{" + ", ".join(f"{n!r}: lambda: {n}" for n in names) + "}"
    return MISSING.replace("NAMES", repr(names)).replace("LOOKUPS", lookups)


async def test_names_local_to_nested_scopes_do_not_leak_into_the_session(backend: str) -> None:
    s, _ = session(backend)
    try:
        await s.run("def f():\n    inner = 1\n    return inner\nsquares = [k * k for k in range(3)]\nf()", limits=FAST)
        found = await s.run(missing(["inner", "k", "f", "squares"]), limits=FAST)
        assert found.ok and found.value == ["f", "squares"], found
    finally:
        s.close()


async def test_tools_are_bound_afresh_for_each_run(backend: str) -> None:
    s, _ = session(backend)
    seen: list[str] = []

    async def one(**kwargs: Any) -> str:
        seen.append("one")
        return "one"

    async def two(**kwargs: Any) -> str:
        seen.append("two")
        return "two"

    try:
        first = await s.run("kept = tools\ndef call():\n    return tools.one()\nreturn await call()",
                            bindings={"one": one}, limits=FAST)
        assert first.ok and first.value == "one"
        # The second run has another tool set: `tools` is this run's, and a helper from the first
        # run calls through it; the namespace object kept from the first run calls nothing.
        second = await s.run("r = [await tools.two(), hasattr(tools, 'one')]\ntry:\n    await call()\n"
                             "except AttributeError as e:\n    r.append('gone')\nreturn r",
                             bindings={"two": two}, limits=FAST)
        assert second.ok and second.value == ["two", False, "gone"], second
        stale = await s.run("return await kept.one()", bindings={"one": one}, limits=FAST)
        assert stale.error is not None and stale.error.kind == "exception"
        assert "belongs to an earlier run of the session" in stale.error.message
        assert seen == ["one", "two"]  # the stale call never reached the host
    finally:
        s.close()


async def test_printing_from_an_earlier_runs_function_goes_to_the_current_run(backend: str) -> None:
    s, _ = session(backend)
    try:
        await s.run("def shout(x):\n    print('got', x)\nshout(1)", limits=FAST)
        result = await s.run("shout(2)", limits=FAST)
        assert result.logs == ["got 2"]
    finally:
        s.close()


@pytest.mark.parametrize(
    ("code", "limits", "kind"),
    [
        ("while True:\n    pass", sandbox.Limits(wall_time=0.5, cpu_time=0.3), "timeout"),
        ("for i in range(3):\n    await tools.echo(i=i)", sandbox.Limits(max_calls=2), "call-limit"),
        ("while True:\n    print('x' * 1000)", sandbox.Limits(max_output=1000, wall_time=5), "output-limit"),
    ],
)
async def test_a_run_that_trips_a_limit_resets_the_session(backend: str, code: str, limits: sandbox.Limits,
                                                            kind: str) -> None:
    s, events = session(backend)
    try:
        assert (await s.run("secret = 'kept'", limits=FAST)).ok
        failed = await s.run(code, bindings={"echo": echo}, limits=limits)
        assert failed.error is not None and failed.error.kind == kind, failed
        assert kind in RESET_KINDS
        assert failed.reset == reset_sentence(
            {"timeout": "the run hit its time limit", "call-limit": "the run made too many tool calls",
             "output-limit": "the run printed far past its output limit"}[kind]
        )
        assert failed.reset.endswith("; variables defined earlier are gone")
        after = await s.run("return secret", limits=FAST)
        assert after.error is not None and "NameError" in after.error.message  # started fresh
        assert after.reset is None
        assert [e for e, _ in events] == ["start", "reset", "start"]
    finally:
        s.close()


async def test_an_exception_or_syntax_error_keeps_the_session(backend: str) -> None:
    s, events = session(backend)
    try:
        await s.run("kept = 7", limits=FAST)
        pid = getattr(s, "pid", None)
        assert (await s.run("raise ValueError('no')", limits=FAST)).error.kind == "exception"  # type: ignore[union-attr]
        refused = await s.run("x = (", limits=FAST)
        assert refused.error == sandbox.check("x = (")  # the host's own verdict, word for word
        assert (await s.run("return object()", limits=FAST)).error.kind == "invalid-result"  # type: ignore[union-attr]
        kept = await s.run("return kept", limits=FAST)
        assert kept.value == 7 and kept.reset is None
        assert getattr(s, "pid", None) == pid  # the same worker throughout
        assert [e for e, _ in events] == ["start"]
    finally:
        s.close()


async def test_restart_starts_fresh_and_says_nothing(backend: str) -> None:
    s, events = session(backend)
    try:
        await s.run("kept = 1", limits=FAST)
        fresh = await s.run(missing(["kept"]), limits=FAST, restart=True)
        assert fresh.ok and fresh.value == []
        assert fresh.reset is None
        assert events == [("start", None), ("reset", "restart"), ("start", None)]
    finally:
        s.close()


async def test_max_runs_starts_the_next_run_fresh_with_the_sentence(backend: str) -> None:
    s, _ = session(backend, max_runs=2)
    try:
        await s.run("n = 1", limits=FAST)
        assert (await s.run("n += 1\nreturn n", limits=FAST)).value == 2
        third = await s.run(missing(["n"]), limits=FAST)
        assert third.value == []
        assert third.reset == reset_sentence("it reached its limit of 2 runs")
        assert s.runs == 1
    finally:
        s.close()


async def test_idle_timeout_resets_the_session_and_the_next_run_says_so(backend: str) -> None:
    s, events = session(backend, idle_timeout=0.2)
    try:
        await s.run("kept = 1", limits=FAST)
        for _ in range(200):  # the reaper thread resets it without a run; waited for, not timed
            if len(events) >= 2:
                break
            await anyio.sleep(0.05)
        sentence = reset_sentence("it was idle for more than 0.2 s")
        assert events == [("start", None), ("reset", sentence)]
        if isinstance(s, sandbox.sessions.WorkerSession):
            assert s.pid is None  # its worker is gone
        after = await s.run("return kept", limits=FAST)
        assert after.error is not None and "NameError" in after.error.message
        assert after.reset == sentence
    finally:
        s.close()


async def test_max_lifetime_resets_the_session(backend: str) -> None:
    s, _ = session(backend, max_lifetime=0.3, idle_timeout=60)
    try:
        await s.run("kept = 1", limits=FAST)
        await anyio.sleep(0.4)
        after = await s.run("return kept", limits=FAST)
        assert after.reset == reset_sentence("it reached its maximum lifetime of 0.3 s")
        assert after.error is not None and "NameError" in after.error.message
    finally:
        s.close()


async def test_runs_in_one_session_are_serialized(backend: str) -> None:
    s, _ = session(backend)
    active = peak = 0

    async def hold(**kwargs: Any) -> int:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.05)
        active -= 1
        return 1

    try:
        await s.run("count = 0", limits=FAST)
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(lambda: s.run("count += await tools.hold()", bindings={"hold": hold}, limits=FAST))
        assert peak == 1  # counted by the host, never timed
        assert (await s.run("return count", limits=FAST)).value == 4
    finally:
        s.close()


async def test_a_cancelled_run_resets_the_session_and_the_next_run_says_so(backend: str) -> None:
    s, _ = session(backend)

    async def stall(**kwargs: Any) -> None:
        await anyio.sleep(30)

    try:
        await s.run("kept = 1", limits=FAST)
        with anyio.move_on_after(0.3):
            await s.run("await tools.stall()", bindings={"stall": stall}, limits=FAST)
        after = await s.run("return kept", limits=FAST)
        assert after.reset == reset_sentence("a run was cancelled before it finished")
        assert after.error is not None and "NameError" in after.error.message
    finally:
        s.close()


async def test_a_closed_session_refuses_to_run(backend: str) -> None:
    s, events = session(backend)
    await s.run("kept = 1", limits=FAST)
    s.close()
    s.close()  # idempotent
    with pytest.raises(RuntimeError, match="this session is closed"):
        await s.run("return 1")
    assert events == [("start", None), ("close", None)]


def test_session_limits_are_validated_and_compare() -> None:
    assert sandbox.SessionLimits() == sandbox.DEFAULT_SESSION_LIMITS
    assert repr(sandbox.SessionLimits(max_runs=3)) == "SessionLimits(max_runs=3)"
    assert sandbox.DEFAULT_SESSION_LIMITS.idle_timeout == 600
    with pytest.raises(ValueError, match=r"invalid SessionLimits: idle_timeout must be >= 0.01 and finite, got 0"):
        sandbox.SessionLimits(idle_timeout=0)
    with pytest.raises(ValueError, match="max_runs must be a number, got True"):
        sandbox.SessionLimits(max_runs=True)
    with pytest.raises(ValueError, match="memory must be >= 16777216"):
        sandbox.SessionLimits().replace(memory=1)
    with pytest.raises(TypeError, match="limits must be a sandbox.SessionLimits"):
        sandbox.open_session("inprocess", limits=sandbox.Limits())  # type: ignore[arg-type]


async def test_one_shot_runs_never_see_session_state(backend: str) -> None:
    s, _ = session(backend)
    try:
        await s.run("planted = 'in the session'", limits=FAST)
        one_shot = await sandbox.run("return planted", backend=backend, limits=FAST)
        assert one_shot.error is not None and "NameError" in one_shot.error.message
    finally:
        s.close()


async def test_a_gather_from_an_earlier_run_keeps_its_outcome(backend: str) -> None:
    s, _ = session(backend)
    seen: list[Any] = []

    async def one(**kwargs: Any) -> str:
        seen.append(kwargs)
        return "one"

    try:
        first = await s.run(
            "import asyncio\n"
            "async def slow():\n    await asyncio.sleep(10)\n"
            "settled = asyncio.gather(asyncio.gather())\n"
            "pending = asyncio.gather(slow(), tools.one(x=1))\n"
            "return settled.done()",
            bindings={"one": one}, limits=FAST)
        assert first.ok and first.value is True, first
        assert first.logs[-1] == "note: 2 tasks were still pending when the program ended and were cancelled"
        # The end of the first run cancelled the gather's children, which settled it.
        second = await s.run(
            "out = [await settled, pending.done(), pending.cancel(), type(pending.exception()).__name__]\n"
            "try:\n    await pending\nexcept asyncio.CancelledError:\n    out.append('cancelled')\n"
            "try:\n    asyncio.gather(pending)\nexcept RuntimeError as e:\n    out.append(str(e))\n"
            "return out",
            bindings={"one": one}, limits=FAST)
        assert second.ok, second
        assert second.value == [[[]], True, False, "CancelledError", "cancelled",
                                "this gather belongs to an earlier run"]
        assert seen == []  # the earlier run's gathered call never reached the host
    finally:
        s.close()
