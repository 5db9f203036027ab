"""``CodeMode.run(on_output=...)``: a host sees the program's prints while it runs, in order,
before the sub-calls that follow them; the report is unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from codemode import CodeMode, Registry, define_tool

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_prints_reach_the_host_before_the_next_sub_call(backend: str) -> None:
    seen: list[str] = []
    at_call: list[str] = []

    async def mark(args: Any, ctx: Any) -> list[dict[str, str]]:
        at_call.append("".join(seen))
        return [{"type": "text", "text": "marked"}]

    registry = Registry(mode="code")
    registry.register(define_tool(name="mark", description="Note how far the run got.", parameters={},
                                  execute=mark))
    async with CodeMode(registry, backend=backend) as mode:
        report = await mode.run("print('one')\nprint(await tools.mark())\nreturn 2", on_output=seen.append)
    assert at_call == ["one\n"]
    assert "".join(seen) == "one\nmarked\n"
    assert report.ok and report.text == "one\nmarked\n2"
