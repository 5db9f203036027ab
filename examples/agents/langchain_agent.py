"""Code Mode as a LangChain tool, offline: a scripted chat model stands in for the LLM.

Run: python examples/agents/langchain_agent.py [ROOT]       (pip install 'codemode[langchain]')
With a real model, only the first line changes: chat_model = ChatAnthropic(...); the
`bind_tools` line and the loop stay the same.
"""

import asyncio
import sys

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from codemode import CodeMode, Registry, register_workspace
from codemode.integrations.langchain import code_mode_tool

PROGRAM = """\
files = (await tools.glob(pattern="*.py"))["matches"]
print(len(files), "Python files; first:", files[0] if files else None)"""


class ScriptedChatModel(FakeMessagesListChatModel):
    """LangChain's scripted model, with the `bind_tools` a real chat model has."""

    def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def,override]
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


async def main() -> None:
    registry = Registry(mode="code")
    register_workspace(registry, sys.argv[1] if len(sys.argv) > 1 else ".")
    async with CodeMode(registry) as mode:
        tool = code_mode_tool(mode)
        call = {"name": "run_code", "args": {"code": PROGRAM, "description": "Count Python files"}, "id": "call_1"}
        chat_model = ScriptedChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("(answered)")])
        model = chat_model.bind_tools([tool])  # the README's line
        messages = [SystemMessage(mode.system_prompt()), HumanMessage("How many Python files are there?")]
        while True:  # the usual tool-calling loop
            reply = await model.ainvoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                break
            for tool_call in reply.tool_calls:
                result = await tool.ainvoke({**tool_call, "type": "tool_call"})
                print("run_code ->", result.content)
                messages.append(result)


if __name__ == "__main__":
    asyncio.run(main())
