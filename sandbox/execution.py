"""One run's interpreter state: compiled code, fresh globals, guards, shims, output, scheduler.

Both backends build an `Execution` and drive its scheduler; only the waiting differs. This module
also turns whatever ended the run into a `RunResult`: a returned value is checked for lossless
JSON and size, and an exception becomes a message with the snippet's own line numbers and
source lines and no host frame.
"""

from __future__ import annotations

import contextvars
import decimal
import gc
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import CodeType
from typing import TYPE_CHECKING, Any

from .aio import ASYNCIO_SHIM
from .control import COLLECTING, RELEASING, RunOverError, RunStopped, Verdict
from .crossing import STEPPING
from .garbage import WINDOW
from .guards import RunGuards, build_builtins, make_globals
from .jsonvalue import SIZE_SPAN, NotJSONError, TooLargeError, dumps, to_json_value, type_name
from .limits import Limits, memory_message, wall_time_message
from .namespace import check_call_size, make_namespace
from .output import MAX_AWAIT_WARNINGS, LogStream, Output, render_logs
from .policy import (
    ENTRY_POINT,
    FILENAME,
    LAST_VALUE_HOOK,
    MAX_QUOTED_LINE,
    PolicyError,
    compile_snippet,
)
from .raised import mark_raised, out_of_memory
from .result import MAX_ERROR_MESSAGE, RunError, RunResult, cut_text
from .scheduler import (
    CallRequest,
    PendingCall,
    Scheduler,
    ToolCallError,
    make_pending,
)
from .shims import ShimSet, make_import

if TYPE_CHECKING:
    from .session import SessionState

#: A session keeps objects between runs; a tools namespace kept from an earlier run is dead.
STALE_NAMESPACE = (
    "this `{label}` object belongs to an earlier run of the session; call tools through "
    "`{label}` itself in each run"
)
AWAIT_HINT = "hint: a tool call must be awaited: write `await {label}.name(...)`"
TICK_CHECK_EVERY = 4096
#: Exception text beyond this many characters is cut (it is read by a model).
MAX_EXCEPTION_TEXT = 2000
#: Consecutive identical traceback frames shown before they are summarised.
MAX_REPEATED_FRAMES = 3


#: Logged when a program's final bare expression has a value that is not JSON.
LAST_VALUE_NOTE = (
    "[note] the program's last expression is a '{type}', not JSON, so the run returns nothing; "
    "return a JSON value to see it"
)


def result_too_large_message(size: int | None, limit: int) -> str:
    """`size`: the value's JSON size in bytes, or None when it was refused before its text was
    made (it holds more items than `limit`)."""
    amount = f"{size} bytes" if size is not None else f"more than {limit} bytes"
    return f"the return value is {amount} of JSON; the limit is {limit} bytes. Return a summary or a slice"


