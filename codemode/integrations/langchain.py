"""LangChain: Code Mode as a ``StructuredTool``, for any chat model with tool calling.

    tool = code_mode_tool(mode)
    model = chat_model.bind_tools([tool])
    messages = [SystemMessage(mode.system_prompt()), HumanMessage("...")]

Invoke it with the model's tool call to get a ``ToolMessage``: ``await tool.ainvoke(tool_call)``
in async code, ``tool.invoke(tool_call)`` in synchronous code (it runs its own event loop, so
from inside a running loop it refuses and names ``ainvoke``). A failed run is a ToolMessage with
``status="error"``. The run's images are in the message content as LangChain's standard image
blocks (``{"type": "image", "base64": ..., "mime_type": ...}``) after the text, so a multimodal
model sees them; the raw attachments are the message's artifact too.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from langchain_core.tools import StructuredTool, ToolException

from ..code_mode.bridge import RUN_CODE
from . import run_code_spec

__all__ = ["code_mode_tool"]

#: What a synchronous ``invoke`` from inside a running event loop says instead of deadlocking.
SYNC_IN_LOOP = (
    "run_code: tool.invoke() was called from a running event loop; await tool.ainvoke(...) "
    "there instead (invoke() is for synchronous code)"
)


def _content(text: str, attachments: list[dict[str, Any]]) -> str | list[str | dict[str, Any]]:
    """The message content: the text, then each image as a standard image block."""
    images = [
        {"type": "image", "base64": b["data"], "mime_type": b["mime_type"]}
        for b in attachments
        if b.get("type") == "image" and isinstance(b.get("data"), str) and isinstance(b.get("mime_type"), str)
    ]
    if not images:
        return text
    return [{"type": "text", "text": text}, *images]


def code_mode_tool(code_mode: Any, *, agent: str | None = None) -> StructuredTool:
    """A ``StructuredTool`` named ``run_code`` that runs through ``code_mode``'s pipeline."""
    description, schema = run_code_spec(code_mode, agent)

    async def run_code(code: str, description: str) -> tuple[Any, list[dict[str, Any]]]:
        call = {"id": f"lc-{uuid.uuid4().hex[:12]}", "name": RUN_CODE,
                "arguments": {"code": code, "description": description}}
        outcome = await code_mode.handle(call, agent=agent)
        if outcome.is_error:
            raise ToolException(outcome.text)  # LangChain answers with status="error"
        attachments = [dict(b) for b in outcome.attachments]
        return _content(outcome.text, attachments), attachments

    def run_code_sync(code: str, description: str) -> tuple[Any, list[dict[str, Any]]]:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(run_code(code, description))
        raise RuntimeError(SYNC_IN_LOOP)

    return StructuredTool.from_function(
        func=run_code_sync,
        coroutine=run_code,
        name=RUN_CODE,
        description=description,
        args_schema=schema,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )
