"""Sandbox workloads W1-W6, side by side with plain CPython and peer sandboxes.

Each workload is one snippet (the body of an async function). The baseline is plain CPython:
`compile` + `exec` of the same body wrapped in `async def`, awaited on the same event loop, with
the same host functions. Every figure is the median of repeated runs measured in this process,
in this run, so ratios compare like with like on a shared, noisy machine.

    python benchmarks/bench_sandbox.py [--repeat N] [--markdown FILE]

It also prints W1 back to back as fresh runs per second with 1, 2 and 8 runs in flight (tasks
on one event loop), the batch users' figure.

With the `bench` extra installed, smolagents' LocalPythonExecutor and pydantic-monty run the
workloads they support (they have no async host calls, so W4/W5 are skipped for them). The
session columns run every workload in one session each: `sandbox.open_session` on the worker
and in-process backends, and pydantic-monty's REPL mode (one checked-out session).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from results_block import write_block  # noqa: E402

import sandbox  # noqa: E402
from sandbox import Limits  # noqa: E402

W2 = """
total = 0
for i in range(200_000):
    total += i * i
return total
"""

W3 = """
rows = [{"k": f"g{i % 100}", "v": i} for i in range(20_000)]
totals = {}
for r in rows:
    totals[r["k"]] = totals.get(r["k"], 0) + r["v"]
top = sorted(totals.items(), key=lambda kv: -kv[1])[:5]
return top
"""

W4 = """
acc = 0
for i in range(200):
    acc += await tools.echo(x=i)
return acc
"""

W5 = """
import asyncio
r = await asyncio.gather(*(tools.nap(x=i) for i in range(50)))
return len(r)
"""

W6 = """
import re, json
from collections import Counter
text = "alpha 123 beta 4567 gamma 89 " * 34_000
nums = re.findall(r"\\d+", text)
counts = Counter(nums)
back = json.loads(json.dumps(counts))
return [len(text), len(nums), back["123"]]
"""

# W1 is `return 1+1` with a fresh code string each run (a changing comment defeats any cache).
W1 = "return 1+1  # {n}"


async def echo(x: Any) -> Any:
    return x


async def nap(x: Any) -> Any:
    await anyio.sleep(0.02)
    return x


BINDINGS = {"echo": echo, "nap": nap}
#: Columns whose runs all share one session (state kept, no fork per run).
SESSION_COLUMNS = ("worker session", "inprocess session", "monty session")


async def cpython_run(code: str) -> Any:
    """The limit: the same async body, compiled and run by plain CPython."""
    src = "async def __w__():\n" + "\n".join("    " + line for line in code.splitlines())
    glb: dict[str, Any] = {"tools": SimpleNamespace(**BINDINGS), "asyncio": asyncio}
    exec(compile(src, "<bench>", "exec"), glb)
    return await glb["__w__"]()


def make_sandbox_runner(backend: str) -> Callable[[str], Awaitable[Any]]:
    limits = Limits(wall_time=60, cpu_time=60)

    async def run(code: str) -> Any:
        result = await sandbox.run(code, bindings=BINDINGS, limits=limits, backend=backend)
        if result.error is not None:
            raise RuntimeError(f"{backend}: {result.error}")
        return result.value

    return run


def make_session_runner(backend: str) -> Callable[[str], Awaitable[Any]]:
    """Every run in one session (`sandbox.open_session`): a warm session worker, no fork."""
    limits = Limits(wall_time=60, cpu_time=60)
    session = sandbox.open_session(backend, limits=sandbox.SessionLimits(max_runs=10**9))

    async def run(code: str) -> Any:
        result = await session.run(code, bindings=BINDINGS, limits=limits)
        if result.error is not None:
            raise RuntimeError(f"{backend} session: {result.error}")
        return result.value

    return run


def _last_expression(code: str) -> str:
    """Peers return the value of the last expression (REPL style) instead of `return`."""
    lines = code.strip().splitlines()
    if lines and lines[-1].startswith("return "):
        lines[-1] = lines[-1][len("return "):]
    return "\n".join(lines)


def make_smolagents_runner() -> Callable[[str], Awaitable[Any]] | None:
    """smolagents' AST interpreter, a fresh executor per run (no async host calls: W4/W5 n/a)."""
    try:
        from smolagents.local_python_executor import LocalPythonExecutor
    except Exception:
        return None

    async def run(code: str) -> Any:
        if "await" in code:
            raise NotImplementedError
        ex = LocalPythonExecutor(additional_authorized_imports=["re", "json", "collections"])
        ex.send_tools({})
        return ex(_last_expression(code)).output

    return run