class LastValue:
    """The value of a program's final bare expression, on its way to the result (the snippet
    never holds one): unlike an explicit `return`, a value that is not JSON is dropped with a
    note rather than failing the run, as a script that ends in `obj.method()` succeeds."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Budget:
    """The in-process backend's cooperative limits: operations and wall time, checked by the
    `_tick_()` calls that budget mode compiles into every loop and function, for the run of
    `verdict`."""

    __slots__ = ("remaining", "deadline", "countdown", "limit", "wall", "expired", "verdict", "sealed", "outside",
                 "held")

    def __init__(self, limits: Limits, verdict: Verdict) -> None:
        self.verdict = verdict
        self.limit = limits.max_operations
        self.remaining = limits.max_operations
        self.wall = limits.wall_time
        self.deadline = time.monotonic() + limits.wall_time
        self.expired: RunStopped | None = None
        self.sealed = False
        #: Not inside one of the run's steps (before the first, between two, after the last):
        #: snippet code the garbage collector runs now (a freed generator's `finally`, while a
        #: binding runs, or a session's earlier run's before this run's first step) would run
        #: in the host's context. A tick passes only between `enter` and `leave`.
        self.outside = True
        self.held = TICK_CHECK_EVERY
        self.countdown = 1

    def tick(self) -> None:
        self.countdown -= 1
        if self.countdown > 0:
            return
        self.check(TICK_CHECK_EVERY)

    def check(self, used: int) -> None:
        if self.sealed or self.outside:
            self.countdown = 1
            raise RunOverError() from None
        if self.expired is None:
            self.remaining -= used
            if self.remaining <= 0:
                self.expired = self.verdict.stop(
                    "timeout",
                    f"the snippet used more than {self.limit} operations (loop iterations and calls); "
                    "do less work per run",
                )
            elif time.monotonic() > self.deadline:
                self.expired = self.verdict.stop("timeout", wall_time_message(self.wall))
            else:
                self.countdown = TICK_CHECK_EVERY
                WINDOW.collect_due()
                return
        # Once expired, every tick raises again, so a snippet that swallows the stop with a bare
        # `except:` cannot keep running (nothing else can stop it in-process).
        self.countdown = 1
        raise self.expired

    def seal(self) -> None:
        """The run is over: any snippet code that still runs (a generator's `finally` when it is
        freed, a function host code calls later) stops at its first tick with a `RunOverError`.
        In-process that code would otherwise run in the host's own context, after the run's
        state was cleaned up."""
        self.sealed = True
        self.countdown = 1

    def leave(self) -> None:
        """A step ends: until the next, the first tick raises (`check`)."""
        self.outside = True
        self.held, self.countdown = self.countdown, 1

    def enter(self) -> None:
        """A step starts: ticks count on from where the last step left them."""
        self.outside = False
        self.countdown = self.held

    def expire_wall(self) -> BaseException:
        """The run is past its deadline (`time.sleep` found out): every later tick raises too."""
        if self.sealed:
            return RunOverError()
        if self.expired is None:
            self.expired = self.verdict.stop("timeout", wall_time_message(self.wall))
        self.countdown = 1
        return self.expired

    def iterate(self, iterable: Iterable[Any]) -> Iterator[Any]:
        tick = self.tick
        for item in iterable:
            tick()
            yield item


class Releasing:
    """`with Releasing():` where the host lets go of a run's objects outside its steps: the end
    of an in-process run (the clean-up drops what the stdlib caches and the shared state kept of
    it, then the run's own records go) and of an in-process session. What that frees (a
    generator whose delegate's `close` is a `functools.partial` over `Decimal.sqrt`, kept by
    `typing`'s cache or only by the run's globals) runs with a decimal context of its own,
    never the host thread's, which it flagged. The host holds a run's objects nowhere else;
    what is left in cycles is finalized here too, by the window's close (`garbage.WINDOW`)."""

    __slots__ = ("saved", "was")

    def __enter__(self) -> None:
        self.saved = decimal.getcontext()
        decimal.setcontext(decimal.Context())
        self.was, RELEASING.active = RELEASING.active, True

    def __exit__(self, *exc: object) -> bool:
        RELEASING.active = self.was
        decimal.setcontext(self.saved)
        return False


def _decimal_variable() -> contextvars.ContextVar[Any] | None:
    """The context variable the C `decimal` module keeps the thread's context in (private to
    it; found once by its name), to read the context without making one."""
    decimal.getcontext()
    return next((var for var in contextvars.copy_context() if var.name == "decimal_context"), None)


class _Collection:
    """What the garbage collection running now put aside (`_collector_context`); collections
    never overlap (CPython skips one that would start while another runs, callbacks and all)."""

    __slots__ = ("context", "flags")

    def __init__(self) -> None:
        self.context: decimal.Context | None = None
        self.flags: dict[Any, bool] | None = None


_COLLECTION = _Collection()
_DECIMAL = _decimal_variable()


