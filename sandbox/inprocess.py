"""The in-process backend: same policy, guards and shims, no process boundary.

For trusted code and tests. Limits are cooperative: budget mode compiles a `_tick_()` into every
loop and function, counting operations and checking the wall clock, and the host wait is an
anyio deadline. What it cannot do: stop a single long C call (`re` backtracking, `10**10**8`),
cap memory, or isolate state that lives in C modules (thread-local decimal context and the like).
Use the worker backend for anything a model wrote.
"""

from __future__ import annotations

import enum
import math
import sys
import time
import typing
from collections.abc import Mapping

import anyio

from .control import RunController, RunStopped, cancel_on, interruption
from .execution import Execution, Releasing, syntax_result
from .host import Bindings, CallScope, escaped_inputs, invoke
from .limits import Limits, wall_time_message
from .policy import PolicyError
from .result import RunResult
from .session import SessionState


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
        try:
            execution = Execution(code, list(bindings), limits, namespace=namespace, docs=docs, budget=True,
                                  state=state)
        except PolicyError as exc:
            return syntax_result(exc)
        if controller is not None and controller.on_output is not None:
            execution.output.sink = controller.output
        sched = execution.scheduler
        outcome: RunResult | None = None
        try:
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
        finally:
            _after_run(execution, state)


def _after_run(execution: Execution, state: SessionState | None) -> None:
    """The clean-up after every in-process run, each step whatever the one before did: pending
    tasks closed first, as part of the run (their `finally` blocks run in the run's own context,
    under its budget), then the run sealed, a session left, the stdlib caches cleared and the
    shared state put back. A step that raised would otherwise skip the put-back, for the host
    and every later run."""
    try:
        with execution.run_context():
            execution.scheduler.close(reraise=False)
    finally:
        try:
            execution.seal()
            if state is not None:
                state.leave()
        finally:
            with Releasing():  # what the caches and the put-back let go of is the run's, late
                try:
                    _clear_shared_caches()
                finally:
                    execution.shims.restore_shared()


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


def _clear_shared_caches() -> None:
    """Drop the stdlib's process-wide caches a run may have filled with its own objects.

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
    _enum_value_maps.drop_foreign()


#: The value types a host enum's value-to-member map is keyed on; anything else in it was put
#: there by a run (a flag class called with a snippet's lying `int` subclass caches a pseudo
#: member under that object, `type(re.I)(x)` for example).
_PLAIN_VALUES = frozenset({int, str, bytes, float, bool, type(None)})


#: Items a key may hold, nested ones included, for `_plain_key` to look at before it calls the
#: key not plain (a host enum's values are a few scalars or short tuples).
_KEY_ITEMS = 256


def _plain_key(key: object) -> bool:
    """A key hashing and comparing runs no snippet code: a plain scalar, or an exact tuple or
    frozenset of plain keys (read through the base types' own iterators), walked with a stack
    and at most `_KEY_ITEMS` items. A tuple holding a snippet object hashes it: the clean-up
    once ran a sealed run's `__hash__` that way, whose stop then escaped into the host on every
    later run; a tuple nested 3,000 deep once overflowed the host's stack there."""
    pending = [key]
    budget = _KEY_ITEMS
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind in _PLAIN_VALUES:
            continue
        if kind is tuple:
            items: typing.Any = tuple.__iter__(item)  # type: ignore[arg-type]
        elif kind is frozenset:
            items = frozenset.__iter__(item)  # type: ignore[arg-type]
        else:
            return False
        for inner in items:
            budget -= 1
            if budget < 0:
                return False
            pending.append(inner)
    return True


#: The enum types a stdlib enum class derives from directly; a new direct subclass of one of
#: them (a module defining enums, or a snippet's own) makes the next check walk every class.
_ENUM_BASES = (enum.Enum, enum.IntEnum, enum.StrEnum, enum.Flag, enum.IntFlag, enum.ReprEnum)


class _EnumValueMaps:
    """Every enum class's value-to-member map, and how many keys each held after the last run.

    Walking all enum classes after every in-process run cost a quarter of a `return 1` run. A
    run can add a key to a map (a flag class called with a snippet's lying `int` subclass caches
    a pseudo member under it) but never remove one, so a map whose length is unchanged gained
    no key. The maps are found again by a walk only when a class may have appeared: a module was
    imported, or an enum base type has another direct subclass.
    """

    def __init__(self) -> None:
        self.signature: tuple[int, ...] = ()
        self.maps: list[dict[object, object]] = []
        self.lengths: list[int] = []

    def _signature(self) -> tuple[int, ...]:
        return (len(sys.modules), *map(len, map(type.__subclasses__, _ENUM_BASES)))

    def drop_foreign(self) -> None:
        """Remove the keys a run added that are not plain values, so a lying object cannot
        answer the host's later `RegexFlag(...)` lookups."""
        signature = self._signature()
        if signature == self.signature and list(map(len, self.maps)) == self.lengths:
            return
        maps = []
        pending = [enum.Enum]
        while pending:
            cls = pending.pop()
            pending.extend(type.__subclasses__(cls))
            members = cls.__dict__.get("_value2member_map_")
            if isinstance(members, dict):
                maps.append(members)
                if not all(map(_plain_key, members)):
                    # Rebuilt, not popped: popping hashes the snippet's key, which runs its code.
                    kept = {k: v for k, v in members.items() if _plain_key(k)}
                    members.clear()
                    members.update(kept)
        self.signature, self.maps, self.lengths = signature, maps, list(map(len, maps))


_enum_value_maps = _EnumValueMaps()
