"""The session event log, and ``derive_messages`` which rebuilds model-facing history from it.

Vocabulary (every event is a JSON object with ``type`` and ``ts``):

- ``tool/call``: a call entered the pipeline: ``call_id``, ``name``, ``arguments``, ``agent``,
  ``parent_call_id``, ``root_call_id``.
- ``tool/result``: its outcome: the same ids plus ``content``, ``value``, ``is_error``, ``meta``.
- ``message``: any other model-facing message (``message`` holds it), appended by the host loop.
- ``tool/code-dispatch-start`` and ``tool/code-dispatch``: Code Mode sub-call bookkeeping, written
  by the bridge.

A call is model-facing only when it has no ``parent_call_id``: sub-calls made from a snippet are
kept for replay and UIs but never enter history, and nor does any event type ``derive_messages``
does not know. So other code may append its own types freely.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .frozen import thaw

__all__ = [
    "EVENT_CODE_DISPATCH",
    "EVENT_CODE_DISPATCH_START",
    "EVENT_MESSAGE",
    "EVENT_TOOL_CALL",
    "EVENT_TOOL_RESULT",
    "EventLog",
    "JsonlEventLog",
    "MemoryEventLog",
    "derive_messages",
]

EVENT_TOOL_CALL = "tool/call"
EVENT_TOOL_RESULT = "tool/result"
EVENT_MESSAGE = "message"
EVENT_CODE_DISPATCH_START = "tool/code-dispatch-start"
EVENT_CODE_DISPATCH = "tool/code-dispatch"


@runtime_checkable
class EventLog(Protocol):
    """The one seam for event storage: append an event, read them all back in order."""

    def append(self, event: Mapping[str, Any]) -> None: ...

    def read(self) -> list[Mapping[str, Any]]: ...


class MemoryEventLog:
    """Events in a list, in append order; the default log of a ``Registry``."""

    __slots__ = ("events",)

    def __init__(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        self.events: list[Mapping[str, Any]] = list(events)

    def append(self, event: Mapping[str, Any]) -> None:
        self.events.append(event)

    def read(self) -> list[Mapping[str, Any]]:
        return list(self.events)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(list(self.events))

    def __len__(self) -> int:
        return len(self.events)


class JsonlEventLog:
    """Events as JSON lines in a file, appended and flushed one by one so a crash loses at most the
    line being written. Values JSON cannot carry are written as their ``repr``; reading back skips
    a torn last line.
    """

    __slots__ = ("path", "_lock")

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def append(self, event: Mapping[str, Any]) -> None:
        line = json.dumps(event, ensure_ascii=False, separators=(",", ":"), default=repr)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def read(self) -> list[Mapping[str, Any]]:
        if not self.path.exists():
            return []
        events = []
        with self.path.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return events

    def __repr__(self) -> str:
        return f"JsonlEventLog({self.path.name!r})"


def derive_messages(
    events: Iterable[Mapping[str, Any]] | EventLog, *, format: str | None = None
) -> list[dict[str, Any]]:
    """Rebuild the model-facing history from events, as plain dicts.

    ``format`` (``openai``, ``openai-responses`` or ``anthropic``) gives the provider's own
    message list instead of the neutral one (see ``codemode.shapes.format_messages``).

    Top-level ``tool/call`` events become ``{"role": "assistant", "tool_calls": [...]}`` (calls in a
    row share one assistant message, and join a preceding assistant ``message``); each
    ``tool/result`` becomes ``{"role": "tool", "tool_call_id", "name", "content", "is_error"}``.
    Sub-call events and unknown types are skipped.
    """
    if isinstance(events, EventLog):
        events = events.read()
    messages: list[dict[str, Any]] = []
    open_assistant: dict[str, Any] | None = None
    for event in events:
        kind = event.get("type")
        if kind == EVENT_MESSAGE:
            message = thaw(event.get("message"))
            messages.append(message)
            open_assistant = message if isinstance(message, dict) and message.get("role") == "assistant" else None
        elif kind == EVENT_TOOL_CALL and event.get("parent_call_id") is None:
            call = {"id": event["call_id"], "name": event["name"], "arguments": thaw(event.get("arguments"))}
            if open_assistant is None:
                open_assistant = {"role": "assistant", "content": None, "tool_calls": []}
                messages.append(open_assistant)
            open_assistant.setdefault("tool_calls", []).append(call)
        elif kind == EVENT_TOOL_RESULT and event.get("parent_call_id") is None:
            open_assistant = None
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": event["call_id"],
                    "name": event["name"],
                    "content": thaw(event.get("content")),
                    "is_error": bool(event.get("is_error")),
                }
            )
    if format is not None:
        from .shapes import format_messages

        return format_messages(messages, format)
    return messages