def _collector_context(phase: str, info: Mapping[str, Any]) -> None:
    """A `gc.callbacks` hook, added by the first in-process run. What a run leaves to the
    collector (a `functools.partial` where a freed generator calls `close`) is C code no tick
    sees, and runs in the host or inside another run's step (a full collection a later run's
    allocations start frees what an earlier run left in cycles). While a collection runs on
    this thread (`control.COLLECTING`), a run's log and `_strptime`'s callers refuse (a review's
    wrote an earlier run's calendars into a later run's log until that run hit its output
    limit), and the flags of the thread's decimal context, the host's or a run's, are put back
    when it stops (`Decimal.sqrt` there flagged both); a context that C decimal made during the
    collection, in a thread that had none, is left with no flag set. Nothing here sets a
    context variable: a collection can start inside one being set, and setting another then
    frees what the first is still reading (CPython crashed so). Nor does it change anything of
    the host's, such as `warnings.filters`: C code may be reading it around the allocation that
    started the collection (a version that put the report gates back here cut the host's
    filters short inside `catch_warnings`, and crashed CPython when it removed duplicates)."""
    collection = _COLLECTION
    if phase == "start":
        COLLECTING.running = True
        # At the end of a run the thread's context is `Releasing`'s own, dropped after it.
        context = None if _DECIMAL is None or RELEASING.active else _DECIMAL.get(None)
        if context is not None:
            collection.context, collection.flags = context, context.flags.copy()
        return
    COLLECTING.running = False
    if RELEASING.active:
        return
    context, flags = collection.context, collection.flags
    collection.context = collection.flags = None
    now = None if _DECIMAL is None else _DECIMAL.get(None)
    if now is not None and now is not context:
        now.clear_flags()  # made by what the collection ran (C decimal makes one where none is)
    if context is not None and flags is not None and context.flags.copy() != flags:
        for signal, on in flags.items():
            context.flags[signal] = on


class _RunContext:
    """`Execution.run_context()`: a plain context manager (a generator-based one would set
    attributes on the `RunStopped` passing through, which refuses them).

    It also takes the thread's async-generator hooks away while snippet code runs: in-process,
    they are the host's event loop's, which would keep a snippet's async generator and, once it
    is freed, close it in a task of the host's own, outside the run (a review had one print
    forever to the host's stdout). Without hooks an async generator is closed where it is
    freed, as in a worker."""

    __slots__ = ("execution", "saved", "was", "stdout", "hooks", "stepping")

    def __init__(self, execution: Execution) -> None:
        self.execution = execution

    def __enter__(self) -> None:
        # The run's state first, then the step: "in a step" is never true while any of the host's
        # state is installed. `decimal.setcontext` allocates, and a collection that started there
        # ran a run's late generator as in its step, with the host's decimal context and its
        # loop's async-generator hooks (a review set the host's precision and traps so).
        execution = self.execution
        self.saved = decimal.getcontext()
        decimal.setcontext(execution.decimal_context)
        self.stdout = sys.stdout
        sys.stdout = execution.log_stream  # type: ignore[assignment]
        self.hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(firstiter=None, finalizer=None)
        self.stepping = STEPPING.run
        STEPPING.run = execution.run_token
        flags = execution.shim_state
        self.was = flags.get("in_run", False)  # a step already running: this one is nested
        if execution.budget is not None and not self.was:
            execution.budget.enter()
        flags["in_run"] = threading.get_ident()  # the stepping thread (`ShimContext.stepping`)

    def __exit__(self, *exc: object) -> bool:
        # What the step left for the collector goes while it is still the step (the window
        # paused the automatic collections, which would have started anywhere); then the step
        # ends, then the host's state comes back (the mirror of `__enter__`).
        WINDOW.collect_due()
        execution = self.execution
        # `decimal.setcontext` in the snippet replaces the run's context, for the rest of it. The
        # one it replaced may have had this attribute as its last holder, and may hold anything
        # (a `Context` subclass's instance): it goes here, in the step. A review's went after
        # the step had ended, and its late generator wrote to the host's stderr.
        execution.decimal_context = decimal.getcontext()
        execution.shim_state["in_run"] = self.was
        STEPPING.run = self.stepping
        if execution.budget is not None and not self.was:
            execution.budget.leave()
        sys.set_asyncgen_hooks(*self.hooks)
        sys.stdout = self.stdout
        decimal.setcontext(self.saved)
        return False


