"""Methods of the sandbox's own classes called unbound, with an object the snippet made as
`self` (`Timeout.__aenter__(fake)`, `Task.set_name(holder, ...)`, `PurePath.drive.fget(fake)`).

Their code is the host's: it reads and writes `self`'s private slots natively. Given a snippet
object, `Timeout.__aenter__` would store the run's scheduler task on it, and `Task.set_name`
would write a name through whatever the object's `_task` is (a dataclass `Field`, whose name
`@dataclass` pastes into source it executes). A method read off such a class runs only on an
instance of a class that defines it; on the snippet's own objects it raises CPython's
`descriptor ... doesn't apply` error before any of its code runs.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

FAKE = (
    "class Fake:\n    _entered = False\n    _when = None\n    _handle = None\n    _expired = False\n"
    "    _locked = True\n    _waiters = None\n    _value = 1\n    _drv = 'x'\n    _stream = None\n"
    "    def _arm(self):\n        pass\n"
    "fake = Fake()\n"
)

FOREIGN_SELF = [
    pytest.param("await type(asyncio.timeout(1)).__aenter__(fake)", "'__aenter__' for 'Timeout'", id="timeout-aenter"),
    pytest.param("await asyncio.TaskGroup.__aenter__(fake)", "'__aenter__' for 'TaskGroup'", id="taskgroup-aenter"),
    pytest.param("asyncio.Task.set_name(fake, 'x')", "'set_name' for 'Task'", id="task-set-name"),
    pytest.param("asyncio.Task.cancel(fake)", "'cancel' for 'Task'", id="task-cancel"),
    pytest.param("asyncio.Lock.release(fake)", "'release' for 'Lock'", id="lock-release"),
    pytest.param("asyncio.Event.set(fake)", "'set' for 'Event'", id="event-set"),
    pytest.param("asyncio.Queue.put_nowait(fake, 1)", "'put_nowait' for 'Queue'", id="queue-put"),
    pytest.param("type(asyncio.gather()).cancel(fake)", "'cancel' for", id="gather-cancel"),
    pytest.param("pathlib.PurePath.drive.fget(fake)", "'drive' for 'PurePath'", id="property-fget"),
    pytest.param("pathlib.PurePosixPath.with_name(fake, 'a')", "'with_name' for 'PurePath'", id="path-method"),
    pytest.param("io.BytesIO.getvalue(fake)", "'getvalue' for 'BytesIO'", id="bytesio"),
    pytest.param("asyncio.Task.set_name(self=fake, value='x')", "for 'Task'", id="keyword-self"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("call", "fragment"), FOREIGN_SELF)
async def test_a_sandbox_method_refuses_a_snippet_object_as_self(sb, backend, call, fragment):
    code = f"import asyncio, pathlib, io\n{FAKE}{call}\nreturn [k for k in vars(fake)]"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "TypeError", "descriptor", fragment, "doesn't apply to a 'Fake' object")
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_scheduler_task_never_lands_on_a_snippet_object(sb, backend):
    # The reviewer's route to the run's scheduler: enter a Timeout with a fake self, then read
    # what the host stored on it and forge host-call requests.
    code = (
        f"import asyncio\n{FAKE}"
        "try:\n    await type(asyncio.timeout(1)).__aenter__(fake)\nexcept TypeError:\n    pass\n"
        "return sorted(vars(fake))"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == []  # nothing was written onto the fake
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unbound_calls_on_the_sandbox_classes_own_instances_still_work(sb, backend):
    code = (
        "import asyncio, pathlib, io\n"
        "async def f():\n    return 1\n"
        "lock = asyncio.Lock()\nt = asyncio.create_task(f())\nasyncio.Task.set_name(t, 'mine')\n"
        "p = pathlib.PurePosixPath('a/b.txt')\nb = io.BytesIO(b'hi')\n"
        "async with asyncio.timeout(5):\n    await t\n"
        "try:\n    pathlib.Path.cwd()\nexcept NotImplementedError as e:\n    cwd = str(e)[:15]\n"
        "return [asyncio.Lock.locked(lock), asyncio.Task.get_name(t), pathlib.PurePath.name.fget(p),\n"
        "        pathlib.PurePosixPath.with_suffix(p, '.md').as_posix(), io.BytesIO.getvalue(b).decode(), cwd,\n"
        "        asyncio.Task.set_name.__name__, type(asyncio.Lock).__name__]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [False, "mine", "b.txt", "a/b.md", "hi", "Path.cwd() is n", "set_name", "type"]


DATACLASS_SET_NAME = """
import asyncio, dataclasses
@dataclasses.dataclass
class X:
    a: int = 0
