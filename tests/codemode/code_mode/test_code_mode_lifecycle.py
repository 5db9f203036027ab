"""CodeMode as a context manager, and its synchronous conveniences for scripts."""

from __future__ import annotations

import pytest
from bridgekit import grep_tool

from codemode import RUN_CODE, CodeMode, Registry


def _registry() -> Registry:
    registry = Registry(mode="code")
    registry.register(grep_tool())
    return registry


@pytest.mark.anyio
async def test_async_with_closes_what_it_installed() -> None:
    registry = _registry()
    async with CodeMode(registry, backend="inprocess") as mode:
        assert registry.get(RUN_CODE) is not None
        run = await mode.run("return 6 * 7")
        assert run.ok and run.text == "42"
    assert registry.get(RUN_CODE) is None
    assert [d.name for d in registry.visible()] == ["grep"]
    mode.close()  # idempotent


def test_sync_run_and_handle_for_scripts() -> None:
    registry = _registry()
    with CodeMode(registry, backend="inprocess") as mode:
        run = mode.run_sync("r = await tools.grep(pattern='x')\nreturn r['matches'][0]['text']")
        assert run.ok and run.text == "x"
        outcome = mode.handle_sync({"id": "s1", "name": "run_code", "arguments": {"code": "print(1)", "description": "Print one"}})
        assert not outcome.is_error and outcome.text == "1"
        with pytest.raises(TypeError, match="does not recognise this tool call"):
            mode.handle_sync({"id": "s2"})
    assert registry.get(RUN_CODE) is None
