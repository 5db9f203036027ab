"""The in-process backend: same policy, guards and shims, no process boundary.

For trusted code and tests. Limits are cooperative: budget mode compiles a `_tick_()` into every
loop and function, counting operations and checking the wall clock, and the host wait is an
anyio deadline. What it cannot do: stop a single long C call (`re` backtracking, `10**10**8`),
cap memory, or isolate state that lives in C modules (thread-local decimal context and the like).
Use the worker backend for anything a model wrote.
"""

from __future__ import annotations

import math
import sys
import time
import typing
from collections.abc import Mapping

import anyio

from .control import RunController, RunStopped, cancel_on, interruption
from .crossing import SHARED
from .enum_maps import ENUM_VALUE_MAPS
from .execution import Execution, Releasing, syntax_result
from .garbage import WINDOW
from .host import Bindings, CallScope, escaped_inputs, invoke
from .limits import Limits, wall_time_message
from .policy import PolicyError
from .reports import quiet_reports
from .result import RunError, RunResult
from .session import SessionState

#: A run whose objects, finalized at its end, kept making new garbage (`garbage.QUARANTINE`).
QUARANTINED = ("the run's objects kept making new objects as they were cleaned up; "
               "they are kept, never cleaned up, for the life of this process")
#: Runs refused once what the quarantine keeps passes `garbage.QUARANTINE_LIMIT`.
QUARANTINE_FULL = ("this process keeps too many objects of earlier in-process runs that could not "
                   "be cleaned up; run snippets in a new process")


class InProcessRuntime:
    """Runs snippets in the calling process. Stateless: every run builds fresh globals and shims
    (a session's runs share the session's, `sandbox.open_session`)."""

    name = "inprocess"

    async def run(
        self,
        code: str,
        *,
        bindings: Bindings,
        limits: Limits,
        namespace: str = "tools",
        docs: Mapping[str, str] | None = None,
        controller: RunController | None = None,
        state: SessionState | None = None,
    ) -> RunResult:
        """One run; with `state` (a session's, `sandbox.sessions`), in that session's globals."""
        code, bindings, docs = escaped_inputs(code, bindings, docs)
        if WINDOW.quarantine_full():
            return RunResult(value=None, logs=[], error=RunError("crashed", QUARANTINE_FULL))
        quiet_reports()
        # Before the run makes anything: what existed before is frozen, for the window's sake.
        WINDOW.enter()
        try:
            execution = Execution(code, list(bindings), limits, namespace=namespace, docs=docs, budget=True,
                                  state=state)
        except BaseException as exc:
            with Releasing():
                WINDOW.leave(lambda: None)  # no snippet code ran
            if isinstance(exc, PolicyError):
                return syntax_result(exc)
            raise
        try:
            result = await _run(execution, bindings, limits, controller)
        finally:
            # What only the run held, what it left in cycles (`garbage.WINDOW`) and what the
            # clean-up lets go of (the caches' keys, the put-back's values) goes here, not wherever
            # the host happens to let go of it.
            quiet_reports()
            with Releasing():
                groups = execution.shims.shared_groups()
                try:
                    _end_run(execution, state)
                finally:
                    try:
                        execution.release()  # for whoever still holds it (a cancellation's traceback)
                    finally:
                        del execution
                        quarantined = WINDOW.leave(lambda: release_shared(groups))
        if quarantined:
            return RunResult(value=None, logs=result.logs, error=RunError("crashed", QUARANTINED))
        return result