def run_kit() -> tuple[RunGuards, ShimSet]:
    """A run's own guards and shim set: nothing in them depends on the run's request."""
    guards = RunGuards()
    return guards, ShimSet(guards, ASYNCIO_SHIM)


class Execution:
    """Everything one run needs inside the interpreter that runs the snippet."""

    def __init__(
        self,
        code: str,
        binding_names: list[str],
        limits: Limits,
        *,
        namespace: str = "tools",
        docs: Mapping[str, str] | None = None,
        budget: bool = False,
        state: SessionState | None = None,
        verdict: Verdict | None = None,
        compiled: CodeType | Callable[[], CodeType] | None = None,
        kit: tuple[RunGuards, ShimSet] | None = None,
    ) -> None:
        """`compiled`: the snippet as `compile_snippet` made it, when the caller compiled it (a
        worker runs the host's compile), or a function that returns it, called once the run's
        scaffolding is built (a fresh worker builds it while the host compiles); None: compiled
        here, first. `kit`: this run's own guards and shims made ahead (`run_kit`, by an idle
        worker before its run arrives); never a session's, never shared."""
        self.source = code
        #: Why the host stopped this run, if it did: the only account of a stop it believes.
        self.verdict = verdict if verdict is not None else Verdict()
        self.state = state
        self.limits = limits
        self.label = namespace
        self.output = Output(limits.max_output, self.verdict)
        self.log_stream = LogStream(self.output)
        self.scheduler = Scheduler(limits.max_calls, self.verdict, report=self.output.print,
                                   memory=memory_message(limits.memory))
        self.budget = Budget(limits, self.verdict) if budget else None
        if self.budget is not None:
            self.scheduler.tick = self.budget.tick
        self.pending_calls: list[PendingCall] = []
        self.decimal_context: decimal.Context | None = decimal.Context()
        #: What ended the run (`describe_exception`), kept so that its traceback, and the
        #: snippet frames it holds, go with the run, not where a host `except` clause ends.
        self.ended: BaseException | None = None
        if compiled is None:
            compiled = compile_snippet(code, limits, budget=budget, session=state is not None)

        if state is not None:
            guards, shims = state.guards, state.shims
        else:
            guards, shims = kit if kit is not None else run_kit()
        self.shims = shims
        #: Whose code runs in this run's steps (`crossing.STEPPING`): a session's runs share it.
        #: In-process only: in a worker, code the collector reaches between steps runs there,
        #: in the jail, as in CPython.
        self.run_token: object | None = guards.owner_token if budget else None
        if self.run_token is not None and _collector_context not in gc.callbacks:
            gc.callbacks.append(_collector_context)
        budget_ = self.budget
        # Per-run shims (time.sleep's deadline, pprint's log) follow this run, also in a session.
        self.shim_state = shims.context.state
        shims.begin_run(limits.wall_time, self.output.print,
                        deadline=budget_.deadline if budget_ is not None else None,
                        expire=budget_.expire_wall if budget_ is not None else self._expire_wall)
        ns = make_namespace(namespace, list(binding_names), self._issue, docs, limits.max_call_bytes)
        builtins = build_builtins(
            guards,
            print_fn=self.output.print,
            import_fn=make_import(shims),
            extra={namespace: ns, "ToolCallError": ToolCallError},
            budget_iter=self.budget.iterate if self.budget else None,
        )
        hooks: dict[str, Any] = {LAST_VALUE_HOOK: LastValue, "_raise_": mark_raised}
        if self.budget is not None:
            hooks["_tick_"] = self.budget.tick
            hooks["_budget_iter_"] = self.budget.iterate
        shims.bind_run(builtins, hooks)
        self.compiled = compiled if isinstance(compiled, CodeType) else compiled()
        if state is None:
            self.globals = make_globals(builtins, guards, **hooks)
        else:
            self.globals = state.enter(self, builtins, hooks)

    def _expire_wall(self) -> RunStopped:
        """`time.sleep` found the run past its deadline (a worker's own timer usually ends it
        first)."""
        return self.verdict.stop("timeout", wall_time_message(self.limits.wall_time))

    def _issue(self, request: CallRequest) -> PendingCall:
        if self.state is not None and self.state.current is not self:
            raise RuntimeError(STALE_NAMESPACE.format(label=self.label))
        check_call_size(request, self.limits.max_call_bytes, self.label)
        self.scheduler.issued.add(request)
        call = make_pending(request)
        self.pending_calls.append(call)
        return call

    def step(self) -> None:
        """Run every runnable snippet task until each waits. Decimal arithmetic uses the run's
        own context, so flags and precision never leak into the host thread's context."""
        with self.run_context():
            self.scheduler.run_ready()
        budget = self.budget
        if budget is not None and budget.expired is None and time.monotonic() > budget.deadline:
            # Ticks read the clock only every TICK_CHECK_EVERY ticks, and one tick's C or host
            # work (`sum(range(10**9))`) can run long: a step that ends late ends the run.
            raise budget.expire_wall()

    def run_context(self) -> _RunContext:
        """Install the run's own decimal context around snippet code: every step, and the
        snippet methods (`__str__` of an exception) that describing its result runs."""
        return _RunContext(self)

    def release(self) -> None:
        """The end of an in-process run, inside `Releasing`, once sealed: everything of the
        snippet's this holds goes now, whoever still holds the execution. A host's cancellation
        carries `_run`'s and `_drive`'s frames in its traceback, with this and its scheduler in
        their locals, out of `run` to wherever the host lets go of it: a review's decimal
        context, only this held, was freed there, in host code. A session's globals stay with
        the session."""
        self.scheduler.release()
        if self.state is None:  # a session's shims and guards go with the session
            self.shims.release()
        self.globals = {}
        self.ended = None
        self.decimal_context = None
        self.pending_calls = []
        if self.budget is not None:
            self.budget.expired = None

    def seal(self) -> None:
        """End the run for good (in-process): later snippet code stops at its first tick, and
        its `print` writes nothing."""
        self.output.open = False
        if self.budget is not None:
            self.budget.seal()

    def start(self) -> None:
        """Define the snippet function and start its coroutine (nothing of the body runs yet)."""
        exec(self.compiled, self.globals)
        self.scheduler.start(self.globals.pop(ENTRY_POINT)())

    # -- results -----------------------------------------------------------------------------
    def unawaited(self) -> tuple[list[tuple[int | None, str]], int]:
        """The first calls never awaited (line, name), and how many more there were."""
        forgotten = [call._request for call in self.pending_calls if not call._awaited]
        first = [(request._line, request._name) for request in forgotten[:MAX_AWAIT_WARNINGS]]
        return first, len(forgotten) - len(first)

    def logs(self) -> list[str]:
        first, more = self.unawaited()
        return render_logs(self.output.printed_lines(), self.output.dropped, first, more, self.label,
                           self.scheduler.pending_note)

    def result(self) -> RunResult:
        """The outcome once the main task is done (snippet methods it calls, such as an
        exception's `__str__`, run in the run's own decimal context)."""
        with self.run_context():
            return self._result()

    def failure(self, error: RunError) -> RunResult:
        return RunResult(value=None, logs=self.logs(), error=error)

    def _result(self) -> RunResult:
        main = self.scheduler.main
        assert main is not None and main.done
        if self.verdict.error is not None:
            # Stopped by the host: that is the outcome, whatever the snippet did after the stop.
            return self.failure(self.verdict.error)
        if main.error is not None:
            return self.failure(self.describe_exception(main.error))
        value = main.value
        implicit = type(value) is LastValue
        if implicit:
            value = value.value
        try:
            plain = to_json_value(value, "$", max_bytes=SIZE_SPAN * self.limits.max_result)
        except TooLargeError:
            return self.failure(RunError("invalid-result", result_too_large_message(None, self.limits.max_result)))
        except NotJSONError as exc:
            if implicit:
                # Printed, so the worker reports it too (it sends what was printed, not logs).
                self.output.print(LAST_VALUE_NOTE.format(type=type_name(type(value))))
                return RunResult(value=None, logs=self.logs())
            return self.failure(RunError("invalid-result", f"the return value is not JSON: {exc}"))
        except RecursionError:
            return self.failure(RunError("invalid-result", "the return value is nested too deeply"))
        except RuntimeError:
            # Snippet code changed the value while it was read: the garbage collector runs a
            # freed generator's `finally` whenever the walk allocates (a review's grew a dict).
            return self.failure(RunError("invalid-result", "the return value changed while it was read"))
        if plain is not None:
            size = len(dumps(plain).encode("utf-8"))
            if size > self.limits.max_result:
                return self.failure(
                    RunError("invalid-result", result_too_large_message(size, self.limits.max_result))
                )
        return RunResult(value=plain, logs=self.logs())

    def describe_exception(self, exc: BaseException) -> RunError:
        """What ended the run: the host's own verdict if it stopped the run (never what the
        exception says), a real allocation failure as `memory`, else the snippet's exception.
        A `RunStopped` the host did not raise for this run (a subclass, one kept from an earlier
        run of a session) is the snippet's own `exception`.

        The exception stays with the run (`ended`): the host's `except ... as` clause that
        caught it would otherwise free it, and the frames its traceback holds, in host code
        outside every gate (a review's generator, held only by a frame of the snippet's that
        an output-limit stop unwound, ran its delegate's late `close` there)."""
        self.ended = exc
        if self.verdict.error is not None:
            return self.verdict.error
        if out_of_memory(exc):
            return RunError("memory", memory_message(self.limits.memory))
        with self.run_context():  # the snippet's own `__str__` runs here
            error = RunError("exception", format_exception(exc, self.source, self.label))
        return self.verdict.error or error  # a limit its `__str__` ran into


