"""Code Mode in an OpenAI Agents SDK agent, offline: a scripted Model stands in for the LLM.

Run: python examples/agents/openai_agents_agent.py [ROOT]   (pip install 'codemode[openai-agents]')
With a real model, drop model=ScriptedModel() (and set OPENAI_API_KEY).
"""

import json
import sys

from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from codemode import CodeMode, Registry, register_workspace
from codemode.integrations.openai_agents import code_mode_tool

PROGRAM = """\
files = (await tools.glob(pattern="*.py"))["matches"]
print(len(files), "Python files; first:", files[0] if files else None)"""


class ScriptedModel(Model):
    """The model's turns: call run_code once, then answer with what the run printed."""

    async def get_response(self, system_instructions, input, *args, **kwargs) -> ModelResponse:
        outputs = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if not outputs:
            arguments = json.dumps({"code": PROGRAM, "description": "Count Python files"})
            call = ResponseFunctionToolCall(type="function_call", call_id="call_1", name="run_code", arguments=arguments)
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        text = ResponseOutputText(type="output_text", text=f"The workspace has {outputs[-1]['output']}", annotations=[])
        reply = ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed", content=[text])
        return ModelResponse(output=[reply], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def main() -> None:
    registry = Registry(mode="code")
    register_workspace(registry, sys.argv[1] if len(sys.argv) > 1 else ".")
    with CodeMode(registry) as mode:
        agent = Agent(name="coder", instructions=mode.system_prompt(), tools=[code_mode_tool(mode)], model=ScriptedModel())
        result = Runner.run_sync(agent, "How many Python files are there?", run_config=RunConfig(tracing_disabled=True))
        print(result.final_output)


if __name__ == "__main__":
    main()
