"""Registry.execute: each result shape, and every failure turned into an error result."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from codemode import (
    ErrorKind,
    ExecutionContext,
    FrozenDict,
    Registry,
    ToolCall,
    define_tool,
    image_block,
    text_block,
    tool,
)

pytestmark = pytest.mark.anyio


def single(reg: Registry, definition: Any) -> Registry:
    reg.register(definition)
    return reg


async def run(reg: Registry, name: str, args: Any = None, call_id: str = "c1"):
    return await reg.execute(ToolCall(call_id, name, {} if args is None else args))


async def test_value_result_with_default_render(registry: Registry) -> None:
    result = await run(registry, "echo", {"path": "/a", "limit": 2})
    assert result.is_error is False
    assert result.value == {"path": "/a", "limit": 2}
    assert result.content == ({"type": "text", "text": '{"path": "/a", "limit": 2}'},)
    assert result.meta == {"call_id": "c1"}
    assert result.error is None


async def test_string_value_renders_as_text() -> None:
    async def read(args, ctx):
        return "hello"

    reg = single(Registry(), define_tool(name="read", description="d", output={"schema": {"type": "string"}}, execute=read))
    result = await run(reg, "read")
    assert (result.value, result.text) == ("hello", "hello")


async def test_custom_render_to_image_blocks() -> None:
    async def shot(args, ctx):
        return {"png": "aGk="}

    reg = single(
        Registry(),
        define_tool(
            name="shot",
            description="d",
            output={
                "schema": {"type": "object", "properties": {"png": {"type": "string"}}},
                "render": lambda args, value: [text_block("Screenshot:"), image_block("image/png", value["png"])],
            },
            execute=shot,
        ),
    )
    result = await run(reg, "shot")
    assert result.content == (
        {"type": "text", "text": "Screenshot:"},
        {"type": "image", "mime_type": "image/png", "data": "aGk="},
    )
    assert result.value == {"png": "aGk="}


async def test_content_result_without_output_schema() -> None:
    async def blocks(args, ctx):
        return [{"type": "text", "text": "a"}, {"type": "resource", "uri": "file:///x"}]

    reg = single(Registry(), define_tool(name="blocks", description="d", execute=blocks))
    result = await run(reg, "blocks")
    assert result.value is None and not result.is_error
    assert [b["type"] for b in result.content] == ["text", "resource"]


class Point(BaseModel):
    x: float
    y: float


async def test_tool_decorator_runs_with_conversion_and_context() -> None:
    seen: dict[str, Any] = {}

    @tool
    async def centroid(points: list[Point], scale: float = 1, ctx: ExecutionContext | None = None) -> Point:
        """Average points."""
        seen["types"] = [type(p).__name__ for p in points]
        seen["call_id"] = ctx.call_id if ctx else None
        n = len(points)
        return Point(x=sum(p.x for p in points) / n * scale, y=sum(p.y for p in points) / n * scale)

    reg = single(Registry(), centroid)
    result = await run(reg, "centroid", {"points": [{"x": 0, "y": 0}, {"x": 2, "y": 4}], "scale": 2})
    assert result.value == {"x": 2.0, "y": 4.0}
    assert seen["types"] == ["Point", "Point"]
    assert seen["call_id"] == "c1"
    assert "ctx" not in centroid.parameters_schema["properties"]


async def test_arguments_are_frozen_and_defaults_applied() -> None:
    seen: dict[str, Any] = {}

    async def body(args, ctx):
        seen["args"] = args
        args["limit"] = 5  # mutation attempt
        return []

    reg = single(
        Registry(),
        define_tool(
            name="t",
            description="d",
            parameters={"limit": {"type": "integer", "default": 10}, "tags": {"type": "array"}},
            execute=body,
        ),
    )
    raw = {"tags": ["a"]}
    result = await run(reg, "t", raw)
    assert seen["args"] == {"limit": 10, "tags": ("a",)}
    assert isinstance(seen["args"], FrozenDict)
    assert result.error == ErrorKind.TOOL_ERROR
    assert result.text == "t failed: TypeError: FrozenDict is immutable; thaw() it for a mutable copy"
    assert raw == {"tags": ["a"]}


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ({}, "Invalid arguments for echo:\n- $: 'path' is a required property\nFix them and call echo again."),
        (
            {"path": 1, "limit": "x", "other": True},
            "Invalid arguments for echo:\n"
            "- $: Additional properties are not allowed ('other' was unexpected)\n"
            "- $.limit: 'x' is not of type 'integer'\n"
            "- $.path: 1 is not of type 'string'\n"
            "Fix them and call echo again.",
        ),
        (["a"], "Invalid arguments for echo:\n- $: arguments must be a JSON object, got list\nFix them and call echo again."),
        (
            {"path": {1, 2}},
            "Invalid arguments for echo:\n- $: arguments is not JSON: set at $.path is not JSON\nFix them and call echo again.",
        ),
    ],
)
async def test_argument_rejection(registry: Registry, args: Any, text: str) -> None:
    result = await registry.execute(ToolCall("c1", "echo", args))
    assert result.is_error and result.error == ErrorKind.INVALID_ARGUMENTS
    assert result.text == text
    assert result.value is None


def _nest(depth: int) -> Any:
    value: Any = "a"
    for _ in range(depth):
        value = [value]
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"limit": 1}
    value["path"] = value
    return value


@pytest.mark.parametrize(
    ("args", "detail"),
    [
        pytest.param({"path": _nest(200_000)}, "nested too deeply", id="deep"),
        pytest.param(_cycle(), "nested too deeply", id="cycle"),
        pytest.param({"path": float("nan")}, "float nan at $.path is not JSON", id="nan"),
        pytest.param({"path": "a", "limit": float("inf")}, "float inf at $.limit is not JSON", id="inf"),
        pytest.param({"path": b"a"}, "bytes at $.path is not JSON", id="bytes"),
        pytest.param({1: "a"}, "non-string key at $[1] is not JSON", id="int-key"),
    ],
)
async def test_malformed_arguments_are_an_error_result_and_logged_as_one_string(
    args: Any, detail: str, tmp_path: Any
) -> None:
    # Python callers (the bridge, framework glue) can hand over what JSON cannot carry; the
    # call must end as an error result, run nothing, and leave a log that still reads and writes.
    from codemode.registry.events import JsonlEventLog

    ran: list[Any] = []

    async def execute(args: Any, ctx: Any) -> None:
        ran.append(args)

    for log in (None, JsonlEventLog(tmp_path / "events.jsonl")):
        reg = Registry() if log is None else Registry(log=log)
        reg.register(define_tool(name="echo", description="Echo.", parameters={"path": {"type": "string"}},
                                 execute=execute))
        result = await reg.execute(ToolCall("c1", "echo", args))
        assert result.is_error and result.error == ErrorKind.INVALID_ARGUMENTS
        assert result.text == f"Invalid arguments for echo:\n- $: arguments is not JSON: {detail}\nFix them and call echo again."
        logged = [e for e in reg.events.read() if e["type"] == "tool/call"]
        assert [e["arguments"] for e in logged] == [f"<arguments that are not JSON: {detail}>"]
    assert ran == []


async def test_unknown_tool_lists_the_available_ones(registry: Registry) -> None:
    result = await run(registry, "ech")
    assert result.text == "Unknown tool 'ech'. Available tools: echo."
    assert result.error == ErrorKind.UNKNOWN_TOOL
    empty = await run(Registry(), "x")
    assert empty.text == "Unknown tool 'x'. Available tools: (none)."


async def test_exception_becomes_an_error_result() -> None:
    async def boom(args, ctx):
        raise ValueError("disk on fire")

    result = await run(single(Registry(), define_tool(name="boom", description="d", execute=boom)), "boom")
    assert result.is_error and result.error == ErrorKind.TOOL_ERROR
    assert result.text == "boom failed: ValueError: disk on fire"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"path": 3}, "echo returned an invalid result: $.path: 3 is not of type 'string'"),
        ({"path": "a", "limit": {1}}, "echo returned an invalid result: the value is not JSON: set at $.limit is not JSON"),
        ("nope", "echo returned an invalid result: $: 'nope' is not of type 'object'"),
    ],
)
async def test_invalid_output_becomes_an_error_result(make_echo, value: Any, text: str) -> None:
    async def body(args, ctx):
        return value

    reg = single(Registry(), make_echo(execute=body))
    result = await run(reg, "echo", {"path": "/a"})
    assert result.error == ErrorKind.INVALID_OUTPUT
    assert result.text == text


@pytest.mark.parametrize(
    ("blocks", "detail"),
    [
        ("text", "expected a list of content blocks, got str"),
        ([{"type": "txt", "text": "a"}], "block 0 has unknown type 'txt' (known: audio, image, resource, text)"),
        ([{"type": "text"}], "block 0 (text) needs a string 'text'"),
        ([3], "block 0 is int, not an object"),
    ],
)
async def test_invalid_content_becomes_an_error_result(blocks: Any, detail: str) -> None:
    async def body(args, ctx):
        return blocks

    reg = single(Registry(), define_tool(name="t", description="d", execute=body))
    result = await run(reg, "t")
    assert result.error == ErrorKind.INVALID_OUTPUT
    assert result.text == f"t produced invalid content: {detail}"


async def test_failing_render_is_a_tool_error() -> None:
    async def body(args, ctx):
        return 1

    def render(args, value):
        raise KeyError("x")

    reg = single(Registry(), define_tool(name="t", description="d", output={"schema": {}, "render": render}, execute=body))
    assert (await run(reg, "t")).text == "t failed: KeyError: 'x'"


async def test_finalize_content_runs_last() -> None:
    async def body(args, ctx):
        return "x" * 50

    def truncate(args, content):
        return [text_block(content[0]["text"][:10] + " [truncated]")]

    reg = single(
        Registry(),
        define_tool(name="t", description="d", output={"schema": {"type": "string"}}, execute=body, finalize_content=truncate),
    )
    result = await run(reg, "t")
    assert result.text == "xxxxxxxxxx [truncated]"
    assert result.value == "x" * 50


async def test_none_value_renders_a_marker() -> None:
    @tool
    async def touch(path: str) -> None:
        """Touch."""

    result = await run(single(Registry(), touch), "touch", {"path": "a"})
    assert (result.value, result.text) == (None, "(no output)")


async def test_results_are_immutable(registry: Registry) -> None:
    result = await run(registry, "echo", {"path": "/a"})
    with pytest.raises(AttributeError):
        result.is_error = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.content[0]["text"] = "x"  # type: ignore[index]


async def test_unresolvable_schema_reference_is_an_error_result() -> None:
    async def body(args, ctx):
        return []

    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}
    reg = single(Registry(), define_tool(name="mcp", description="d", parameters_schema=schema, execute=body))
    result = await run(reg, "mcp", {"a": 1})
    assert result.error == ErrorKind.TOOL_ERROR
    assert result.text.startswith("mcp failed: ")
