"""Content blocks: what the model sees of a tool result.

A block is a JSON object with a ``type``. Known types are checked for their required string
fields; an unknown type is refused so a renderer typo fails loudly instead of reaching the model
as an empty turn.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .messages import NO_OUTPUT, PLACEHOLDER_MEDIA, PLACEHOLDER_RESOURCE

__all__ = [
    "BLOCK_FIELDS",
    "check_content",
    "image_block",
    "media_size",
    "placeholder",
    "render_value",
    "text_block",
]

#: Required string fields per known block type.
BLOCK_FIELDS: dict[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("mime_type", "data"),
    "audio": ("mime_type", "data"),
    "resource": ("uri",),
}


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_block(mime_type: str, data: str) -> dict[str, Any]:
    """``data`` is base64 text, so the block stays JSON."""
    return {"type": "image", "mime_type": mime_type, "data": data}


def check_content(blocks: Any) -> str | None:
    """Return why ``blocks`` is not a list of content blocks, or None when it is."""
    if not isinstance(blocks, Sequence) or isinstance(blocks, (str, bytes)):
        return f"expected a list of content blocks, got {type(blocks).__name__}"
    for i, block in enumerate(blocks):
        if not isinstance(block, dict):
            return f"block {i} is {type(block).__name__}, not an object"
        kind = block.get("type")
        fields = BLOCK_FIELDS.get(kind) if isinstance(kind, str) else None
        if fields is None:
            known = ", ".join(sorted(BLOCK_FIELDS))
            return f"block {i} has unknown type {kind!r} (known: {known})"
        for field in fields:
            if type(block.get(field)) is not str:
                return f"block {i} ({kind}) needs a string '{field}'"
    return None


def render_value(value: Any) -> list[dict[str, Any]]:
    """The default renderer: a string as itself, ``None`` as a marker, anything else as JSON text."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if value is None:
        return [{"type": "text", "text": NO_OUTPUT}]
    return [{"type": "text", "text": json.dumps(value, ensure_ascii=False)}]


def media_size(block: Mapping[str, Any]) -> int:
    """The decoded size in bytes of a media block's base64 ``data``, without decoding it."""
    data = block.get("data") or ""
    return len(data) * 3 // 4 - data[-2:].count("=") if data else 0


def placeholder(block: Mapping[str, Any]) -> str:
    """The text that stands in for a non-text content block inside a run."""
    kind = block.get("type")
    if kind in ("image", "audio"):
        return PLACEHOLDER_MEDIA.format(type=kind, mime_type=block.get("mime_type"), size=media_size(block))
    if kind == "resource":
        return PLACEHOLDER_RESOURCE.format(uri=block.get("uri"))
    return f"[{kind}]"
