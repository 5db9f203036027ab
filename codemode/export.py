"""Tool lists in the formats model APIs and MCP expect. Pure data in, pure data out."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .definition import ToolDefinition
from .frozen import thaw

__all__ = ["FORMATS", "to_anthropic", "to_json_schema", "to_mcp", "to_openai"]


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
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description,
                "parameters": thaw(d.parameters_schema),
            },
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
    as MCP requires of structured content."""
    out = []
    for d in definitions:
        entry: dict[str, Any] = {
            "name": d.name,
            "description": d.description,
            "inputSchema": thaw(d.parameters_schema),
        }
        if d.output_schema is not None and d.output_schema.get("type") == "object":
            entry["outputSchema"] = thaw(d.output_schema)
        out.append(entry)
    return out


FORMATS = {
    "json_schema": to_json_schema,
    "openai": to_openai,
    "anthropic": to_anthropic,
    "mcp": to_mcp,
}
