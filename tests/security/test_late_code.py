"""Snippet code that runs after its run is over, or outside the run's own context: an exception's
`__str__` while the host describes the result, a suspended generator's `finally` (or a `with`
block unwinding) when the host frees it, in-process. None of it may change the host's decimal
context or re-poison `typing`'s cache; code reached after the run stops at its first statement.
Also: private names the stdlib's class machinery keeps on the snippet's own classes."""

from __future__ import annotations

import collections.abc
import contextlib
import decimal
import gc
import io
import textwrap
import types

import pytest

import sandbox

pytestmark = pytest.mark.anyio

POISON = """
        decimal.getcontext().prec = 3
        decimal.getcontext().traps[decimal.Inexact] = True
        class L:
            def __eq__(self, o):
                return True
            def __hash__(self):
                return hash(int)
        typing.List[L()]
"""

LATE = {
    "exception-str": "import decimal, typing\nclass E(Exception):\n    def __str__(self):\n" + POISON.replace("        ", "        ", 1) + "        return 'boom'\nraise E()",
    "generator-finally-last-expression": "import decimal, typing\ndef g():\n    try:\n        yield 1\n    finally:\n" + POISON + "x = g()\nnext(x)\nx",
    "generator-finally-in-a-cycle": "import decimal, typing\ndef g():\n    try:\n        yield 1\n    finally:\n" + POISON + "x = g()\nnext(x)\na = [x]\na.append(a)\nreturn 1",
    "localcontext-unwinding-late": "import decimal\ndef g():\n    with decimal.localcontext() as c:\n        c.prec = 2\n        yield 1\nx = g()\nnext(x)\na = [x]\na.append(a)\nreturn 1",
}


def _host_state() -> tuple:
    ctx = decimal.getcontext()
    return (ctx.prec, ctx.traps[decimal.Inexact], repr(list[int]), str(decimal.Decimal(1) / 7))


@pytest.mark.parametrize("code", list(LATE.values()), ids=list(LATE))
async def test_late_snippet_code_leaves_the_host_untouched(sb, code):
    before = _host_state()
    result = await sb.run(code, backend="inprocess")
    del result
    gc.collect()  # frees what the run left in cycles: their finalizers run now, in the host
    assert _host_state() == before
    await sb.assert_next_run_ok(backend="inprocess")


async def test_in_process_session_close_leaves_the_host_untouched():
    import sandbox

    before = _host_state()
    session = sandbox.open_session("inprocess")
    try:
        result = await session.run(LATE["generator-finally-in-a-cycle"].replace("return 1", "keep = a\nreturn 1"))
        assert result.ok, result
    finally:
        session.close()
    gc.collect()
    assert _host_state() == before


async def test_decimal_contexts_still_work_inside_the_run(sb):
    code = """
import decimal
with decimal.localcontext(prec=5) as c:
    inner = str(decimal.Decimal(1) / 7)
decimal.getcontext().prec = 4
outer = str(decimal.Decimal(1) / 7)
return [inner, outer, c.prec]
"""
    for backend in ("worker", "inprocess"):
        result = await sb.run(code, backend=backend)
        assert result.ok and result.value == ["0.14286", "0.1429", 5], result
    assert decimal.getcontext().prec == 28


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize("name", ["_abc_impl", "_abc_registry", "_is_protocol", "_is_runtime_protocol"])
async def test_stdlib_class_machinery_names_are_not_the_snippets(sb, backend, name):
    code = f"import typing\nclass X(typing.Iterable):\n    def __iter__(self):\n        return iter(())\nX.{name} = 0\nreturn 1"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", f'"{name}" is not accessible')

    class Fresh:
        pass

    assert isinstance(Fresh(), collections.abc.Iterable) is False  # the host's ABC check still works


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_the_last_expression_note_reaches_both_backends(sb, backend):
    result = await sb.run("x = object()\nx", backend=backend)
    assert result.ok and result.value is None
    assert result.logs == ["[note] the program's last expression is a 'object', not JSON, so the run "
                           "returns nothing; return a JSON value to see it"]


#: An async generator freed while suspended, whose clean-up never ends without running a
#: statement of the snippet (a C iterator behind `yield from`): the seal cannot stop it.
ENDLESS_ACLOSE = """
import asyncio, itertools
class Late:
    def __await__(self):
        yield from itertools.repeat(None)
async def agen():
    try:
        yield 1
    finally:
        await Late()
g = agen()
async for x in g:
    break
del g
await asyncio.sleep(0.05)
return "done"
"""


async def test_a_freed_async_generator_is_never_closed_by_the_hosts_event_loop():
    # In-process, snippet code ran under the host loop's async-generator hooks: the loop kept
    # the generator and closed it in a task of its own, which ran on after the run (printing to
    # the host's stdout, or spinning). Without hooks it is closed where it is freed.
    import asyncio

    import sandbox

    result = await sandbox.run(ENDLESS_ACLOSE, backend="inprocess")
    assert result.ok and result.value == "done", result
    await asyncio.sleep(0.2)
    assert not [task for task in asyncio.all_tasks() if "async_generator" in repr(task)]



async def test_a_dead_runs_function_called_by_host_code_raises_an_ordinary_error(sb):
    """Host code that calls a function a finished run left behind (a cache kept it) gets a fresh
    `RunOverError`, an `Exception` it can handle like any failing callback, and none of the
    function's body runs: never the run's `BaseException` stop, which ends an event loop, or
    one instance whose traceback grows with each call."""
    before = _host_state()
    body = textwrap.indent(textwrap.dedent(POISON), "    ")
    code = f"import decimal, typing\ndef late(x):\n{body}    return x\nawait tools.keep()\nreturn 1"
    late: list[types.FunctionType] = []

    async def keep() -> int:  # host code that keeps the run's function, as a cache would
        late.extend(f for f in gc.get_objects() if type(f) is types.FunctionType
                    and f.__code__.co_filename == sandbox.policy.FILENAME and f.__name__ == "late")
        return 1

    result = await sandbox.run(code, backend="inprocess", bindings={"keep": keep})
    assert result.ok and result.value == 1, result
    assert len(late) == 1
    errors = []
    for _ in range(3):
        try:
            late[0](1)
        except Exception as error:  # noqa: BLE001 - the point: an ordinary exception
            errors.append(error)
    assert [type(e) for e in errors] == [sandbox.RunOverError] * 3
    assert len({id(e) for e in errors}) == 3
    # Each stops at the function's first tick: the same short traceback every time.
    assert {tuple(t.tb_frame.f_code.co_name for t in _frames(e))[1:2] for e in errors} == {("late",)}
    assert len({len(list(_frames(e))) for e in errors}) == 1
    assert all(e.__suppress_context__ for e in errors)  # a formatter shows no snippet exception
    assert str(errors[0]) == "this code belongs to a sandbox run and cannot run outside it"
    assert _host_state() == before
    late.clear()
    gc.collect()
    await sb.assert_next_run_ok(backend="inprocess")


def _frames(error: BaseException):
    tb = error.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next


