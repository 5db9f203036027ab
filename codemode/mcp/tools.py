"""MCP tools as registry tools: names, definitions and content blocks, both ways.

**Names.** An upstream tool is registered as ``<server>__<tool>``. Each part keeps ASCII letters,
digits and ``_``; any other run becomes ``_`` (accents are dropped first), the server part never
contains ``__`` and never starts with a digit, so the first ``__`` always separates the server.
The result is a Python identifier of at most 64 characters, so it is also a valid OpenAI and
Anthropic tool name (``^[A-Za-z0-9_-]{1,64}$``) and a valid ``tools.<name>`` method. Longer names
are cut and end in ``_`` plus six hex digits of a hash of the original pair; clashes get ``_2``,
``_3``, ... in sorted order. ``McpProvider.upstream`` maps each name back.

**Values.** ``inputSchema`` becomes the parameter schema; ``outputSchema`` (when present) the
output schema, with ``structuredContent`` as the canonical value, shown to the model as the
upstream content blocks. An upstream ``isError`` becomes an error result with the upstream blocks.
"""

from __future__ import annotations

import contextvars
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..registry.calls import ExecutionContext
from ..registry.content import render_value, text_block
from ..registry.definition import ToolDefinition, define_tool
from ..registry.frozen import thaw
from ..registry.messages import ErrorKind
from ..registry.pipeline import BodyFailed
from . import lazy_sdk as sdk
from . import messages as m

if TYPE_CHECKING:
    import mcp_types as types

    from .upstream import UpstreamServer

#: An upstream tool as MCP's JSON spells it (``name``, ``inputSchema``, ``outputSchema``,
#: ``annotations``, ...): what a live ``tools/list`` gives (dumped) and a cached list holds.
ToolJSON = Mapping[str, Any]

__all__ = [
    "SEPARATOR",
    "from_mcp_content",
    "missing_capability",
    "namespace_names",
    "namespaced_name",
    "to_mcp_content",
    "tool_definition",
    "tool_json",
]

SEPARATOR = "__"
MAX_NAME = 64
_INVALID = re.compile(r"[^0-9A-Za-z_]+")
_HASH_CHARS = 6

# The upstream blocks of the call being rendered: ``execute`` returns the canonical value and the
# pipeline renders it in the same task, so the blocks travel alongside in a context variable.
_RENDERING: contextvars.ContextVar[tuple[Any, list[dict[str, Any]]] | None] = contextvars.ContextVar(
    "codemode_mcp_rendering", default=None
)


def _ascii(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return _INVALID.sub("_", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _server_part(server: str) -> str:
    part = re.sub(r"_{2,}", "_", _ascii(server)).strip("_") or "server"
    return "s" + part if part[0].isdigit() else part


def _tool_part(tool: str) -> str:
    return _ascii(tool).strip("_") or "tool"


def namespaced_name(server: str, tool: str) -> str:
    """The registry name of upstream ``tool`` on ``server``, before clash suffixes."""
    name = f"{_server_part(server)}{SEPARATOR}{_tool_part(tool)}"
    if len(name) <= MAX_NAME:
        return name
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]
    return name[: MAX_NAME - _HASH_CHARS - 1] + "_" + digest


def namespace_names(pairs: Iterable[tuple[str, str]], taken: Iterable[str] = ()) -> dict[tuple[str, str], str]:
    """Map each ``(server, tool)`` to a unique registry name, avoiding ``taken``; order-free."""
    used = set(taken)
    out: dict[tuple[str, str], str] = {}
    for pair in sorted(set(pairs)):
        base = candidate = namespaced_name(*pair)
        n = 2
        while candidate in used:
            suffix = f"_{n}"
            candidate = base[: MAX_NAME - len(suffix)] + suffix
            n += 1
        used.add(candidate)
        out[pair] = candidate
    return out


# --- content blocks ---------------------------------------------------------------------------------


def _resource_block(uri: Any, **fields: Any) -> dict[str, Any]:
    block = {"type": "resource", "uri": str(uri)}
    block.update({k: v for k, v in fields.items() if v is not None})
    return block


def from_mcp_content(blocks: Sequence[Any]) -> list[dict[str, Any]]:
    """MCP content blocks as registry content blocks (text, image, audio, resource).

    An embedded resource keeps its ``text`` or base64 ``blob``; a resource link becomes a
    resource block with its ``name``. Any other block becomes a text marker naming its type.
    """
    out: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, sdk.types.TextContent):
            out.append(text_block(block.text))
        elif isinstance(block, (sdk.types.ImageContent, sdk.types.AudioContent)):
            out.append({"type": block.type, "mime_type": block.mime_type, "data": block.data})
        elif isinstance(block, sdk.types.EmbeddedResource):
            res = block.resource
            if isinstance(res, sdk.types.TextResourceContents):
                out.append(_resource_block(res.uri, mime_type=res.mime_type, text=res.text))
            else:
                out.append(_resource_block(res.uri, mime_type=res.mime_type, blob=res.blob))
        elif isinstance(block, sdk.types.ResourceLink):
            out.append(
                _resource_block(block.uri, name=block.name, mime_type=block.mime_type, description=block.description)
            )
        else:
            out.append(text_block(m.UNSUPPORTED_BLOCK.format(type=getattr(block, "type", type(block).__name__))))
    return out