fld = dataclasses.fields(X)[0]
class Holder:
    pass
h = Holder()
h._task = fld
class D:
    def __get__(self, inst, owner):
        asyncio.Task.set_name(h, "a)or(__import__('os'))#")
        return 5
@dataclasses.dataclass(init=False, repr=False)
class Y(X):
    b: int = D()
y = Y()
return repr(y == y)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_set_name_cannot_rename_a_dataclass_field_into_source(sb, backend):
    result = await sb.run(DATACLASS_SET_NAME, backend=backend)
    sb.assert_error(result, "exception", "TypeError", "descriptor 'set_name' for 'Task' objects")
    assert "module 'os'" not in str(result.to_json())


FAKE_FIELD = """
import dataclasses, textwrap
class Liar:
    def __eq__(self, other):
        return True
    def __hash__(self):
        return 0
class Fake:
    name = "a=setattr(__import__('textwrap').TextWrapper,'pwn',__import__('os')),**k):#"
    type = int
    default = dataclasses.MISSING
    default_factory = dataclasses.MISSING
    init = False
    repr = False
    hash = None
    compare = False
    metadata = {}
    kw_only = False
    _field_type = Liar()
@dataclasses.dataclass
class X:
    b: int
X.__dataclass_fields__["z"] = Fake()
class Y(X):
    c: int
dataclasses.dataclass(Y)
return repr(getattr(textwrap.TextWrapper, 'pwn', None))
"""


async def test_a_fake_field_in_dataclass_fields_is_refused_and_the_host_class_unchanged(isolated):
    report = isolated(FAKE_FIELD, "import textwrap\nstate = hasattr(textwrap.TextWrapper, 'pwn')")
    error = report["result"]["error"]
    assert error is not None and "dataclass fields must be made with dataclasses.field()" in error["message"], report
    assert report["before"] is False and report["after"] is False


LOCALCONTEXT_COPY = """
import decimal, textwrap
class C(decimal.Context):
    def copy(self):
        return textwrap.TextWrapper
with decimal.localcontext(C(), prec=5) as ctx:
    got = [type(ctx).__name__, ctx.prec]
try:
    decimal.localcontext(C(), flags=12345, prec='evil')
except TypeError as e:
    got.append(str(e))
return got
"""


async def test_localcontext_copies_a_real_context_whatever_copy_says(isolated):
    check = "import textwrap\nstate = [hasattr(textwrap.TextWrapper, 'prec'), hasattr(textwrap.TextWrapper, 'flags')]"
    report = isolated(LOCALCONTEXT_COPY, check)
    assert report["result"]["value"] == ["Context", 5, "argument must be a signal dict"], report
    assert report["before"] == report["after"] == [False, False]


TEMPLATE_FLAGS = """
import string, re
class L(int):
    def __hash__(self):
        return hash(re.VERBOSE.value)
    def __eq__(self, other):
        return True
    def __or__(self, other):
        return L(int(self) | int(other))
class T(string.Template):
    pattern = "(?P<escaped>zzqq)|(?P<named>x)|(?P<braced>y)|(?P<invalid>w)"
    flags = L(re.IGNORECASE.value)
return [type(T.flags).__name__, T.flags, T('x').safe_substitute()]
"""


