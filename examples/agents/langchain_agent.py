"""Code Mode as a LangChain tool, offline: FakeMessagesListChatModel stands in for the LLM.

Run: python examples/agents/langchain_agent.py [ROOT]       (pip install 'codemode[langchain]')
With a real model: model = ChatAnthropic(...).bind_tools([tool]); the loop stays the same.
"""

import asyncio
import sys

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from codemode import CodeMode, Registry, register_workspace
from codemode.integrations.langchain import code_mode_tool

PROGRAM = """\
files = (await tools.glob(pattern="*.py"))["matches"]
print(len(files), "Python files; first:", files[0] if files else None)"""


async def main() -> None:
    registry = Registry(mode="code")
    register_workspace(registry, sys.argv[1] if len(sys.argv) > 1 else ".")
    async with CodeMode(registry) as mode:
        tool = code_mode_tool(mode)
        call = {"name": "run_code", "args": {"code": PROGRAM, "description": "Count Python files"}, "id": "call_1"}
        model = FakeMessagesListChatModel(responses=[AIMessage("", tool_calls=[call]), AIMessage("(answered)")])
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
