"""Code Mode in a pydantic-ai agent, offline: a scripted FunctionModel stands in for the LLM.

Run: python examples/agents/pydantic_ai_agent.py [ROOT]     (pip install 'codemode[pydantic-ai]')
With a real model, pass e.g. "anthropic:claude-sonnet-4-5" instead of FunctionModel(script).
"""

import sys

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from codemode import CodeMode, Registry, register_workspace
from codemode.integrations.pydantic_ai import code_mode_toolset

PROGRAM = """\
files = (await tools.glob(pattern="*.py"))["matches"]
print(len(files), "Python files; first:", files[0] if files else None)"""


def script(messages: list, info: AgentInfo) -> ModelResponse:
    """The model's turns: call run_code once, then answer with what the run printed."""
    results = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    if not results:
        return ModelResponse(parts=[ToolCallPart("run_code", {"code": PROGRAM, "description": "Count Python files"})])
    return ModelResponse(parts=[TextPart(f"The workspace has {results[-1].content}")])


def main() -> None:
    registry = Registry(mode="code")
    register_workspace(registry, sys.argv[1] if len(sys.argv) > 1 else ".")
    with CodeMode(registry) as mode:
        agent = Agent(FunctionModel(script), toolsets=[code_mode_toolset(mode)])
        print(agent.run_sync("How many Python files are there?").output)


if __name__ == "__main__":
    main()