async def _run(execution: Execution, bindings: Bindings, limits: Limits,
               controller: RunController | None) -> RunResult:
    """The run itself, up to its result (`InProcessRuntime.run` lets go of it after)."""
    if controller is not None and controller.on_output is not None:
        execution.output.sink = controller.output
    sched = execution.scheduler
    outcome: RunResult | None = None
    # Fast path: a snippet that never waits finishes here, with no task group to set up.
    try:
        execution.start()
        execution.step()
        if sched.main_done:
            with execution.run_context():  # pending tasks' `finally`, in the run's context
                sched.close()
            return execution.result()
    except RunStopped as stopped:
        return execution.failure(execution.describe_exception(stopped))
    except MemoryError as exc:
        return execution.failure(execution.describe_exception(exc))
    with anyio.move_on_after(limits.wall_time) as deadline:
        async with anyio.create_task_group() as tg:
            cancel_on(controller, tg)
            try:
                outcome = await _drive(execution, bindings, tg, controller)
            finally:
                tg.cancel_scope.cancel()
    if outcome is None:
        outcome = execution.failure(interruption(
            controller, deadline.cancelled_caught, wall_time_message(limits.wall_time),
            "the run ended without a result",
        ))
    return outcome


def _end_run(execution: Execution, state: SessionState | None) -> None:
    """The end of every in-process run, each step whatever the one before did: pending tasks
    closed first, as part of the run (their `finally` blocks run in the run's own context, under
    its budget), then the run sealed and a session left."""
    try:
        if execution.scheduler.tasks:
            with execution.run_context():
                execution.scheduler.close(reraise=False)
        else:
            execution.scheduler.close(reraise=False)  # closed already (the fast path): runs no code
    finally:
        try:
            execution.seal()
        finally:
            if state is not None:
                state.leave()


def release_shared(groups: tuple[str, ...]) -> int:
    """After every in-process run and session, once the collections that finalize its garbage
    found none (`garbage.WINDOW`): the shared state the run could reach (`groups`,
    `ShimSet.shared_groups`) put back and the stdlib caches cleared, whatever that code wrote.
    A put-back that raised would otherwise skip the clears, for the host and every later run.
    How many shared objects it changed back (what they let go of may be garbage)."""
    changed = 0
    try:
        changed = SHARED.restore(groups)
    finally:
        # Last: what the put-back lets go of can run late code, which these caches would keep;
        # they hold plain data only, so clearing them runs none.
        changed += _clear_shared_caches()
    return changed


async def _drive(execution: Execution, bindings: Bindings, tg: anyio.abc.TaskGroup,
                 controller: RunController | None) -> RunResult:
    sched = execution.scheduler
    send, receive = anyio.create_memory_object_stream[tuple[int, tuple[bool, object] | None]](math.inf)
    in_flight = 0
    #: The cancel scope of each call in flight, for the calls the snippet abandons.
    scopes: dict[int, CallScope] = {}

    async def call(call_id: int, name: str, args: list, kwargs: dict, scope: CallScope) -> None:
        try:
            outcome = await invoke(bindings, name, args, kwargs, scope)
        finally:
            scopes.pop(call_id, None)
        send.send_nowait((call_id, outcome))

    def settle(call_id: int, outcome: tuple[bool, object] | None) -> None:
        if outcome is not None:  # None: abandoned, and the task that awaited it knows already
            sched.resolve(call_id, *outcome)

    try:
        while True:
            if controller is not None and controller.cancelled:
                # A binding cancelled the run (say, a replay mismatch): the snippet must not
                # see that as a catchable error and carry on.
                return execution.failure(interruption(controller, False, "", ""))
            execution.step()
            if sched.main_done:
                with execution.run_context():  # pending tasks' `finally`, in the run's context
                    sched.close()
                return execution.result()
            batch = sched.take_outbox()
            abandoned = sched.take_abandoned()
            if (len(batch) == 1 and in_flight == 0 and not sched.ready and not sched.timers
                    and not abandoned):
                # The common sequential case: await the binding inline, no task needed (nothing
                # can run, so nothing can abandon the call, until it answers).
                call_id, req = batch[0]
                outcome = await invoke(bindings, req._name, req._args, req._kwargs)
                settle(call_id, outcome)
                continue
            for call_id, req in batch:
                in_flight += 1
                scope = scopes[call_id] = CallScope()
                tg.start_soon(call, call_id, req._name, req._args, req._kwargs, scope)
            for call_id in abandoned:
                scope = scopes.get(call_id)
                if scope is not None:
                    scope.abandon()
            if sched.ready:
                continue
            deadline = sched.next_deadline()
            if in_flight == 0 and deadline is None:
                raise execution.verdict.stop("exception", "the snippet awaits something that can never finish")
            delay = math.inf if deadline is None else max(0.0, deadline - time.monotonic())
            with anyio.move_on_after(delay):
                call_id, outcome = await receive.receive()
                in_flight -= 1
                settle(call_id, outcome)
                while True:
                    try:
                        call_id, outcome = receive.receive_nowait()
                    except anyio.WouldBlock:
                        break
                    in_flight -= 1
                    settle(call_id, outcome)
            sched.fire_timers()
    except RunStopped as stopped:
        return execution.failure(execution.describe_exception(stopped))
    except MemoryError as exc:
        return execution.failure(execution.describe_exception(exc))
    except RecursionError as exc:
        return execution.failure(execution.describe_exception(exc))


