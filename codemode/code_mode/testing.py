"""Test helpers for hosts: a scripted model (``MockAdapter``) and a minimal agent loop.

A seam that is not under test gets a scripted fake: ``MockAdapter`` stands in for a model API and
``run_turn`` for a host's loop, so a test can drive a whole turn (the model calls ``run_code``,
reads the text, answers) and then assert the event log and the derived history.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..registry.calls import ToolCall
from ..registry.events import EVENT_MESSAGE, derive_messages
from .agent import CallOutcome, CodeMode, extract_code_blocks
from .bridge import RUN_CODE

__all__ = ["MockAdapter", "ModelReply", "TurnResult", "run_turn"]

MAX_STEPS = 8
CODE_BLOCK_DESCRIPTION = "Run the code block from the reply"
OUT_OF_STEPS = "(the model did not answer within {steps} steps)"


@dataclass(frozen=True, slots=True)
class ModelReply:
    """One scripted model turn: optional text and tool calls (``{"name", "arguments"}`` or
    ``ToolCall``; ids are filled in when missing)."""

    text: str | None = None
    tool_calls: Sequence[Mapping[str, Any] | ToolCall] = ()


Script = ModelReply | str | Callable[[list[dict[str, Any]]], "ModelReply | str"]


@dataclass
class MockAdapter:
    """A model that answers from a script, one entry per request.

    An entry is a ``ModelReply``, a plain string (a text answer), or a function of the messages
    it was sent (to answer from what a tool returned). ``requests`` records every request.
    Raises ``AssertionError`` when the script runs out.
    """

    script: list[Script]
    requests: list[dict[str, Any]] = field(default_factory=list)
    _ids: Any = field(default_factory=lambda: itertools.count(1), repr=False)

    def complete(self, *, system: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelReply:
        self.requests.append({"system": system, "messages": messages, "tools": tools})
        if not self.script:
            raise AssertionError("MockAdapter script exhausted: the loop asked for more replies than scripted")
        entry = self.script.pop(0)
        if callable(entry) and not isinstance(entry, ModelReply):
            entry = entry(messages)
        if isinstance(entry, str):
            return ModelReply(text=entry)
        calls = [self._call(c) for c in entry.tool_calls]
        return ModelReply(entry.text, calls)

    def _call(self, call: Mapping[str, Any] | ToolCall) -> ToolCall:
        if isinstance(call, ToolCall):
            return call
        call_id = str(call.get("id") or f"call_{next(self._ids)}")
        return ToolCall(call_id, str(call["name"]), dict(call.get("arguments") or {}))


@dataclass(frozen=True, slots=True)
class TurnResult:
    """The final answer of a turn, every tool outcome on the way, and the steps taken."""

    answer: str
    outcomes: list[CallOutcome]
    steps: int


async def run_turn(
    code_mode: CodeMode,
    adapter: MockAdapter,
    user_message: str,
    *,
    agent: str | None = None,
    format: str = "openai",
    max_steps: int = MAX_STEPS,
    run_code_blocks: bool = False,
) -> TurnResult:
    """One user turn of a minimal agent loop over ``code_mode.registry.events``.

    Each step sends the system prompt, the history rebuilt by ``derive_messages`` and the model
    tools; tool calls go through ``code_mode.handle`` and their image attachments follow as a
    user message. A reply without tool calls ends the turn. With ``run_code_blocks``, fenced
    Python in a text reply is run as a ``run_code`` call instead (loops without tool calling).
    """
    log = code_mode.registry.events
    log.append({"type": EVENT_MESSAGE, "message": {"role": "user", "content": user_message}})
    outcomes: list[CallOutcome] = []
    for step in range(1, max_steps + 1):
        reply = adapter.complete(
            system=code_mode.system_prompt(agent),
            messages=derive_messages(log),
            tools=code_mode.model_tools(agent, format=format),
        )
        calls = list(reply.tool_calls)
        if not calls and run_code_blocks and reply.text:
            blocks = extract_code_blocks(reply.text)
            calls = [
                ToolCall(f"block_{step}_{i}", RUN_CODE, {"code": code, "description": CODE_BLOCK_DESCRIPTION})
                for i, code in enumerate(blocks, 1)
            ]
        if reply.text is not None or calls:
            log.append({"type": EVENT_MESSAGE, "message": {"role": "assistant", "content": reply.text}})
        if not calls:
            return TurnResult(reply.text or "", outcomes, step)
        for call in calls:
            outcome = await code_mode.handle(call, agent=agent)
            outcomes.append(outcome)
            _attach(log, outcome.attachments)
    return TurnResult(OUT_OF_STEPS.format(steps=max_steps), outcomes, max_steps)


def _attach(log: Any, attachments: Iterable[Mapping[str, Any]]) -> None:
    blocks = [dict(b) for b in attachments]
    if blocks:
        log.append({"type": EVENT_MESSAGE, "message": {"role": "user", "content": blocks}})
