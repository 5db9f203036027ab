"""Two small read-only MCP tools for clients that look before they write code.

``search_tools(query, limit=5)`` returns the SDK text of the best-matching tools (the same
ranking as ``tools.search`` inside a program); ``get_tool_sdk(names)`` returns the SDK text of
named tools. Both read the SDK only: nothing runs, nothing is logged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mcp_types as types

from ..code_mode.discovery import DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, tool_index
from . import messages as m

__all__ = ["CATALOG_TOOLS", "GET_TOOL_SDK", "SEARCH_TOOLS", "call_catalog_tool", "catalog_tools"]

SEARCH_TOOLS = "search_tools"
GET_TOOL_SDK = "get_tool_sdk"
CATALOG_TOOLS = (SEARCH_TOOLS, GET_TOOL_SDK)
_READ_ONLY = types.ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def catalog_tools() -> list[types.Tool]:
    """The two tools as MCP ``Tool`` entries."""
    search = types.Tool(
        name=SEARCH_TOOLS,
        description=m.SEARCH_TOOLS_DESCRIPTION,
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1, "description": m.SEARCH_QUERY},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                          "default": DEFAULT_SEARCH_LIMIT, "description": m.SEARCH_LIMIT},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY.model_copy(update={"title": "Search tools"}),
    )
    get = types.Tool(
        name=GET_TOOL_SDK,
        description=m.GET_TOOL_SDK_DESCRIPTION,
        input_schema={
            "type": "object",
            "properties": {
                "names": {"type": "array", "items": {"type": "string"}, "minItems": 1,
                          "description": m.GET_TOOL_SDK_NAMES},
            },
            "required": ["names"],
            "additionalProperties": False,
        },
        annotations=_READ_ONLY.model_copy(update={"title": "Get tool SDK"}),
    )
    return [search, get]


def call_catalog_tool(sdk: Any, name: str, arguments: Mapping[str, Any]) -> tuple[str, bool]:
    """``(text, is_error)`` for one call of a catalog tool against ``sdk``."""
    if name == SEARCH_TOOLS:
        query = arguments.get("query")
        limit = arguments.get("limit", DEFAULT_SEARCH_LIMIT)
        try:
            methods = tool_index(sdk).search(query, limit)  # type: ignore[arg-type]
        except ValueError as exc:
            return str(exc), True
        if not methods:
            return m.NO_MATCHES.format(query=query), False
        return "\n".join(sdk.describe(n) for n in methods), False
    names = arguments.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        return f"{GET_TOOL_SDK} takes names: a non-empty list of tool names", True
    parts, errors = [], []
    for wanted in names:
        try:
            parts.append(sdk.describe(wanted))
        except KeyError as exc:
            errors.append(str(exc.args[0]))
    text = "\n".join(parts + errors)
    return text, bool(errors) and not parts
