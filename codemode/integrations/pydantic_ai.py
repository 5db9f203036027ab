"""pydantic-ai: Code Mode as a toolset, ``Agent(model, toolsets=[code_mode_toolset(mode)])``.

The toolset holds one tool, ``run_code``, and carries the Code Mode instructions (the SDK, or
with ``budget`` the discovery text), so the agent needs nothing else. A failed run comes back to
the model as the tool's text (``Error: code run failed ...``), not as a retry; images from the
run follow as ``BinaryContent``.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic_ai import BinaryContent, RunContext, Tool, ToolReturn
from pydantic_ai.toolsets import FunctionToolset

from ..code_mode.bridge import RUN_CODE
from . import run_code_spec

__all__ = ["code_mode_toolset"]


def code_mode_toolset(code_mode: Any, *, agent: str | None = None, budget: int | None = None) -> FunctionToolset[Any]:
    """A ``FunctionToolset`` with ``run_code`` for ``agent``'s tools and the system prompt."""
    description, schema = run_code_spec(code_mode, agent)

    async def run_code(ctx: RunContext[Any], **arguments: Any) -> Any:
        call = {"id": ctx.tool_call_id or "run_code", "name": RUN_CODE, "arguments": arguments}
        outcome = await code_mode.handle(call, agent=agent)
        if not outcome.attachments:
            return outcome.text
        images = [BinaryContent(data=base64.b64decode(b["data"]), media_type=b["mime_type"]) for b in outcome.attachments]
        return ToolReturn(return_value=outcome.text, content=images)

    tool = Tool.from_schema(run_code, name=RUN_CODE, description=description, json_schema=schema, takes_ctx=True)
    return FunctionToolset([tool], instructions=code_mode.system_prompt(agent, budget=budget))
