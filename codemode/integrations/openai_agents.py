"""The OpenAI Agents SDK: Code Mode as one ``FunctionTool``.

    agent = Agent(name="coder", instructions=mode.system_prompt(), tools=[code_mode_tool(mode)])

The tool's arguments arrive as JSON text and go to ``CodeMode.handle`` as a Responses
``function_call``; the model reads the run's text (errors included), and the images a run
attached as images: the tool then returns ``ToolOutputText`` and one ``ToolOutputImage`` (a
``data:`` URL) per image, which the SDK sends as ``input_text`` and ``input_image`` parts.
``strict_json_schema`` is off: ``run_code``'s schema uses ``minLength``, which strict mode does
not accept.
"""

from __future__ import annotations

from typing import Any

from agents import FunctionTool, ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext

from ..code_mode.bridge import RUN_CODE
from . import run_code_spec

__all__ = ["code_mode_tool"]


def code_mode_tool(code_mode: Any, *, agent: str | None = None) -> FunctionTool:
    """A ``FunctionTool`` named ``run_code`` that runs through ``code_mode``'s pipeline."""
    description, schema = run_code_spec(code_mode, agent)

    async def invoke(ctx: ToolContext[Any], arguments: str) -> str | list[ToolOutputText | ToolOutputImage]:
        call = {"type": "function_call", "call_id": ctx.tool_call_id, "name": RUN_CODE, "arguments": arguments}
        outcome = await code_mode.handle(call, agent=agent)
        images = [
            ToolOutputImage(image_url=f"data:{b['mime_type']};base64,{b['data']}")
            for b in outcome.attachments
            if b.get("type") == "image" and isinstance(b.get("data"), str) and isinstance(b.get("mime_type"), str)
        ]
        if not images:
            return outcome.text
        return [ToolOutputText(text=outcome.text), *images]

    return FunctionTool(
        name=RUN_CODE,
        description=description,
        params_json_schema=schema,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )
