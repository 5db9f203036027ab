"""Where a fresh worker run's time goes: host, template and worker, phase by phase.

    python benchmarks/profile_fresh_run.py [--runs N] [--pause S] [--checkout DIR]

Runs `return 1+1` (a fresh code string each time) N times on a private `WorkerRuntime` and
prints the median of each phase. Worker-side phases are timestamped inside the worker (the
template is given instrumenting code through the runtime's test seam, `_template_prelude`) on
CLOCK_MONOTONIC, which host and workers share, and come back as one extra output line; the
worker's page faults and CPU time come from `getrusage` at each mark. The figures are for
finding the large parts, not for comparing with peers (`bench_sandbox.py` does that).

Phases, in the order one run meets them:
  host: acquire a warm worker, send the run request; then, while the worker wakes up and builds
  the run, compile the snippet, send the code, read /proc and top up the pool; worker: run,
  encode the result; host: receive the result, check it, kill and close. Off the run's path:
  the template's fork, and the new child's set-up (warm-up, confinement) before it waits.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

# `--checkout DIR` profiles another checkout's sandbox (a "before" worktree), with this script.
_checkout = sys.argv[sys.argv.index("--checkout") + 1] if "--checkout" in sys.argv else None
sys.path.insert(0, str(Path(_checkout or Path(__file__).resolve().parent.parent).resolve()))

from sandbox import Limits  # noqa: E402
from sandbox import workers as host_workers  # noqa: E402
from sandbox.workers import WorkerRuntime  # noqa: E402

MARK = "\x00phase\x00"

#: Runs in the template before `template_main`: wraps worker functions to timestamp each phase.
INSTRUMENT = r'''
import json as _json, resource as _resource, time as _time
import sandbox.worker as _w

_marks = []
def _mark(name):
    u = _resource.getrusage(_resource.RUSAGE_SELF)
    _marks.append((name, _time.monotonic_ns(), u.ru_minflt, round((u.ru_utime + u.ru_stime) * 1e6)))

_spawn = _w._spawn
def _timed_spawn(fd, ctrl_fd, jail):
    t0 = _time.monotonic_ns()
    _spawn(fd, ctrl_fd, jail)
    _w._last_fork_ns = _time.monotonic_ns() - t0
_w._spawn = _timed_spawn
_w._last_fork_ns = 0

_child = _w._child_main
def _timed_child(fd, ctrl_fd, jail):
    _marks.clear()
    _mark("child-start")
    _child(fd, ctrl_fd, jail)
_w._child_main = _timed_child

_warm = getattr(_w, "_warm_child", None) or _w._warm_up  # the child's warm-up
def _timed_warm(*a):
    if _marks:
        _mark("warmed-start")
    return _warm(*a)
setattr(_w, _warm.__name__, _timed_warm)

_confine = _w._confine
def _timed_confine(*a):
    _mark("warmed")
    _confine(*a)
    _mark("confined")
_w._confine = _timed_confine

_run_into = _w._run_into
def _timed_run_into(*a, **k):
    _mark("received")
    return _run_into(*a, **k)
_w._run_into = _timed_run_into

_Execution = _w.Execution
class _TimedExecution(_Execution):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        _mark("compiled")
_w.Execution = _TimedExecution

_report = _w._report
def _timed_report(result, execution):
    _mark("ran")
    out = _report(result, execution)
    _mark("reported")
    out["logs"].append(MARK + _json.dumps({"marks": _marks, "fork_ns": _w._last_fork_ns}))
    return out
_w._report = _timed_report
'''.replace("MARK", repr(MARK))


class HostMarks:
    """Timestamps of the host's phases of the current run (wrapping `WorkerRuntime` methods)."""

    def __init__(self, runtime: WorkerRuntime) -> None:
        self.t: dict[str, int] = {}
        self._wrap(runtime, "_acquire", "acquired")
        self._wrap_async(runtime, "_run", "received")
        original_send = host_workers._HostChannel.send

        async def send(channel: Any, data: bytes) -> None:
            await original_send(channel, data)
            self.t["code-sent" if "sent" in self.t else "sent"] = time.monotonic_ns()

        host_workers._HostChannel.send = send  # type: ignore[method-assign]
        original_checked = host_workers._Session._checked_result

        def checked(session: Any, data: Any) -> Any:
            self.t["done-frame"] = time.monotonic_ns()
            return original_checked(session, data)

        host_workers._Session._checked_result = checked  # type: ignore[method-assign]

    def _wrap(self, obj: Any, name: str, mark: str) -> None:
        original = getattr(obj, name)

        def wrapped(*a: Any, **k: Any) -> Any:
            out = original(*a, **k)
            self.t[mark] = time.monotonic_ns()
            return out

        setattr(obj, name, wrapped)

    def _wrap_async(self, obj: Any, name: str, mark: str) -> None:
        original = getattr(obj, name)

        async def wrapped(*a: Any, **k: Any) -> Any:
            out = await original(*a, **k)
            self.t[mark] = time.monotonic_ns()
            return out

        setattr(obj, name, wrapped)


