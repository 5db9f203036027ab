"""W1-W6 of two checkouts, interleaved round by round: a change's cost measured in one run.

    python benchmarks/bench_ab.py BEFORE_CHECKOUT AFTER_CHECKOUT [--rounds N] [--repeat N]

Each round runs one fresh interpreter per checkout, alternating which goes first, with that
checkout's `sandbox` first on `sys.path`; every figure is the median over rounds of each
round's median. The machine is shared and noisy: read the change column against the spread
between rounds, which is printed too. (`git worktree add --detach /tmp/before main` makes a
"before" checkout.)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

RUNNERS = ("worker", "inprocess", "worker session", "inprocess session")

_ONE = r"""
import sys, json, asyncio, statistics
root = sys.argv[1]
sys.path.insert(0, root + "/benchmarks")
sys.path.insert(0, root)
import anyio
import bench_sandbox as b
import sandbox
async def main():
    reps = int(sys.argv[2])
    runners = {"worker": b.make_sandbox_runner("worker"), "inprocess": b.make_sandbox_runner("inprocess"),
               "worker session": b.make_session_runner("worker"),
               "inprocess session": b.make_session_runner("inprocess")}
    sandbox.get_runtime("worker").start()
    await anyio.sleep(0.5)
    workloads = {"W1 spaced (ms/run)": (lambda n: b.W1.format(n=n), 5e-3), "W2 loop (ms)": (b.W2, 0.0),
                 "W3 group-by (ms)": (b.W3, 0.0), "W4 200 calls (ms)": (b.W4, 0.0),
                 "W5 50x20ms gather (ms)": (b.W5, 0.0), "W6 1MB regex+json (ms)": (b.W6, 0.0)}
    out = {}
    for w, (code, pause) in workloads.items():
        for r, run in runners.items():
            await run(code(0) if callable(code) else code)
            reps_w = reps * 3 if w.startswith("W1") else reps
            out[f"{w} | {r}"] = await b.median_latency(run, code, reps_w, pause) * 1000
    for r in ("worker", "inprocess", "worker session"):
        out[f"W1 back-to-back (ms/run) | {r}"] = statistics.median(
            [await b.throughput(runners[r], 100) for _ in range(3)]) * 1000
    assert sandbox.__file__.startswith(root), sandbox.__file__
    print(json.dumps(out))
asyncio.run(main())
"""


def measure(checkout: str, repeat: int) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _ONE, checkout, str(repeat)], capture_output=True,
                          text=True, check=True, cwd=checkout)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    before = str(Path(args.before).resolve())
    after = str(Path(args.after).resolve())
    samples: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    for n in range(args.rounds):
        order = [("before", before), ("after", after)]
        for label, root in order if n % 2 == 0 else order[::-1]:
            for key, value in measure(root, args.repeat).items():
                samples[label].setdefault(key, []).append(value)
        print(f"round {n + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    print("| figure | before | after | change | spread (after, min-max) |\n|---|---|---|---|---|")
    for key in samples["before"]:
        b, a = statistics.median(samples["before"][key]), statistics.median(samples["after"][key])
        lo, hi = min(samples["after"][key]), max(samples["after"][key])
        print(f"| {key} | {b:.3f} | {a:.3f} | {100 * (a - b) / b:+.1f}% | {lo:.3f}-{hi:.3f} |")


if __name__ == "__main__":
    main()
