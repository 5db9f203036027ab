"""A whole turn through the minimal agent loop: the model calls run_code, reads the text, answers."""

from __future__ import annotations

from typing import Any

import pytest
from bridgekit import NOTE, grep_tool, make_mode

from codemode import EVENT_CODE_DISPATCH, EVENT_CODE_DISPATCH_START, extract_code_blocks
from codemode.code_mode.testing import MockAdapter, ModelReply, run_turn

pytestmark = pytest.mark.anyio

CODE = """
import asyncio
a, b = await asyncio.gather(tools.grep(pattern="TODO"), tools.grep(pattern="FIXME"))
print(len(a["matches"]) + len(b["matches"]), "markers")
"""


def answer_from_tool(messages: list[dict[str, Any]]) -> str:
    tool = [m for m in messages if m["role"] == "tool"][-1]
    return f"Found: {tool['content'][0]['text']}"


async def test_a_turn_with_run_code_logs_sub_calls_but_history_holds_only_the_outer_result() -> None:
    mode = make_mode(grep_tool(), NOTE)
    adapter = MockAdapter([
        ModelReply(tool_calls=[{"id": "call_1", "name": "run_code", "arguments": {"code": CODE, "description": "Count TODO and FIXME markers"}}]),
        answer_from_tool,
    ])
    turn = await run_turn(mode, adapter, "How many markers?")
    assert turn.answer == "Found: 2 markers"
    assert turn.steps == 2
    first = adapter.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == ["run_code"]
    assert "async def grep(" in first["system"]

    log = mode.registry.events.read()
    kinds = [(e["type"], e.get("call_id")) for e in log if e["type"] != "message"]
    assert kinds[0] == ("tool/call", "call_1") and kinds[-1] == ("tool/result", "call_1")
    assert len(kinds) == 10
    for sub in ("call_1:code:1", "call_1:code:2"):
        mine = [k for k, cid in kinds if cid == sub]
        assert mine == ["tool/code-dispatch-start", "tool/call", "tool/result", "tool/code-dispatch"]
    history = adapter.requests[1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool"]
    assert history[1]["tool_calls"][0]["id"] == "call_1"
    assert history[2]["content"] == [{"type": "text", "text": "2 markers"}]
    assert "a.py" not in str(history)  # intermediate values stay in the run


async def test_images_from_sub_calls_follow_the_result_as_a_user_message() -> None:
    mode = make_mode(NOTE)
    adapter = MockAdapter([
        ModelReply(tool_calls=[{"name": "run_code", "arguments": {"code": 'await tools.note(text="x")', "description": "Draw one note"}}]),
        "done",
    ])
    turn = await run_turn(mode, adapter, "draw")
    assert turn.outcomes[0].attachments[0]["mime_type"] == "image/png"
    history = adapter.requests[1]["messages"]
    assert [m["role"] for m in history] == ["user", "assistant", "tool", "user"]
    assert history[3]["content"][0]["type"] == "image"


async def test_direct_tool_call_in_code_mode_is_denied_and_the_model_can_recover() -> None:
    mode = make_mode()
    adapter = MockAdapter([
        ModelReply(tool_calls=[{"name": "grep", "arguments": {"pattern": "x"}}]),
        ModelReply(tool_calls=[{"name": "run_code", "arguments": {"code": 'return (await tools.grep(pattern="x"))["matches"][0]["text"]', "description": "Search for x"}}]),
        answer_from_tool,
    ])
    turn = await run_turn(mode, adapter, "find x")
    assert turn.outcomes[0].is_error and "called from a run_code program" in turn.outcomes[0].text
    assert turn.answer == "Found: x"
    dispatched = [e for e in mode.registry.events.read() if e["type"] == EVENT_CODE_DISPATCH]
    assert len(dispatched) == 1


async def test_code_blocks_in_text_replies_run_when_the_loop_asks_for_it() -> None:
    mode = make_mode()
    adapter = MockAdapter(["Let me look.\n```python\nprint('hi from block')\n```\n", answer_from_tool])
    turn = await run_turn(mode, adapter, "go", run_code_blocks=True)
    assert turn.answer == "Found: hi from block"
    assert [e for e in mode.registry.events.read() if e["type"] == EVENT_CODE_DISPATCH_START] == []


async def test_the_loop_stops_after_max_steps_and_an_exhausted_script_fails_loudly() -> None:
    mode = make_mode()
    looping = ModelReply(tool_calls=[{"name": "run_code", "arguments": {"code": "x = 1", "description": "Do nothing at all"}}])
    turn = await run_turn(mode, MockAdapter([looping] * 3), "spin", max_steps=3)
    assert turn.answer == "(the model did not answer within 3 steps)"
    with pytest.raises(AssertionError, match="script exhausted"):
        await run_turn(mode, MockAdapter([]), "nothing")


def test_extract_code_blocks() -> None:
    text = "a\n```python\nx = 1\n```\nb\n```js\nno()\n```\n~~~\ny = 2\n~~~\n```py title\nz = 3\n```"
    assert extract_code_blocks(text) == ["x = 1\n", "y = 2\n", "z = 3\n"]
    assert extract_code_blocks("no code here") == []
    assert extract_code_blocks("```python\nunclosed") == []
