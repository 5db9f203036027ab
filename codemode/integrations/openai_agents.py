"""The OpenAI Agents SDK: Code Mode as one ``FunctionTool``.

    agent = Agent(name="coder", instructions=mode.system_prompt(), tools=[code_mode_tool(mode)])

The tool's arguments arrive as JSON text and go to ``CodeMode.handle`` as a Responses
``function_call``; the model reads the run's text (errors included). ``strict_json_schema`` is
off: ``run_code``'s schema uses ``minLength``, which strict mode does not accept.
"""

from __future__ import annotations

from typing import Any

from agents import FunctionTool
from agents.tool_context import ToolContext

from ..code_mode.bridge import RUN_CODE
from . import run_code_spec

__all__ = ["code_mode_tool"]


def code_mode_tool(code_mode: Any, *, agent: str | None = None) -> FunctionTool:
    """A ``FunctionTool`` named ``run_code`` that runs through ``code_mode``'s pipeline."""
    description, schema = run_code_spec(code_mode, agent)

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str:
        call = {"type": "function_call", "call_id": ctx.tool_call_id, "name": RUN_CODE, "arguments": arguments}
        outcome = await code_mode.handle(call, agent=agent)
        return outcome.text

    return FunctionTool(
        name=RUN_CODE,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