async def profile(runs: int, pause: float) -> dict[str, list[float]]:
    runtime = WorkerRuntime(pool_size=2, _template_prelude=INSTRUMENT)
    marks = HostMarks(runtime)
    runtime.start()
    await anyio.sleep(1.0)
    limits = Limits(wall_time=60, cpu_time=60)
    phases: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        phases.setdefault(name, []).append(value)

    def template_cpu_us() -> float:
        template = runtime._template
        assert template is not None
        with open(f"/proc/{template.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") * 1e6

    try:
        for n in range(runs + 5):
            if n == 5:
                host_cpu, template_cpu = time.process_time(), template_cpu_us()
            if pause:
                await anyio.sleep(pause)
            marks.t.clear()
            t0 = time.monotonic_ns()
            result = await runtime.run(f"return 1+1  # {n}", bindings={}, limits=limits)
            t_end = time.monotonic_ns()
            if result.error is not None:
                raise RuntimeError(str(result.error))
            line = next(x for x in result.logs if x.startswith(MARK))
            report = json.loads(line[len(MARK):])
            w = {name: (t, faults, cpu) for name, t, faults, cpu in report["marks"]}
            h = marks.t
            if n < 5:
                continue  # the pool's first workers were forked before the instrumenting marks
            us = 1e-3
            add("host: acquire, run request sent", (h["sent"] - t0) * us)
            if "code-sent" in h:  # a checkout whose host compiles (two frames)
                add("host: compile, code sent (beside the worker)", (h["code-sent"] - h["sent"]) * us)
            add("worker: wake up, parse request", (w["received"][0] - h["sent"]) * us)
            add("worker: build the run (and compile, or take the host's code)",
                (w["compiled"][0] - w["received"][0]) * us)
            add("worker: run", (w["ran"][0] - w["compiled"][0]) * us)
            add("worker: encode result", (w["reported"][0] - w["ran"][0]) * us)
            add("host: wake up, read result", (h["done-frame"] - w["reported"][0]) * us)
            add("host: check result, end the serve", (h["received"] - h["done-frame"]) * us)
            add("host: kill, close, return", (t_end - h["received"]) * us)
            add("= run, end to end", (t_end - t0) * us)
            add("template: fork (off path)", report["fork_ns"] * us)
            add("child: warm-up after fork (off path)", (w["warmed"][0] - w["child-start"][0]) * us)
            add("child: confine (off path)", (w["confined"][0] - w["warmed"][0]) * us)
            for label, a, b in (("set-up", "child-start", "warmed"), ("warm-up", "warmed-start", "warmed"),
                                ("confine", "warmed", "confined"), ("run", "received", "reported")):
                if a in w:
                    add(f"child: page faults, {label}", w[b][1] - w[a][1])
                    add(f"child: CPU µs, {label}", w[b][2] - w[a][2])
        # CPU per run of each process (the child's from its own marks, above; its exit is
        # not counted): what back-to-back runs share two cores with.
        phases["host: CPU µs per run (process_time)"] = [(time.process_time() - host_cpu) / runs * 1e6]
        phases["template: CPU µs per run (/proc, 10 ms ticks)"] = [(template_cpu_us() - template_cpu) / runs]
        phases["child: CPU µs per run, set-up + confine + run"] = [
            a + b + c for a, b, c in zip(phases["child: CPU µs, set-up"], phases["child: CPU µs, confine"],
                                         phases["child: CPU µs, run"], strict=True)]
    finally:
        runtime.close()
    return phases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--pause", type=float, default=0.005, help="seconds between runs (0: back to back)")
    parser.add_argument("--checkout", default=None, help="profile this checkout's sandbox instead")
    args = parser.parse_args()
    phases = anyio.run(profile, args.runs, args.pause)
    width = max(map(len, phases))
    print(f"medians of {args.runs} fresh runs, pause {args.pause * 1000:g} ms (times in µs)")
    for name, values in phases.items():
        print(f"{name:<{width}}  {statistics.median(values):10.1f}")


if __name__ == "__main__":
    main()
