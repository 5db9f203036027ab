"""What a session keeps between its runs, wherever it runs (a session worker, or in-process).

A session is one program whose globals outlive a run. The snippet's top-level names are compiled
as globals (`compile_snippet(session=True)`) and live in one dict for the session's whole life.
So do one builtins dict, which every run refills (a function defined in an earlier run looks its
builtins up there, so it prints into the current run and calls the current run's tools), one
set of guards (a class the session defined stays the snippet's own) and one set of per-run shims
(a session's `random` is one generator). Everything else a run gets afresh: its output, its
scheduler, its `tools` namespace with this run's bindings, its limits and its decimal context.
A `tools` object kept from an earlier run refuses to call anything.

The limits a session worker sets on itself (`SessionRlimits`) follow from one fact: a process
may lower a hard rlimit, and move a soft one anywhere up to the hard one, but never raise a hard
one without `CAP_SYS_RESOURCE`, which no worker has. So the session's budgets are the hard
limits, set once before its first run, and each run gets soft limits inside them:

- memory: hard `RLIMIT_AS` = warm baseline + `SessionLimits.memory`; each run's soft limit is
  the address space at the run's start (measured by the host from /proc) plus the run's
  `Limits.memory`, never above the hard one.
- CPU: hard `RLIMIT_CPU` = CPU used so far + `SessionLimits.max_lifetime` (a single-threaded
  process cannot use more CPU than wall time); each run's soft limit is the CPU used so far plus
  the run's `cpu_time` (rounded up to a second, as rlimits count), and an `ITIMER_PROF` timer
  measures the run's own CPU time to the hundredth of a second.
"""

from __future__ import annotations

import math
import resource
import signal
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .aio import ASYNCIO_SHIM
from .guards import RunGuards, make_globals
from .limits import Limits
from .shims import ShimSet

if TYPE_CHECKING:
    from .execution import Execution

__all__ = ["SessionRlimits", "SessionState"]


class SessionState:
    """The globals, builtins, guards and shims one session's runs share (see the module docs)."""

    __slots__ = ("guards", "shims", "builtins", "globals", "current", "runs", "hook_names")

    def __init__(self) -> None:
        self.guards = RunGuards()
        self.shims = ShimSet(self.guards, ASYNCIO_SHIM)
        self.builtins: dict[str, Any] = {}
        self.globals = make_globals(self.builtins, self.guards)
        #: The run in progress; a namespace of any other run refuses to issue calls.
        self.current: Execution | None = None
        self.runs = 0
        #: The names of the hooks the current run installed in the globals.
        self.hook_names: tuple[str, ...] = ()

    def enter(self, execution: Execution, builtins: Mapping[str, Any], hooks: Mapping[str, Any]) -> dict[str, Any]:
        """Make `execution` the session's current run: refill the shared builtins in place (the
        same dict object, which functions of earlier runs hold) and install the run's hooks."""
        self.builtins.clear()
        self.builtins.update(builtins)
        self.globals.update(hooks)
        self.hook_names = tuple(hooks)
        self.current = execution
        self.runs += 1
        return self.globals

    def leave(self) -> None:
        """The run is over: nothing can issue a call until the next one enters, and nothing the
        session keeps holds the run any more (its builtins hold its `tools` namespace, which
        holds its `Execution`; its hooks, its budget; the shims, its log and builtins). So what
        only the run held goes at the run's end (in-process, inside `execution.Releasing`), not
        at the next run's start, in host code: a review's decimal context, freed there, ran a
        late generator that flagged the host's context and wrote to its stderr."""
        self.current = None
        self.builtins.clear()
        for name in self.hook_names:
            self.globals.pop(name, None)
        self.hook_names = ()
        self.shims.end_run()

    def release(self) -> None:
        """The session is over (inside `execution.Releasing`): besides what `leave` lets go of,
        its globals and the guards' caches go now, whoever still holds the state (a host's
        cancellation carries the session's frames, with the state in their locals, to wherever
        the host lets go of it)."""
        self.leave()
        self.globals.clear()
        self.guards.release()  # the shims' guards (`ShimSet(self.guards, ...)`)


class SessionRlimits:
    """A session worker's limits on itself: hard limits for the session, soft ones per run.

    Applied in the worker, under the syscall filter (`prlimit` on itself is allowed)."""

    __slots__ = ("baseline", "hard_as", "hard_cpu")

    def __init__(self, baseline: int, memory: int, lifetime: float) -> None:
        self.baseline = baseline
        self.hard_as = baseline + memory
        resource.setrlimit(resource.RLIMIT_AS, (self.hard_as, self.hard_as))
        self.hard_cpu = math.ceil(_cpu_used() + lifetime) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (self.hard_cpu, self.hard_cpu))

    def apply(self, limits: Limits, start_size: Any) -> None:
        """Soft limits for one run, and its CPU timer. `start_size` is the address space the host
        saw when the run started (the baseline when it sent none)."""
        size = start_size if type(start_size) is int and start_size > 0 else self.baseline
        soft_as = min(self.hard_as, max(size, self.baseline) + limits.memory)
        resource.setrlimit(resource.RLIMIT_AS, (soft_as, self.hard_as))
        soft_cpu = min(self.hard_cpu, math.ceil(_cpu_used() + limits.cpu_time))
        resource.setrlimit(resource.RLIMIT_CPU, (soft_cpu, self.hard_cpu))
        signal.setitimer(signal.ITIMER_PROF, limits.cpu_time)


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
