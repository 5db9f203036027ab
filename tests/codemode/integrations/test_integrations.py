"""The framework integrations end to end, each driven by the framework's own scripted model:
the model calls run_code, codemode runs it through the registry pipeline, the model reads it."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bridgekit import FAIL, NOTE, PNG, grep_tool, make_mode

pytestmark = pytest.mark.anyio

CODE = "r = await tools.grep(pattern='TODO')\nprint(len(r['matches']), 'match:', r['matches'][0]['text'])"
ARGS = {"code": CODE, "description": "Count TODO markers"}
EXPECTED = "1 match: TODO"


def _pipeline_calls(mode: Any) -> list[tuple[str, str | None]]:
    return [(e["name"], e.get("parent_call_id")) for e in mode.registry.events.read() if e["type"] == "tool/call"]


async def test_pydantic_ai_toolset_with_function_model() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from codemode.integrations.pydantic_ai import code_mode_toolset

    mode = make_mode(grep_tool(), NOTE)
    seen: dict[str, Any] = {}

    def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
        if not returns:
            seen["tools"] = [t.name for t in info.function_tools]
            seen["instructions"] = info.instructions
            return ModelResponse(parts=[ToolCallPart(tool_name="run_code", args=ARGS, tool_call_id="pa_1")])
        seen["result"] = returns[0].content
        return ModelResponse(parts=[TextPart(content=f"The run said: {returns[0].content}")])

    agent = Agent(FunctionModel(model), toolsets=[code_mode_toolset(mode)])
    result = await agent.run("How many TODOs?")
    assert result.output == f"The run said: {EXPECTED}"
    assert seen["tools"] == ["run_code"]
    assert "async def grep(" in seen["instructions"]
    assert _pipeline_calls(mode) == [("run_code", None), ("grep", "pa_1")]


async def test_openai_agents_function_tool_with_a_fake_model() -> None:
    pytest.importorskip("agents")
    from agents import Agent, ModelSettings, RunConfig, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from codemode.integrations.openai_agents import code_mode_tool

    mode = make_mode(grep_tool())
    inputs: list[Any] = []

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, model_settings, tools, output_schema,
                               handoffs, tracing, **kwargs) -> ModelResponse:
            inputs.append((system_instructions, input, [t.name for t in tools]))
            outputs = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
            if not outputs:
                call = ResponseFunctionToolCall(type="function_call", call_id="oa_1", name="run_code",
                                                arguments=json.dumps(ARGS), id="fc_1", status="completed")
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            text = ResponseOutputText(type="output_text", text=f"The run said: {outputs[0]['output']}", annotations=[])
            message = ResponseOutputMessage(type="message", id="msg_1", role="assistant", status="completed", content=[text])
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="coder", instructions=mode.system_prompt(), tools=[code_mode_tool(mode)],
                  model=ScriptedModel(), model_settings=ModelSettings())
    result = await Runner.run(agent, "How many TODOs?", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == f"The run said: {EXPECTED}"
    assert inputs[0][2] == ["run_code"] and "async def grep(" in inputs[0][0]
    assert _pipeline_calls(mode) == [("run_code", None), ("grep", "oa_1")]


async def test_openai_agents_gets_a_runs_images_as_images() -> None:
    pytest.importorskip("agents")
    from agents import Agent, ModelSettings, RunConfig, Runner
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
    )

    from codemode.integrations.openai_agents import code_mode_tool

    mode = make_mode(grep_tool(), NOTE)
    outputs: list[Any] = []
    args = {"code": "print(await tools.note(text='x'))", "description": "Show the note"}

    class ScriptedModel(Model):
        async def get_response(self, system_instructions, input, model_settings, tools, output_schema,
                               handoffs, tracing, **kwargs) -> ModelResponse:
            done = [i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"]
            if not done:
                call = ResponseFunctionToolCall(type="function_call", call_id="oa_img", name="run_code",
                                                arguments=json.dumps(args), id="fc_2", status="completed")
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            outputs.append(done[0]["output"])
            text = ResponseOutputText(type="output_text", text="seen", annotations=[])
            message = ResponseOutputMessage(type="message", id="msg_2", role="assistant", status="completed", content=[text])
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

    agent = Agent(name="coder", instructions=mode.system_prompt(), tools=[code_mode_tool(mode)],
                  model=ScriptedModel(), model_settings=ModelSettings())
    result = await Runner.run(agent, "Show me the note", run_config=RunConfig(tracing_disabled=True))
    assert result.final_output == "seen"
    (parts,) = outputs  # what the model received: the text and the image itself
    assert [p["type"] for p in parts] == ["input_text", "input_image"]
    assert parts[0]["text"] == "note x\n[image: image/png, 100 bytes]"
    assert parts[1]["image_url"] == f"data:image/png;base64,{PNG}"


async def test_langchain_structured_tool_with_a_fake_chat_model() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from codemode.integrations.langchain import code_mode_tool

    mode = make_mode(grep_tool(), NOTE)
    tool = code_mode_tool(mode)
    received: list[list[Any]] = []

    class Record(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            received.append(list(messages[0]))

    model = FakeMessagesListChatModel(responses=[
        AIMessage(content="", tool_calls=[{"name": "run_code", "args": ARGS, "id": "lc_1", "type": "tool_call"}]),
        AIMessage(content="done"),
    ], callbacks=[Record()])
    messages: list[Any] = [SystemMessage(mode.system_prompt()), HumanMessage("How many TODOs?")]
    while True:  # the standard tool-calling loop
        reply = await model.ainvoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            break
        for call in reply.tool_calls:
            messages.append(await tool.ainvoke(call))
    result = messages[3]
    assert isinstance(result, ToolMessage) and result.tool_call_id == "lc_1"
    assert result.content == EXPECTED and result.artifact == []
    assert isinstance(received[1][-1], ToolMessage) and received[1][-1].content == EXPECTED  # the model got it
    assert messages[-1].content == "done"
    assert [name for name, _ in _pipeline_calls(mode)] == ["run_code", "grep"]
    image = await tool.ainvoke({"name": "run_code", "id": "lc_2", "type": "tool_call",
                                "args": {"code": "print(await tools.note(text='x'))", "description": "Note"}})
    assert image.artifact[0]["type"] == "image" and image.status == "success"
    # The image reaches the model in the message content, as a standard image block.
    assert image.content == [{"type": "text", "text": "note x\n[image: image/png, 100 bytes]"},
                             {"type": "image", "base64": PNG, "mime_type": "image/png"}]


async def test_langchain_failed_run_is_an_error_tool_message() -> None:
    pytest.importorskip("langchain_core")
    from codemode.integrations.langchain import code_mode_tool

    tool = code_mode_tool(make_mode(grep_tool(), FAIL))
    failed = await tool.ainvoke({"name": "run_code", "id": "lc_3", "type": "tool_call",
                                 "args": {"code": "await tools.fail()", "description": "Fail"}})
    assert failed.status == "error" and failed.tool_call_id == "lc_3"
    assert failed.content.startswith("Error: code run failed (exception): ToolCallError: fail: ValueError: disk on fire")


def test_langchain_invoke_works_from_synchronous_code() -> None:
    pytest.importorskip("langchain_core")
    from codemode.integrations.langchain import code_mode_tool

    mode = make_mode(grep_tool(), FAIL)
    tool = code_mode_tool(mode)
    out = tool.invoke({"name": "run_code", "id": "lc_4", "type": "tool_call", "args": ARGS})
    assert (out.content, out.status, out.tool_call_id) == (EXPECTED, "success", "lc_4")
    again = tool.invoke({"name": "run_code", "id": "lc_5", "type": "tool_call",
                         "args": {"code": "await tools.fail()", "description": "Fail"}})
    assert again.status == "error"
    assert [name for name, _ in _pipeline_calls(mode)] == ["run_code", "grep", "run_code", "fail"]


async def test_langchain_invoke_inside_a_running_loop_names_ainvoke() -> None:
    pytest.importorskip("langchain_core")
    from codemode.integrations.langchain import SYNC_IN_LOOP, code_mode_tool

    mode = make_mode(grep_tool())
    tool = code_mode_tool(mode)
    with pytest.raises(RuntimeError) as caught:
        tool.invoke({"name": "run_code", "id": "lc_6", "type": "tool_call", "args": ARGS})
    assert str(caught.value) == SYNC_IN_LOOP and "await tool.ainvoke(" in SYNC_IN_LOOP
    assert _pipeline_calls(mode) == []  # nothing ran


def test_integrations_need_an_open_code_mode() -> None:
    from codemode.integrations import run_code_spec

    mode = make_mode(grep_tool())
    description, schema = run_code_spec(mode)
    assert schema["required"] == ["code", "description"] and description.startswith("Run a short async Python")
    mode.close()
    with pytest.raises(ValueError, match="no run_code"):
        run_code_spec(mode)
