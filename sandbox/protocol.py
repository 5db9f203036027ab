"""Framing for the worker channel: a 4-byte big-endian length, then UTF-8 JSON.

Only JSON crosses, in both directions, and the host treats every frame from a worker as hostile:
`parse_frame` bounds the size, rejects NaN/Infinity tokens and non-object frames, and turns any
malformation into `ProtocolError`.
"""

from __future__ import annotations

import json
import select
import socket
import struct
import time
from typing import Any

HEADER = struct.Struct(">I")
#: How long the worker polls for an answer before it blocks.
SPIN_SECONDS = 0.0005


class ProtocolError(Exception):
    """A frame that breaks the protocol; the host ends the run as `crashed`."""


class ChannelClosed(Exception):
    """The other end went away."""


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not JSON")


def encode(message: dict[str, Any] | str) -> bytes:
    text = message if isinstance(message, str) else json.dumps(
        message, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    data = text.encode("utf-8")
    return HEADER.pack(len(data)) + data


def parse_frame(data: bytes) -> dict[str, Any]:
    try:
        message = json.loads(data.decode("utf-8"), parse_constant=_reject_constant)
    except (ValueError, RecursionError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"malformed frame: {exc}") from None
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

    def receive(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next frame, or None if `timeout` passed first."""
        while True:
            frame = self._frame_ready()
            if frame is not None:
                return frame
            chunk = self._spin_recv()
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