#: Shown when an exception's `__str__` fails or returns something that is not text.
UNSHOWABLE = "<exception message could not be shown>"
_TRACEBACK = BaseException.__dict__["__traceback__"]


def _safe_str(exc: BaseException) -> str:
    """The exception's text as an exact `str`: its `__str__` runs (as `str()` would run it), and
    nothing of the snippet's runs after that. A `str` subclass is copied to a plain `str` without
    its methods; anything else is not shown."""
    try:
        text = str(exc)
    except BaseException:
        return UNSHOWABLE
    if type(text) is str:
        return text
    return str.__str__(text) if isinstance(text, str) else UNSHOWABLE


def format_exception(exc: BaseException, source: str, label: str = "tools") -> str:
    """`Type: message`, then the snippet frames only, each with its line and source text. The
    type's name and the traceback are read from their slots, so a snippet class cannot answer
    them with properties."""
    lines = source.splitlines()
    frames: list[tuple[int, str]] = []
    tb = _TRACEBACK.__get__(exc)
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == FILENAME:
            name = "<snippet>" if code.co_name == ENTRY_POINT else code.co_name
            frames.append((tb.tb_lineno, name))
        tb = tb.tb_next
    name = type_name(type(exc))
    text = cut_text(_safe_str(exc), MAX_EXCEPTION_TEXT)
    out = [f"{name}: {text}" if text else name]
    if isinstance(exc, BaseExceptionGroup):
        out.extend(_group_lines(exc))
    if frames:
        out.append("Traceback (most recent call last):")
        # Frames and repeat notes first, the text of only as many as the message keeps: a
        # snippet that re-raises one exception in a loop grows its traceback by an entry each
        # time, and the text of every entry (a long source line each) took gigabytes.
        entries: list[tuple[int, str] | str] = []
        previous, repeats = None, 0
        for frame in frames + [None]:  # the sentinel flushes the last run of repeats
            if frame == previous:
                repeats += 1
                if repeats < MAX_REPEATED_FRAMES:
                    entries.append(frame)  # type: ignore[arg-type]
                continue
            if repeats >= MAX_REPEATED_FRAMES:
                entries.append(f"  [previous frame repeated {repeats - MAX_REPEATED_FRAMES + 1} more times]")
            previous, repeats = frame, 0
            if frame is not None:
                entries.append(frame)
        out.extend(_entry_lines(entries, lines))
    if "PendingCall" in text or "coroutine" in text:
        out.append(AWAIT_HINT.format(label=label))
    return "\n".join(out)


