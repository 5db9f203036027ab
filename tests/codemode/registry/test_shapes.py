"""Provider shapes both ways, validated against the real ``openai`` and ``anthropic`` SDK types."""

from __future__ import annotations

import collections.abc
import json
import types
import typing
from typing import Any

import pytest
from bridgekit import NOTE, grep_tool, make_mode
from pydantic import TypeAdapter

anthropic_types = pytest.importorskip("anthropic.types")
chat = pytest.importorskip("openai.types.chat")
responses = pytest.importorskip("openai.types.responses")

from codemode import ToolCall, derive_messages  # noqa: E402
from codemode.registry.shapes import ACCEPTED_CALL_SHAPES, as_tool_call, format_messages  # noqa: E402

pytestmark = pytest.mark.anyio

CODE = "r = await tools.note(text='hi')\nprint(r)"
ARGS = {"code": CODE, "description": "Take a note"}


def _members(kind: Any) -> list[Any]:
    args = typing.get_args(kind)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return [m for a in args for m in _members(a)]
    return [kind]


def valid(kind: Any, value: Any) -> None:
    """``value`` validates as ``kind``, and (pydantic ignores extra TypedDict keys) its keys are
    all known to a member of ``kind`` that it validates as."""
    TypeAdapter(kind).validate_python(value)
    if isinstance(value, list) and typing.get_origin(kind) in (list, typing.List, collections.abc.Iterable):  # noqa: UP006
        (item,) = typing.get_args(kind)
        for v in value:
            valid(item, v)
        return
    if not isinstance(value, dict):
        return
    for member in _members(kind):
        keys = getattr(member, "__required_keys__", None)
        if keys is None:
            continue
        known = set(member.__required_keys__) | set(member.__optional_keys__)
        if set(value) <= known:
            try:
                TypeAdapter(member).validate_python(value)
            except ValueError:
                continue
            return
    raise AssertionError(f"{sorted(value)} are not all keys of one {kind}")


def _sdk_calls() -> dict[str, Any]:
    return {
        "openai-chat": chat.ChatCompletionMessageFunctionToolCall(
            id="call_1", type="function", function={"name": "run_code", "arguments": json.dumps(ARGS)}
        ),
        "openai-responses": responses.ResponseFunctionToolCall(
            type="function_call", call_id="call_1", name="run_code", arguments=json.dumps(ARGS), id="fc_9"
        ),
        "anthropic": anthropic_types.ToolUseBlock(type="tool_use", id="call_1", name="run_code", input=ARGS),
    }


@pytest.mark.parametrize("shape", ["openai-chat", "openai-responses", "anthropic"])
@pytest.mark.parametrize("as_dict", [False, True], ids=["object", "dict"])
async def test_handle_accepts_provider_calls(shape: str, as_dict: bool) -> None:
    sdk_call = _sdk_calls()[shape]
    call = sdk_call.model_dump() if as_dict else sdk_call
    mode = make_mode(grep_tool(), NOTE)
    outcome = await mode.handle(call)
    assert not outcome.is_error, outcome.text
    assert outcome.result.meta["call_id"] == "call_1"
    assert outcome.text.startswith("note hi")
    assert len(outcome.attachments) == 1


def test_flat_and_toolcall_shapes_still_work() -> None:
    assert as_tool_call({"id": "a", "name": "grep", "arguments": '{"pattern": "x"}'}) == ToolCall("a", "grep", {"pattern": "x"})
    assert as_tool_call({"id": "b", "name": "grep", "input": {"pattern": "y"}}) == ToolCall("b", "grep", {"pattern": "y"})
    assert as_tool_call({"name": "grep"}) == ToolCall("", "grep", {})
    same = ToolCall("c", "grep", {})
    assert as_tool_call(same) is same
    unread = as_tool_call({"id": "d", "name": "grep", "arguments": "{not json"}).arguments
    assert not isinstance(unread, collections.abc.Mapping) and unread.text == "{not json"


BIG = "9" * 5000
NOT_JSON = [
    ('{"code": ' + BIG + "}", "an integer of 5000 digits is longer than JSON numbers here may be; send it as a string"),
    ('{"code": "x", "description": ', "Expecting value at line 1 column 30"),
    ("[" * 100_000, "nested too deeply"),
]


