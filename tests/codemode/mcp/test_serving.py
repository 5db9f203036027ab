"""``mcp serve`` in production, in process: ``/healthz``, ``/readyz``, ``/metrics``, graceful
drain, stateless and JSON responses, ``--allowed-host``, the session cap and its memory budget,
sessions on every protocol revision, and the ``ServeLimits`` / command-line checks.

The end-to-end behaviour behind a real load balancer is ``test_scale_out.py``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

import sandbox
from codemode import CodeMode, Registry, define_tool
from codemode.cli.mcp import STATELESS_SESSIONS
from codemode.code_mode import messages as cm
from codemode.mcp import build_server, serve_http
from codemode.mcp import messages as m
from codemode.mcp.options import MIB, ServeLimits

pytestmark = pytest.mark.anyio
REPO = Path(__file__).resolve().parents[3]
FAST = sandbox.Limits(wall_time=20, cpu_time=20)
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def napping() -> tuple[Registry, list[float]]:
    """A registry with ``nap(seconds)``, which records each nap it finished."""
    finished: list[float] = []

    async def nap(args: Any, ctx: Any) -> list[dict[str, str]]:
        await anyio.sleep(float(args["seconds"]))
        finished.append(float(args["seconds"]))
        return [{"type": "text", "text": "rested"}]

    registry = Registry(mode="code")
    registry.register(define_tool(name="nap", description="Sleep a while.", parameters={"seconds": {"type": "number"}},
                                  execute=nap, is_concurrency_safe=True))
    return registry, finished


@asynccontextmanager
async def served(mode: CodeMode, **options: Any) -> AsyncIterator[tuple[Any, str, Any]]:
    """``(server, base url, done event)`` of a server on a free loopback port; ``done`` is set
    when ``serve_http`` returned by itself (a drain)."""
    build = {k: options.pop(k) for k in ("sessions", "limits") if k in options}
    server = build_server(mode, max_concurrent=8, **build)
    done = anyio.Event()
    async with anyio.create_task_group() as tg:
        async def serve(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            await serve_http(server, "127.0.0.1", 0, task_status=task_status, **options)
            done.set()

        port = await tg.start(serve)
        yield server, f"http://127.0.0.1:{port}", done
        tg.cancel_scope.cancel()


def text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if b.type == "text")


def run(code: str) -> dict[str, str]:
    return {"code": code, "description": "Test"}


# --- health, readiness, metrics ----------------------------------------------------------------


async def test_healthz_readyz_and_metrics_answer_cheaply_and_unauthenticated() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST)
    async with served(mode) as (_, base, _done), httpx2.AsyncClient(timeout=20) as http:
        health = await http.get(f"{base}/healthz")
        assert (health.status_code, health.text) == (200, "ok\n")
        ready = await http.get(f"{base}/readyz")
        assert (ready.status_code, ready.text) == (200, "ready\n")
        # A health checker's own Host header is fine: these answer whatever host is named.
        other = await http.get(f"{base}/readyz", headers={"host": "lb.internal:8080"})
        assert other.status_code == 200
        async with Client(f"{base}/mcp") as client:
            assert not (await client.call_tool("run_code", run("return await tools.nap(seconds=0)"))).is_error
            assert (await client.call_tool("run_code", run("raise ValueError('no')"))).is_error
        metrics = await http.get(f"{base}/metrics")
        assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
        body = metrics.text
        assert 'codemode_runs_total{kind="ok"} 1.0' in body
        assert 'codemode_runs_total{kind="exception"} 1.0' in body
        assert 'codemode_sub_calls_total{status="ok"} 1.0' in body
        assert "codemode_run_duration_seconds_count 2.0" in body
        assert "codemode_runs_in_flight 0.0" in body and "codemode_draining 0.0" in body
        assert "codemode_sessions 0.0" in body and "codemode_drains_total 0.0" in body
        assert "nap" not in body  # no tool, program or path in the metrics
    mode.close()


async def test_readyz_says_why_when_the_worker_backend_cannot_run() -> None:
    registry, _ = napping()
    runtime = sandbox.WorkerRuntime()
    runtime.close()  # a backend that can no longer start workers
    mode = CodeMode(registry, backend=runtime, limits=FAST)
    async with served(mode) as (_, base, _done), httpx2.AsyncClient(timeout=30) as http:
        ready = await http.get(f"{base}/readyz")
        assert ready.status_code == 503
        assert ready.text.startswith("not ready: the worker backend cannot run: ")
        assert (await http.get(f"{base}/healthz")).status_code == 200  # alive, just not ready
    mode.close()


async def test_readyz_is_ready_on_a_working_worker_backend() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, limits=FAST)
    async with served(mode) as (_, base, _done), httpx2.AsyncClient(timeout=60) as http:
        ready = await http.get(f"{base}/readyz")
        assert (ready.status_code, ready.text) == (200, "ready\n")
    mode.close()


# --- drain ---------------------------------------------------------------------------------------


async def test_a_drain_lets_runs_in_flight_finish_and_refuses_new_work() -> None:
    registry, finished = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST, sessions=True)
    results: list[Any] = []
    async with served(mode, sessions=True) as (server, base, done), httpx2.AsyncClient(timeout=20) as http:
        async def napper(legacy: bool) -> None:
            async with Client(f"{base}/mcp", mode="legacy" if legacy else "auto") as client:
                await client.list_tools()
                results.append(await client.call_tool("run_code", run("return await tools.nap(seconds=1.5)")))

        async with Client(f"{base}/mcp", mode="legacy") as kept:  # a session that stays open
            assert not (await kept.call_tool("run_code", run("x = 1"))).is_error
            async with anyio.create_task_group() as tg:
                for legacy in (True, False, True, False):
                    tg.start_soon(napper, legacy)
                with anyio.fail_after(20):
                    while server.controller.runs_in_flight < 4:
                        await anyio.sleep(0.01)
                server.controller.shutdown()
                with anyio.fail_after(10):
                    while not server.controller.draining:
                        await anyio.sleep(0.01)
                ready = await http.get(f"{base}/readyz")
                assert ready.status_code == 503 and "draining" in ready.text
                # A new session and a sessionless call are refused before anything runs.
                new = await http.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)
                assert new.status_code == 503 and json.loads(new.text)["error"]["message"] == m.DRAINING
                # An existing session is told, in one sentence, that it ends.
                refused = await kept.call_tool("run_code", run("return x"))
                assert refused.is_error and text(refused) == m.DRAINING_SESSION
        with anyio.fail_after(20):
            await done.wait()  # serve_http returned by itself
    assert [r.is_error for r in results] == [False] * 4 and all(text(r) == "rested" for r in results)
    assert finished == [1.5] * 4
    assert mode.sessions == {}  # every session closed by the drain
    mode.close()


async def test_a_drain_cancels_what_outlives_its_timeout_with_a_reason() -> None:
    registry, finished = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST)
    async with served(mode, limits=ServeLimits(drain_timeout=0.5)) as (server, base, done):
        async with Client(f"{base}/mcp") as client:
            async with anyio.create_task_group() as tg:
                box: list[Any] = []

                async def long() -> None:
                    box.append(await client.call_tool("run_code", run("return await tools.nap(seconds=15)")))

                tg.start_soon(long)
                with anyio.fail_after(20):
                    while server.controller.runs_in_flight < 1:
                        await anyio.sleep(0.01)
                server.controller.shutdown()
        with anyio.fail_after(20):
            await done.wait()
    result = box[0]
    assert result.is_error
    reason = "the run was cancelled: " + m.DRAIN_CANCELLED.format(seconds=0.5)
    assert text(result) == cm.RUN_FAILED.format(kind="cancelled", message=reason)
    assert finished == []
    metrics = server.controller.metrics.render().decode()
    assert 'codemode_runs_total{kind="cancelled"} 1.0' in metrics
    assert "codemode_drains_total 1.0" in metrics and "codemode_drain_cancelled_runs_total 1.0" in metrics
    mode.close()


async def test_a_second_signal_cancels_at_once_with_its_own_reason() -> None:
    registry, finished = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST)
    async with served(mode) as (server, base, _done), Client(f"{base}/mcp") as client:
        box: list[Any] = []
        async with anyio.create_task_group() as tg:
            async def long() -> None:
                box.append(await client.call_tool("run_code", run("return await tools.nap(seconds=15)")))

            tg.start_soon(long)
            with anyio.fail_after(20):
                while server.controller.runs_in_flight < 1:
                    await anyio.sleep(0.01)
            assert server.controller.cancel_runs() == 1  # what the second SIGTERM/SIGINT does
    reason = "the run was cancelled: " + m.DRAIN_STOPPED
    assert text(box[0]) == cm.RUN_FAILED.format(kind="cancelled", message=reason) and finished == []
    mode.close()


# --- stateless, JSON, hosts ----------------------------------------------------------------------


async def test_stateless_serves_handshake_clients_without_a_session_id() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST)
    async with served(mode, stateless=True, json_response=True) as (_, base, _done), httpx2.AsyncClient(timeout=20) as http:
        opened = await http.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)
        assert opened.status_code == 200 and "mcp-session-id" not in opened.headers
        assert opened.headers["content-type"].startswith("application/json")  # JSON, not SSE
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "run_code", "arguments": run("return 6 * 7")}}
        answered = await http.post(f"{base}/mcp", json=call, headers={**HEADERS, "mcp-protocol-version": "2025-06-18"})
        assert answered.status_code == 200 and json.loads(answered.text)["result"]["content"][0]["text"] == "42"
        async with Client(f"{base}/mcp", mode="legacy") as client:
            assert text(await client.call_tool("run_code", run("return 1"))) == "1"
    mode.close()


async def test_allowed_host_admits_the_proxy_name_and_nothing_else() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST)
    async with served(mode, allowed_hosts=("mcp.example.internal",)) as (_, base, _done):
        async with httpx2.AsyncClient(timeout=20) as http:
            port = base.rsplit(":", 1)[1]
            proxied = await http.post(f"{base}/mcp", json=INITIALIZE,
                                      headers={**HEADERS, "host": "mcp.example.internal",
                                               "origin": "https://mcp.example.internal"})
            assert proxied.status_code == 200 and "serverInfo" in proxied.text
            other = await http.post(f"{base}/mcp", json=INITIALIZE, headers={**HEADERS, "host": f"evil.example:{port}"})
            assert other.status_code == 421
            origin = await http.post(f"{base}/mcp", json=INITIALIZE,
                                     headers={**HEADERS, "origin": "http://evil.example"})
            assert origin.status_code == 403
    mode.close()


# --- sessions ------------------------------------------------------------------------------------


async def test_a_sessionless_client_is_told_nothing_persists() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST, sessions=True)
    async with served(mode, sessions=True) as (_, base, _done):
        async with Client(f"{base}/mcp") as modern:  # the newest revision: no session id
            listed = await modern.list_tools()
            description = listed.tools[0].description
            assert m.RUN_CODE_NO_SESSION in description and cm.RUN_CODE_SESSION not in description
            await modern.call_tool("run_code", run("kept = 1"))
            again = await modern.call_tool("run_code", run("return kept"))
            assert again.is_error and "NameError" in text(again)
            assert text(again).endswith(m.NO_SESSION_NOTE)
            other = await modern.call_tool("run_code", run("raise ValueError('x')"))
            assert m.NO_SESSION_NOTE not in text(other)  # only where a name went missing
        async with Client(f"{base}/mcp", mode="legacy") as legacy:  # a session id: state is kept
            listed = await legacy.list_tools()
            assert cm.RUN_CODE_SESSION in listed.tools[0].description
            await legacy.call_tool("run_code", run("kept = 2"))
            assert text(await legacy.call_tool("run_code", run("return kept"))) == "2"
    mode.close()


async def test_past_the_cap_the_least_recently_used_idle_session_is_closed() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST, sessions=True)
    limits = ServeLimits(max_sessions=2)
    async with served(mode, sessions=True, limits=limits) as (server, base, _done):
        url = f"{base}/mcp"
        async with Client(url, mode="legacy") as a, Client(url, mode="legacy") as b, Client(url, mode="legacy") as c:
            await a.call_tool("run_code", run("v = 'a'"))
            await b.call_tool("run_code", run("v = 'b'"))
            assert text(await a.call_tool("run_code", run("return v"))) == "a"  # b is now least recent
            await c.call_tool("run_code", run("v = 'c'"))  # evicts b
            assert len(mode.sessions) == 2
            assert text(await a.call_tool("run_code", run("return v"))) == "a"
            again = await b.call_tool("run_code", run("return v"))
            assert again.is_error and "NameError" in text(again)
            assert text(again).endswith(m.SESSION_EVICTED.format(cap=2))
            # b's return evicted c (least recent); a is untouched, and no note repeats.
            assert text(await a.call_tool("run_code", run("return v"))) == "a"
            assert not text(await b.call_tool("run_code", run("v = 'b2'"))).startswith("Note")
        metrics = server.controller.metrics.render().decode()
        assert "codemode_sessions_evicted_total 2.0" in metrics
    mode.close()


async def test_when_every_session_is_busy_a_new_one_is_refused() -> None:
    registry, _ = napping()
    mode = CodeMode(registry, backend="inprocess", limits=FAST, sessions=True)
    async with served(mode, sessions=True, limits=ServeLimits(max_sessions=1)) as (server, base, _done):
        url = f"{base}/mcp"
        async with Client(url, mode="legacy") as busy, Client(url, mode="legacy") as late:
            async with anyio.create_task_group() as tg:
                tg.start_soon(busy.call_tool, "run_code", run("return await tools.nap(seconds=2)"))
                with anyio.fail_after(20):
                    while server.controller.runs_in_flight < 1:
                        await anyio.sleep(0.01)
                refused = await late.call_tool("run_code", run("return 1"))
                assert refused.is_error and text(refused) == m.SESSIONS_FULL.format(cap=1)
            assert text(await late.call_tool("run_code", run("return 1"))).startswith("1")  # room again
        assert "codemode_sessions_refused_total 1.0" in server.controller.metrics.render().decode()
    mode.close()


async def test_an_idle_transport_session_expires_with_its_worker() -> None:
    import os

    registry, _ = napping()
    mode = CodeMode(registry, limits=FAST, sessions=sandbox.SessionLimits(idle_timeout=1.0))
    async with served(mode, sessions=True) as (server, base, _done), httpx2.AsyncClient(timeout=60) as http:
        # A client that opens no GET stream: its MCP session is idle between requests.
        opened = await http.post(f"{base}/mcp", json=INITIALIZE, headers=HEADERS)
        sid = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
        await http.post(f"{base}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers={**HEADERS, **sid})
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "run_code", "arguments": run("v = 1")}}
        assert (await http.post(f"{base}/mcp", json=call, headers={**HEADERS, **sid})).status_code == 200
        (only,) = mode.sessions.values()
        pid = only.sandbox.pid
        assert pid is not None and server.controller.session_workers() == 1
        with anyio.fail_after(30):
            while mode.sessions:  # the transport's idle timeout ends the MCP session, and the worker
                await anyio.sleep(0.1)
        gone = await http.post(f"{base}/mcp", json=call, headers={**HEADERS, **sid})
        assert gone.status_code == 404  # the MCP session itself expired
        with anyio.fail_after(30):
            while True:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                await anyio.sleep(0.05)
        # A client that keeps its GET stream open keeps its MCP session; its idle worker still goes.
        async with Client(f"{base}/mcp", mode="legacy") as client:
            await client.call_tool("run_code", run("v = 1"))
            assert server.controller.session_workers() == 1
            with anyio.fail_after(30):
                while server.controller.session_workers():
                    await anyio.sleep(0.1)
            again = await client.call_tool("run_code", run("return v"))
            assert again.is_error and "idle for more than 1 s" in text(again)
    mode.close()


def test_serve_limits_are_checked_and_the_budget_bounds_the_cap() -> None:
    assert ServeLimits().session_cap(512 * MIB) == 8
    assert ServeLimits(session_memory_budget=1024 * MIB).session_cap(512 * MIB) == 2
    assert ServeLimits(max_sessions=3, session_memory_budget=64 * 1024 * MIB).session_cap(512 * MIB) == 3
    with pytest.raises(ValueError, match=r"max_sessions must be >= 1 and finite, got 0"):
        ServeLimits(max_sessions=0)
    with pytest.raises(ValueError, match=r"drain_timeout must be a number, got 'x'"):
        ServeLimits(drain_timeout="x")  # type: ignore[arg-type]
    assert repr(ServeLimits(max_sessions=2)) == "ServeLimits(max_sessions=2)"


# --- the command line ----------------------------------------------------------------------------


@pytest.mark.parametrize(("argv", "message"), [
    (("--http", "127.0.0.1:0", "--sessions", "--stateless"), STATELESS_SESSIONS),
    (("--http", "127.0.0.1:0", "--max-sessions", "2"), "--max-sessions needs --sessions"),
    (("--stateless",), "--stateless applies to --http only"),
    (("--allowed-host", "proxy.example"), "--allowed-host applies to --http only"),
    (("--http", "127.0.0.1:0", "--sessions", "--memory", "64", "--session-memory-budget", "16"),
     "--session-memory-budget (16 MiB) is below one session's memory limit (512 MiB): no session could start"),
])
def test_options_that_cannot_apply_are_one_line_and_exit_2(argv: tuple[str, ...], message: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from codemode.cli.mcp import main

    code = main(["serve", "--backend", "inprocess", "--root", str(tmp_path), *argv])
    assert (code, capsys.readouterr().err) == (2, f"codemode: error: {message}\n")


def test_sigterm_drains_and_exits_0(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "codemode.mcp", "serve", "--backend", "inprocess", "--root",
                             str(tmp_path), "--http", "127.0.0.1:0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()  # printed once the signal handlers are in place
        assert "serving MCP at http://127.0.0.1:" in first
        proc.send_signal(signal.SIGTERM)
        rest = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 0
    assert rest.endswith("codemode: drained; every run in flight has ended\n")
