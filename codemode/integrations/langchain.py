"""LangChain: Code Mode as a ``StructuredTool`` (async), for any chat model with tool calling.

    tool = code_mode_tool(mode)
    model = chat_model.bind_tools([tool])
    messages = [SystemMessage(mode.system_prompt()), HumanMessage("...")]

Invoke it with the model's tool call (``await tool.ainvoke(tool_call)``) to get a
``ToolMessage``; the run's images travel as the message's artifact.
"""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.tools import StructuredTool

from ..code_mode.bridge import RUN_CODE
from . import run_code_spec

__all__ = ["code_mode_tool"]


def code_mode_tool(code_mode: Any, *, agent: str | None = None) -> StructuredTool:
    """A ``StructuredTool`` named ``run_code`` that runs through ``code_mode``'s pipeline."""
    description, schema = run_code_spec(code_mode, agent)

    async def run_code(code: str, description: str) -> tuple[str, list[dict[str, Any]]]:
        call = {"id": f"lc-{uuid.uuid4().hex[:12]}", "name": RUN_CODE,
                "arguments": {"code": code, "description": description}}
        outcome = await code_mode.handle(call, agent=agent)
        return outcome.text, [dict(b) for b in outcome.attachments]

    return StructuredTool.from_function(
        coroutine=run_code,
        name=RUN_CODE,
        description=description,
        args_schema=schema,
        response_format="content_and_artifact",
    )
