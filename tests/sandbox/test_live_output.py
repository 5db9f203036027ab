"""Live output: `RunController(on_output=...)` sees what a snippet prints while it runs.

Both backends, one-shot runs and sessions. The run's `logs` stay the account of what was
printed; the callback is a view of the same kept bytes, in order, as they are printed.
"""

from __future__ import annotations

from typing import Any

import pytest

import sandbox

pytestmark = pytest.mark.anyio

FAST = sandbox.Limits(wall_time=20, cpu_time=20)


async def test_prints_arrive_before_the_run_ends_in_order(backend: str) -> None:
    seen: list[str] = []
    at_call: list[str] = []

    async def checkpoint(**kwargs: Any) -> str:
        at_call.append("".join(seen))  # what the host had been shown when the call arrived
        return "ok"

    controller = sandbox.RunController(on_output=seen.append)
    result = await sandbox.run(
        "print('first')\nprint('a', 'b', sep='-', end='')\nawait tools.checkpoint()\nprint('last')\nreturn 1",
        bindings={"checkpoint": checkpoint}, limits=FAST, backend=backend, controller=controller,
    )
    assert result.ok and result.value == 1
    assert at_call == ["first\na-b"]
    assert "".join(seen) == "first\na-blast\n"
    assert result.logs == ["first", "a-blast"]


async def test_only_kept_bytes_are_shown_and_the_logs_say_what_was_dropped(backend: str) -> None:
    seen: list[str] = []
    limits = FAST.replace(max_output=10)
    result = await sandbox.run("print('0123456789abcdef')", limits=limits, backend=backend,
                               controller=sandbox.RunController(on_output=seen.append))
    assert "".join(seen) == "0123456789"
    assert result.logs == ["0123456789", "[output truncated: 7 bytes dropped]"]


async def test_control_characters_reach_the_view_as_printed(backend: str) -> None:
    """The sandbox passes text through; making controls visible is the terminal's job (codemode)."""
    seen: list[str] = []
    result = await sandbox.run("print('\\x1b[2Jbell\\x07')", limits=FAST, backend=backend,
                               controller=sandbox.RunController(on_output=seen.append))
    assert "".join(seen) == "\x1b[2Jbell\x07\n" and result.logs == ["\x1b[2Jbell\x07"]


async def test_a_failing_view_does_not_change_the_run(backend: str) -> None:
    def broken(text: str) -> None:
        raise RuntimeError("the terminal went away")

    result = await sandbox.run("print('x')\nreturn 2", limits=FAST, backend=backend,
                               controller=sandbox.RunController(on_output=broken))
    assert result.ok and result.value == 2 and result.logs == ["x"]


async def test_prints_before_a_timeout_are_shown(backend: str) -> None:
    seen: list[str] = []
    limits = sandbox.Limits(wall_time=1, cpu_time=5)
    result = await sandbox.run("print('started')\nwhile True:\n    pass", limits=limits, backend=backend,
                               controller=sandbox.RunController(on_output=seen.append))
    assert result.error is not None and result.error.kind == "timeout"
    assert "".join(seen) == "started\n"


async def test_without_a_view_nothing_changes(backend: str) -> None:
    result = await sandbox.run("print('x')", limits=FAST, backend=backend, controller=sandbox.RunController())
    assert result.ok and result.logs == ["x"]


async def test_each_run_of_a_session_has_its_own_view(backend: str) -> None:
    first: list[str] = []
    second: list[str] = []
    session = sandbox.open_session(backend)
    try:
        await session.run("n = 1\nprint('one')", limits=FAST, controller=sandbox.RunController(on_output=first.append))
        await session.run("print('two', n)", limits=FAST, controller=sandbox.RunController(on_output=second.append))
        await session.run("print('unseen')", limits=FAST)
    finally:
        session.close()
    assert "".join(first) == "one\n" and "".join(second) == "two 1\n"