#: A generator suspended in a `with` block whose `__exit__` is C code (a `functools.partial`
#: chain, behind the class factory's forwarder), left in a cycle: the garbage collector closes
#: it whenever the host allocates, after the run's clean-up.
FREED_IN_THE_HOST = {
    "poisons typing's cache": """
import functools, operator, typing
Lie = type("Lie", (int,), {
    "__hash__": functools.partial(int, hash(int)),
    "__eq__": functools.partial(operator.is_, int),
    "__call__": functools.partial(int),
})
fake = Lie(hash(int))
Exit = functools.partial(max, fake, key=functools.partial(operator.getitem, typing.Optional))
""",
    "prints to the host's stdout": """
import functools, calendar
Exit = functools.partial(max, 1, key=functools.partial(calendar.TextCalendar().prmonth, 2024))
""",
}
FREED_LATER = """
Late = type("Late", (), {"__enter__": functools.partial(int), "__exit__": Exit})
def sleeper(keep):
    with Late():
        yield
keep = []
g = sleeper(keep)
next(g)
keep.append(g)
return "ok"
"""
HOST_AFTER_GC = """
import contextlib, gc, io, typing
gc.disable()  # before the run: nothing is collected until this collects it, after the run
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    gc.collect()
state = [repr(typing.Optional[int]), printed.getvalue()]
"""


