"""The HTTP side of a replica in production: ``/healthz``, ``/readyz``, ``/metrics`` and the
drain gate in front of ``/mcp``.

- ``GET /healthz``: 200 ``ok`` while the process serves HTTP at all (liveness).
- ``GET /readyz``: 200 ``ready``, or 503 with the reason on one line: draining, or the worker
  backend cannot run (``ServeController.readiness``). Point the load balancer's check here.
- ``GET /metrics``: the Prometheus text format (``codemode.mcp.metrics``).

All three are cheap, unauthenticated and read-only: they change nothing, show no tool, path or
program, and answer whatever ``Host`` a health checker sends, so DNS rebinding gains nothing
from them. ``/mcp`` itself keeps its rebinding protection.

While draining, the gate answers a request to ``/mcp`` that would start work and carries no
``Mcp-Session-Id`` (``initialize`` of a new session, or a stateless ``tools/call``) with 503 and
a JSON-RPC error that says why, before anything runs, so a load balancer may retry it on
another replica. Everything else passes: listings, and the requests of existing sessions
(their ``run_code`` is refused with a sentence of its own). It also counts the requests in
flight, so the drain can wait for the last response to leave.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from . import messages as m
from .metrics import CONTENT_TYPE

if TYPE_CHECKING:
    from .serving import ServeController

__all__ = ["DrainGate", "health_routes"]

MCP_PATH = "/mcp"
SESSION_HEADER = b"mcp-session-id"
#: JSON-RPC "server error" for a request refused while draining (the SDK's own 503 uses -32603).
DRAINING_CODE = -32000
#: Methods that start work, refused without a session while draining.
WORK_METHODS = frozenset({"initialize", "tools/call"})
#: Bytes of a sessionless request body the gate reads while draining (the SDK's own limit).
MAX_GATED_BODY = 4 * 1024 * 1024


def health_routes(controller: ServeController) -> list[Route]:
    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        reason = await controller.readiness()
        if reason is None:
            return PlainTextResponse("ready\n")
        return PlainTextResponse(f"not ready: {reason}\n", status_code=503, headers={"Retry-After": "1"})

    async def metrics(request: Request) -> Response:
        return Response(controller.metrics.render(), media_type=CONTENT_TYPE)

    return [
        Route("/healthz", healthz, methods=["GET", "HEAD"]),
        Route("/readyz", readyz, methods=["GET", "HEAD"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]


class DrainGate:
    """ASGI middleware: refuses new sessions and stateless calls while draining; counts the
    ``/mcp`` requests in flight (long-lived GET streams excepted)."""

    def __init__(self, app: Any, controller: ServeController) -> None:
        self.app = app
        self.controller = controller
        self.in_flight = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        has_session = any(k == SESSION_HEADER for k, _ in scope.get("headers", ()))
        if self.controller.draining and not has_session and scope.get("method") == "POST":
            body = await _read_body(receive, MAX_GATED_BODY)
            if body is None or _starts_work(body):
                error = {"jsonrpc": "2.0", "id": None, "error": {"code": DRAINING_CODE, "message": m.DRAINING}}
                response = Response(json.dumps(error), status_code=503, media_type="application/json",
                                    headers={"Retry-After": "1", "Connection": "close"})
                await response(scope, receive, send)
                return
            receive = _replay(body, receive)
        counted = scope.get("method") != "GET"
        if counted:
            self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            if counted:
                self.in_flight -= 1

    async def quiet(self, limit: float) -> None:
        """Wait up to ``limit`` seconds for the requests in flight to end."""
        with anyio.move_on_after(limit):
            while self.in_flight:
                await anyio.sleep(0.02)


async def _read_body(receive: Any, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes or when the client went away."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _starts_work(body: bytes) -> bool:
    """Whether a JSON-RPC body (one message or a batch) asks for work; unreadable bodies do
    not (the transport answers them with its own error)."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    messages = parsed if isinstance(parsed, list) else [parsed]
    return any(isinstance(msg, dict) and msg.get("method") in WORK_METHODS for msg in messages)


def _replay(body: bytes, original: Any) -> Any:
    """A ``receive`` that gives the ``body`` already read, then the connection's own messages
    (its disconnect)."""
    sent = False

    async def receive() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await original()

    return receive
