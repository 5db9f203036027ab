"""codemode as an MCP server: ``run_code``, whose description carries the SDK (or, past 2,048
characters, how to find tools), plus ``search_tools`` and ``get_tool_sdk``.

Any MCP client (Claude Desktop, Claude Code, an IDE) then gets Code Mode over every tool loaded
into the registry, MCP servers included. The SDK is also served as a resource
(``codemode://sdk``) and a prompt (``codemode``) for clients that prefer those.

A ``run_code`` call goes through ``CodeMode.handle``, so the client gets exactly the text a model
would read in-process; a failed run is an MCP ``isError`` result with that text. Calls from one
client run concurrently up to ``max_concurrent``; the rest wait their turn. Limits are the
``CodeMode``'s, fixed by whoever starts the server: ``run_code`` takes only ``code`` and
``description``.

In production (``docs/deploy.md``) a ``ServeController`` steers the replica: readiness, graceful
drain, the session cap and the metrics ``serve_http`` serves at ``/healthz``, ``/readyz`` and
``/metrics``.
"""

from __future__ import annotations

import itertools
import logging
import signal
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, Protocol

import anyio
import mcp_types as types
from anyio.abc import TaskStatus
from mcp.server import Server
from mcp.server.lowlevel.server import NotificationOptions

import sandbox

from ..code_mode import messages as cm
from ..code_mode.agent import CallOutcome
from ..code_mode.bridge import RUN_CODE
from ..code_mode.discovery import DESCRIPTION_BUDGET, SDK_MODES, SdkMode, budgeted_text
from ..registry.calls import ToolCall
from ..registry.frozen import thaw
from ..registry.messages import UNKNOWN_TOOL
from . import messages as m
from .catalog import CATALOG_TOOLS, call_catalog_tool, catalog_tools
from .notify import ToolListNotifier
from .options import DEFAULT_MAX_CONCURRENT, DEFAULT_SERVE_LIMITS, ServeLimits, is_loopback
from .progress import with_progress
from .serving import ServeController
from .tools import to_mcp_content

__all__ = [
    "DEFAULT_MAX_CONCURRENT",
    "SDK_URI",
    "CodeModeLike",
    "ServeController",
    "build_server",
    "serve_http",
    "serve_stdio",
]

logger = logging.getLogger("codemode.mcp")

SDK_URI = "codemode://sdk"
SDK_MIME = "text/x-python"
SERVER_NAME = "codemode"
SERVER_VERSION = "0.1.0"


class CodeModeLike(Protocol):
    """What the server needs of a ``CodeMode``: the SDK, the prompt, and dispatch (and, with
    ``sessions``, ``session(key)``)."""

    registry: Any

    def sdk(self, agent: str | None = None) -> Any: ...

    async def handle(self, tool_call: ToolCall, *, agent: str | None = None, on_sub_call: Any = None) -> CallOutcome: ...


class _Server(Server[Any]):
    """The SDK's ``Server``, advertising ``tools.listChanged`` by default: the streamable HTTP
    session manager builds each session's initialization options with no arguments, so
    handshake-era clients over HTTP would otherwise not be told the tool list can change.
    ``controller`` is the replica's ``ServeController``."""

    controller: ServeController

    def create_initialization_options(self, notification_options: NotificationOptions | None = None,
                                      *args: Any, **kwargs: Any) -> Any:
        options = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(options, *args, **kwargs)


def _description(code_mode: CodeModeLike, agent: str | None, sdk: SdkMode = "auto", sessions: bool = False,
                 sessionless: bool = False) -> str:
    """The ``run_code`` description: within 2,048 characters unless ``sdk`` is ``full``. With
    ``sessions``, a client that keeps no MCP session (``sessionless``) is told that nothing
    persists instead of being promised that variables do."""
    lead = m.RUN_CODE_MCP_LEAD
    if sessions:
        lead += " " + (m.RUN_CODE_NO_SESSION if sessionless else cm.RUN_CODE_SESSION)
    return budgeted_text(code_mode.sdk(agent), lead=lead, budget=DESCRIPTION_BUDGET, mode=sdk)


