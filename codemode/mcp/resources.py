"""Upstream MCP resources as two registry tools: ``read_resource(uri)`` and ``list_resources()``.

Why tools and not a separate ``resources`` namespace: a read reaches an upstream server with the
host's rights, so it must take the registry pipeline like every other call (policies, guards,
approvals, observers, events; DESIGN.md invariant 2). As registry tools they get that for free,
and also pre-flight, the SDK, scoping (an agent that may not see ``read_resource`` cannot call
it) and native calls by the model. They exist only when some server lists a resource or a URI
template; their one-sentence SDK note then tells the model resources are there.

A URI goes to the server that listed it, else to the server whose URI template matches it most
specifically; the lists are read again when a URI is not found (resources come and go), and with
a single resource server every URI goes to it. What comes back is bounded: at most
``MAX_RESOURCE_TEXT`` characters of text and ``MAX_RESOURCE_PARTS`` parts per read, blobs up to
``MAX_RESOURCE_BLOB`` bytes (images and audio as media blocks, so a program sees placeholders
and images reach the model as attachments), at most ``MAX_LISTED`` entries per listing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ..registry.calls import ExecutionContext
from ..registry.content import text_block
from ..registry.definition import ToolDefinition, define_tool
from ..registry.messages import ErrorKind
from ..registry.pipeline import BodyFailed
from . import lazy_sdk as sdk
from . import messages as m
from .upstream import UpstreamError, UpstreamServer

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "LIST_RESOURCES",
    "MAX_LISTED",
    "MAX_RESOURCE_BLOB",
    "MAX_RESOURCE_PARTS",
    "MAX_RESOURCE_TEXT",
    "READ_RESOURCE",
    "ResourceIndex",
    "resource_blocks",
    "resource_tools",
]

logger = logging.getLogger("codemode.mcp")

READ_RESOURCE = "read_resource"
LIST_RESOURCES = "list_resources"
MAX_RESOURCE_TEXT = 1_000_000
MAX_RESOURCE_BLOB = 8 * 1024 * 1024
MAX_RESOURCE_PARTS = 50
MAX_LISTED = 200
MAX_URI = 2048
MAX_FIELD = 300  # characters of a listed name or description
_SHOWN_URI = 120
_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_ANNOTATIONS = {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}

Listing = tuple[list["types.Resource"], list["types.ResourceTemplate"]]


def _template_pattern(template: str) -> tuple[re.Pattern[str], int]:
    """A URI template (RFC 6570) as a full-match pattern, and how much literal text it has.

    ``{var}`` matches one path segment; operator expressions (``{+path}``, ``{?q}``, ...) match
    anything."""
    parts, literal, at = [], 0, 0
    for match in _EXPRESSION.finditer(template):
        text = template[at : match.start()]
        parts.append(re.escape(text))
        literal += len(text)
        op = match.group(1)[:1]
        parts.append(".*" if op and not (op.isalnum() or op == "_") else "[^/?#]+")
        at = match.end()
    parts.append(re.escape(template[at:]))
    literal += len(template) - at
    return re.compile("".join(parts), re.DOTALL), literal


def _cap(text: str | None) -> str | None:
    if text is None:
        return None
    return text if len(text) <= MAX_FIELD else text[: MAX_FIELD - 3] + "..."


class ResourceIndex:
    """Which server owns which resource URI, from the servers' own lists."""

    def __init__(self, servers: Mapping[str, UpstreamServer]) -> None:
        self.servers = servers
        self.offering: list[str] = []  # servers that listed a resource or a template
        self.listed: dict[str, Listing] = {}
        self._owners: dict[str, str] = {}
        self._templates: list[tuple[re.Pattern[str], int, str]] = []

    async def refresh(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """List the resources of ``names`` (default: the servers offering some) in parallel;
        returns server -> the failure message of those that could not list them."""
        wanted = sorted(self.offering if names is None else names)
        failures: dict[str, str] = {}

        async def one(name: str) -> None:
            try:
                self.listed[name] = await self.servers[name].resources(name=LIST_RESOURCES)
            except UpstreamError as exc:
                failures[name] = exc.message
                logger.debug("MCP server %r: cannot list resources: %s", name, exc.message)

        async with anyio.create_task_group() as tg:
            for name in wanted:
                tg.start_soon(one, name)
        if names is not None:
            self.offering = sorted(n for n, (res, tpl) in self.listed.items() if res or tpl)
        self._owners = {}
        self._templates = []
        for name in reversed(self.offering):  # the first server (sorted) wins a URI two list
            resources, templates = self.listed.get(name, ([], []))
            self._owners.update((str(r.uri), name) for r in resources)
            for template in templates:
                pattern, literal = _template_pattern(template.uri_template)
                self._templates.append((pattern, literal, name))
        return failures

    def owner(self, uri: str) -> str | None:
        """The server that listed ``uri``, else the one whose template matches it with the most
        literal text (ties: the first server by name), else None."""
        found = self._owners.get(uri)
        if found is not None:
            return found
        matches = [(-literal, name) for pattern, literal, name in self._templates if pattern.fullmatch(uri)]
        return min(matches)[1] if matches else None

    def entries(self) -> dict[str, Any]:
        """``list_resources``' value: resources and templates, at most ``MAX_LISTED`` in all."""
        resources: list[dict[str, Any]] = []
        templates: list[dict[str, Any]] = []
        count = 0
        for name in self.offering:
            listed, tpls = self.listed.get(name, ([], []))
            for r in listed:
                resources.append(_entry({"uri": str(r.uri), "name": r.name, "server": name}, r))
            for t in tpls:
                templates.append(_entry({"uri_template": t.uri_template, "name": t.name, "server": name}, t))
            count += len(listed) + len(tpls)
        room = max(0, MAX_LISTED - len(resources))
        return {
            "resources": resources[:MAX_LISTED],
            "templates": templates[:room],
            "truncated": count > MAX_LISTED,
        }


def _entry(base: dict[str, Any], item: types.Resource | types.ResourceTemplate) -> dict[str, Any]:
    base["name"] = _cap(base["name"]) or ""
    if item.mime_type:
        base["mime_type"] = item.mime_type
    if item.description:
        base["description"] = _cap(item.description)
    return base


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def resource_blocks(contents: Iterable[types.TextResourceContents | types.BlobResourceContents]) -> list[dict[str, Any]]:
    """A resource's contents as content blocks, bounded: text as text (cut past
    ``MAX_RESOURCE_TEXT`` characters, with a marker), image and audio blobs as media blocks,
    other blobs as resource blocks; a blob past ``MAX_RESOURCE_BLOB`` becomes one line."""
    parts = list(contents)
    blocks: list[dict[str, Any]] = []
    text_total = text_shown = 0
    for part in parts[:MAX_RESOURCE_PARTS]:
        uri, mime = str(part.uri), part.mime_type or "application/octet-stream"
        if isinstance(part, sdk.types.TextResourceContents):
            room = MAX_RESOURCE_TEXT - text_shown
            text = part.text if len(part.text) <= room else part.text[:room]
            text_total += len(part.text)
            text_shown += len(text)
            if text:
                blocks.append(text_block(text))
            continue
        size = _decoded_size(part.blob)
        kind = mime.split("/", 1)[0]
        if size > MAX_RESOURCE_BLOB:
            blocks.append(text_block(m.RESOURCE_TOO_LARGE.format(uri=uri, mime_type=mime, size=size, limit=MAX_RESOURCE_BLOB)))
        elif kind in ("image", "audio"):
            blocks.append({"type": kind, "mime_type": mime, "data": part.blob})
        else:
            blocks.append({"type": "resource", "uri": uri, "mime_type": mime, "blob": part.blob})
    if text_shown < text_total:
        blocks.append(text_block(m.RESOURCE_TEXT_CUT.format(shown=text_shown, total=text_total)))
    if len(parts) > MAX_RESOURCE_PARTS:
        blocks.append(text_block(m.RESOURCE_PARTS_CUT.format(dropped=len(parts) - MAX_RESOURCE_PARTS)))
    return blocks


def resource_tools(index: ResourceIndex, read_name: str = READ_RESOURCE, list_name: str = LIST_RESOURCES) -> list[ToolDefinition]:
    """The two registry tools over ``index``, under the names given (clash-free ones)."""

    async def read(args: Mapping[str, Any], ctx: ExecutionContext) -> list[dict[str, Any]]:
        uri = str(args["uri"])
        server = index.owner(uri)
        if server is None:
            await index.refresh()
            server = index.owner(uri) or (index.offering[0] if len(index.offering) == 1 else None)
        if server is None:
            raise BodyFailed([text_block(m.RESOURCE_UNKNOWN.format(uri=uri, list=list_name))], ErrorKind.TOOL_ERROR)
        shown = uri if len(uri) <= _SHOWN_URI else uri[: _SHOWN_URI - 3] + "..."
        try:
            result = await index.servers[server].read_resource(uri, name=f"{read_name}({shown!r})")
        except UpstreamError as exc:
            raise BodyFailed([text_block(exc.message)], exc.kind) from exc
        return resource_blocks(result.contents)

    async def listing(args: Mapping[str, Any], ctx: ExecutionContext) -> dict[str, Any]:
        failures = await index.refresh()
        if failures and len(failures) == len(index.offering):
            reason = failures[min(failures)]
            raise BodyFailed([text_block(m.RESOURCES_UNAVAILABLE.format(reason=reason))], ErrorKind.TOOL_ERROR)
        value = index.entries()
        if failures:
            value["unavailable"] = [failures[n] for n in sorted(failures)]
        return value

    optional = {"mime_type": {"type": "string"}, "description": {"type": "string"}}
    entry = {
        "type": "object",
        "properties": {"uri": {"type": "string"}, "name": {"type": "string"}, "server": {"type": "string"}, **optional},
        "required": ["uri", "name", "server"],
    }
    template = {
        "type": "object",
        "properties": {"uri_template": {"type": "string"}, "name": {"type": "string"}, "server": {"type": "string"},
                       **optional},
        "required": ["uri_template", "name", "server"],
    }
    return [
        define_tool(
            name=read_name,
            description=m.READ_RESOURCE_DESCRIPTION,
            parameters_schema={
                "type": "object",
                "properties": {"uri": {"type": "string", "minLength": 1, "maxLength": MAX_URI,
                                       "description": m.READ_RESOURCE_URI.format(list=list_name)}},
                "required": ["uri"],
                "additionalProperties": False,
            },
            execute=read,
            is_concurrency_safe=True,
            annotations={"title": "Read resource", **_ANNOTATIONS},
            sdk_note=m.RESOURCES_NOTE.format(read=read_name, list=list_name),
        ),
        define_tool(
            name=list_name,
            description=m.LIST_RESOURCES_DESCRIPTION,
            output={
                "schema": {
                    "type": "object",
                    "properties": {
                        "resources": {"type": "array", "items": entry},
                        "templates": {"type": "array", "items": template},
                        "truncated": {"type": "boolean"},
                        "unavailable": {"type": "array", "items": {"type": "string"}},
                    },
                    "required": ["resources", "templates", "truncated"],
                }
            },
            execute=listing,
            is_concurrency_safe=True,
            annotations={"title": "List resources", **_ANNOTATIONS},
        ),
    ]
