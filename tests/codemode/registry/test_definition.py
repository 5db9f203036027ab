"""define_tool, the parameters DSL and @tool: what they build and every problem they report."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from codemode import (
    ExecutionContext,
    FrozenDict,
    ToolDefinition,
    ToolDefinitionError,
    compile_parameters,
    define_tool,
    tool,
)
from codemode.registry.frozen import thaw


async def body(args, ctx):
    return []


def test_dsl_compiles_to_json_schema() -> None:
    schema = compile_parameters(
        {
            "path": {"type": "string", "required": True, "description": "Absolute path"},
            "limit": {"type": "integer", "default": 10},
            "mode": {"type": "string", "enum": ["r", "w"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {
                "type": "object",
                "properties": {"deep": {"type": "boolean", "required": True}},
            },
            "points": {
                "type": "array",
                "items": {"type": "object", "properties": {"x": {"type": "number", "required": True}}},
            },
        }
    )
    assert schema == {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Absolute path"},
            "limit": {"type": "integer", "default": 10},
            "mode": {"type": "string", "enum": ["r", "w"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {
                "type": "object",
                "properties": {"deep": {"type": "boolean"}},
                "required": ["deep"],
                "additionalProperties": False,
            },
            "points": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}},
                    "required": ["x"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    }


def test_define_tool_builds_a_frozen_definition() -> None:
    d = define_tool(
        name="read_file",
        description="  Read a file.  ",
        parameters={"path": {"type": "string", "required": True}},
        output={"schema": {"type": "string"}},
        execute=body,
    )
    assert isinstance(d, ToolDefinition)
    assert d.description == "Read a file."
    assert isinstance(d.parameters_schema, FrozenDict)
    assert d.output_schema == {"type": "string"}
    assert d.is_concurrency_safe({}) is False
    with pytest.raises(TypeError):
        d.parameters_schema["type"] = "array"  # type: ignore[index]


def test_no_parameters_means_an_empty_closed_object() -> None:
    d = define_tool(name="now", description="Time.", execute=body)
    assert thaw(d.parameters_schema) == {"type": "object", "properties": {}, "additionalProperties": False}
    assert d.output_schema is None


def test_parameters_schema_is_taken_as_is() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^a"}}}
    d = define_tool(name="mcp_tool", description="From MCP.", parameters_schema=schema, execute=body)
    assert thaw(d.parameters_schema) == schema
    assert d.arguments_validator.compiled is False  # pattern is outside the fast subset


def test_every_problem_is_listed_at_once() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(
            name="bad name",
            description="",
            parameters={
                "a": {"type": "strin"},
                "b": {"required": "yes", "type": "string"},
                "c": {"type": "string", "items": {"type": "string"}},
                "d": {"type": "array", "items": {"type": "string", "required": True}},
                "e": {"type": "integer", "colour": "red"},
                "f": {"description": "no type"},
                "g": "string",
            },
            parameters_schema={"type": "object"},
            output={"render": 3, "extra": 1},
            execute=lambda args, ctx: None,  # type: ignore[arg-type,return-value]
        )
    problems = info.value.problems
    expected = [
        "name 'bad name' must be a Python identifier of at most 64 characters and not a keyword (snippets call tools as tools.<name>)",
        "description must be a non-empty string (the model reads it)",
        "execute must be an async function: async def execute(args, ctx)",
        "give parameters= (the DSL) or parameters_schema= (JSON Schema), not both",
        "output has unknown keys ['extra']; allowed: schema, render",
        "output.render must be a function render(args, value) -> content blocks",
        "output needs a 'schema' (JSON Schema of the value execute returns)",
    ]
    for line in expected:
        assert line in problems
    assert str(info.value).startswith("invalid tool definition 'bad name':\n- ")


def test_dsl_problems_name_the_field() -> None:
    problems: list[str] = []
    compile_parameters(
        {
            "a": {"type": "strin"},
            "b": {"required": "yes", "type": "string"},
            "c": {"type": "string", "items": {"type": "string"}},
            "d": {"type": "array", "items": {"type": "string", "required": True}},
            "e": {"type": "integer", "colour": "red"},
            "f": {"description": "no type"},
            "g": "string",
            "h": {"type": "integer", "default": "ten"},
        },
        problems,
    )
    assert problems[:7] == [
        "parameters.a.type 'strin' is not one of string, integer, number, boolean, object, array, null",
        "parameters.b.required must be true or false",
        "parameters.c.items needs type 'array'",
        "parameters.d.items.required has no meaning for array items",
        "parameters.e has unknown keys ['colour']; allowed: default, description, enum, items, properties, required, type",
        "parameters.f needs a 'type' (one of string, integer, number, boolean, object, array, null) or an 'enum'",
        "parameters.g must be a field spec dict such as {'type': 'string'}",
    ]


def test_bad_default_is_reported() -> None:
    with pytest.raises(ToolDefinitionError, match=r"parameters.n.default 'ten' does not match"):
        compile_parameters({"n": {"type": "integer", "default": "ten"}})


def test_an_sdk_note_is_one_line_and_reaches_the_sdk_preamble() -> None:
    from codemode.code_mode.bridge import build_sdk

    noted = define_tool(name="fetch", description="d", execute=body, sdk_note="  Fetch takes URLs.  ")
    assert noted.sdk_note == "Fetch takes URLs."
    assert "Fetch takes URLs." in build_sdk([noted]).text.split("```")[0]
    assert define_tool(name="plain", description="d", execute=body).sdk_note == ""
    with pytest.raises(ToolDefinitionError, match="sdk_note must be one line of text"):
        define_tool(name="fetch", description="d", execute=body, sdk_note="two\nlines")


@pytest.mark.parametrize("name", ["import", "9lives", "a-b", "x" * 65, ""])
def test_tool_names_must_be_snippet_callable(name: str) -> None:
    with pytest.raises(ToolDefinitionError):
        define_tool(name=name, description="d", execute=body)


def test_invalid_json_schemas_are_rejected() -> None:
    with pytest.raises(ToolDefinitionError) as info:
        define_tool(
            name="t",
            description="d",
            parameters_schema={"type": "object", "properties": {"a": {"type": "nope"}}},
            output={"schema": {"type": 5}},
            execute=body,
        )
    assert any(p.startswith("parameters_schema $.properties.a.type") for p in info.value.problems)
    assert any(p.startswith("output.schema $.type") for p in info.value.problems)


def test_parameters_schema_must_be_an_object() -> None:
    with pytest.raises(ToolDefinitionError, match='must have "type": "object"'):
        define_tool(name="t", description="d", parameters_schema={"type": "string"}, execute=body)


class Point(BaseModel):
    x: float
    y: float


def test_tool_decorator_derives_the_definition() -> None:
    @tool
    async def grep(
        pattern: Annotated[str, "Regular expression to search for"],
        path: Annotated[str, Field(description="Folder to search")] = ".",
        limit: int = 10,
        mode: Literal["fast", "full"] = "fast",
        ctx: ExecutionContext | None = None,
    ) -> list[str]:
        """Search files for a pattern.

        Longer explanation the model does not need.

        Args:
            pattern: ignored, Annotated wins
            limit: Maximum number of hits,
                counted across files.
        """
        return []

    assert grep.name == "grep"
    assert grep.description == "Search files for a pattern."
    assert thaw(grep.parameters_schema) == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression to search for"},
            "path": {"type": "string", "default": ".", "description": "Folder to search"},
            "limit": {
                "type": "integer",
                "default": 10,
                "description": "Maximum number of hits, counted across files.",
            },
            "mode": {"enum": ["fast", "full"], "type": "string", "default": "fast"},
        },
        "required": ["pattern"],
    }
    assert thaw(grep.output_schema) == {"type": "array", "items": {"type": "string"}}


def test_tool_decorator_with_options_and_models() -> None:
    @tool(name="centroid", is_concurrency_safe=True)
    async def middle(points: list[Point]) -> Point:
        """Average points."""
        return Point(x=0, y=0)

    assert middle.name == "centroid"
    assert middle.is_concurrency_safe({}) is True
    assert "$defs" in middle.parameters_schema
    assert thaw(middle.output_schema) == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    }


def test_tool_decorator_without_return_annotation_accepts_any_json() -> None:
    @tool
    async def anything(x: int):
        """Anything."""
        return x

    assert thaw(anything.output_schema) == {}


def test_tool_decorator_reports_problems() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool
        def sync(*args: int, _hidden: int = 0) -> int:  # type: ignore[misc]
            """Not async."""
            return 0

    assert info.value.problems == [
        "@tool needs an async def",
        "parameter 'args': *args, **kwargs and positional-only are not supported",
        "parameter '_hidden': names starting with '_' cannot be arguments",
    ]


def test_concurrency_predicate_failing_counts_as_unsafe() -> None:
    d = define_tool(
        name="t", description="d", execute=body, is_concurrency_safe=lambda args: args["missing"]
    )
    assert d.is_concurrency_safe({}) is False
    d2 = define_tool(name="t2", description="d", execute=body, is_concurrency_safe=lambda args: args["ro"])
    assert d2.is_concurrency_safe({"ro": True}) is True