def _session_key(ctx: Any) -> tuple[str | None, Any]:
    """The code-session key of the MCP session a request belongs to, or None, and the MCP
    connection (whose exit stack ends the code session with it).

    Over streamable HTTP: one per ``Mcp-Session-Id``, closed (its worker killed) when that MCP
    session ends (the client's DELETE, the transport's idle timeout). A request without a
    session id (stateless HTTP, or the sessionless protocol revision) has none: nothing tells
    its client apart, so it runs one-shot. Over stdio (and in-memory transports): one per
    connection, which the server's run holds as its lifespan state and closes when the
    connection ends. Either way it resets after its own idle timeout."""
    if getattr(ctx, "request", None) is not None:
        connection = getattr(ctx.session, "_connection", None)
        session_id = getattr(connection, "session_id", None)
        return (f"mcp-http-{session_id}" if session_id else None), connection
    key = (getattr(ctx, "lifespan_context", None) or {}).get(_SESSION_KEY)
    return (key if isinstance(key, str) else None), None


def _on_close(connection: Any) -> Any:
    stack = getattr(connection, "exit_stack", None)
    return stack.callback if stack is not None else None


def _text_result(text: str, is_error: bool = True) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=is_error)


def _run_kind(outcome: CallOutcome) -> str:
    """How a ``run_code`` call ended, for the metrics: ``ok`` or an error kind."""
    if outcome.run is not None:
        error = outcome.run.result.error
        return "ok" if error is None else str(error.kind)
    return "refused" if outcome.is_error else "ok"


def _undefined_name(outcome: CallOutcome) -> bool:
    run = outcome.run
    error = run.result.error if run is not None else None
    return error is not None and error.kind == "exception" and "NameError" in error.message


#: The lifespan-state entry that names a connection's code session (stdio, in-memory).
_SESSION_KEY = "codemode_session"


def _prompt(code_mode: CodeModeLike, agent: str | None) -> str:
    return cm.SYSTEM_PROMPT.format(sdk=code_mode.sdk(agent).text)


def _run_code_schema(code_mode: CodeModeLike, agent: str | None) -> dict[str, Any]:
    definition = code_mode.registry.get(RUN_CODE, agent=agent)
    if definition is None:
        raise ValueError("the registry has no run_code: pass a CodeMode built on it")
    return thaw(definition.parameters_schema)