def _shaped(shape: str, text: str) -> dict[str, Any]:
    if shape == "openai-chat":
        return {"id": "c1", "type": "function", "function": {"name": "run_code", "arguments": text}}
    if shape == "openai-responses":
        return {"type": "function_call", "call_id": "c1", "name": "run_code", "arguments": text}
    return {"id": "c1", "name": "run_code", "arguments": text}


@pytest.mark.parametrize("shape", ["openai-chat", "openai-responses", "flat"])
@pytest.mark.parametrize(("text", "reason"), NOT_JSON, ids=["5000-digits", "cut", "deep"])
async def test_arguments_that_are_not_json_are_one_invalid_arguments_result(shape: str, text: str, reason: str) -> None:
    mode = make_mode(grep_tool())
    outcome = await mode.handle(_shaped(shape, text))
    assert outcome.is_error and outcome.result.meta["error"] == "invalid_arguments"
    assert outcome.text == (
        f"Invalid arguments for run_code:\n- $: arguments is not JSON: {reason}\nFix them and call run_code again."
    )
    assert "__unparsed__" not in outcome.text and "set_int_max_str_digits" not in outcome.text
    call = next(e for e in mode.registry.events.read() if e["type"] == "tool/call")
    assert call["arguments"] == text  # the log keeps what the model sent


@pytest.mark.parametrize(
    "bad",
    [
        {"id": "x"},
        {"type": "function", "id": "x", "function": "run_code"},
        {"type": "tool_use", "id": "x", "input": {}},
        {"type": "function_call", "call_id": "x", "name": 3, "arguments": "{}"},
        {"type": "message", "role": "assistant"},
        ["run_code", {}],
        42,
    ],
)
async def test_unknown_shapes_raise_a_type_error_listing_the_accepted_ones(bad: Any) -> None:
    mode = make_mode(grep_tool())
    with pytest.raises(TypeError) as caught:
        await mode.handle(bad)
    assert ACCEPTED_CALL_SHAPES in str(caught.value)
    assert mode.registry.events.read() == []  # nothing reached the pipeline


def test_tool_exports_validate_against_the_sdk_types() -> None:
    mode = make_mode(grep_tool(), mode="both")
    for tool in mode.model_tools(format="openai"):
        valid(chat.ChatCompletionFunctionToolParam, tool)
    for tool in mode.model_tools(format="openai-responses"):
        valid(responses.FunctionToolParam, tool)
    for tool in mode.model_tools(format="anthropic"):
        valid(anthropic_types.ToolParam, tool)
    by_name = {t["name"]: t for t in mode.model_tools(format="openai-responses")}
    assert by_name["run_code"]["strict"] is False  # minLength: not in OpenAI's strict subset
    assert by_name["grep"]["strict"] is False  # an optional argument


