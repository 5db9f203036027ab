"""Framing for the worker channel: a 4-byte big-endian length, then UTF-8 JSON.

Only JSON crosses, in both directions, and the host treats every frame from a worker as hostile:
`parse_frame` bounds the size, rejects NaN/Infinity tokens, numbers that overflow to
infinity (`1e999`) and non-object frames, and turns any malformation into `ProtocolError`: no
non-finite float reaches a binding's arguments or a run's result. A `\\udXXX` escape in JSON text decodes to a lone surrogate,
which no UTF-8 text can hold: `parse_frame` escapes every such string again
(`sandbox.jsonvalue.escape_surrogates`), so no frame ever hands one to its reader.

A run request also carries the host's own compile of the snippet (`pack_code`: marshal bytes in
base64), so a worker never parses or transforms source: the policy's verdict is the host's, and
a fresh worker skips the compile machinery entirely. Code only ever travels host to worker;
nothing a worker sends is unmarshalled.
"""

from __future__ import annotations

import base64
import json
import marshal
import re
import select
import socket
import struct
import time
from types import CodeType
from typing import Any

from .jsonvalue import escape_surrogates

HEADER = struct.Struct(">I")
#: How long the worker polls for an answer before it blocks.
SPIN_SECONDS = 0.0005


class ProtocolError(Exception):
    """A frame that breaks the protocol; the host ends the run as `crashed`."""


class ChannelClosed(Exception):
    """The other end went away."""


#: A JSON escape that may decode to a surrogate (a false match, such as an escaped backslash
#: before "ud8", only costs the walk below).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _escape_strings(message: Any) -> Any:
    """`message` with `escape_surrogates` applied to every string and key (an explicit stack:
    a frame's nesting is the sender's choice)."""
    root = [message]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:
        container, key = stack.pop()
        value = container[key]
        if type(value) is str:
            container[key] = escape_surrogates(value)
        elif type(value) is list:
            stack.extend((value, i) for i in range(len(value)))
        elif type(value) is dict:
            fixed = {escape_surrogates(k): v for k, v in value.items()}
            container[key] = fixed
            stack.extend((fixed, k) for k in fixed)
    return root[0]


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def _finite_float(token: str) -> float:
    """JSON has no infinity, but a literal too large for a float (`1e999`, or 400 digits and a
    fraction) parses as one: refused like the `Infinity` token."""
    value = float(token)
    if value - value != 0.0:  # inf - inf is nan; nan is never equal to anything
        raise ValueError("a number that is not finite")
    return value


def encode(message: dict[str, Any] | str) -> bytes:
    text = message if isinstance(message, str) else json.dumps(
        message, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    data = text.encode("utf-8")
    return HEADER.pack(len(data)) + data


def pack_code(code: CodeType) -> str:
    """A compiled snippet as JSON text, for a run request."""
    return base64.b64encode(marshal.dumps(code)).decode("ascii")


def unpack_code(text: str) -> CodeType:
    """The worker's side of `pack_code` (the host is the only sender of run requests)."""
    code = marshal.loads(base64.b64decode(text, validate=True))
    if not isinstance(code, CodeType):
        raise ValueError("the run request's code is not a code object")
    return code


def parse_frame(data: bytes) -> dict[str, Any]:
    try:
        message = json.loads(data.decode("utf-8"), parse_constant=_reject_constant,
                             parse_float=_finite_float)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"malformed frame: {exc}") from None
    if _SURROGATE_ESCAPE.search(data):
        message = _escape_strings(message)
    if not isinstance(message, dict) or not isinstance(message.get("op"), str):
        raise ProtocolError("a frame must be a JSON object with an 'op'")
    return message


class BlockingChannel:
    """The worker's end: blocking sends, and receives with an optional timeout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _frame_ready(self) -> dict[str, Any] | None:
        buf = self.buffer
        if len(buf) < 4:
            return None
        (size,) = HEADER.unpack_from(buf)
        if len(buf) < 4 + size:
            return None
        data = bytes(buf[4 : 4 + size])
        del buf[: 4 + size]
        return parse_frame(data)

    def receive(self, timeout: float | None = None, *, spin: bool = True) -> dict[str, Any] | None:
        """The next frame, or None if `timeout` passed first. `spin=False` for a wait that may
        be long (a worker waiting for its run): polling first would only burn CPU."""
        while True:
            frame = self._frame_ready()
            if frame is not None:
                return frame
            chunk = self._spin_recv() if spin else None
            if chunk is None:
                if timeout is not None:
                    readable, _, _ = select.select([self.sock], [], [], timeout)
                    if not readable:
                        return None
                chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise ChannelClosed("the host closed the channel")
            self.buffer += chunk

    def _spin_recv(self) -> bytes | None:
        """Poll briefly before sleeping: a host answer usually comes within tens of
        microseconds, and waking a sleeping process costs more than that on a VM."""
        deadline = time.perf_counter() + SPIN_SECONDS
        while True:
            try:
                return self.sock.recv(1 << 16, socket.MSG_DONTWAIT)
            except BlockingIOError:
                if time.perf_counter() > deadline:
                    return None

    def pending(self) -> dict[str, Any] | None:
        """A frame that is already buffered or readable now, without blocking."""
        frame = self._frame_ready()
        if frame is not None:
            return frame
        return self.receive(0)
