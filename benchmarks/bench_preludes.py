"""A/B benchmark of the preludes: this checkout against another (a `git archive` of main).

Usage: python benchmarks/bench_preludes.py BASELINE_DIR [--repeat N]

For each tree, in alternating child processes (so load shifts hit both sides alike), it measures
the sandbox workloads W1-W6 of `bench_sandbox.py` on the worker and in-process backends (median
ms per run), and micro-benchmarks of the prelude'd functions timed inside the snippet with
`time.perf_counter` (median µs per call): `dataclasses.replace`/`asdict`/`astuple`/`fields`,
`copy.copy`/`deepcopy` of a dataclass, `operator.attrgetter` as a sort key, `functools.wraps`
and `lru_cache`, `pprint.pformat` of 1,000 dicts and of a dataclass, `string.Template.substitute`,
and the first `import contextlib`. It prints a Markdown table of medians and
ratios (this tree / baseline).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

MICRO_SETUP = """
import time, dataclasses, copy, operator, functools, pprint, string
@dataclasses.dataclass
class Pt:
    x: int
    y: int
    tags: list
@dataclasses.dataclass
class Box:
    a: Pt
    b: Pt
    name: str
p = Pt(1, 2, ["a", "b"])
box = Box(p, Pt(3, 4, []), "box")
rows = [Pt(i % 7, i, []) for i in range(200)]
records = [{'id': i, 'name': 'item%d' % i, 'tags': ['a', 'b', 'c'], 'score': i * 1.5,
            'nested': {'k': i, 'v': [i, i + 1]}} for i in range(1000)]
tmpl = string.Template('$who likes ${what} for $$5')
def f(x):
    return x
def timed(fn, n):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6
"""

#: name -> (expression called per iteration, iterations)
MICRO = {
    "dataclasses.replace": ("lambda: dataclasses.replace(p, y=5)", 2000),
    "dataclasses.asdict": ("lambda: dataclasses.asdict(box)", 1000),
    "dataclasses.astuple": ("lambda: dataclasses.astuple(box)", 1000),
    "dataclasses.fields": ("lambda: dataclasses.fields(p)", 2000),
    "copy.copy": ("lambda: copy.copy(p)", 2000),
    "copy.deepcopy": ("lambda: copy.deepcopy(box)", 500),
    "sorted(200, key=attrgetter)": ("lambda: sorted(rows, key=operator.attrgetter('x'))", 200),
    "methodcaller": ("lambda: operator.methodcaller('upper')('ab')", 2000),
    "functools.wraps": ("lambda: functools.wraps(f)(lambda x: x)", 2000),
    "lru_cache(f)": ("lambda: functools.lru_cache(maxsize=8)(f)", 2000),
    "pprint.pformat(1000 dicts)": ("lambda: pprint.pformat(records)", 3),
    "pprint.pformat(Pt)": ("lambda: pprint.pformat(box, width=20)", 500),
    "Template.substitute": ("lambda: tmpl.substitute(who='tim', what='tea')", 2000),
}

CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/benchmarks")
import anyio, sandbox, bench_sandbox as b
setup, micro, repeat = json.loads(sys.argv[2]), json.loads(sys.argv[3]), int(sys.argv[4])

async def main():
    out = {}
    limits = sandbox.Limits(wall_time=60, cpu_time=60)
    for backend in ("worker", "inprocess"):
        async def go(code):
            r = await sandbox.run(code, bindings=b.BINDINGS, limits=limits, backend=backend)
            if r.error is not None:
                raise RuntimeError(r.error)
            return r.value
        await go("return 1")
        for name, code in (("W1", None), ("W2", b.W2), ("W3", b.W3), ("W4", b.W4), ("W5", b.W5), ("W6", b.W6)):
            times = []
            for n in range(repeat * (3 if code is None else 1)):
                start = time.perf_counter()
                await go(b.W1.format(n=n) if code is None else code)
                times.append((time.perf_counter() - start) * 1e3)
                if code is None:
                    await anyio.sleep(5e-3)
            out[f"{name} {backend} (ms)"] = statistics.median(times)
        for name, (expr, n) in micro.items():
            values = [await go(setup + f"return timed({expr}, {n})") for _ in range(repeat)]
            out[f"{name} {backend} (us/call)"] = statistics.median(values)
        first = []
        for _ in range(repeat):
            try:
                first.append(await go("import time\nt = time.perf_counter()\nimport contextlib\n"
                                      "return (time.perf_counter() - t) * 1e6"))
            except RuntimeError:
                break  # a tree without contextlib
        if first:
            out[f"first import contextlib {backend} (us)"] = statistics.median(first)
    print(json.dumps(out))

anyio.run(main)
"""


def measure(tree: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tree), json.dumps(MICRO_SETUP), json.dumps(MICRO), str(repeat)],
        capture_output=True, text=True, env=env, check=False, cwd=str(tree),
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3, help="alternating A/B child processes per tree")
    args = parser.parse_args()
    samples: dict[str, dict[str, list[float]]] = {"baseline": {}, "this": {}}
    for _ in range(args.rounds):
        for label, tree in (("baseline", args.baseline), ("this", ROOT)):
            for key, value in measure(tree, args.repeat).items():
                samples[label].setdefault(key, []).append(value)
    print(f"load: {os.getloadavg()}")
    print("| measure | baseline | this | ratio |")
    print("|---|---|---|---|")
    for key in samples["this"]:
        base = statistics.median(samples["baseline"].get(key, [float("nan")]))
        this = statistics.median(samples["this"][key])
        print(f"| {key} | {base:.3f} | {this:.3f} | {this / base:.2f}x |")


if __name__ == "__main__":
    main()