class MontyRunner:
    """pydantic-monty's pooled worker processes; one checkout (a fresh session) per run.
    Host functions are passed as `external_lookup` and called by bare name."""

    def __init__(self) -> None:
        import pydantic_monty  # type: ignore[import-not-found]

        self.pool = pydantic_monty.AsyncMonty()
        self.started = False

    async def __call__(self, code: str) -> Any:
        if not self.started:
            await self.pool.__aenter__()
            self.started = True
        async with self.pool.checkout() as session:
            return await session.feed_run(
                _last_expression(code).replace("tools.", ""), external_lookup=dict(BINDINGS)
            )


def make_monty_runner() -> Callable[[str], Awaitable[Any]] | None:
    try:
        return MontyRunner()
    except Exception:
        return None


class MontySessionRunner(MontyRunner):
    """pydantic-monty's REPL mode: one checked-out session kept for every run."""

    def __init__(self) -> None:
        super().__init__()
        self.session: Any = None
        self.checkout: Any = None

    async def __call__(self, code: str) -> Any:
        if self.session is None:
            await self.pool.__aenter__()
            self.checkout = self.pool.checkout()
            self.session = await self.checkout.__aenter__()
        return await self.session.feed_run(
            _last_expression(code).replace("tools.", ""), external_lookup=dict(BINDINGS)
        )


def make_monty_session_runner() -> Callable[[str], Awaitable[Any]] | None:
    try:
        return MontySessionRunner()
    except Exception:
        return None


async def median_latency(run: Callable[[str], Awaitable[Any]], code: str | Callable[[int], str],
                         repeat: int, pause: float = 0.0) -> float:
    samples = []
    for n in range(repeat):
        src = code(n) if callable(code) else code
        if pause:
            await anyio.sleep(pause)
        t0 = time.perf_counter()
        await run(src)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


async def throughput(run: Callable[[str], Awaitable[Any]], count: int) -> float:
    t0 = time.perf_counter()
    for n in range(count):
        await run(W1.format(n=n))
    return (time.perf_counter() - t0) / count


async def runs_per_second(run: Callable[[str], Awaitable[Any]], count: int, in_flight: int) -> float:
    """Fresh W1 runs per second with `in_flight` of them running at any time (tasks on one
    event loop, each starting its next run when its last one ends)."""
    numbers = iter(range(count))

    async def lane() -> None:
        for n in numbers:
            await run(W1.format(n=n))

    t0 = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):
            tg.start_soon(lane)
    return count / (time.perf_counter() - t0)


#: How many W1 runs are in flight at once in the runs/s figures.
IN_FLIGHT = (1, 2, 8)


