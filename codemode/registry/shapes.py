"""The shapes model providers use, both ways: tool calls in, tool results and histories out.

In: ``CodeMode.handle`` takes a tool call as the provider's SDK object or its dict:

- OpenAI Chat Completions: ``{"id", "type": "function", "function": {"name", "arguments"}}``
- OpenAI Responses: ``{"type": "function_call", "call_id", "name", "arguments"}``
- Anthropic Messages: ``{"type": "tool_use", "id", "name", "input"}``
- codemode's flat form: ``{"id", "name", "arguments"}`` (``arguments`` a dict or JSON text)

Anything else raises ``TypeError`` listing these, never a silent ``Unknown tool ''``.

Out: a ``CallOutcome`` becomes the provider's tool-result message(s) with images in its native
form (``result_messages``), and a neutral history from ``derive_messages`` becomes the
provider's message list (``format_messages``). Formats: ``openai`` (Chat Completions),
``openai-responses`` and ``anthropic``. Pure data in, pure data out: no provider SDK is imported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .calls import ToolCall
from .content import placeholder
from .jsontext import JSONTextError, UnreadableArguments, parse_json

if TYPE_CHECKING:
    from ..code_mode.agent import CallOutcome

__all__ = [
    "ACCEPTED_CALL_SHAPES",
    "MESSAGE_FORMATS",
    "as_tool_call",
    "format_messages",
    "result_messages",
]

MESSAGE_FORMATS = ("openai", "openai-responses", "anthropic")

ACCEPTED_CALL_SHAPES = (
    'a codemode ToolCall; {"id", "name", "arguments"}; '
    'OpenAI chat {"id", "type": "function", "function": {"name", "arguments"}}; '
    'OpenAI Responses {"type": "function_call", "call_id", "name", "arguments"}; '
    'Anthropic {"type": "tool_use", "id", "name", "input"}; or the SDK objects of these'
)
IMAGES_NOTE = "Images from tool call {call_id}:"


def _plain(obj: Any) -> Mapping[str, Any] | None:
    """A mapping for ``obj``: itself, or an SDK object's ``model_dump()``/``to_dict()``."""
    if isinstance(obj, Mapping):
        return obj
    for method in ("model_dump", "to_dict"):
        dump = getattr(obj, method, None)
        if callable(dump):
            try:
                out = dump()
            except Exception:  # an object whose dump fails is not a shape we know
                return None
            return out if isinstance(out, Mapping) else None
    return None


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return parse_json(raw) if raw.strip() else {}
        except JSONTextError as exc:
            return UnreadableArguments(raw, exc.reason)  # the pipeline refuses it as invalid arguments
    return {} if raw is None else raw


def _refuse(tool_call: Any) -> TypeError:
    return TypeError(f"handle() does not recognise this tool call ({type(tool_call).__name__}); it takes {ACCEPTED_CALL_SHAPES}")


def as_tool_call(tool_call: Any) -> ToolCall:
    """The ``ToolCall`` for any accepted shape. Raises ``TypeError`` (listing the accepted
    shapes) for anything else, including a shape whose name is missing or not a string."""
    if isinstance(tool_call, ToolCall):
        return tool_call
    data = _plain(tool_call)
    if data is None:
        raise _refuse(tool_call)
    kind = data.get("type")
    function = data.get("function")
    if isinstance(function, Mapping) and kind in ("function", None):
        call_id, name, arguments = data.get("id"), function.get("name"), function.get("arguments")
    elif kind == "function_call":
        call_id, name, arguments = data.get("call_id") or data.get("id"), data.get("name"), data.get("arguments")
    elif kind == "tool_use":
        call_id, name, arguments = data.get("id"), data.get("name"), data.get("input")
    elif kind is None and "name" in data:
        call_id, name = data.get("id"), data.get("name")
        arguments = data.get("arguments", data.get("input"))
    else:
        raise _refuse(tool_call)
    if not isinstance(name, str) or not name:
        raise _refuse(tool_call)
    return ToolCall("" if call_id is None else str(call_id), name, _arguments(arguments))


# --- results ------------------------------------------------------------------------------------


def _data_url(block: Mapping[str, Any]) -> str:
    return f"data:{block['mime_type']};base64,{block['data']}"


def _image_part(block: Mapping[str, Any], format: str) -> dict[str, Any]:
    if format == "openai":
        return {"type": "image_url", "image_url": {"url": _data_url(block)}}
    if format == "openai-responses":
        return {"type": "input_image", "image_url": _data_url(block), "detail": "auto"}
    source = {"type": "base64", "media_type": block["mime_type"], "data": block["data"]}
    return {"type": "image", "source": source}


def _text_part(text: str, format: str) -> dict[str, Any]:
    return {"type": "input_text" if format == "openai-responses" else "text", "text": text}