async def test_a_templates_flags_reach_re_as_a_plain_int(isolated):
    # A lying int subclass in `re`'s cache key would answer the host's next compile of the same
    # pattern (its `__eq__` says yes), so the host would get the snippet's cached IGNORECASE one.
    check = (
        "import re\nstate = bool(re.compile('(?P<escaped>zzqq)|(?P<named>x)|(?P<braced>y)|(?P<invalid>w)',"
        " re.VERBOSE).match('ZZQQ'))"
    )
    report = isolated(TEMPLATE_FLAGS, check)
    assert report["result"]["value"] == ["int", 2, "x"], report
    assert report["before"] is False and report["after"] is False


# -- the shared host classes' methods ------------------------------------------------------------
# Host *Python* methods of the classes the shims expose (`Counter.copy`, `ChainMap.new_child`,
# `TextWrapper.wrap`, `Fraction.numerator`...) run with host rights on whatever they get as
# `self`: `Counter.copy(cls)` runs `cls.__class__(cls)`, which for a class is the real `type`,
# the unchecked three-argument class maker. Read off the class, by a source read
# (`policy.HOST_METHOD_NAMES`), a computed `getattr`, `super`, a forwarder or a class holding
# it, each comes behind the receiver check.
HOST_FOREIGN_SELF = [
    pytest.param("collections.Counter.copy(textwrap.TextWrapper)", "'copy' for 'Counter' objects doesn't apply "
                 "to a 'type' object", id="source-read"),
    pytest.param("getattr(collections.Counter, 'copy')(textwrap.TextWrapper)", "'copy' for 'Counter'",
                 id="computed-read"),
    pytest.param("typing.Counter.copy(textwrap.TextWrapper)", "'copy' for 'Counter'", id="typing-alias-forwards"),
    pytest.param("collections.Counter[int].copy(textwrap.TextWrapper)", "'copy' for 'Counter'",
                 id="generic-alias-forwards"),
    pytest.param("class C(collections.Counter):\n    pass\nC.copy(textwrap.TextWrapper)", "'copy' for 'Counter'",
                 id="snippet-subclass"),
    pytest.param("class C(collections.Counter):\n    pass\nsuper(C, C).copy(textwrap.TextWrapper)",
                 "'copy' for 'Counter'", id="super"),
    pytest.param("collections.ChainMap.new_child(fake)", "'new_child' for 'ChainMap' objects doesn't apply to a "
                 "'Fake' object", id="chainmap"),
    pytest.param("textwrap.TextWrapper.wrap(fake, 'a b')", "'wrap' for 'TextWrapper'", id="textwrap"),
    pytest.param("fractions.Fraction.numerator.fget(fake)", "'numerator' for 'Fraction'", id="property-fget"),
    pytest.param("class H:\n    n = fractions.Fraction.numerator\nH().n", "'numerator' for 'Fraction' objects "
                 "doesn't apply to a 'H' object", id="property-stored-in-a-class"),
    pytest.param("f = collections.Counter.most_common\nclass H:\n    m = f\nH().m()", "'most_common' for 'Counter'",
                 id="method-stored-in-a-class"),
    # Host code fills the snippet's own classes too (`EnumType` stores the raw
    # `Flag.__invert__`, which run on a class calls its real metaclass): `vars()` judges them.
    pytest.param("import enum\nclass F(enum.Flag):\n    A = 1\nvars(F)['__invert__'](textwrap.TextWrapper)",
                 "'__invert__' for 'Flag' objects doesn't apply to a 'type' object", id="vars-of-a-class-host-code-filled"),
    # `EnumType` puts a member named like a base's property behind an `enum.property` that
    # holds the base's raw accessors; `vars()` judges what those hold too.
    pytest.param("import enum, calendar\nclass E(calendar.Calendar, enum.Enum):\n    firstweekday = 1\n"
                 "vars(E)['firstweekday'].fset(fake, 4)", "'setfirstweekday' for 'Calendar' objects doesn't apply "
                 "to a 'Fake' object", id="enum-redirect-accessor"),
    pytest.param("import enum\nclass E(enum.Enum):\n    value = 1\nvars(E)['value'].fget(fake)",
                 "'value' for 'Enum' objects doesn't apply to a 'Fake' object", id="enum-value-accessor"),
    # A sandbox class that reads its own private slot, read off the class; and a receiver passed
    # by the name of the function's first parameter.
    pytest.param("import zoneinfo\nzoneinfo.ZoneInfo.utcoffset(fake, None)",
                 "'utcoffset' for 'ZoneInfo' objects doesn't apply to a 'Fake' object", id="zoneinfo-method"),
    pytest.param("fractions.Fraction.numerator.fget(a=fake)",
                 "'numerator' for 'Fraction' objects doesn't apply to a 'Fake' object", id="receiver-by-keyword"),
    # A namedtuple's `_asdict`/`_replace` are readable private names, routed as public ones are.
    pytest.param("import urllib.parse\nurllib.parse.SplitResult._asdict(fake)",
                 "'_asdict' for 'SplitResult' objects doesn't apply to a 'Fake' object", id="namedtuple-asdict"),
    pytest.param("import urllib.parse\nurllib.parse.SplitResult._replace(fake)",
                 "'_replace' for 'SplitResult' objects doesn't apply to a 'Fake' object", id="namedtuple-replace"),
]