def unique_memory_kib(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
    except OSError:
        return None
    return sum(int(fields[k].split()[0]) for k in ("Private_Clean", "Private_Dirty") if k in fields)


async def main(repeat: int, markdown: str | None) -> None:
    runners: dict[str, Callable[[str], Awaitable[Any]] | None] = {
        "cpython": cpython_run,
        "worker": make_sandbox_runner("worker"),
        "inprocess": make_sandbox_runner("inprocess"),
        "smolagents": make_smolagents_runner(),
        "monty": make_monty_runner(),
        "worker session": make_session_runner("worker"),
        "inprocess session": make_session_runner("inprocess"),
        "monty session": make_monty_session_runner(),
    }
    sandbox.get_runtime("worker").start()  # type: ignore[attr-defined]
    await anyio.sleep(0.5)
    workloads = {
        "W1 spaced (ms/run)": (lambda n: W1.format(n=n), 5e-3),
        "W2 loop (ms)": (W2, 0.0),
        "W3 group-by (ms)": (W3, 0.0),
        "W4 200 calls (ms)": (W4, 0.0),
        "W5 50x20ms gather (ms)": (W5, 0.0),
        "W6 1MB regex+json (ms)": (W6, 0.0),
    }
    table: dict[str, dict[str, float | None]] = {}
    for wname, (code, pause) in workloads.items():
        row: dict[str, float | None] = {}
        for rname, runner in runners.items():
            if runner is None:
                row[rname] = None
                continue
            try:
                await runner(code(0) if callable(code) else code)  # warm-up / support check
                reps = repeat * 3 if wname.startswith("W1") else repeat
                row[rname] = await median_latency(runner, code, reps, pause) * 1000
            except NotImplementedError:
                row[rname] = None
            except Exception as exc:  # a peer that cannot run a workload is reported, not fatal
                print(f"{rname} failed {wname}: {exc}", file=sys.stderr)
                row[rname] = None
        table[wname] = row
        print(wname, {k: (round(v, 3) if v is not None else None) for k, v in row.items()}, flush=True)

    back_to_back: dict[str, float] = {}
    for rname in ("cpython", "worker", "inprocess", "monty", *SESSION_COLUMNS):
        runner = runners[rname]
        if runner is None:
            continue
        samples = [await throughput(runner, 200) for _ in range(5)]
        back_to_back[rname] = statistics.median(samples) * 1000
    print("W1 back-to-back ms/run", back_to_back, flush=True)

    rates: dict[str, dict[int, float]] = {}
    for rname in ("cpython", "worker", "inprocess", "monty"):
        runner = runners[rname]
        if runner is None:
            continue
        rates[rname] = {k: statistics.median([await runs_per_second(runner, 200, k) for _ in range(3)])
                        for k in IN_FLIGHT}
    print("W1 back-to-back fresh runs/s by runs in flight", rates, flush=True)

    per_call: dict[str, float] = {}
    for rname in ("cpython", "worker", "inprocess", "monty", *SESSION_COLUMNS):
        if runners[rname] is None:
            continue
        w4 = table["W4 200 calls (ms)"][rname]
        empty = await median_latency(runners[rname], "acc = 0\nfor i in range(200):\n    acc += i\nreturn acc", repeat)  # type: ignore[arg-type]
        if w4 is not None:
            per_call[rname] = (w4 - empty * 1000) / 200 * 1000
    print("W4 per-call overhead (us)", per_call, flush=True)

    runtime = sandbox.get_runtime("worker")
    await anyio.sleep(0.5)
    pids = runtime.worker_pids()  # type: ignore[attr-defined]
    mems = [m for m in (unique_memory_kib(p) for p in pids) if m is not None]
    idle_mib = statistics.median(mems) / 1024 if mems else None
    print("warm idle worker unique memory (MiB)", idle_mib, flush=True)

    if markdown:
        write_markdown(markdown, table, back_to_back, per_call, idle_mib, repeat, rates)


def _fmt(v: float | None, base: float | None = None) -> str:
    if v is None:
        return "n/a"
    if base:
        return f"{v:.3f} ({v / base:.2f}x)"
    return f"{v:.3f}"


def write_markdown(path: str, table: dict[str, dict[str, float | None]], b2b: dict[str, float],
                   per_call: dict[str, float], idle_mib: float | None, repeat: int,
                   rates: dict[str, dict[int, float]]) -> None:
    names = ["cpython", "worker", "inprocess", "smolagents", "monty", *SESSION_COLUMNS]
    lines = [
        "| workload | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for wname, row in table.items():
        base = row.get("cpython")
        lines.append(f"| {wname} | " + " | ".join(_fmt(row.get(n), base if n != "cpython" else None) for n in names) + " |")
    lines.append("")
    extra = ("cpython", "worker", "inprocess", "monty", *SESSION_COLUMNS)
    lines.append("| extra | " + " | ".join(extra) + " |")
    lines.append("|---|" + "---|" * len(extra))
    lines.append("| W1 back-to-back (ms/run) | " + " | ".join(_fmt(b2b.get(n)) for n in extra) + " |")
    lines.append("| W4 per host call (µs) | " + " | ".join(_fmt(per_call.get(n)) for n in extra) + " |")
    lines.append(f"| warm idle worker unique memory (MiB) | | {_fmt(idle_mib)} |" + " |" * (len(extra) - 2))
    for k in IN_FLIGHT:
        lines.append(f"| W1 fresh runs/s, {k} in flight | "
                     + " | ".join(f"{rates[n][k]:.0f}" if n in rates else "n/a" for n in extra) + " |")
    text = "\n".join(lines) + "\n"
    write_block(path, "bench_sandbox", (
        f"<!-- generated by benchmarks/bench_sandbox.py, medians of {repeat}+ runs, {time.strftime('%Y-%m-%d')}, "
        f"{os.cpu_count()} cores -->\n" + text
    ))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--markdown", default=None,
                        help="write the table into this file's `bench_sandbox` block (the rest is kept)")
    args = parser.parse_args()
    anyio.run(main, args.repeat, args.markdown)