@pytest.mark.parametrize("code", FREED_IN_THE_HOST.values(), ids=FREED_IN_THE_HOST.keys())
def test_what_a_freed_generator_calls_on_its_way_out_never_runs_in_the_host(isolated, code):
    """A review's generator, freed after the run's clean-up, called its `__exit__` (C code behind
    the forwarder, which never ticks): it put a lying key back into `typing`'s cleared cache and
    printed to the host's stdout. The forwarders run only in their run's steps."""
    report = isolated(code + FREED_LATER, HOST_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", ""], report
    assert report["next"]["value"] == "[1]", report


#: A generator whose `finally` prints to whatever `sys.stdout` is (the run's log, in a step).
PRINTS_WHEN_CLOSED = """
import calendar
def sleeper(keep):
    try:
        yield
    finally:
        calendar.TextCalendar().prmonth(2024, 2)
"""


async def test_snippet_code_the_collector_reaches_while_a_binding_runs_does_not_run(sb):
    """Freed while the host runs a binding, a generator's `finally` ran in the host's context
    (its stdout, its decimal context): between steps, the run's ticks raise."""
    printed = io.StringIO()

    async def work() -> int:
        with contextlib.redirect_stdout(printed):
            gc.collect()
        return 1

    code = PRINTS_WHEN_CLOSED + """
import decimal
def make():
    keep = []
    g = sleeper(keep)
    next(g)
    keep.append(g)
make()
return [await tools.work(), str(decimal.Decimal(1) / 7)]
"""
    before = _host_state()
    gc.disable()  # the cycle is freed in the binding, not earlier
    try:
        result = await sandbox.run(code, bindings={"work": work}, backend="inprocess")
    finally:
        gc.enable()
    assert result.ok and result.value == [1, "0.1428571428571428571428571429"], result
    assert printed.getvalue() == "" and result.logs == []
    assert _host_state() == before


#: What CPython calls by the name `close` on what a generator or coroutine delegates to, when
#: the collector frees it: a C `functools.partial` put there as an instance attribute.
CLOSERS = {
    "poisons typing's cache": """
import functools, operator, typing
Lie = type("Lie", (int,), {
    "__hash__": functools.partial(int, hash(int)),
    "__eq__": functools.partial(operator.is_, int),
})
Close = functools.partial(operator.getitem, typing.Optional, Lie(hash(int)))
""",
    "prints to the host's stdout": """
import functools, calendar
Close = functools.partial(calendar.TextCalendar().prmonth, 2024, 2)
""",
}
DELEGATES = {
    "yield from": """
class It:
    def __iter__(self):
        return self
    def __next__(self):
        return 1
o = It()
o.close = Close
def g(keep):
    yield from o
x = g([])
next(x)
keep = [x]
keep.append(keep)
return "ok"
""",
    "await": """
class It:
    def __iter__(self):
        return self
    def __next__(self):
        return None
o = It()
o.close = Close
class A:
    def __await__(self):
        return o
async def c():
    await A()
x = c()
x.send(None)
keep = [x]
keep.append(keep)
return "ok"
""",
}


@pytest.mark.parametrize("route", DELEGATES.values(), ids=DELEGATES.keys())
@pytest.mark.parametrize("closer", CLOSERS.values(), ids=CLOSERS.keys())
def test_what_a_freed_generator_delegates_to_is_never_closed_in_the_host(isolated, closer, route):
    """A review's `yield from` target carried a C `close`: the generator, freed after the run,
    printed to the host's stdout from it and, through `re.RegexFlag`, changed a value map after
    the put-back. What a snippet generator delegates to is closed only inside its run's steps
    (`crossing.yield_from`, `delegating_await`)."""
    report = isolated(closer + route, HOST_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", ""], report
    assert report["next"]["value"] == "[1]", report


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_delegation_works_as_in_python(sb, backend):
    code = """
import asyncio
class Counter:
    def __init__(self):
        self.n = 0
        self.closed = False
    def __iter__(self):
        return self
    def __next__(self):
        self.n += 1
        if self.n > 3:
            raise StopIteration(self.n * 10)
        return self.n
    def send(self, value):
        return ("sent", value)
    def throw(self, kind, value=None, tb=None):
        return "caught"
    def close(self):
        self.closed = True
def g(it):
    result = yield from it
    return result
c = Counter()
plain = list(g(c))
c2 = Counter()
gen = g(c2)
first = next(gen)
sent = gen.send("x")
thrown = gen.throw(ValueError)
gen.close()
class NoThrow:
    def __iter__(self):
        return self
    def __next__(self):
        return 1
gen2 = g(NoThrow())
next(gen2)
try:
    gen2.throw(KeyError("k"))
except KeyError as e:
    raised = repr(e)
class Ready:
    def __await__(self):
        yield from ()
        return 7
async def main():
    return await Ready()
def h():
    r = yield from g([1, 2])
    return r
return [plain, first, sent, thrown, c2.closed, raised, await main(), list(h()), list(g(range(3)))]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [[1, 2, 3], 1, ["sent", "x"], "caught", True, "KeyError('k')", 7, [1, 2], [0, 1, 2]]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_await_is_defined_in_the_class_body_only(sb, backend):
    code = "class A:\n    pass\ndef f(self):\n    yield from ()\ntry:\n    setattr(A, '__await__', f)\nexcept AttributeError as e:\n    return str(e)"
    result = await sb.run(code, backend=backend)
    assert result.ok and result.value == 'attribute "__await__" can be defined only in the class body in the sandbox', result


#: What CPython evaluates, or formats, while a freed generator unwinds outside the run.
UNWINDING = {
    "an except clause's type": """
def g():
    try:
        yield 1
    except (P() or ValueError):
        pass
""",
    "an outer except clause, after an inner finally's tick": """
def g():
    try:
        try:
            yield 1
        finally:
            pass
    except (P(), lambda: 0)[1]() or ValueError:
        pass
""",
    "a str subclass as the generator's name (the unraisable hook's repr)": """
S = type("S", (str,), {"__str__": P})
def g():
    try:
        yield 1
    finally:
        pass
g.__qualname__ = S("x")
""",
    "a str subclass as a coroutine's name (the never-awaited warning)": """
S = type("S", (str,), {"__format__": functools.partial(max, 1, key=P)})
async def g():
    pass
g.__qualname__ = S("x")
""",
}
START_UNWINDING = """
x = g()
if type(x).__name__ == "generator":
    next(x)
keep = [x]
keep.append(keep)
return "ok"
"""


@pytest.mark.parametrize("code", UNWINDING.values(), ids=UNWINDING.keys())
def test_nothing_a_freed_generator_unwinds_through_runs_in_the_host(isolated, code):
    """Reviews found snippet-chosen C code (a `functools.partial` that prints) that CPython runs
    while it closes a freed generator, before any tick: an `except` clause's type (compiled as
    `_tick_() or X`), a lambda (it ticks first too), and a `str` subclass given as a function's
    name, which CPython formats into the generator's `repr()` (names are stored as plain copies)."""
    prelude = "import functools, calendar\nP = functools.partial(calendar.TextCalendar().prmonth, 2024, 2)\n"
    report = isolated(prelude + code + START_UNWINDING, HOST_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", ""], report
    assert report["next"]["value"] == "[1]", report


def test_an_except_clause_run_late_changes_no_host_table(isolated):
    """The same route changed `re.RegexFlag`'s value map and the host thread's decimal flags
    after the put-back: the host's own `re.I | re.M` then hashed the dead run's object."""
    code = """
import functools, calendar, operator, re, decimal
L = type("L", (int,), {"__hash__": functools.partial(int, 10)})
plant = functools.partial(type(re.I), L(10))
flags = functools.partial(operator.truediv, decimal.Decimal(1), decimal.Decimal(3))
def g():
    try:
        yield
    except (plant(), flags()):
        pass
x = g()
next(x)
keep = [x]
keep.append(keep)
return "ok"
"""
    check = HOST_AFTER_GC + """
import decimal, re
state = [state, decimal.getcontext().flags[decimal.Inexact],
         sorted({type(k).__name__ for k in re.RegexFlag._value2member_map_}), type((re.I | re.M).value).__name__]
"""
    report = isolated(code, check)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == [["typing.Optional[int]", ""], False, ["int"], "int"], report


async def test_names_and_data_model_methods_are_stored_as_the_guard_checked_them(sb):
    """Every store of a dunder attribute goes through the guard's `setattr` (`_dunder_target_`),
    whatever its form: names and docs are stored as plain copies, and C code given to a class
    as a data-model method, later or in its body, is held behind a forwarder that runs it only
    inside the run's steps. A review stored a `str` subclass as a generator's name with a loop
    target, and the unraisable hook's `repr()` reached C code through it after the run."""
    code = """
import functools
def f():
    pass
S = type("S", (str,), {})
f.__qualname__ = S("q")
setattr(f, "__name__", S("n"))
f.__doc__ = "doc"
f.__doc__ += S(" more")
def g():
    pass
for g.__qualname__ in [S("loop")]:
    pass
g.__module__, x = S("m"), 1
class C:
    __len__ = functools.partial(len, [1, 2])
C.__call__, y = functools.partial(max, 7), 1
return [type(f.__qualname__).__name__, type(f.__name__).__name__, f.__doc__, type(f.__doc__).__name__,
        type(g.__qualname__).__name__, type(g.__module__).__name__, len(C()), C()(1), vars(C)["__call__"] is not max]
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok and result.value == ["str", "str", "doc more", "str", "str", "str", 2, 7, True], result


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_protocol_checks_raise_as_in_python(sb, backend):
    """The gate on a snippet ABC's `__subclasshook__` adds a frame, and typing decides whether to
    raise by the module of a frame a fixed depth up: its checks still raise for the snippet's
    own `issubclass`, and stay quiet for `abc`'s."""
    code = """
import typing
class Greeter(typing.Protocol):
    def greet(self) -> str: ...
@typing.runtime_checkable
class HasX(typing.Protocol):
    x: int
@typing.runtime_checkable
class M(typing.Protocol):
    def m(self) -> int: ...
class A:
    x = 1
    def greet(self):
        return "hi"
    def m(self):
        return 1
out = []
for proto in (Greeter, HasX):
    try:
        issubclass(A, proto)
    except TypeError as e:
        out.append(str(e))
return out + [issubclass(A, M), isinstance(A(), HasX), isinstance(A(), M)]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["Instance and class checks can only be used with @runtime_checkable protocols",
                            "Protocols with non-method members don't support issubclass()", True, True, True]


async def test_c_data_model_methods_of_a_dead_run_never_run_in_the_host(sb):
    """A C `__hash__` (a `functools.partial` chain that prints) of an object a host table kept:
    hashed by host code after the run, it raises `RunOverError` and prints nothing."""
    code = """
import functools, calendar
P = functools.partial(calendar.TextCalendar().prmonth, 2024, 2)
Late = type("Late", (), {"__hash__": functools.partial(max, 1, key=P), "__repr__": P})
late = Late()
await tools.keep()
return "ok"
"""
    late: list[object] = []

    async def keep() -> int:  # host code that keeps the run's object, as a table would
        late.extend(o for o in gc.get_objects() if type(type(o)) is type and type(o).__name__ == "Late")
        return 1

    result = await sandbox.run(code, backend="inprocess", bindings={"keep": keep})
    assert result.ok and result.value == "ok", result
    assert len(late) == 1
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for call in (hash, repr):
            with pytest.raises(sandbox.RunOverError):
                call(late[0])
    assert printed.getvalue() == ""


async def test_a_sessions_earlier_run_runs_nothing_before_the_next_runs_first_step(monkeypatch):
    """Between a session run's set-up and its first step, its tick passed already: a generator of
    the run before, freed then, ran its whole `finally` in the host. A budget starts outside."""
    from sandbox import execution

    printed = io.StringIO()
    start = execution.Execution.start

    def collecting_start(self):  # the collector fires at some allocation in that window
        with contextlib.redirect_stdout(printed):
            gc.collect()
        return start(self)

    monkeypatch.setattr(execution.Execution, "start", collecting_start)
    code = PRINTS_WHEN_CLOSED + """
keep = []
g = sleeper(keep)
next(g)
keep.append(g)
keep = None
g = None
return 1
"""
    gc.disable()
    session = sandbox.open_session("inprocess")
    try:
        first = await session.run(code)
        second = await session.run("return 2")
    finally:
        session.close()
        gc.enable()
    assert (first.value, second.value) == (1, 2), (first, second)
    assert printed.getvalue() == ""


PROTOCOL_MEMBERS = {
    "C __get__": "class D:\n    __get__ = functools.partial(max, key=functools.partial(next, later))\n",
    "Python __get__": "class D:\n    def __get__(self, obj, owner=None):\n        return next(later)\n",
}


@pytest.mark.parametrize("member", PROTOCOL_MEMBERS.values(), ids=PROTOCOL_MEMBERS.keys())
async def test_the_hosts_own_abc_checks_never_run_a_snippet_class_hook(sb, member):
    """A snippet protocol that derives from `collections.abc.Iterable` is in that ABC's
    `__subclasses__()`; the host's own `isinstance(x, Iterable)` asks each one's hook, which
    reads its members: a review's descriptor printed there after the run (C code), or made the
    host's check raise (snippet code, stopped by its tick). Outside the run's steps the hook of
    a snippet ABC answers nothing."""
    code = (
        "import typing, functools, itertools, calendar\n"
        "later = itertools.starmap(calendar.TextCalendar().prmonth, [(2024, 2)] * 50)\n" + member
        + "@typing.runtime_checkable\nclass P(typing.Protocol, typing.Iterable):\n    m = D()\n"
        "return 'ok'"
    )
    gc.disable()  # keep the run's class alive, as a session or a late collection would
    try:
        result = await sb.run(code, backend="inprocess")
        assert result.ok, result

        class HostThing:
            pass

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            answer = isinstance(HostThing(), collections.abc.Iterable)
    finally:
        gc.enable()
        gc.collect()
    assert answer is False
    assert printed.getvalue() == ""


async def test_a_host_threads_collection_during_a_step_runs_nothing_of_the_run_there():
    """A generator freed by a host thread's garbage collection while the run is in a step ran its
    `finally` on that thread, and `decimal.getcontext()` gave it the host thread's own context.
    Whether a step is running is decided per thread (`ShimContext.stepping`)."""
    import threading
    import time

    seen: list[int] = []
    stop = threading.Event()

    def host_thread() -> None:
        while not stop.is_set():
            gc.collect()
            seen.append(decimal.getcontext().prec)
            time.sleep(0.005)

    code = """
import decimal, time
def gen(box):
    try:
        yield 1
    finally:
        decimal.getcontext().prec = 3
box = []
it = gen(box)
box.append(it)
next(it)
del box, it
end = time.monotonic() + 1.0
while time.monotonic() < end:
    pass
return decimal.getcontext().prec
"""
    worker = threading.Thread(target=host_thread)
    gc.disable()  # only the host thread collects
    worker.start()
    try:
        result = await sandbox.run(code, backend="inprocess")
    finally:
        stop.set()
        worker.join()
        gc.enable()
    assert result.ok and result.value == 28, result
    assert seen and set(seen) == {28}, sorted(set(seen))


#: What a snippet leaves for CPython to call by name, late, where no tick or forwarder stands:
#: `close` on what a stdlib generator delegates to, and `derive` on an exception group. Each
#: holds a C `functools.partial` over `next` of a lazy C iterator (`PAYLOADS`).
BY_NAME = {
    "heapq.merge closes its iterator": """
class It:
    def __iter__(self):
        return self
    def __next__(self):
        return 1
it = It()
it.close = functools.partial(next, later)
x = heapq.merge(it)
next(x)
next(x)  # suspended in the stdlib generator's `yield from it`
""",
    "KeysView closes its mapping's iterator": """
class It:
    def __iter__(self):
        return self
    def __next__(self):
        return "k"
it = It()
it.close = functools.partial(next, later)
class M(typing.Mapping):
    def __getitem__(self, k):
        return 1
    def __len__(self):
        return 1
    def __iter__(self):
        return it
x = iter(M().keys())
next(x)
""",
    "except* derives the rest of a group": """
ve, te = ValueError(1), TypeError(2)
class EG(ExceptionGroup):
    pass
EG.derive = functools.partial(next, itertools.chain([EG("m", [ve]), EG("r", [te])], later))
def g():
    try:
        raise EG("x", [ve, te])
    except* ValueError:
        yield 1
x = g()
next(x)
""",
}
PAYLOADS = {
    "prints": "later = itertools.starmap(calendar.TextCalendar().prmonth, [(2024, 2)] * 5)",
    "flags decimal": "later = itertools.starmap(decimal.Decimal.sqrt, [(decimal.Decimal(2),)] * 5)",
}
#: The host's own decimal context while the collector frees the run's objects.
HOST_DECIMAL_AFTER_GC = """
import contextlib, decimal, gc, io, typing
gc.disable()  # before the run: nothing is collected until this collects it, after the run
flagged = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)  # by the run
host = decimal.Context(prec=7)
decimal.setcontext(host)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    gc.collect()
state = [repr(typing.Optional[int]), printed.getvalue(), decimal.getcontext() is host, host.prec,
         sorted(s.__name__ for s, on in host.flags.items() if on), flagged]
"""


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
@pytest.mark.parametrize("route", BY_NAME.values(), ids=BY_NAME.keys())
def test_what_cpython_calls_by_name_late_reaches_nothing_of_the_hosts(isolated, route, payload):
    """A review left C code where CPython calls it by name once the collector frees a generator,
    after the run: a stdlib generator's `close` of its delegate, `except*`'s `derive`. No tick
    sees that code, so what it reaches must be harmless outside a step: `TextCalendar`'s `pr*`
    methods write to the run's log only in a step (`output.run_log`), and a collection outside
    every step gives what it finalizes a decimal context of its own."""
    code = "import calendar, decimal, functools, heapq, itertools, typing\n" + payload + "\n" + route
    report = isolated(code + "keep = [x]\nkeep.append(keep)\nreturn 'ok'\n", HOST_DECIMAL_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", "", True, 7, [], []], report
    assert report["next"]["value"] == "[1]", report


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_what_the_clean_up_lets_go_of_reaches_nothing_of_the_hosts(isolated, payload):
    """The in-process clean-up clears `typing`'s cache after the seal, outside every step: an
    object a snippet left there (no cycle, so no collection) is freed right then, and a review's
    closed a generator whose delegate's `close` flagged the host thread's decimal context. What
    the clean-up lets go of runs with a decimal context of its own (`execution.Releasing`)."""
    route = BY_NAME["heapq.merge closes its iterator"] + """
class H:
    def __call__(self):
        pass
h = H()
h.x = x
typing.List[h]
del h, x
"""
    code = "import calendar, decimal, functools, heapq, itertools, typing\n" + payload + "\n" + route
    report = isolated(code + "return 'ok'\n", HOST_DECIMAL_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", "", True, 7, [], []], report
    assert report["next"]["value"] == "[1]", report


async def test_text_calendars_print_to_the_runs_log(sb):
    code = """
import calendar
class Mine(calendar.TextCalendar):
    pass
calendar.TextCalendar().prweek([(1, 0), (2, 1)], 2)
print()
Mine(6).prmonth(2024, 2)
calendar.TextCalendar().pryear(2024)
real = [c for c in type(Mine()).__mro__ if hasattr(c, "prmonth") and c is not Mine]  # the shim's only
return [type(Mine()).__mro__[1].__module__, calendar.TextCalendar.__name__, len(real)]
"""
    for backend in ("worker", "inprocess"):
        result = await sb.run(code, backend=backend)
        assert result.value == ["calendar", "TextCalendar", 1], result  # the real class is in no MRO
        assert result.logs[:3] == [" 1  2", "   February 2024", "Su Mo Tu We Th Fr Sa"], result
        assert len(result.logs) > 40 and "December" in "\n".join(result.logs), result


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the refusal, reported
@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
async def test_what_an_earlier_run_left_finds_nothing_of_a_later_runs_step(payload):
    """A review's run left a cycle that only a full collection frees; a later, unrelated run's
    allocations started that collection inside its own step, where the earlier run's `close`
    wrote calendars into the later run's log (until it hit its output limit) and flagged the
    later run's decimal context. Every collection runs what it frees with a decimal context of
    its own and no run's log as `sys.stdout` (`execution.Releasing`), inside a step too."""
    from sandbox.execution import Execution

    code = "import calendar, decimal, functools, heapq, itertools, typing\n" + payload + "\n"
    code += BY_NAME["heapq.merge closes its iterator"] + "keep = [x]\nkeep.append(keep)\nreturn 'ok'\n"
    gc.collect()
    gc.disable()  # the cycle outlives the run, as an old generation's would
    try:
        first = await sandbox.run(code, backend="inprocess")
        assert first.value == "ok", first
        later = Execution("return 1", [], sandbox.Limits(), budget=True)
        later.start()
        with later.run_context():
            gc.collect()  # the collection the later run's own allocations would start
        later.step()
        result = later.result()
    finally:
        gc.enable()
    assert result.value == 1 and result.logs == [] and result.error is None, result
    assert not any(later.decimal_context.flags.values()), later.decimal_context


def test_a_snippet_int_subclass_never_keys_a_shared_enum_map(isolated):
    """`type(re.I)(x)` with a snippet's `int` subclass: `Flag._missing_` caches a pseudo member
    under `x` in the class's value map, which the host shares. The clean-up dropped it after the
    run, but a review made the call late, from a freed generator, and the host's own
    `re.RegexFlag(90)` then handed back the dead run's object. The shared enums' maps keep
    plain keys only (`enum_maps.PlainKeyedMap`), whenever the call comes."""
    code = """
import functools, heapq, itertools, re
class I(int):
    pass
flag = type(re.I)(I(2 | 8))  # in the run: the flag is made, and works
made = [type(flag.value).__name__, flag == re.I | re.M]
later = itertools.starmap(type(re.I), [(I(2 | 16 | 64),)])
""" + BY_NAME["heapq.merge closes its iterator"] + "keep = [x]\nkeep.append(keep)\nreturn made\n"
    check = """
import gc, re
gc.disable()  # before the run: nothing is collected until this collects it, after the run
gc.collect()
state = sorted({type(k).__name__ for k in re.RegexFlag._value2member_map_})
"""
    report = isolated(code, check)
    assert report["result"]["value"] == ["I", True], report
    assert report["before"] == report["after"] == ["int"], report
    assert report["next"]["value"] == "[1]", report


CONTEXT_CHURN = """
import contextvars, decimal, gc, sys
sys.path.insert(0, {root!r})
import sandbox
from sandbox.execution import Execution
Execution("return 1", [], sandbox.Limits(), budget=True)  # adds the collector hook
gc.set_threshold(1)  # a collection at nearly every allocation, inside context variable sets too
variables = [contextvars.ContextVar(f"v{{i}}") for i in range(50)]
junk = []
for n in range(20000):
    for variable in variables[: n % 50 + 1]:
        variable.set([n])
    decimal.setcontext(decimal.Context(prec=n % 20 + 1))
    junk.append([[]])
    junk[-1][0].append(junk[-1])
    if len(junk) > 100:
        junk.clear()
print("survived")
"""


def test_the_collector_hook_sets_no_context_variable():
    """A first version of the collector hook swapped the thread's decimal context, a context
    variable: a collection that started while another variable was being set (an allocation
    inside `ContextVar.set`) had the hook replace the very table the set was still reading, and
    CPython crashed. The hook only reads the context and puts its flags back."""
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", CONTEXT_CHURN.format(root=root)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "survived", (done.returncode, done.stderr[-2000:])


#: A freed `map` subclass's `close`, reached where a stdlib generator delegates to it; no method
#: of its own, so nothing of the run's globals keeps it in a cycle.
MAP_CLOSES_LATE = """
import decimal, functools, heapq, itertools, operator, typing
class M(map):
    pass
m = M(int, itertools.repeat(1))
m.close = CLOSE
x = heapq.merge(m)
next(x)
next(x)
"""


def test_what_the_end_of_a_run_lets_go_of_reaches_nothing_of_the_hosts(isolated):
    """A review's generator was held only by the run's globals, which the host let go of when
    the in-process run returned, after the clean-up: its delegate's `close` flagged the host
    thread's decimal context. The end of a run (and of an in-process session) lets go of what
    only the run held inside `execution.Releasing`."""
    code = MAP_CLOSES_LATE.replace(
        "CLOSE", "functools.partial(next, itertools.starmap(decimal.Decimal.sqrt, [(decimal.Decimal(2),)] * 5))"
    ) + "global G\nG = x\nreturn 'ok'\n"
    report = isolated(code, HOST_DECIMAL_AFTER_GC)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.Optional[int]", "", True, 7, [], []], report


def test_typings_caches_never_key_a_snippet_object(isolated):
    """A `str` subclass with str's own `==` and hash, subscripted into `typing.List` late (from a
    freed generator, after the clean-up cleared typing's caches), answered the host's own
    `typing.List['Foo']` with the dead run's object, whose `__repr__` then raised `RunOverError`
    into the host and into a later run. typing's caches take plain hints only
    (`shims.typing._PlainHintCache`); anything else is made uncached."""
    code = """
import typing
class S(str):
    def __repr__(self):
        return 'S'
in_the_run = typing.List[S('Bar')]
""" + MAP_CLOSES_LATE.replace("CLOSE", "functools.partial(operator.getitem, typing.List, S('Foo'))") + """
keep = [x]
keep.append(keep)
return repr(in_the_run)
"""
    check = """
import gc, typing
gc.disable()  # before the run: nothing is collected until this collects it, after the run
gc.collect()
hint = typing.List['Foo']
state = [repr(hint), type(hint.__args__[0].__forward_arg__).__name__]
"""
    report = isolated(code, check)
    assert report["result"]["value"] == "typing.List[ForwardRef(S)]", report
    assert report["before"] == report["after"] == ["typing.List[ForwardRef('Foo')]", "str"], report
    assert report["next"]["value"] == "[1]", report


def test_a_host_threads_collection_leaves_its_decimal_context_unflagged(isolated):
    """A collection on a host thread that has no decimal context yet ran a run's late
    `Decimal.sqrt`: C decimal made the thread a context, and the flags stayed on it. The
    collector hook clears the flags of a context made while it runs."""
    code = MAP_CLOSES_LATE.replace(
        "CLOSE", "functools.partial(next, itertools.starmap(decimal.Decimal.sqrt, [(decimal.Decimal(2),)] * 5))"
    ) + "keep = [x]\nkeep.append(keep)\nreturn 'ok'\n"
    check = """
import decimal, gc, threading
gc.disable()  # before the run: nothing is collected until the thread collects it, after the run
seen = []
def collect():
    gc.collect()
    seen.append(sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on))
thread = threading.Thread(target=collect)
thread.start()
thread.join()
state = seen
"""
    report = isolated(code, check)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == [[]], report


def test_late_strptime_never_waits_on_the_lock_a_collection_interrupted(isolated):
    """`_strptime` holds a lock that is not reentrant while it compiles a format, which
    allocates, so a collection can start there; a review's run left cycles whose freed
    generator's `close` was `time.strptime`, and the collection that ran it inside the run's own
    `strptime` (or the host's) waited on that lock for ever. What reaches `_strptime` refuses
    while a collection runs on its thread (`control.refuse_while_collecting`)."""
    code = """
import functools, heapq, itertools, time
class M(map):
    pass
def leave_cycle():
    m = M(int, itertools.repeat(1))
    m.close = functools.partial(time.strptime, "1", "%d")
    x = heapq.merge(m)
    next(x)
    next(x)
    c = [x]
    c.append(c)
formats = ["%d", "%m", "%Y", "%H", "%M", "%S", "%j", "%y", "%b", "%B", "%a", "%A", "%p", "%I", "%U", "%W", "%w", "%%"]
n = 0
for a in formats:
    for b in formats:
        leave_cycle()
        try:
            time.strptime("x", a + " q " + b)
        except Exception:
            pass
        n += 1
return n
"""
    report = isolated(code, "import time\nstate = time.strptime('3', '%d').tm_mday\n", timeout=60.0, wall_time=30.0)
    assert not report["hung"], report
    assert report["result"]["value"] == 324, report
    assert report["before"] == report["after"] == 3, report


async def test_a_host_threads_collection_changes_nothing_in_another_threads_step(sb):
    """A review's dead run left slow work to a host thread's collection, and while it ran, a
    later run's own `TextCalendar.prmonth`, on the event loop's thread, refused: whether a
    collection runs was one flag for the process. It is the collecting thread's own."""
    import threading

    from sandbox.execution import _collector_context

    started, done = threading.Event(), threading.Event()

    def collecting() -> None:
        _collector_context("start", {"generation": 0})
        started.set()
        done.wait(60)
        _collector_context("stop", {"generation": 0, "collected": 0, "uncollectable": 0})

    thread = threading.Thread(target=collecting)
    thread.start()
    try:
        assert started.wait(60)
        result = await sb.run("import calendar\ncalendar.TextCalendar().prmonth(2024, 1)\nreturn 1", backend="inprocess")
    finally:
        done.set()
        thread.join()
    assert result.value == 1 and result.error is None, result
    assert result.logs[0].strip() == "January 2024", result


def test_a_forward_reference_from_another_module_never_keys_typings_caches(isolated):
    """`typing.List[ForwardRef('Foo', module=S('m'))]`, late: a `ForwardRef`'s `==` and hash read
    its module too, which the first check of typing's cache keys did not walk; the host's own
    `typing.List[ForwardRef('Foo', module='m')]` then got the dead run's object. A hint is plain
    by all of its state (`shims.typing._state`)."""
    code = """
import typing
FR = type(typing.List['Foo'].__args__[0])
class S(str):
    def __repr__(self):
        return 'S'
""" + MAP_CLOSES_LATE.replace("CLOSE", "functools.partial(operator.getitem, typing.List, FR('Foo', module=S('m')))") + """
keep = [x]
keep.append(keep)
return 'ok'
"""
    check = """
import gc, typing
gc.disable()  # before the run: nothing is collected until this collects it, after the run
gc.collect()
hint = typing.List[typing.ForwardRef('Foo', module='m')]
state = [repr(hint), type(hint.__args__[0].__forward_module__).__name__]
"""
    report = isolated(code, check)
    assert report["result"]["value"] == "ok", report
    assert report["before"] == report["after"] == ["typing.List[ForwardRef('Foo', module='m')]", "str"], report
    assert report["next"]["value"] == "[1]", report


EVICTION_BOMBS = "import calendar, decimal, functools, heapq, itertools, typing\ntc = calendar.TextCalendar()\ndef bomb():\n" + textwrap.indent(
    MAP_CLOSES_LATE, "    ") + """
    return lambda _g=x: None  # the only holder of x: freed where typing's cache evicts it
fs = [bomb() for i in range(128)]
junk = [[i] for i in range(30000)]  # ages the bombs
del junk
"""

#: Where a freed bomb's `close` goes: each wrote into the host or a later run at 821e4d8.
EVICTION_PAYLOADS = {
    "decimal-flags": "functools.partial(decimal.Decimal(2).sqrt)",
    "calendar-into-a-log": "functools.partial(tc.prmonth, 1999, 12)",
    "calendar-flood": "functools.partial(list, map(tc.pryear, range(1, 400)))",
}

EVICTION_CHILD = """
import contextlib, decimal, gc, io, json, sys, typing, anyio
sys.path.insert(0, ROOT)
import sandbox
INNOCENT = '''
import typing, decimal
class Point:
    pass
def area(points: typing.List[Point]) -> float:
    return 0.0
print("B")
return sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
'''
async def main():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        first = await sandbox.run(CODE, backend="inprocess")
        gc.collect(1)  # a young collection, as the host's allocations start one
        later = await sandbox.run(INNOCENT, backend="inprocess")  # its typing use evicts one entry
        decimal.getcontext().clear_flags()
        for i in range(200):  # the host's own typing use, evicting what typing's cache holds
            typing.List[type("Host%d" % i, (), {})]
        host = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    return {"first": first.to_json(), "host": host, "later": later.to_json(), "stdout": out.getvalue()}
print(json.dumps(anyio.run(main)))
"""


def _in_child(script: str, **names: str) -> dict:
    """`script` in a fresh interpreter (it changes process-wide state), with `names` bound as
    Python literals; its last line of output is a JSON report."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    names = {"ROOT": str(Path(sandbox.__file__).resolve().parent.parent), **names}
    for name, value in names.items():
        script = script.replace(name, repr(value), 1)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    report["stderr"] = done.stderr
    return report


@pytest.mark.parametrize("close", EVICTION_PAYLOADS.values(), ids=EVICTION_PAYLOADS.keys())
def test_late_code_leaves_nothing_of_its_run_in_typings_cache(close):
    """A review's run aged 128 generators, each freed only through a function, then left a cycle
    whose late `close` put those functions into `typing`'s cache (functions are plain hints). The
    host's own later `typing.List[...]` evicted them, outside any collection: their `close`
    flagged the host's decimal context, or printed a calendar into the next run's log (or
    flooded it to `output-limit`). Now the run's cycles are finalized at its end, before the
    caches are cleared (`garbage.WINDOW`), and typing's caches take nothing inside a run's step,
    a collection or the end of a run."""
    trigger = """
class M2(map):
    pass
m2 = M2(int, itertools.repeat(1))
m2.close = functools.partial(list, map(typing.List.__getitem__, fs))
t = heapq.merge(m2)
next(t)
next(t)
cyc = [t]
cyc.append(cyc)
del t, cyc, m2, fs
return "A done"
"""
    report = _in_child(EVICTION_CHILD, CODE=EVICTION_BOMBS.replace("CLOSE", close) + trigger)
    assert report["first"]["value"] == "A done", report["first"]
    assert report["host"] == [] and report["stdout"] == "", report
    later = report["later"]
    assert later["error"] is None and later["logs"] == ["B"] and later["value"] == [], later


def test_a_runs_hints_never_wait_in_typings_cache_for_a_bindings_eviction():
    """The same bombs put into `typing`'s cache by the run itself, in its step, with the host's
    collector off (so no collection during the run keeps them): a binding's own typing use
    evicted them, and freed them inside the binding, where their `close` flagged the host's
    decimal context. typing's caches take nothing inside a run's step."""
    child = """
import decimal, gc, json, sys, typing, anyio
sys.path.insert(0, ROOT)
import sandbox
seen = {}
async def evict():
    hints = [type("Host%d" % i, (), {}) for i in range(200)]
    for hint in hints:
        typing.List[hint]
    seen["binding"] = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    return 1
async def main():
    gc.disable()
    decimal.getcontext().clear_flags()
    result = await sandbox.run(CODE, backend="inprocess", bindings={"evict": evict})
    host = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    return {"result": result.to_json(), "host": host, **seen}
print(json.dumps(anyio.run(main)))
"""
    code = EVICTION_BOMBS.replace("CLOSE", EVICTION_PAYLOADS["decimal-flags"]) + (
        "hints = [typing.List[f] for f in fs]\ndel hints, fs\nawait tools.evict()\nreturn 'A done'\n"
    )
    report = _in_child(child, CODE=code)
    assert report["result"]["value"] == "A done", report["result"]
    assert report["binding"] == [] and report["host"] == [], report


#: What made CPython or the stdlib warn with the snippet's text, blamed on a host module.
WARNS = {
    "never-awaited": """
async def f():
    pass
keep = []
for i in range(50):
    f.__qualname__ = "INJECTED-" + str(i) + "-" + "x" * 2000
    keep.append(f())
return len(keep)
""",
    "re-nested-set": """
import re
for n in range(50):
    re.compile("INJECTED" + "a" * n + "[[a]")
return 50
""",
}


@pytest.mark.parametrize("code", WARNS.values(), ids=WARNS.keys())
def test_what_a_run_warns_leaves_no_text_in_the_hosts_warning_registries(code):
    """CPython's "coroutine ... was never awaited" put the snippet's `__qualname__` into the
    running host module's `__warningregistry__` (4 MB a run, for good, in a review) and onto the
    host's stderr; so did `re`'s parser's FutureWarning about a snippet's pattern, blamed on the
    `re` shim. Warnings raised in a run's step, a collection or the end of a run are ignored;
    a run's unawaited tool calls are reported in its own log."""
    child = """
import json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
def registries():
    return sum(len(getattr(m, "__warningregistry__", ())) for m in list(sys.modules.values()))
async def main():
    before = registries()
    values = []
    for run in range(3):
        result = await sandbox.run(CODE, backend="inprocess")
        values.append(result.value)
    return {"values": values, "grew": registries() - before}
print(json.dumps(anyio.run(main)))
"""
    report = _in_child(child, CODE=code)
    assert report["values"] == [50, 50, 50], report
    assert report["grew"] <= 1, report  # a registry's "version" entry, not one per coroutine
    assert "INJECTED" not in report["stderr"], report["stderr"][-500:]


#: A generator held only by a frame of the snippet's that the run's end unwinds: its delegate's
#: `close` flags the decimal context it runs with, and makes `re` warn.
HELD_BY_A_FRAME = """
import decimal, functools, heapq, itertools, re
class M(map):
    pass
m = M(int, itertools.repeat(1))
m.close = functools.partial(list, itertools.chain(map(decimal.Decimal.sqrt, [decimal.Decimal(2)]),
                                                   map(re.compile, ["x" * 7 + "[[late]"])))
g = heapq.merge(m)
next(g)
next(g)
del m
"""

ENDS = {
    "output-limit": "s = 'y' * 100000\nwhile True:\n    print(s)\n",
    "exception": "raise ValueError('the end')\n",
}


@pytest.mark.parametrize("end", ENDS.values(), ids=ENDS.keys())
def test_what_ends_a_run_is_let_go_of_with_the_run(end):
    """An output-limit stop, raised in the snippet's frames, was caught by the host's `except
    RunStopped as stopped` and freed where that clause ended, in host code outside every gate:
    its traceback's frames were the only holders of a generator, whose delegate's late `close`
    flagged the host's decimal context and wrote `re`'s warning to its stderr. What ends a run
    stays with the run (`Execution.ended`) and goes at its end."""
    child = """
import decimal, json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
async def main():
    decimal.getcontext().clear_flags()
    result = await sandbox.run(CODE, backend="inprocess")
    flags = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    return {"kind": result.error.kind, "flags": flags}
print(json.dumps(anyio.run(main)))
"""
    report = _in_child(child, CODE=HELD_BY_A_FRAME + end)
    assert report["kind"] in ("output-limit", "exception"), report
    assert report["flags"] == [], report
    assert "late" not in report["stderr"] and "Warning" not in report["stderr"], report["stderr"][-500:]


#: A child that runs CODE once, in-process, and reports its value (`_in_child` adds its stderr).
RUN_IN_CHILD = """
import json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
async def main():
    result = await sandbox.run(CODE, backend="inprocess")
    return {"value": result.value}
print(json.dumps(anyio.run(main)))
"""


def test_what_a_freed_generator_raises_in_a_step_never_reaches_the_hosts_stderr():
    """CPython reports an exception a finalizer raised ("Exception ignored in ...") through
    `sys.unraisablehook`, to the host's stderr; a review's text came from the snippet's
    `partial(int, text)`. Inside a run's step, a collection or the end of a run, the report is
    dropped; elsewhere the host's own hook gets it."""
    code = """
import functools, heapq, itertools
class M(map):
    pass
m = M(int, itertools.repeat(1))
m.close = functools.partial(int, "SNIPPET TEXT ON THE HOST'S STDERR")
g = heapq.merge(m)
next(g)
next(g)
del m, g
return "done"
"""
    report = _in_child(RUN_IN_CHILD, CODE=code)
    assert report["value"] == "done", report
    assert "SNIPPET TEXT" not in report["stderr"] and "Exception ignored" not in report["stderr"], report


#: A run's decimal context that holds a late generator (its delegate's `close` is CLOSE) and is
#: held by nothing of the snippet's.
CONTEXT_HOLDS_A_LATE_GENERATOR = """
import asyncio, decimal, functools, heapq
class M(map):
    pass
class C(decimal.Context):
    pass
m = M(int, [1, 2, 3])
m.close = CLOSE
g = heapq.merge(m)
next(g)
next(g)
c = C()
c.payload = g
del g, m
decimal.setcontext(c)
del c
"""


def test_the_context_a_run_replaces_is_let_go_of_in_its_step():
    """A review's snippet installed a `decimal.Context` subclass whose instance held a late
    generator, then replaced it: the step's end, after it had ended the step, dropped the last
    reference to it (`execution.decimal_context = ...`), a reference-count free in host code,
    and the generator's delegate `close` put the snippet's text on the host's stderr. The
    step's end takes the run's context while it is still the step."""
    code = CONTEXT_HOLDS_A_LATE_GENERATOR.replace(
        "CLOSE", "functools.partial(int, \"SNIPPET TEXT ON THE HOST'S STDERR\")"
    ) + "await asyncio.sleep(0)\ndecimal.setcontext(decimal.Context())\nawait asyncio.sleep(0)\nreturn 'done'\n"
    report = _in_child(RUN_IN_CHILD, CODE=code)
    assert report["value"] == "done", report
    assert "SNIPPET TEXT" not in report["stderr"] and "Exception ignored" not in report["stderr"], report


def test_a_collection_at_a_step_boundary_runs_no_snippet_code_with_the_hosts_state():
    """A review aimed a collection at `decimal.setcontext` in the step's entry, which allocates:
    the step was already marked, the host's decimal context still installed, and a run's late
    generator, finalized there, set the host's precision and traps (and registered an async
    generator with the host loop's hooks). The run's state is installed before the step is
    marked, and the step ends before the host's state comes back. Here every step's entry
    collects as it sets the run's context."""
    child = """
import decimal, gc, json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox, sandbox.execution
HOST = decimal.getcontext()
class CollectingDecimal:
    def __getattr__(self, name):
        return getattr(decimal, name)
    def setcontext(self, context):
        if context is not HOST:  # a step's entry: the host's context is still installed
            gc.collect()
        decimal.setcontext(context)
sandbox.execution.decimal = CollectingDecimal()
async def main():
    result = await sandbox.run(CODE, backend="inprocess")
    context = decimal.getcontext()
    return {"value": result.value, "host": [context.prec, context.traps[decimal.Inexact]]}
print(json.dumps(anyio.run(main)))
"""
    code = """
import asyncio, decimal
mine = decimal.getcontext()
def late():
    try:
        yield 1
    finally:
        context = decimal.getcontext()
        if context is not mine:
            context.prec = 7
            context.traps[decimal.Inexact] = True
for i in range(3):
    g = late()
    next(g)
    box = [g]
    box.append(box)
    del g, box
    await asyncio.sleep(0)
return "done"
"""
    report = _in_child(child, CODE=code)
    assert report["value"] == "done", report
    assert report["host"] == [28, False], report


def test_a_sessions_next_run_frees_nothing_of_the_one_before_in_host_code():
    """A review's session run installed a `decimal.Context` subclass holding a late generator
    whose delegate's `close` is `Decimal.sqrt`: the session kept the run's `Execution` (and so
    the context) until the next run refilled the session's builtins, in host code, where the
    generator flagged the host's decimal context. A session's run lets go of what it held at
    its end (`SessionState.leave`, inside `execution.Releasing`)."""
    child = """
import decimal, json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
async def rows():
    return [1, 2]
async def main():
    decimal.getcontext().clear_flags()
    values = []
    async with sandbox.open_session(backend="inprocess") as session:
        for code in (CODE, "return 2"):
            result = await session.run(code, bindings={"rows": rows})
            values.append(result.value)
    host = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    return {"values": values, "host": host}
print(json.dumps(anyio.run(main)))
"""
    code = CONTEXT_HOLDS_A_LATE_GENERATOR.replace("CLOSE", "decimal.Decimal(2).sqrt") + "return 1\n"
    report = _in_child(child, CODE=code)
    assert report["values"] == [1, 2] and report["host"] == [], report
    assert "Exception ignored" not in report["stderr"], report


def test_a_late_sleep_between_a_sessions_runs_never_blocks_the_host():
    """A review's session run kept a generator whose delegate's `close` is `time.sleep`: freed
    at the session's close, or by the host's collector after a later run dropped it, it slept
    the host's thread (its event loop) up to the run's deadline, since the shims, let go of the
    run, looked as if no execution had ever bound them. Between a session's runs the shims know
    they are (`ShimContext.phase`), and the sleep refuses."""
    child = """
import gc, json, sys, time, anyio
sys.path.insert(0, ROOT)
import sandbox
slept = []
real_sleep = time.sleep
def recorded(seconds):
    slept.append(seconds)
    real_sleep(min(seconds, 0.01))
time.sleep = recorded  # what the `time` shim calls
async def main():
    limits = sandbox.Limits(wall_time=120)
    async with sandbox.open_session(backend="inprocess") as session:
        for code in CODES:
            await session.run(code, limits=limits)
        gc.collect()  # the host's own collection, after the runs
    return {"slept": [s for s in slept if s >= 1]}
print(json.dumps(anyio.run(main)))
"""
    late = """
import functools, heapq, time
class M(map):
    pass
m = M(int, [1, 2, 3])
m.close = functools.partial(time.sleep, 60)
held = heapq.merge(m)
next(held)
next(held)
del m
"""
    cycle = late + "box = [held]\nbox.append(box)\ndel held\nreturn 1\n"
    for codes in ([late + "return 1\n", "return 2"], [cycle, "del box\nreturn 2"]):
        report = _in_child(child, CODES=codes)
        assert report["slept"] == [], (codes, report)


@pytest.mark.parametrize("session", [False, True], ids=["run", "session-run"])
def test_a_run_the_host_cancels_frees_nothing_of_its_own_in_host_code(session):
    """A review's host cancelled a run while it awaited a binding (`anyio.move_on_after`): the
    cancellation's traceback held the sandbox's frames, with the run's `Execution` in their
    locals, out of `run`, and the host let go of it where its cancel scope ended; a decimal
    context only that `Execution` held ran its late generator there, flagging the host's
    context. The run's end lets go of everything of the snippet's the `Execution` holds
    (`Execution.release`, and a session's state, `SessionState.release`, inside
    `execution.Releasing`): nothing of the snippet's is left once `run` returns."""
    child = """
import decimal, gc, json, sys, anyio
sys.path.insert(0, ROOT)
import sandbox
snippet, in_session = CODE, SESSION
async def slow():
    await anyio.sleep(30)
    return 1
async def main():
    gc.disable()  # what the run leaves stays where it can be counted
    decimal.getcontext().clear_flags()
    with anyio.move_on_after(1) as scope:
        if in_session:
            async with sandbox.open_session(backend="inprocess") as session:
                await session.run(snippet, bindings={"slow": slow})
        else:
            await sandbox.run(snippet, backend="inprocess", bindings={"slow": slow})
    host = sorted(s.__name__ for s, on in decimal.getcontext().flags.items() if on)
    left = sum(1 for o in gc.get_objects() if getattr(type(o), "__module__", None) == "__snippet__")
    return {"cancelled": scope.cancelled_caught, "host": host, "left": left}
print(json.dumps(anyio.run(main)))
"""
    code = CONTEXT_HOLDS_A_LATE_GENERATOR.replace("CLOSE", "decimal.Decimal(2).sqrt") + "return await tools.slow()\n"
    report = _in_child(child, SESSION=session, CODE=code)
    assert report["cancelled"] is True and report["host"] == [] and report["left"] == 0, report
    assert "Exception ignored" not in report["stderr"], report


@pytest.mark.parametrize("host_change", ["filter", "catch_warnings", "unraisable_hook"])
def test_a_sessions_end_reports_nothing_of_its_late_code_whatever_the_host_changed(host_change):
    """The filter that drops what a run's code warns, and the hook in front of the host's
    unraisable hook, are the host's process-wide settings, which the host may change between
    runs. A review's session, thrown away after the host had added a filter (or left a
    `catch_warnings`, or set its own hook), printed its late code's `re` warning to the host's
    stderr and into the `re` shim's registry. Both are put back in front before every end."""
    child = """
import json, sys, warnings, anyio
sys.path.insert(0, ROOT)
import sandbox
snippet, change = CODE, CHANGE
got = []
async def main():
    session = sandbox.open_session(backend="inprocess")
    if change == "catch_warnings":
        with warnings.catch_warnings():
            await session.run(snippet)
    else:
        await session.run(snippet)
    if change == "filter":
        warnings.simplefilter("default")
    if change == "unraisable_hook":
        sys.unraisablehook = got.append
    session.close()
    registries = sum(len([k for k in getattr(m, "__warningregistry__", ()) if k != "version"])
                     for n, m in list(sys.modules.items()) if n.startswith("sandbox"))
    return {"registries": registries, "hook": len(got)}
print(json.dumps(anyio.run(main)))
"""
    # A pattern `re` warns about, or one it refuses (CPython then reports the error).
    pattern = "[z-a] SNIPPET PATTERN" if host_change == "unraisable_hook" else "[[SNIPPET PATTERN]"
    code = MAP_CLOSES_LATE.replace("CLOSE", f"functools.partial(re.compile, {pattern!r})").replace(
        "import decimal,", "import decimal, re,") + "keep = x\nreturn 1\n"
    report = _in_child(child, CODE=code, CHANGE=host_change)
    assert report["registries"] == 0 and report["hook"] == 0, report
    assert "SNIPPET" not in report["stderr"] and "Warning" not in report["stderr"], report


def test_the_collector_hook_changes_nothing_of_the_hosts():
    """A version of the collector hook put the report gates back in front of the host's
    warnings filters at every collection: C code that read the list's length, allocated (the
    collection started there) and then copied its items (`catch_warnings` copying the filters)
    lost the host's last filters, and CPython crashed when the list shrank. After an in-process
    run, a collection leaves the host's filters and unraisable hook as they were."""
    child = """
import gc, json, sys, warnings, anyio
sys.path.insert(0, ROOT)
import sandbox
anyio.run(lambda: sandbox.run("return 1", backend="inprocess"))
warnings.resetwarnings()
warnings.simplefilter("always")
hook = sys.unraisablehook = lambda unraisable: None
before = list(warnings.filters)
gc.collect()
print(json.dumps({"filters": list(warnings.filters) == before, "hook": sys.unraisablehook is hook}))
"""
    report = _in_child(child)
    assert report["filters"] is True and report["hook"] is True, report