def test_strict_is_carried_where_the_schema_allows_it() -> None:
    from codemode import define_tool
    from codemode.registry.export import strict_compatible, to_openai, to_openai_responses

    async def body(args: Any, ctx: Any) -> Any:
        return []

    closed = define_tool(name="tag", description="Tag a file.", execute=body, parameters_schema={
        "type": "object", "additionalProperties": False, "required": ["path", "tags"],
        "properties": {"path": {"type": "string"},
                       "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}})
    assert to_openai([closed])[0]["function"]["strict"] is True
    assert to_openai_responses([closed])[0]["strict"] is True
    valid(chat.ChatCompletionFunctionToolParam, to_openai([closed])[0])
    assert not strict_compatible({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
    assert not strict_compatible({"type": "object", "properties": {}, "required": [], "additionalProperties": False,
                                  "patternProperties": {}})


def test_mcp_export_carries_annotations() -> None:
    from codemode import define_tool, to_mcp

    async def body(args: Any, ctx: Any) -> Any:
        return []

    hinted = define_tool(name="peek", description="Look.", execute=body, annotations={"readOnlyHint": True, "title": "Peek"})
    plain = define_tool(name="poke", description="Touch.", execute=body)
    out = to_mcp([hinted, plain])
    assert out[0]["annotations"] == {"readOnlyHint": True, "title": "Peek"}
    assert "annotations" not in out[1]
    from codemode import ToolDefinitionError

    with pytest.raises(ToolDefinitionError, match="annotations must be a mapping"):
        define_tool(name="bad", description="Bad.", execute=body, annotations=["readOnlyHint"])  # type: ignore[arg-type]


# --- results and histories ------------------------------------------------------------------------


async def _turn(format: str) -> tuple[Any, list[dict[str, Any]]]:
    """One model turn through handle: a user message, a run_code call, its result with an image."""
    mode = make_mode(grep_tool(), NOTE)
    log = mode.registry.events
    log.append({"type": "message", "message": {"role": "user", "content": "Take a note"}})
    log.append({"type": "message", "message": {"role": "assistant", "content": "On it."}})
    outcome = await mode.handle({"id": "call_1", "name": "run_code", "arguments": ARGS})
    log.append({"type": "message", "message": {"role": "user", "content": [dict(b) for b in outcome.attachments]}})
    return outcome, derive_messages(log, format=format)


async def test_openai_chat_history_and_result_validate() -> None:
    outcome, history = await _turn("openai")
    for message in history:
        valid(chat.ChatCompletionMessageParam, message)
    assert history[1]["tool_calls"][0] == {
        "id": "call_1", "type": "function", "function": {"name": "run_code", "arguments": json.dumps(ARGS)}}
    assert history[2] == {"role": "tool", "tool_call_id": "call_1", "content": outcome.text}
    assert history[3]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    messages = outcome.to_messages("openai")
    for message in messages:
        valid(chat.ChatCompletionMessageParam, message)
    assert [m["role"] for m in messages] == ["tool", "user"]
    assert messages[1]["content"][1] == {"type": "image_url", "image_url": {"url": "data:image/png;base64," + outcome.attachments[0]["data"]}}


async def test_openai_responses_items_validate() -> None:
    outcome, history = await _turn("openai-responses")
    valid(responses.ResponseInputParam, history)
    kinds = [item.get("type", item.get("role")) for item in history]
    assert kinds == ["user", "assistant", "function_call", "function_call_output", "user"]
    items = outcome.to_messages("openai-responses")
    valid(responses.ResponseInputParam, items)
    (item,) = items
    assert item["call_id"] == "call_1" and item["type"] == "function_call_output"
    assert [p["type"] for p in item["output"]] == ["input_text", "input_image"]
    assert item["output"][1]["image_url"].startswith("data:image/png;base64,")


async def test_anthropic_history_and_result_validate() -> None:
    outcome, history = await _turn("anthropic")
    for message in history:
        valid(anthropic_types.MessageParam, message)
    assert [m["role"] for m in history] == ["user", "assistant", "user"]
    assert history[1]["content"] == [
        {"type": "text", "text": "On it."}, {"type": "tool_use", "id": "call_1", "name": "run_code", "input": ARGS}]
    result, image = history[2]["content"]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "call_1" and result["is_error"] is False
    assert result["content"][1]["source"]["media_type"] == "image/png"
    assert image["type"] == "image"  # the attachment message, merged after the result
    (message,) = outcome.to_messages("anthropic")
    valid(anthropic_types.MessageParam, message)
    block = message["content"][0]
    assert [p["type"] for p in block["content"]] == ["text", "image"]


async def test_failed_runs_are_error_results_in_every_shape() -> None:
    mode = make_mode(grep_tool())
    outcome = await mode.handle({"id": "e1", "name": "run_code", "arguments": {"code": "1/0", "description": "Divide"}})
    assert outcome.is_error
    (anthropic_message,) = outcome.to_messages("anthropic")
    assert anthropic_message["content"][0]["is_error"] is True
    assert outcome.to_messages("openai")[0]["content"].startswith("Error: code run failed (exception)")
    with pytest.raises(ValueError, match="format must be one of openai, openai-responses, anthropic"):
        outcome.to_messages("gemini")
    with pytest.raises(ValueError, match="format must be one of"):
        format_messages([], "gemini")
