"""W1-W6 in instructions per run on the in-process backend (fresh runs and one session), for
two checkouts: a change's cost measured under callgrind, where wall time on a shared machine is
too noisy to show a few per cent.

    python benchmarks/count_instructions.py BEFORE_CHECKOUT AFTER_CHECKOUT   # needs valgrind

Each figure is (instructions with K runs - instructions with none) / K after the same warm-up
runs, in a process of its own with PYTHONHASHSEED=0 and that checkout's `sandbox` first on
`sys.path`; the workloads are `bench_sandbox.py`'s (W4/W5's host functions included; W5's
sleeps cost no instructions). The worker backend's runs happen in other processes, which
callgrind does not follow: count those with `profile_fresh_run.py` instead.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

#: Workload -> runs counted (W1 is cheap: more runs for a stable per-run figure).
RUNS = {"W1": 200, "W2": 2, "W3": 2, "W4": 4, "W5": 4, "W6": 2}

_CHILD = r"""
import sys
root, workload, k, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
sys.path.insert(0, root + "/benchmarks")
sys.path.insert(0, root)
import anyio
import bench_sandbox as b
import sandbox
assert sandbox.__file__.startswith(root), sandbox.__file__
run = b.make_session_runner("inprocess") if mode == "session" else b.make_sandbox_runner("inprocess")
code = getattr(b, workload)
async def main():
    for n in range(3 + k):
        await run(code.format(n=n) if workload == "W1" else code)
anyio.run(main)
"""


def count(root: str, workload: str, k: int, mode: str) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CHILD,
         root, workload, str(k), mode], capture_output=True, text=True, env=env, cwd=root, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))  # type: ignore[union-attr]


def per_run(root: str, workload: str, mode: str) -> float:
    k = RUNS[workload]
    return (count(root, workload, k, mode) - count(root, workload, 0, mode)) / k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--workloads", default=",".join(RUNS))
    args = parser.parse_args()
    before, after = (str(Path(p).resolve()) for p in (args.before, args.after))
    print("| workload | backend | before | after | change |\n|---|---|---|---|---|")
    for workload in args.workloads.split(","):
        for mode in ("fresh", "session"):
            b, a = per_run(before, workload, mode), per_run(after, workload, mode)
            label = "inprocess" if mode == "fresh" else "inprocess session"
            print(f"| {workload} | {label} | {b:,.0f} | {a:,.0f} | {100 * (a - b) / b:+.1f}% |", flush=True)


if __name__ == "__main__":
    main()