def _clear_shared_caches() -> int:
    """Drop the stdlib's process-wide caches a run may have filled with its own objects; how
    many enum value maps held keys that were not plain (the only entries that can be a run's).

    `typing` caches subscriptions (`List[x]`) and `_strptime` compiled formats, keyed on objects
    the snippet passed; a snippet object with a lying `__eq__`/`__hash__` would otherwise answer
    the host's own later lookups. Clearing after the run bounds that to the run itself (host
    bindings running during the run can still see it: the in-process backend is for trusted
    code). The caches refill on use.
    """
    for clear in list(typing._cleanups):  # type: ignore[attr-defined]
        try:
            clear()
        except Exception:  # pragma: no cover - a cache without a clear() is not ours to fix
            pass
    strptime = sys.modules.get("_strptime")
    if strptime is not None:
        with strptime._cache_lock:  # type: ignore[attr-defined]
            strptime._regex_cache.clear()  # type: ignore[attr-defined]
    _drop_unknown_codecs()
    _clear_text_keyed_caches()
    return ENUM_VALUE_MAPS.drop_foreign()


#: The stdlib's bounded caches keyed on text a run chooses (a pattern, a URL, a format), each
#: entry as large as the run makes it: (module, function whose `cache_clear` empties it).
_TEXT_KEYED_CACHES = (("fnmatch", "_compile_pattern"), ("urllib.parse", "urlsplit"),
                      ("urllib.parse", "_byte_quoter_factory"))


def _clear_text_keyed_caches() -> None:
    """A review's run left a 20 MB URL in `urllib.parse.urlsplit`'s cache after it ended, and a
    later run's same call was a hit (a timing channel between runs); `fnmatch` keeps 32,768
    patterns, `re` 512 and `struct` 100 formats. Every run's clean-up empties them, the host's
    own entries too (its next call compiles again)."""
    modules = sys.modules
    for name, function in _TEXT_KEYED_CACHES:
        module = modules.get(name)
        if module is not None:
            getattr(module, function).cache_clear()
    if "re" in modules:
        modules["re"].purge()
    if "_struct" in modules:
        modules["_struct"]._clearcache()


def _drop_unknown_codecs() -> None:
    """`encodings` keeps every codec name it could not find (`_cache[name] = None`), with no
    bound: a review's runs left 190 MB each there with `b"".decode(name)` over 1 MB names, and
    a later run could read which names an earlier one had asked for. The negative entries go
    after every run (the host's next lookup of such a name looks again); found codecs stay,
    as the host would have them."""
    cache = getattr(sys.modules.get("encodings"), "_cache", None)
    if type(cache) is dict and len(cache) != _CODECS_SEEN[0]:
        for name in [name for name, found in cache.items() if found is None]:
            del cache[name]
        _CODECS_SEEN[0] = len(cache)


#: How many entries `encodings._cache` held after the last run's clean-up.
_CODECS_SEEN = [-1]