ROUTES_PAST_THE_CLASS_READ = [
    # Stored in a snippet class: Python binds it to the snippet's instance through `__get__`.
    pytest.param("class Holder:\n    set_name = asyncio.Task.set_name\nHolder().set_name('x')",
                 "'set_name' for 'Task' objects doesn't apply to a 'Holder' object", id="stored-in-a-class"),
    # A property whose getter says it equals everything, in the fake's class.
    pytest.param(
        "class Liar:\n    def __eq__(self, other):\n        return True\n    def __hash__(self):\n        return 0\n"
        "class Fake2(Fake):\n    anything = property(Liar())\n"
        "await type(asyncio.timeout(1)).__aenter__(Fake2())",
        "'__aenter__' for 'Timeout' objects doesn't apply to a 'Fake2' object", id="lying-property"),
    # `super` looks names up in the classes' own dictionaries, past the metaclass (it never
    # starts past one of the sandbox's own classes: below).
    pytest.param("super(pathlib.PurePosixPath, pathlib.PurePosixPath).with_name(fake, 'b')",
                 "'with_name' for 'PurePath' objects", id="super-pathlib"),
    pytest.param("super(pathlib.PosixPath, pathlib.PosixPath).drive.fget(fake)", "'drive' for 'PurePath' objects",
                 id="super-property"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), [*ROUTES_PAST_THE_CLASS_READ, *HOST_FOREIGN_SELF])
async def test_routes_past_the_class_read_meet_the_same_check(sb, backend, code, fragment):
    imports = "import asyncio, pathlib, collections, fractions, textwrap, typing\n"
    result = await sb.run(f"{imports}{FAKE}{code}\nreturn sorted(vars(fake))", backend=backend)
    sb.assert_error(result, "exception", "TypeError", "descriptor", fragment)
    assert "<class 'type'>" not in str(result.to_json())
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_super_never_starts_past_a_sandbox_class(sb, backend):
    # The sandbox's subclasses of host classes override what the host's version would do with
    # host rights (`typing.Annotated`'s aliases); `super(Sub, x)` starts past `Sub`, so it is
    # refused for them. A snippet's own subclass of a host class keeps `super` as in CPython.
    code = f"""import asyncio, collections
{FAKE}
out = []
for start in (asyncio.BoundedSemaphore, asyncio.Lock):
    try:
        super(start, start).acquire
    except TypeError as e:
        out.append(str(e))
class C(collections.Counter):
    def most_common(self, n=None):
        return ["mine"]
return out + [super(C, C(a=2)).most_common(), C(a=2).most_common(), sorted(vars(fake))]
"""
    result = await sb.run(code, backend=backend)
    said = "super() cannot start past '{}': it is the sandbox's own class"
    assert result.error is None and result.value == [
        said.format("BoundedSemaphore"), said.format("Lock"), [["a", 2]], ["mine"], []], result