def build_server(
    code_mode: CodeModeLike,
    *,
    agent: str | None = None,
    max_concurrent: int = DEFAULT_MAX_CONCURRENT,
    name: str = SERVER_NAME,
    sdk: SdkMode = "auto",
    discovery_tools: bool = True,
    sessions: bool = False,
    limits: ServeLimits = DEFAULT_SERVE_LIMITS,
    controller: ServeController | None = None,
) -> Server[Any]:
    """The low-level MCP ``Server`` offering ``code_mode`` to ``agent``'s view of the registry.

    ``sdk`` chooses what the ``run_code`` description carries: ``auto`` (the whole SDK when it
    fits 2,048 characters, else the discovery text), ``compact`` (always the discovery text)
    or ``full`` (always the whole SDK). ``discovery_tools`` adds ``search_tools`` and
    ``get_tool_sdk``. A client that sends a progress token gets progress during a run, and
    every client hears ``tools/list_changed`` when the registry's tool set changes. With
    ``sessions`` (the ``CodeMode`` made with ``sessions=...``), each MCP session keeps its own
    program state across its ``run_code`` calls (``_session_key``), within ``limits``
    (``ServeLimits``: the session cap and its memory budget, the drain timeout). The returned
    server's ``controller`` (``controller``, or one made here) drains it and reports readiness.
    Raises ``ValueError`` for ``max_concurrent < 1``, an unknown ``sdk`` or a registry
    without ``run_code``.
    """
    if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int) or max_concurrent < 1:
        raise ValueError(f"max_concurrent must be an int >= 1, got {max_concurrent!r}")
    if sdk not in SDK_MODES:
        raise ValueError(f"sdk must be one of {', '.join(SDK_MODES)}, got {sdk!r}")
    if sessions and getattr(code_mode, "session_limits", None) is None:
        raise ValueError("sessions=True needs a CodeMode made with sessions=True")
    schema = _run_code_schema(code_mode, agent)
    steer = controller if controller is not None else ServeController(code_mode, limits)
    limiter = anyio.CapacityLimiter(max_concurrent)
    numbers = itertools.count(1)
    changes = ToolListNotifier(code_mode.registry)
    offered = (RUN_CODE, *CATALOG_TOOLS) if discovery_tools else (RUN_CODE,)

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        changes.seen(ctx.session)
        sessionless = sessions and _session_key(ctx)[0] is None
        tool = types.Tool(
            name=RUN_CODE,
            description=_description(code_mode, agent, sdk, sessions, sessionless),
            input_schema=schema,
            annotations=types.ToolAnnotations(title="Run code", open_world_hint=True),
        )
        return types.ListToolsResult(tools=[tool, *(catalog_tools() if discovery_tools else ())])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        changes.seen(ctx.session)
        call = ToolCall(f"mcp-{next(numbers)}", params.name, dict(params.arguments or {}))
        if params.name not in offered:
            text = UNKNOWN_TOOL.format(name=params.name, available=", ".join(offered))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        if params.name != RUN_CODE:
            text, failed = call_catalog_tool(code_mode.sdk(agent), params.name, call.arguments)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)
        report = ctx.session.report_progress  # a no-op unless the client asked for progress
        key, connection = _session_key(ctx) if sessions else (None, None)
        refusal = steer.refusal(key is not None)
        if refusal is not None:
            return _text_result(refusal)
        note: str | None = None
        options: dict[str, Any] = {}
        if key is not None:
            code_session, note = steer.admit(key, _on_close(connection))
            if code_session is None:
                return _text_result(note or m.DRAINING_SESSION)
            options["session"] = code_session
        started = time.perf_counter()
        with steer.run() as run_controller, steer.using(key):
            options["controller"] = run_controller
            async with limiter:
                outcome = await with_progress(
                    report, lambda on_sub_call: code_mode.handle(call, agent=agent, on_sub_call=on_sub_call, **options)
                )
        steer.metrics.observe_run(_run_kind(outcome), time.perf_counter() - started,
                                  outcome.run.calls if outcome.run is not None else ())
        content = to_mcp_content(outcome.result.content) or [types.TextContent(type="text", text=outcome.text)]
        if sessions and key is None and _undefined_name(outcome):
            note = m.NO_SESSION_NOTE
        if note is not None:
            content.append(types.TextContent(type="text", text=note))
        return types.CallToolResult(content=content, is_error=outcome.is_error)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        resource = types.Resource(
            uri=SDK_URI,
            name=m.SDK_RESOURCE_NAME,
            title=m.SDK_RESOURCE_TITLE,
            description=m.SDK_RESOURCE_DESCRIPTION,
            mime_type=SDK_MIME,
        )
        return types.ListResourcesResult(resources=[resource])

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != SDK_URI:
            from mcp.shared.exceptions import MCPError
            from mcp_types.jsonrpc import INVALID_PARAMS

            raise MCPError(code=INVALID_PARAMS, message=m.UNKNOWN_RESOURCE.format(uri=params.uri, known=SDK_URI))
        text = code_mode.sdk(agent).text
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=SDK_URI, mime_type=SDK_MIME, text=text)])

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        prompt = types.Prompt(name=m.SDK_PROMPT_NAME, description=m.SDK_PROMPT_DESCRIPTION)
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != m.SDK_PROMPT_NAME:
            from mcp.shared.exceptions import MCPError
            from mcp_types.jsonrpc import INVALID_PARAMS

            raise MCPError(code=INVALID_PARAMS, message=m.UNKNOWN_PROMPT.format(name=params.name, known=m.SDK_PROMPT_NAME))
        message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=_prompt(code_mode, agent)))
        return types.GetPromptResult(description=m.SDK_PROMPT_DESCRIPTION, messages=[message])

    runs = itertools.count(1)

    @asynccontextmanager
    async def lifespan(server: Any) -> AsyncIterator[dict[str, Any]]:
        """One per served connection on stdio (once for all of them over HTTP): it names the
        connection's code session and closes it when the connection ends."""
        key = f"mcp-connection-{next(runs)}"
        async with changes.lifespan(server) as state:
            try:
                yield {**state, _SESSION_KEY: key}
            finally:
                if sessions:
                    code_mode.close_session(key)  # type: ignore[attr-defined]

    server = _Server(
        name,
        version=SERVER_VERSION,
        instructions=m.SERVER_INSTRUCTIONS,
        lifespan=lifespan,
        on_subscriptions_listen=changes.listen,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    server.controller = steer
    return server


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on this process's stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        options = server.create_initialization_options(NotificationOptions(tools_changed=True))
        await server.run(read_stream, write_stream, options)


def _transport_security(host: str, allowed_hosts: tuple[str, ...] = ()) -> Any:
    """DNS-rebinding protection: only requests whose ``Host`` (and ``Origin``, when sent) name
    the bound loopback ``host`` or one of ``allowed_hosts`` (the names a proxy in front
    forwards) are served. None (no protection) for a non-loopback ``host`` with no
    ``allowed_hosts``, which the CLI warns about."""
    from mcp.server.transport_security import TransportSecuritySettings

    if is_loopback(host):
        names = ["localhost", "127.0.0.1", "[::1]"] if host.casefold() == "localhost" else [_bracketed(host)]
    elif allowed_hosts:
        names = [_bracketed(host)]
    else:
        return None
    names += [_bracketed(h) for h in allowed_hosts if _bracketed(h) not in names]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{n}:*" for n in names)],
        allowed_origins=[f"{scheme}://{n}{port}" for n in names for scheme in ("http", "https") for port in ("", ":*")],
    )


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ``OSError`` with one line (``address already in
    use``) when it cannot be had, so the CLI reports it without a traceback."""
    shown = f"[{host}]" if ":" in host else host
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise OSError(f"cannot listen on {shown}:{port}: {exc.strerror or exc}") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = (exc.strerror or str(exc)).lower()
        raise OSError(f"cannot listen on {shown}:{port}: {reason}") from None
    return sock


#: Seconds the drain waits for the last responses to leave once its runs are done.
RESPONSE_GRACE = 5.0
#: Seconds uvicorn then gives open connections (the GET streams of sessions) before cutting them.
CLOSE_GRACE = 1


async def serve_http(
    server: Server[Any],
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    stateless: bool = False,
    json_response: bool = False,
    allowed_hosts: tuple[str, ...] = (),
    drain_signals: bool = False,
    task_status: TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp``, with ``/healthz``, ``/readyz`` and
    ``/metrics`` beside it, until cancelled or drained.

    With ``await tg.start(serve_http, ...)`` the caller gets the bound port (useful with port 0).
    ``stateless`` keeps no MCP session between requests (any replica can answer any call: plain
    round-robin works); ``json_response`` answers a call with one JSON body instead of an SSE
    stream. On a loopback host (127.0.0.0/8, ``::1``, ``localhost``), requests that name another
    host or origin than the address or one of ``allowed_hosts`` are refused (DNS-rebinding
    protection). With ``drain_signals``, SIGTERM and SIGINT start a graceful drain (a second
    signal cancels the runs at once); so does the controller's ``shutdown()``. A drained server
    returns normally. Raises ``OSError`` (one line) when the address cannot be bound, for
    instance a port already in use.
    """
    import uvicorn

    from .health import DrainGate, health_routes

    controller: ServeController | None = getattr(server, "controller", None)
    if controller is None:
        raise TypeError("serve_http needs a server made by build_server")
    session_limits = getattr(controller.code_mode, "session_limits", None)
    # Without sessions, an MCP session lives as long as a code session would by default.
    idle = (session_limits or sandbox.DEFAULT_SESSION_LIMITS).idle_timeout
    sock = _listen(host, port)
    app = server.streamable_http_app(  # type: ignore[attr-defined]
        host=host,
        transport_security=_transport_security(host, tuple(allowed_hosts)),
        stateless_http=stateless,
        json_response=json_response,
        session_idle_timeout=idle,
        max_sessions=controller.limits.transport_sessions,
        custom_starlette_routes=health_routes(controller),
    )
    gate = DrainGate(app, controller)
    config = uvicorn.Config(gate, log_level="warning", lifespan="on", timeout_graceful_shutdown=CLOSE_GRACE)
    web = uvicorn.Server(config)
    web.install_signal_handlers = lambda: None  # type: ignore[method-assign]  # the host owns signals
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(partial(web.serve, sockets=[sock]))
            while not web.started:
                if web.should_exit:
                    raise OSError(f"cannot serve on {host}:{port}")
                await anyio.sleep(0.02)
            listening = anyio.CancelScope()
            if drain_signals:
                tg.start_soon(_on_signals, controller, listening)
            task_status.started(sock.getsockname()[1])
            try:
                await controller.wait_shutdown()
                await controller.drain()
                await gate.quiet(RESPONSE_GRACE)
            finally:
                web.should_exit = True
                listening.cancel()
    finally:
        sock.close()


async def _on_signals(controller: ServeController, scope: anyio.CancelScope) -> None:
    """SIGTERM/SIGINT: the first drains, the second cancels what still runs."""
    with scope, anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        count = 0
        async for _ in signals:
            count += 1
            if count == 1:
                logger.warning("draining: finishing the runs in flight (up to %g s)", controller.limits.drain_timeout)
                controller.shutdown()
            else:
                logger.warning("second signal: cancelling the runs in flight")
                controller.cancel_runs()