def to_mcp_content(blocks: Sequence[Mapping[str, Any]]) -> list[types.ContentBlock]:
    """Registry content blocks as MCP content blocks, for codemode's own server."""
    out: list[types.ContentBlock] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            out.append(sdk.types.TextContent(type="text", text=str(block.get("text", ""))))
        elif kind == "image":
            out.append(sdk.types.ImageContent(type="image", data=block["data"], mime_type=block["mime_type"]))
        elif kind == "audio":
            out.append(sdk.types.AudioContent(type="audio", data=block["data"], mime_type=block["mime_type"]))
        elif kind == "resource" and ("text" in block or "blob" in block):
            contents: types.TextResourceContents | types.BlobResourceContents
            if "text" in block:
                contents = sdk.types.TextResourceContents(uri=block["uri"], mime_type=block.get("mime_type"), text=block["text"])
            else:
                contents = sdk.types.BlobResourceContents(uri=block["uri"], mime_type=block.get("mime_type"), blob=block["blob"])
            out.append(sdk.types.EmbeddedResource(type="resource", resource=contents))
        elif kind == "resource":
            name = str(block.get("name") or block["uri"])
            out.append(sdk.types.ResourceLink(type="resource_link", uri=block["uri"], name=name, mime_type=block.get("mime_type")))
    return out


# --- definitions ------------------------------------------------------------------------------------


def _render(args: Any, value: Any) -> list[dict[str, Any]]:
    """Show the upstream blocks of this very value; a value a hook replaced renders as JSON."""
    stash = _RENDERING.get()
    _RENDERING.set(None)
    if stash is not None and stash[1] and stash[0] == thaw(value):
        return stash[1]
    return render_value(value)


def tool_json(tool: types.Tool | ToolJSON) -> dict[str, Any]:
    """An upstream tool as plain JSON (an SDK ``Tool`` is dumped by its MCP field names)."""
    dump = getattr(tool, "model_dump", None)
    if dump is not None:
        return dump(mode="json", by_alias=True, exclude_none=True)  # type: ignore[no-any-return]
    return dict(tool)  # type: ignore[arg-type]


def _concurrency_safe(server: UpstreamServer, tool: ToolJSON) -> bool:
    if server.config.concurrency_safe is not None:
        return server.config.concurrency_safe
    annotations = tool.get("annotations")
    return isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True


def tool_definition(server: UpstreamServer, tool: types.Tool | ToolJSON, name: str) -> ToolDefinition:
    """The registry definition that runs ``tool`` on ``server`` under ``name``.

    Raises ``ToolDefinitionError`` when the upstream schemas are unusable.
    """
    tool = tool_json(tool)
    output_schema = tool.get("outputSchema")
    upstream = str(tool["name"])

    async def execute(args: Mapping[str, Any], ctx: ExecutionContext) -> Any:
        from .upstream import UpstreamError

        try:
            result = await server.call(upstream, thaw(args), name=name)
        except UpstreamError as exc:
            raise BodyFailed([text_block(exc.message)], exc.kind) from exc
        blocks = from_mcp_content(result.content)
        if result.is_error:
            fallback = text_block(m.UPSTREAM_ERROR_EMPTY.format(server=server.name, name=name))
            raise BodyFailed(blocks or [fallback], ErrorKind.TOOL_ERROR)
        if output_schema is None:
            return blocks
        value = result.structured_content
        _RENDERING.set((value, blocks))
        return value

    text = tool.get("description") or tool.get("title") or ""
    description = (text if isinstance(text, str) else "").strip() or f"{upstream} (MCP server {server.name})"
    options: dict[str, Any] = {}
    if output_schema is not None:
        options["output"] = {"schema": dict(output_schema), "render": _render}
    hints = tool.get("annotations")
    if isinstance(hints, Mapping) and hints:
        options["annotations"] = dict(hints)
    return define_tool(
        name=name,
        description=description,
        parameters_schema=dict(tool["inputSchema"]),
        execute=execute,
        is_concurrency_safe=_concurrency_safe(server, tool),
        **options,
    )


def missing_capability(tool: types.Tool | ToolJSON) -> str | None:
    """Why codemode cannot call ``tool`` (a capability it lacks), or None when it can."""
    execution = tool_json(tool).get("execution")
    if isinstance(execution, Mapping) and execution.get("taskSupport") == "required":
        return m.REASON_NEEDS_TASKS
    return None