@pytest.mark.parametrize("backend", BACKENDS)
async def test_checked_methods_behave_like_functions(sb, backend):
    code = (
        "import asyncio, pathlib\n"
        "lock = asyncio.Lock()\n"
        "class Own:\n    def __init__(self):\n        super().__init__()\n        self.ok = True\n"
        "return [asyncio.Lock.locked(self=lock), asyncio.Lock.release == asyncio.Lock.release,\n"
        "        len({asyncio.Lock.release, asyncio.Lock.release}), asyncio.Lock.locked.__doc__ == lock.locked.__doc__,\n"
        "        asyncio.Lock.locked.__name__, Own().ok]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [False, True, 1, True, "locked", True]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("route", ["getattr(asyncio.Task, '__init__')", "asyncio.Task.__init__"])
async def test_a_live_task_cannot_be_initialised_again(sb, backend, route):
    # The policy refuses `__init__` reads outside `super().__init__`; the class read refuses the
    # call too, so a task's slots never point at an object the snippet chose.
    code = (
        "import asyncio, dataclasses\n@dataclasses.dataclass\nclass X:\n    a: int = 0\n"
        "async def f():\n    return 1\nt = asyncio.create_task(f())\nawait t\n"
        f"init = {route}\ninit(t, None, dataclasses.fields(X)[0])\nreturn t.get_name()"
    )
    result = await sb.run(code, backend=backend)
    assert result.error is not None and result.error.kind == "exception", result
    assert "__init__" in result.error.message or "cannot be initialised again" in result.error.message
    assert sb.spy.calls == []


def test_the_class_read_refuses_re_initialising_a_live_object() -> None:
    # The layer under the policy's `__init__` refusal, exercised from host code: a class read
    # of a sealed class's `__init__` will not run on an existing instance.
    from sandbox.shims.io import BytesIO

    stream = BytesIO(b"kept")
    with pytest.raises(TypeError, match="'BytesIO' objects cannot be initialised again"):
        BytesIO.__init__(stream, b"replaced")
    assert stream.getvalue() == b"kept"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_real_type_never_comes_back_from_counter_copy(sb, backend):
    # The route itself: with the real `type` a snippet builds classes outside the class checks.
    code = (
        "import collections, textwrap\n"
        "try:\n    t = collections.Counter.copy(textwrap.TextWrapper)\nexcept TypeError as e:\n    t = str(e)\n"
        "return [t, repr(type(textwrap.TextWrapper))]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["descriptor 'copy' for 'Counter' objects doesn't apply to a 'type' object",
                            "<class 'type'>"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_host_methods_still_work_on_their_own_instances(sb, backend):
    code = (
        "import collections, fractions, textwrap, typing\n"
        "c = collections.Counter('aab')\n"
        "class C(collections.Counter):\n    pass\n"
        "w = textwrap.TextWrapper(width=3)\n"
        "f = fractions.Fraction(2, 6)\n"
        "m = collections.ChainMap({'a': 1})\n"
        "return [collections.Counter.copy(c), dict(getattr(collections.Counter, 'copy')(C('b'))),\n"
        "        typing.Counter.most_common(c, 1), C.copy(C('x')), type(C('x').copy()).__name__,\n"
        "        textwrap.TextWrapper.wrap(w, 'a b c'), w.fill('a b'), fractions.Fraction.numerator.fget(f),\n"
        "        f.numerator, f.denominator, (1.5).real, collections.ChainMap.new_child(m)['a'],\n"
        "        collections.Counter.copy.__name__, repr(collections.Counter.copy), c.copy() == c,\n"
        "        {'k': 1}.copy(), [1].copy()]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [{"a": 2, "b": 1}, {"b": 1}, [["a", 2]], {"x": 1}, "C", ["a b", "c"], "a b", 1,
                            1, 3, 1.5, 1, "copy", "<function Counter.copy>", True, {"k": 1}, [1]]


def test_every_host_method_name_is_routed_or_receiver_agnostic() -> None:
    # A new shim that exposes a class with a Python method under a new public name fails here
    # until the name is routed (`policy.HOST_METHOD_NAMES`) or the method audited as one that
    # treats `self` as an operator would (`policy.RECEIVER_AGNOSTIC`).
    import sandbox
    from sandbox import crossing
    from sandbox.execution import Execution

    Execution("return 1", ["f"], sandbox.Limits())  # the first run's shims freeze and register
    from sandbox.policy import (
        HOST_METHOD_NAMES,
        RECEIVER_AGNOSTIC,
        RUNTIME_CHECKED_ATTRIBUTES,
        receiver_agnostic,
    )

    found = crossing.host_methods()
    assert "copy" in found and "wrap" in found  # the registry saw the shared classes
    need = {name for name, methods in found.items() if not all(receiver_agnostic(m) for m in methods)}
    routed = HOST_METHOD_NAMES | RUNTIME_CHECKED_ATTRIBUTES  # the latter through `_getattr_`
    assert need <= routed, sorted(need - routed)
    assert HOST_METHOD_NAMES <= set(found), sorted(HOST_METHOD_NAMES - set(found))  # no stale names
    audited = {f"{(m.fget or m.fset).__module__}.{(m.fget or m.fset).__qualname__}" if isinstance(m, property)
               else f"{m.__module__}.{m.__qualname__}" for ms in found.values() for m in ms}
    stale = {entry for entry in RECEIVER_AGNOSTIC
             if not any(a == entry or (entry.endswith(".") and a.startswith(entry)) for a in audited)}
    assert not stale, sorted(stale)


# A class pattern reads its attributes natively: `case object(copy=f)` matches a class as well as
# an instance, and would bind the raw `Counter.copy`. The pattern judges each such read first.
PATTERN_ROUTES = [
    pytest.param("match collections.Counter:\n    case object(copy=f):\n        leaked = f\n", "object(...)",
                 "'copy'", id="keyword"),
    pytest.param("match collections.Counter:\n    case type(most_common=f):\n        leaked = f\n", "type(...)",
                 "'most_common'", id="keyword-on-type"),
    # A runtime protocol checks structurally: a class with the members matches, a class too.
    pytest.param("@typing.runtime_checkable\nclass Q(typing.Protocol):\n    __match_args__ = ('copy',)\n"
                 "    def copy(self): ...\nclass K(collections.Counter):\n    __match_args__ = ('copy',)\n"
                 "match K:\n    case Q(f):\n        leaked = f\n", "Q(...)", "'copy'", id="positional-protocol"),
    pytest.param("match [collections.Counter]:\n    case [object(elements=f)]:\n        leaked = f\n",
                 "object(...)", "'elements'", id="nested"),
    # Snippet code that runs between the check's read and CPython's (a descriptor's `__get__`, an
    # earlier keyword's read) deletes what the check saw; CPython's read then finds the raw
    # `Counter.copy`. Off a class the pattern is refused whatever the class holds now.
    pytest.param("class D:\n    def __get__(self, inst, owner):\n        del K.copy\n"
                 "class K(collections.Counter):\n    copy = D()\n"
                 "match K:\n    case object(copy=f):\n        leaked = f\n", "object(...)", "'copy'",
                 id="descriptor-deletes-between-reads"),
    pytest.param("class D:\n    def __get__(self, inst, owner):\n        del K.copy\n        return 0\n"
                 "class K(collections.Counter):\n    copy = 1\n    x = D()\n"
                 "match K:\n    case object(x=_, copy=f):\n        leaked = f\n", "object(...)", "'copy'",
                 id="earlier-keyword-deletes"),
]


def _attempt(modules: str, route: str, bound: str) -> str:
    """A snippet that runs `route` and returns [the TypeError's text, what `bound` holds], or
    ['matched', repr of it] when no TypeError came."""
    body = "".join("    " + line + "\n" for line in route.splitlines())
    return (f"import {modules}\n{bound} = None\ntry:\n{body}except TypeError as e:\n"
            f"    return [str(e), {bound}]\nreturn ['matched', repr({bound})]")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("route", "pattern", "name"), PATTERN_ROUTES)
async def test_a_class_pattern_never_binds_a_raw_host_method(sb, backend, route, pattern, name):
    result = await sb.run(_attempt("collections, typing", route, "leaked"), backend=backend)
    assert result.ok, result
    message, leaked = result.value
    assert message.startswith(f"class pattern {pattern} would read attribute {name} off a class: "), message
    assert leaked is None  # nothing was bound


# A positional pattern may read the snippet's own private names (`__match_args__ = ('_x',)`), but
# the guard's look at the pattern's class says nothing about the subject: a subclass that
# forwards every read (`list[int]`'s type), a host base before the snippet's own in the MRO, or a
# deletion after the check sends CPython's native read to a host object's private state.
PRIVATE_ROUTES = [
    pytest.param(
        "def private(obj, name):\n    C = type('C', (), {'__match_args__': (name,)})\n    setattr(C, name, 0)\n"
        "    S = type('S', (type(list[int]), C), {})\n    match S(obj, ()):\n        case C(v):\n            return v\n"
        "got = private(object.__setattr__, '_guards')\n",
        "'_guards' through a forwarding lookup", id="forwarding-subclass"),
    pytest.param(
        "class C:\n    __match_args__ = ('_numerator',)\n    _numerator = 0\n"
        "class S(C, fractions.Fraction):\n    pass\n"
        "def subject():\n    delattr(C, '_numerator')\n    return S(7, 3)\n"
        "match subject():\n    case C(v):\n        got = v\n",
        # (Refused now when `S` is made: its base `C` defines a name `Fraction`'s code uses.)
        "class 'S' cannot have 'C' as a base, which defines '_numerator'", id="deleted-after-the-check"),
    pytest.param(
        "class C:\n    __match_args__ = ('_months',)\n    _months = 'mine'\n"
        "class S(type(calendar.month_name), C):\n    pass\n"
        "match S('%B'):\n    case C(v):\n        got = v\n",
        "class 'S' cannot have 'C' as a base, which defines '_months'", id="host-base-first"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("route", "fragment"), PRIVATE_ROUTES)
async def test_a_positional_pattern_reads_a_private_name_only_where_all_of_it_is_the_snippets(
    sb, backend, route, fragment
):
    result = await sb.run(_attempt("calendar, fractions", route, "got"), backend=backend)
    assert result.ok, result
    message, got = result.value
    assert message.startswith(("class pattern C(...) would read attribute " + fragment, fragment)), message
    assert got is None
    import calendar

    assert calendar.month_name[1] == "January"  # the host's shared month list is unchanged


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_stand_in_stays_out_of_a_class_body_and_cannot_be_subclassed(sb, backend):
    code = (
        "class P:\n    __match_args__ = ('a', '_b')\n    a = 4\n    _b = 5\n"
        "class K:\n    match P():\n        case P(v, w):\n            pos = [v, w]\n"
        "return [K.pos, sorted(n for n in vars(K) if n.startswith('_m'))]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [[4, 5], []]  # the snippet's own private name reads as in Python
    from sandbox.crossing import judged_pattern

    stand_in = judged_pattern(int, None, ("real",), lambda obj: False)
    with pytest.raises(TypeError, match="a class pattern's stand-in cannot be subclassed"):
        type("X", (stand_in,), {})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_class_pattern_never_reads_a_routed_name_through_a_forwarder(sb, backend):
    # `K[int]` forwards attribute reads to the class `K`: the raw `Counter.copy`.
    code = (
        "import collections, typing\nT = typing.TypeVar('T')\nleaked = None\n"
        "class K(collections.Counter, typing.Generic[T]):\n    pass\n"
        "try:\n    match K[int]:\n        case object(copy=f):\n            leaked = f\n"
        "except TypeError as e:\n    return [str(e), leaked]\nreturn ['matched', repr(leaked)]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [
        "class pattern object(...) would read attribute 'copy' through a forwarding lookup: match object() "
        "as x and read x.copy in the case body", None]


def test_a_positional_class_pattern_reads_the_match_args_the_guard_checked() -> None:
    # A shared metaclass could answer `__match_args__` dynamically where the guard found none in
    # the class dictionaries; CPython reads the stand-in's instead, so the pattern takes no
    # positional sub-pattern.
    from sandbox.crossing import make_immutable
    from sandbox.guards import RunGuards

    meta = type("M", (type,), {"__instancecheck__": lambda c, s: True, "__getattr__": lambda c, n: ("__globals__",)})
    make_immutable(meta)
    klass = meta("C", (), {})
    stand_in = RunGuards().match_class(klass, 1)
    assert stand_in is not klass and "__match_args__" not in type.__getattribute__(stand_in, "__dict__")
    bound = []
    with pytest.raises(TypeError, match=r"C\(\) accepts 0 positional sub-patterns \(1 given\)"):
        match test_a_positional_class_pattern_reads_the_match_args_the_guard_checked:
            case stand_in(g):
                bound.append(g)
    assert bound == []


def test_a_class_pattern_never_asks_a_writable_metaclass() -> None:
    # A snippet that somehow held the real `type` could build a metaclass that claims, through
    # `__hash__`/`__eq__`, to be `int` (skipping the `__match_args__` checks: a review read
    # `len.__self__`, the real builtins, that way) or any class the run made. Its classes are
    # refused in patterns, and ownership is decided by identity.
    from sandbox.guards import OwnedClasses, RunGuards

    liar = type("Liar", (type,), {"__hash__": lambda c: hash(int), "__eq__": lambda c, o: True,
                                  "__instancecheck__": lambda c, x: True})
    klass = liar("R", (), {"__match_args__": ("__self__",)})
    guards = RunGuards()
    with pytest.raises(TypeError, match=r"class pattern R\(\.\.\.\): its metaclass is not supported"):
        guards.match_class(klass, 1)
    assert guards._judged_patterns == {}
    owned = OwnedClasses()
    mine = type("Mine", (), {})
    owned.add(mine)
    assert mine in owned and klass not in owned and int not in owned
    del mine
    import gc

    gc.collect()
    assert len(owned) == 0


@pytest.mark.parametrize("backend", BACKENDS)
async def test_class_patterns_read_host_method_names_on_their_own_instances(sb, backend):
    # These are the values `x.numerator` etc. give in source; the pattern hands them out the same.
    code = (
        "import collections, fractions, urllib.parse as up\n"
        "def kind(v):\n"
        "    match v:\n"
        "        case fractions.Fraction(numerator=0):\n            return 'zero'\n"
        "        case fractions.Fraction(numerator=n, denominator=1 | 2 as d):\n            return ['half', n, d]\n"
        "        case up.SplitResult(hostname=h, port=p):\n            return [h, p]\n"
        "        case complex(real=r, imag=i):\n            return [r, i]\n"
        "        case collections.Counter(copy=c, total=t):\n            return [c()['a'], t()]\n"
        "        case _:\n            return 'other'\n"
        "class Own:\n    __match_args__ = ('copy',)\n    def copy(self):\n        return 'own'\n"
        "match Own():\n    case Own(c):\n        own = c()\n"
        "class D:\n    def __get__(self, inst, owner):\n        del K.copy\n"
        "class K(collections.Counter):\n    copy = D()\n"
        "match K('ab'):\n    case object(copy=m):\n        bound = [type(m).__name__, m()['a']]\n"
        "return [kind(fractions.Fraction(0)), kind(fractions.Fraction(3, 2)), kind(up.urlsplit('http://h:81/')),\n"
        "        kind(2j), kind(collections.Counter('aab')), kind(5), own, bound]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    # The instance's read that falls through to `Counter.copy` binds it, as `x.copy` would.
    assert result.value == ["zero", ["half", 3, 2], ["h", 81], [0.0, 2.0], [2, 3], "other", "own", ["method", 1]]