_GROUP_MEMBERS = BaseExceptionGroup.__dict__["exceptions"]
#: Sub-exceptions of a group listed in an error (the rest are counted).
MAX_GROUP_LINES = 5


def _group_lines(group: BaseExceptionGroup) -> list[str]:
    """One line per sub-exception of an exception group that ended the run (`except*` that
    matched nothing, a `TaskGroup`'s failures), read from the slot, as CPython's traceback
    lists them; nested groups are shown by their own first line."""
    members = _GROUP_MEMBERS.__get__(group)
    out = []
    for i, member in enumerate(members[:MAX_GROUP_LINES], 1):
        name = type_name(type(member))
        text = cut_text(_safe_str(member), MAX_EXCEPTION_TEXT // MAX_GROUP_LINES)
        out.append(f"  [{i}] {name}: {text}" if text else f"  [{i}] {name}")
    if len(members) > MAX_GROUP_LINES:
        out.append(f"  [and {len(members) - MAX_GROUP_LINES} more]")
    return out


#: Characters of traceback text from each end: what `MAX_ERROR_MESSAGE` keeps after the
#: exception's text and a group's lines (each at most `MAX_EXCEPTION_TEXT`), less the one entry
#: (two lines) an end may run over by.
_TRACEBACK_SHARE = (MAX_ERROR_MESSAGE - 2 * MAX_EXCEPTION_TEXT) // 2 - 2 * (MAX_QUOTED_LINE + 80)


def _entry_lines(entries: list[tuple[int, str] | str], lines: list[str]) -> list[str]:
    """The text of a traceback's entries (frames, repeat notes): the oldest and the newest, each
    end while it has `_TRACEBACK_SHARE` characters left, and a count of the rest."""
    half = _TRACEBACK_SHARE
    head: list[str] = []
    tail: list[list[str]] = []
    first, last = 0, len(entries) - 1
    used = 0
    while first <= last and used < half:
        shown = _frame_lines(entries[first], lines)
        used += sum(len(line) + 1 for line in shown)
        head.extend(shown)
        first += 1
    used = 0
    while first <= last and used < half:
        shown = _frame_lines(entries[last], lines)
        used += sum(len(line) + 1 for line in shown)
        tail.append(shown)
        last -= 1
    if first <= last:
        head.append(f"  [{last - first + 1} more traceback entries not shown]")
    for shown in reversed(tail):
        head.extend(shown)
    return head


def _frame_lines(frame: tuple[int, str] | str, lines: list[str]) -> list[str]:
    """A frame's location and source line (its first `MAX_QUOTED_LINE` characters), or a note."""
    if isinstance(frame, str):
        return [frame]
    lineno, fn = frame
    out = [f"  line {lineno}, in {fn}"]
    if 0 < lineno <= len(lines):
        quoted = lines[lineno - 1].strip()
        if len(quoted) > MAX_QUOTED_LINE:
            quoted = quoted[:MAX_QUOTED_LINE] + "..."
        out.append(f"    {quoted}")
    return out


def syntax_result(error: PolicyError) -> RunResult:
    return RunResult(error=RunError("syntax", str(error)))
