"""Instruction counts of the put-back of shared state (`crossing.SharedState.restore`), and of
whole in-process runs, under callgrind: load-proof where wall time on a shared machine is not.

    python benchmarks/count_put_back.py                  # the table (needs valgrind)
    python benchmarks/count_put_back.py --tree DIR       # the same for another checkout

Each figure is (instructions with K iterations - instructions with none) / K, in a process of
its own with PYTHONHASHSEED=0: "put-back" is `ShimSet.restore_shared()` when nothing changed
(the cheap check's answer), for a run that imported nothing and for one that imported nine
shims; "run" is `sandbox.run` on the in-process backend.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

MODULES = "collections,fractions,typing,decimal,dataclasses,urllib.parse,json,re,textwrap"
IMPORTS = "import json, re, textwrap, collections, fractions\nreturn 1"

_CHILD = """
import sys
import anyio
import sandbox
from sandbox import guards, shims
from sandbox.execution import Execution

mode, k, arg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
Execution("return 1", [], sandbox.Limits())
if mode == "put-back":
    s = shims.ShimSet(guards.RunGuards(), {})
    for name in filter(None, arg.split(",")):
        s.get(name)
    s.restore_shared()
    s.restore_shared()
    for _ in range(k):
        s.restore_shared()
else:
    async def main():
        for _ in range(20 + k):
            await sandbox.run(arg, backend="inprocess")
    anyio.run(main)
"""


def _count(tree: Path, mode: str, k: int, arg: str) -> int:
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(tree)}
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", _CHILD, mode,
         str(k), arg], capture_output=True, text=True, env=env, cwd=tree, check=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))  # type: ignore[union-attr]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args()
    rows = [("put-back, no imports", "put-back", 4000, ""), (f"put-back, {MODULES}", "put-back", 1000, MODULES),
            ("run `return 1`", "run", 200, "return 1"), ("run importing 5 shims", "run", 100, IMPORTS)]
    for label, mode, k, arg in rows:
        per = (_count(args.tree, mode, k, arg) - _count(args.tree, mode, 0, arg)) / k
        print(f"{label}: {per:,.0f} instructions")


if __name__ == "__main__":
    main()