def _blocks_text(blocks: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(str(b.get("text", "")) if b.get("type") == "text" else placeholder(b) for b in blocks)


def _check_format(format: str) -> None:
    if format not in MESSAGE_FORMATS:
        raise ValueError(f"format must be one of {', '.join(MESSAGE_FORMATS)}, got {format!r}")


def _result(call_id: str, text: str, images: Sequence[Mapping[str, Any]], is_error: bool, format: str) -> list[dict[str, Any]]:
    """One tool result in ``format``, images in the provider's own form (after the text)."""
    if format == "openai":
        out: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": call_id, "content": text}]
        if images:  # a chat tool message holds text only: images follow as a user message
            parts = [_text_part(IMAGES_NOTE.format(call_id=call_id), format)]
            parts.extend(_image_part(b, format) for b in images)
            out.append({"role": "user", "content": parts})
        return out
    if format == "openai-responses":
        output: str | list[dict[str, Any]] = text
        if images:
            output = [_text_part(text, format), *(_image_part(b, format) for b in images)]
        return [{"type": "function_call_output", "call_id": call_id, "output": output}]
    content: list[dict[str, Any]] = [_text_part(text, format)]
    content.extend(_image_part(b, format) for b in images)
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
    return [{"role": "user", "content": [block]}]


def result_messages(outcome: CallOutcome, format: str = "openai") -> list[dict[str, Any]]:
    """``outcome`` as the messages (or Responses items) that carry it back to the model.

    ``openai``: a ``tool`` message, then a ``user`` message with the images (chat tool messages
    hold text only); ``openai-responses``: one ``function_call_output`` item, images inside;
    ``anthropic``: one ``user`` message with a ``tool_result`` block, images inside.
    Raises ``ValueError`` for another format.
    """
    _check_format(format)
    call_id = str(outcome.result.meta.get("call_id", ""))
    return _result(call_id, outcome.text, outcome.attachments, outcome.is_error, format)


# --- histories ----------------------------------------------------------------------------------


def _content(content: Any, format: str, role: str) -> Any:
    """Message content in ``format``: a string stays; registry blocks become parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    parts = []
    for block in content:
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "image" and "data" in block:
            parts.append(_image_part(block, format))
        elif kind == "text":
            text = str(block.get("text", ""))
            if format == "openai-responses" and role == "assistant":
                parts.append({"type": "output_text", "text": text, "annotations": []})
            else:
                parts.append(_text_part(text, format))
        else:
            parts.append(dict(block))  # already in the provider's form
    return parts


def _call_out(call: Mapping[str, Any], format: str) -> dict[str, Any]:
    arguments = call.get("arguments")
    arguments = arguments if isinstance(arguments, Mapping) else {}
    if format == "openai":
        text = json.dumps(arguments, ensure_ascii=False)
        return {"id": call["id"], "type": "function", "function": {"name": call["name"], "arguments": text}}
    if format == "openai-responses":
        text = json.dumps(arguments, ensure_ascii=False)
        return {"type": "function_call", "call_id": call["id"], "name": call["name"], "arguments": text}
    return {"type": "tool_use", "id": call["id"], "name": call["name"], "input": dict(arguments)}


def _tool_result(message: Mapping[str, Any], format: str) -> list[dict[str, Any]]:
    blocks = message.get("content") or []
    if isinstance(blocks, str):
        blocks = [{"type": "text", "text": blocks}]
    images = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "image"]
    text = _blocks_text([b for b in blocks if isinstance(b, Mapping) and b.get("type") != "image"])
    return _result(str(message.get("tool_call_id", "")), text, images, bool(message.get("is_error")), format)


def _convert(message: Mapping[str, Any], format: str) -> list[dict[str, Any]]:
    role = message.get("role")
    if role == "tool":
        return _tool_result(message, format)
    calls = message.get("tool_calls") or []
    content = _content(message.get("content"), format, str(role))
    if format == "openai":
        out = {k: v for k, v in message.items() if k not in ("tool_calls", "content")}
        out["content"] = content
        if calls:
            out["tool_calls"] = [_call_out(c, format) for c in calls]
        return [out]
    if format == "openai-responses":
        items: list[dict[str, Any]] = []
        if content:
            items.append({"role": role, "content": content})
        items.extend(_call_out(c, format) for c in calls)
        return items
    parts = [] if content is None else [{"type": "text", "text": content}] if isinstance(content, str) else content
    parts = [p for p in parts if not (p.get("type") == "text" and not p.get("text"))]
    parts.extend(_call_out(c, format) for c in calls)
    return [{"role": role, "content": parts}] if parts else []


def _merge_user_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Anthropic: consecutive user messages become one, ``tool_result`` blocks first, so the
    results of one assistant turn answer its ``tool_use`` blocks together."""
    out: list[dict[str, Any]] = []
    for message in messages:
        previous = out[-1] if out else None
        if previous is not None and message["role"] == "user" and previous["role"] == "user":
            merged = _as_parts(previous["content"]) + _as_parts(message["content"])
            merged.sort(key=lambda p: p.get("type") != "tool_result")  # stable: results first
            previous["content"] = merged
        else:
            out.append(message)
    return out


def _as_parts(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def format_messages(messages: Iterable[Mapping[str, Any]], format: str) -> list[dict[str, Any]]:
    """A neutral history (what ``derive_messages`` gives) in ``format``, ready to send.

    Tool calls get the provider's call shape (arguments as JSON text for OpenAI), tool results
    become the provider's result messages or items with images in its native form, and
    registry content blocks in host messages become the provider's parts. Raises
    ``ValueError`` for another format.
    """
    _check_format(format)
    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, Mapping):
            out.extend(_convert(message, format))
    return _merge_user_turns(out) if format == "anthropic" else out
