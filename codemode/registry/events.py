"""The session event log, and ``derive_messages`` which rebuilds model-facing history from it.

Vocabulary (every event is a JSON object with ``type`` and ``ts``):

- ``tool/call``: a call entered the pipeline: ``call_id``, ``name``, ``arguments``, ``agent``,
  ``parent_call_id``, ``root_call_id``.
- ``tool/result``: its outcome: the same ids plus ``content``, ``value``, ``is_error``, ``meta``.
- ``message``: any other model-facing message (``message`` holds it), appended by the host loop.
- ``tool/code-dispatch-start`` and ``tool/code-dispatch``: Code Mode sub-call bookkeeping, written
  by the bridge.
- ``session/start``, ``session/reset`` and ``session/close``: a Code Mode session (``session``: its
  key) got a fresh state, lost its state (``reason``: the sentence the model read, or
  ``restart``), or was closed.

A call is model-facing only when it has no ``parent_call_id``: sub-calls made from a snippet are
kept for replay and UIs but never enter history, and nor does any event type ``derive_messages``
does not know. So other code may append its own types freely.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from .frozen import thaw
from .jsontext import JSONTextError, parse_json
from .output import json_line

__all__ = [
    "DEFAULT_LOG_MAX_BYTES",
    "DEFAULT_LOG_MAX_EVENTS",
    "EVENT_CODE_DISPATCH",
    "EVENT_CODE_DISPATCH_START",
    "EVENT_MESSAGE",
    "EVENT_SESSION_CLOSE",
    "EVENT_SESSION_RESET",
    "EVENT_SESSION_START",
    "EVENT_TOOL_CALL",
    "EVENT_TOOL_RESULT",
    "EventLog",
    "JsonlEventLog",
    "MemoryEventLog",
    "derive_messages",
    "estimate_size",
]

EVENT_TOOL_CALL = "tool/call"
EVENT_TOOL_RESULT = "tool/result"
EVENT_MESSAGE = "message"
EVENT_CODE_DISPATCH_START = "tool/code-dispatch-start"
EVENT_CODE_DISPATCH = "tool/code-dispatch"
EVENT_SESSION_START = "session/start"
EVENT_SESSION_RESET = "session/reset"
EVENT_SESSION_CLOSE = "session/close"


@runtime_checkable
class EventLog(Protocol):
    """The one seam for event storage: append an event, read them all back in order."""

    def append(self, event: Mapping[str, Any]) -> None: ...

    def read(self) -> list[Mapping[str, Any]]: ...


def estimate_size(value: Any) -> int:
    """About how many bytes ``value`` (JSON-shaped) holds: string lengths plus a few bytes per
    other item. Shared objects count each time they appear, so this errs on the large side."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 8
        elif isinstance(item, Mapping):
            total += 16
            for key, child in item.items():
                total += len(key) + 8 if isinstance(key, str) else 8
                stack.append(child)
        elif isinstance(item, (list, tuple)):
            total += 16
            stack.extend(item)
        elif isinstance(item, int):
            # By its digits: a 4,000-digit int passes the sandbox's checks and takes 1.7 KB (a
            # review's calls filled a log capped at 8 MiB with 26 MiB of them, counted as 8 each).
            total += 8 + item.bit_length() // 7
        else:
            total += 8
    return total


#: The caps of a ``Registry``'s default log: the newest 5,000 events, at most about 8 MiB of
#: them, so a process that serves many conversations with one registry stays flat in memory.
DEFAULT_LOG_MAX_EVENTS = 5_000
DEFAULT_LOG_MAX_BYTES = 8 * 1024 * 1024


class MemoryEventLog:
    """Events in memory, in append order.

    Unbounded as constructed, so an agent loop can rebuild its whole history from it (one per
    conversation: ``Registry(log=MemoryEventLog())``). With ``max_events`` or ``max_bytes``
    (sizes by ``estimate_size``) it is a ring buffer: appending past a cap drops the oldest
    events (the newest is always kept) and counts them in ``dropped``. A ``Registry`` built
    without ``log=`` uses ``MemoryEventLog.default()``, a ring of ``DEFAULT_LOG_MAX_EVENTS`` and
    ``DEFAULT_LOG_MAX_BYTES``; a long-lived server uses a larger one (``codemode mcp serve``);
    a full record belongs on disk (``JsonlEventLog``). Raises ``ValueError`` for a cap below 1.
    """

    __slots__ = ("events", "max_events", "max_bytes", "dropped", "_sizes", "_bytes", "_lock")

    def __init__(
        self, events: Iterable[Mapping[str, Any]] = (), *, max_events: int | None = None, max_bytes: int | None = None
    ) -> None:
        for name, cap in (("max_events", max_events), ("max_bytes", max_bytes)):
            if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
                raise ValueError(f"{name} must be an int >= 1 or None, got {cap!r}")
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.dropped = 0
        self.events: deque[Mapping[str, Any]] = deque()
        self._sizes: deque[int] = deque()
        self._bytes = 0
        self._lock = threading.Lock()
        for event in events:
            self.append(event)

    @classmethod
    def default(cls) -> MemoryEventLog:
        """The bounded log a ``Registry`` gets when it is given none."""
        return cls(max_events=DEFAULT_LOG_MAX_EVENTS, max_bytes=DEFAULT_LOG_MAX_BYTES)

    def append(self, event: Mapping[str, Any]) -> None:
        size = estimate_size(event) if self.max_bytes is not None else 0
        with self._lock:
            self.events.append(event)
            self._sizes.append(size)
            self._bytes += size
            while len(self.events) > 1 and (
                (self.max_events is not None and len(self.events) > self.max_events)
                or (self.max_bytes is not None and self._bytes > self.max_bytes)
            ):
                self.events.popleft()
                self._bytes -= self._sizes.popleft()
                self.dropped += 1

    def read(self) -> list[Mapping[str, Any]]:
        with self._lock:
            return list(self.events)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        return iter(self.read())

    def __len__(self) -> int:
        return len(self.events)

    def __repr__(self) -> str:
        caps = "" if self.max_events is None and self.max_bytes is None else (
            f"max_events={self.max_events}, max_bytes={self.max_bytes}, "
        )
        return f"MemoryEventLog({caps}{len(self.events)} events, {self.dropped} dropped)"


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
        line = json_line(event, separators=(",", ":"), default=repr)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def read(self) -> list[Mapping[str, Any]]:
        if not self.path.exists():
            return []
        events = []
        with self.path.open("rb") as fh:  # bytes: a line that is not UTF-8 is skipped, not fatal
            for line in fh:
                if not line.strip():
                    continue
                try:
                    events.append(parse_json(line))
                except JSONTextError:  # a torn last line, or one no JSON reader takes
                    continue
        return events

    def __repr__(self) -> str:
        return f"JsonlEventLog({self.path.name!r})"


def derive_messages(
    events: Iterable[Mapping[str, Any]] | EventLog, *, format: str | None = None
) -> list[dict[str, Any]]:
    """Rebuild the model-facing history from events, as plain dicts.

    ``format`` (``openai``, ``openai-responses`` or ``anthropic``) gives the provider's own
    message list instead of the neutral one (see ``shapes.format_messages``).

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
