"""Soak `codemode mcp serve` over HTTP: many runs that each read a 200 KB file, and the server's RSS.

    python benchmarks/soak_mcp.py [--runs 1000] [--backend worker|inprocess] [--tolerance-mib 10]
    python benchmarks/soak_mcp.py --library [--runs 10000] [--warmup 1000] [--backend ...]

`--library` soaks the library instead, with default settings: one `Registry()` and one
`CodeMode(registry)` in this process, as a web app serving many conversations builds them, and
`mode.handle(...)` called with a provider-shaped `run_code` call that makes one sub-call. This
process's RSS is read after the warm-up and then every 1,000 runs; it passes when the growth after
the warm-up stays within `--tolerance-mib` (10 MiB by default).

A real server process (`python -m codemode.mcp serve --http 127.0.0.1:0`) and one MCP client
session. After every 100 runs the server's resident set size is read from /proc. The soak passes
when the RSS after the last run is within `--tolerance-mib` of the RSS after the first 100 runs
(the first 100 fill the event ring, the allocator's pools and the SDK cache), and every run
returned the file's length. Prints a Markdown table; exit code 0 on a pass, 1 on a fail.
This is a benchmark, not a test: it takes about a minute and measures the machine too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

REPO = Path(__file__).resolve().parents[1]
FILE_BYTES = 200_000  # 2,000 lines of 100 bytes: read_file returns all of it
CODE = "r = await tools.read_file(path='big.txt', limit=2000)\nreturn len(r['content'])"
MIB = 1024 * 1024


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def start_server(root: Path, backend: str) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "codemode.mcp", "serve", "--root", str(root), "--http", "127.0.0.1:0",
         "--backend", backend],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
    if not found:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc, int(found.group(1))


async def soak(port: int, pid: int, runs: int, expected: int) -> list[tuple[int, float, float]]:
    from mcp import Client

    samples: list[tuple[int, float, float]] = [(0, rss_mib(pid), 0.0)]
    started = time.perf_counter()
    async with Client(f"http://127.0.0.1:{port}/mcp") as client:
        for n in range(1, runs + 1):
            result = await client.call_tool("run_code", {"code": CODE, "description": "Read the large file"})
            text = "\n".join(b.text for b in result.content if b.type == "text")
            if result.is_error or text != str(expected):
                raise SystemExit(f"run {n} failed: {text[:200]}")
            if n % 100 == 0:
                samples.append((n, rss_mib(pid), time.perf_counter() - started))
    return samples


LIBRARY_CODE = "r = await tools.add(a=2, b=3)\nprint('sum', r['total'])\nreturn r"


async def soak_library(runs: int, warmup: int, backend: str, every: int = 1000) -> list[tuple[int, float, float]]:
    """Default settings except the backend: the growth measured is the host's, not a worker's."""
    import gc

    from codemode import CodeMode, Registry, define_tool

    async def add(args: Any, ctx: Any) -> dict[str, int]:
        return {"total": args["a"] + args["b"]}

    registry = Registry(mode="code")  # the mode that offers run_code; every limit and log at its default
    registry.register(define_tool(
        name="add", description="Add two integers.", execute=add,
        parameters={"a": {"type": "integer", "required": True}, "b": {"type": "integer", "required": True}},
        output={"schema": {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}},
    ))
    mode = CodeMode(registry, backend=backend)  # type: ignore[arg-type]

    async def one(n: int) -> None:
        call = {"id": f"call_{n}", "type": "function",
                "function": {"name": "run_code", "arguments": json.dumps({"code": LIBRARY_CODE, "description": "Add"})}}
        outcome = await mode.handle(call)
        if outcome.is_error or not outcome.text.startswith("sum 5"):
            raise SystemExit(f"run {n} failed: {outcome.text[:200]}")

    for n in range(warmup):
        await one(-n)
    gc.collect()
    samples: list[tuple[int, float, float]] = [(0, rss_mib(os.getpid()), 0.0)]
    started = time.perf_counter()
    for n in range(1, runs + 1):
        await one(n)
        if n % every == 0:
            gc.collect()
            samples.append((n, rss_mib(os.getpid()), time.perf_counter() - started))
    mode.close()
    return samples


def main_library(args: argparse.Namespace) -> int:
    samples = anyio.run(soak_library, args.runs, args.warmup, args.backend)
    first, last = samples[0][1], samples[-1][1]
    growth = last - first
    passed = growth <= args.tolerance_mib
    print(f"<!-- benchmarks/soak_mcp.py --library --runs {args.runs} --warmup {args.warmup} --backend {args.backend}, "
          f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores -->")
    print("| runs after warm-up | host RSS (MiB) | elapsed (s) |")
    print("|---|---|---|")
    for n, rss, elapsed in samples:
        print(f"| {n} | {rss:.1f} | {elapsed:.1f} |")
    print()
    print(f"RSS after the {args.warmup}-run warm-up: {first:.1f} MiB, after {samples[-1][0]} more runs: {last:.1f} MiB, "
          f"growth {growth:+.1f} MiB (tolerance {args.tolerance_mib:g} MiB): {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=None, help="runs to measure (1,000; 10,000 with --library)")
    parser.add_argument("--backend", choices=("worker", "inprocess"), default="worker")
    parser.add_argument("--tolerance-mib", type=float, default=10.0)
    parser.add_argument("--library", action="store_true", help="soak Registry + CodeMode in this process")
    parser.add_argument("--warmup", type=int, default=1000, help="with --library: runs before the first sample")
    args = parser.parse_args()
    if args.library:
        args.runs = 10_000 if args.runs is None else args.runs
        return main_library(args)
    args.runs = 1000 if args.runs is None else args.runs
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "big.txt").write_text(("x" * 99 + "\n") * (FILE_BYTES // 100))
        expected = FILE_BYTES - 1  # the content joins the lines without the last newline
        proc, port = start_server(root, args.backend)
        try:
            samples = anyio.run(soak, port, proc.pid, args.runs, expected)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    first = next(rss for n, rss, _ in samples if n == 100)
    last = samples[-1][1]
    growth = last - first
    passed = abs(growth) <= args.tolerance_mib
    print(f"<!-- benchmarks/soak_mcp.py --runs {args.runs} --backend {args.backend}, "
          f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores -->")
    print("| runs | server RSS (MiB) | elapsed (s) |")
    print("|---|---|---|")
    for n, rss, elapsed in samples:
        print(f"| {n} | {rss:.1f} | {elapsed:.1f} |")
    print()
    print(f"RSS after run 100: {first:.1f} MiB, after run {samples[-1][0]}: {last:.1f} MiB, "
          f"growth {growth:+.1f} MiB (tolerance {args.tolerance_mib:g} MiB): {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
