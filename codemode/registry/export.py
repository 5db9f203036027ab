"""Tool lists in the formats model APIs and MCP expect. Pure data in, pure data out.

OpenAI exports carry ``strict: true`` only where the parameter schema is one OpenAI's strict mode
accepts as it is (every object closed with all its properties required, only supported
keywords), so a strict tool never has its schema refused or silently changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .definition import ToolDefinition
from .frozen import thaw

__all__ = [
    "FORMATS",
    "strict_compatible",
    "to_anthropic",
    "to_json_schema",
    "to_mcp",
    "to_openai",
    "to_openai_responses",
]

# What OpenAI's strict mode accepts (its structured-outputs subset); anything else keeps strict off.
_STRICT_KEYS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "description", "title", "$defs", "$ref", "pattern", "format", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
})


def strict_compatible(schema: Any, depth: int = 0) -> bool:
    """True when ``schema`` is valid as it is under OpenAI's strict mode."""
    if depth > 32 or not isinstance(schema, Mapping) or set(schema) - _STRICT_KEYS:
        return False
    kind = schema.get("type")
    if kind == "object" or (isinstance(kind, (list, tuple)) and "object" in kind):
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False or set(schema.get("required") or ()) != set(props):
            return False
        if not all(strict_compatible(p, depth + 1) for p in props.values()):
            return False
    children = list((schema.get("$defs") or {}).values()) + list(schema.get("anyOf") or ())
    if "items" in schema:
        children.append(schema["items"])
    return all(strict_compatible(c, depth + 1) for c in children)


def to_json_schema(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """The neutral form: ``name``, ``description``, ``parameters`` and ``output_schema`` (or None)."""
    return [
        {
            "name": d.name,
            "description": d.description,
            "parameters": thaw(d.parameters_schema),
            "output_schema": thaw(d.output_schema),
        }
        for d in definitions
    ]


def to_openai(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Chat Completions ``tools``: ``{"type": "function", "function": {...}}``."""
    out = []
    for d in definitions:
        function: dict[str, Any] = {
            "name": d.name,
            "description": d.description,
            "parameters": thaw(d.parameters_schema),
        }
        if strict_compatible(d.parameters_schema):
            function["strict"] = True
        out.append({"type": "function", "function": function})
    return out


def to_openai_responses(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Responses API ``tools``: flat ``{"type": "function", "name", ..., "strict"}``."""
    return [
        {
            "type": "function",
            "name": d.name,
            "description": d.description,
            "parameters": thaw(d.parameters_schema),
            "strict": strict_compatible(d.parameters_schema),
        }
        for d in definitions
    ]


def to_anthropic(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """Messages API ``tools``: ``name``, ``description``, ``input_schema``."""
    return [
        {"name": d.name, "description": d.description, "input_schema": thaw(d.parameters_schema)}
        for d in definitions
    ]


def to_mcp(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    """MCP ``tools/list`` entries. ``outputSchema`` is included only when it describes an object,
    as MCP requires of structured content; ``annotations`` when the tool has any."""
    out = []
    for d in definitions:
        entry: dict[str, Any] = {
            "name": d.name,
            "description": d.description,
            "inputSchema": thaw(d.parameters_schema),
        }
        if d.output_schema is not None and d.output_schema.get("type") == "object":
            entry["outputSchema"] = thaw(d.output_schema)
        if d.annotations:
            entry["annotations"] = thaw(d.annotations)
        out.append(entry)
    return out


FORMATS = {
    "json_schema": to_json_schema,
    "openai": to_openai,
    "openai-responses": to_openai_responses,
    "anthropic": to_anthropic,
    "mcp": to_mcp,
}
