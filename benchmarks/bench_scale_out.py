"""Calls/s and latency of ``codemode mcp serve`` replicas behind haproxy, by replica count.

    python benchmarks/bench_scale_out.py [--replicas 1,2,3] [--clients 16] [--seconds 20] [--repeat 3]

Each configuration starts N ``--stateless`` replicas (worker backend, the default) and haproxy
(round-robin, ``/readyz`` checks) on loopback ports, then drives ``--clients`` official ``mcp``
clients, each calling ``run_code`` in a loop with a program that makes one sub-call, for
``--seconds``. Prints calls/s and the p50/p95 latency of each run and the medians over
``--repeat`` runs. Needs haproxy on PATH (Debian: ``apt-get install haproxy``).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from mcp import Client

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "tests" / "codemode" / "mcp" / "replica_tools.py"
PROGRAM = "return await tools.whoami()"
HAPROXY = """
global
    maxconn 2048
defaults
    mode http
    timeout connect 2s
    timeout client 120s
    timeout server 120s
    option redispatch
    retries 3
    retry-on conn-failure 503
frontend mcp
    bind 127.0.0.1:{port}
    default_backend replicas
backend replicas
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    timeout check 5s
{servers}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_ready(port: int, limit: float = 120) -> None:
    with anyio.fail_after(limit):
        async with httpx2.AsyncClient(timeout=5) as http:
            while True:
                try:
                    if (await http.get(f"http://127.0.0.1:{port}/readyz")).status_code == 200:
                        return
                except httpx2.TransportError:
                    pass
                await anyio.sleep(0.1)


async def measure(replicas: int, clients: int, seconds: float) -> tuple[float, float, float, int]:
    """(calls/s, p50 ms, p95 ms, errors) of one run."""
    ports = [free_port() for _ in range(replicas)]
    lb = free_port()
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "haproxy.cfg"
        servers = "\n".join(f"    server r{n} 127.0.0.1:{p} check inter 1s fall 2 rise 1" for n, p in enumerate(ports))
        config.write_text(HAPROXY.format(port=lb, servers=servers))
        try:
            for n, port in enumerate(ports):
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "codemode.mcp", "serve", "--tools", str(TOOLS), "--stateless",
                     "--http", f"127.0.0.1:{port}", "--max-concurrent", str(clients)],
                    cwd=REPO, env={**os.environ, "CODEMODE_TEST_REPLICA": f"r{n}"},
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            haproxy = subprocess.Popen(["haproxy", "-db", "-f", str(config)], stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL)
            procs.append(haproxy)
            for port in ports:
                await wait_ready(port)
            await anyio.sleep(2.5)  # haproxy's checks see every replica up
            latencies: list[float] = []
            connects: list[float] = []
            errors = 0
            url = f"http://127.0.0.1:{lb}/mcp"

            connected = 0
            go = anyio.Event()
            window: dict[str, float] = {}

            async def client() -> None:
                nonlocal errors, connected
                opened = time.perf_counter()
                async with Client(url, mode="legacy") as c:
                    await c.list_tools()
                    connects.append(time.perf_counter() - opened)
                    await c.call_tool("run_code", {"code": PROGRAM, "description": "Warm-up"})
                    connected += 1
                    await go.wait()
                    while time.monotonic() < window["stop"]:
                        t = time.perf_counter()
                        r = await c.call_tool("run_code", {"code": PROGRAM, "description": "Bench"})
                        if time.monotonic() > window["stop"]:
                            break  # finished past the window: not counted
                        if r.is_error:
                            errors += 1
                        else:
                            latencies.append((time.perf_counter() - t) * 1000)

            # Every client connects and makes one call first; then the measured window.
            async with anyio.create_task_group() as tg:
                for _ in range(clients):
                    tg.start_soon(client)
                while connected < clients:
                    await anyio.sleep(0.05)
                cpu_before = sum(_cpu_tree(p.pid) for p in procs[:-1])
                own_before = time.process_time()
                started = time.monotonic()
                window["stop"] = started + seconds
                go.set()
            elapsed = seconds
            cpu = sum(_cpu_tree(p.pid) for p in procs[:-1]) - cpu_before
            own = time.process_time() - own_before
        finally:
            for p in procs:
                p.terminate()
            for p in procs:
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
    ordered = sorted(latencies)
    p95 = ordered[int(0.95 * (len(ordered) - 1))] if ordered else float("nan")
    calls = len(ordered) + errors
    print(f"    connect + list_tools: median {statistics.median(connects) * 1000:.0f} ms over {len(connects)} clients")
    print(f"    replica CPU (workers included): {1000 * cpu / max(1, calls):.0f} ms per call; "
          f"the clients' own: {1000 * own / max(1, calls):.0f} ms per call")
    return len(ordered) / elapsed, statistics.median(ordered) if ordered else float("nan"), p95, errors


def _cpu_tree(pid: int) -> float:
    """CPU seconds used by ``pid`` and every process below it, reaped children included."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    todo = [pid]
    while todo:
        current = todo.pop()
        try:
            stat = Path(f"/proc/{current}/stat").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        total += sum(int(f) for f in fields[11:15]) / tick  # utime, stime, cutime, cstime
        todo.extend(int(c) for c in children)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", default="1,2,3")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    counts = [int(n) for n in args.replicas.split(",")]
    results: dict[int, list[tuple[float, float, float, int]]] = {n: [] for n in counts}
    print(f"load average before: {os.getloadavg()[0]:.1f} (2 cores)")
    for _ in range(args.repeat):  # interleaved, so drifting load hits every count alike
        for n in counts:
            r = anyio.run(measure, n, args.clients, args.seconds)
            results[n].append(r)
            print(f"  {n} replica(s): {r[0]:.1f} calls/s, p50 {r[1]:.0f} ms, p95 {r[2]:.0f} ms, {r[3]} errors "
                  f"(load {os.getloadavg()[0]:.1f})", flush=True)
    print("| replicas | calls/s (median) | p50 ms | p95 ms | errors |")
    print("| --- | --- | --- | --- | --- |")
    for n in counts:
        runs = results[n]
        print(f"| {n} | {statistics.median(r[0] for r in runs):.1f} | {statistics.median(r[1] for r in runs):.0f} | "
              f"{statistics.median(r[2] for r in runs):.0f} | {sum(r[3] for r in runs)} |")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
