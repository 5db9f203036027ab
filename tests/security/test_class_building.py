"""Classes built and changed at run time: three-argument `type()`, data-model methods assigned
after a class exists, `__doc__` and other dunder writes.

The snippet's own classes follow Python; host classes, builtins and their instances stay as
they are. `type(name, bases, ns)` goes through the run's class factory with the namespace's
names checked as a class body's are (no pickling hooks, `__class__`, `__getattribute__`, the
ownership key...), the class keywords as a class statement's, and the bases as a class
statement's (no metaclasses, no unsubclassable host classes). A data-model method assigned to
the snippet's own class is stored as the class body would store it (`__deepcopy__` with the
memo hidden); one assigned to an instance never lands where `copy` looks for hooks.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

TYPE_NAMESPACE_REFUSED = [
    pytest.param("type('X', (), {'__reduce_ex__': print})", 'name "__reduce_ex__" is not allowed', id="reduce-hook"),
    pytest.param("type('X', (), {'__class__': int})", 'name "__class__" is not allowed', id="class-cell"),
    pytest.param("type('X', (), {'__getattribute__': getattr})", 'name "__getattribute__" is not allowed', id="getattribute"),
    pytest.param("type('X', (), {'__new__': staticmethod(print)})", 'name "__new__" is not allowed', id="new"),
    pytest.param("type('X', (), {'__sandbox_owner__': 1})", 'name "__sandbox_owner__" is not allowed', id="owner-key"),
    pytest.param("type('X', (), {'__classcell__': 1})", 'name "__classcell__" is not allowed', id="classcell"),
    pytest.param("type('X', (), {'_getattr_': 1})", 'names that start and end with "_" are reserved', id="machinery"),
    pytest.param("type('X', (), {1: 2})", "keys must be plain strings", id="non-str-key"),
    pytest.param("type('X', (), {}, _root=True)", "class keyword '_root' is not allowed", id="private-keyword"),
    pytest.param("type('X', (), {}, metaclass=type)", "class keyword 'metaclass' is not allowed", id="metaclass-keyword"),
    pytest.param("type('X', (type,), {})", "defining metaclasses is not allowed", id="metaclass-base"),
    pytest.param("type('X', (type(type),), {})", "defining metaclasses is not allowed", id="safe-type-base"),
    pytest.param("import dataclasses\ntype('X', (type(dataclasses.field()),), {})", "cannot be subclassed", id="unsubclassable"),
    pytest.param("type('X', (1,), {})", "class bases must be classes", id="non-class-base"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), TYPE_NAMESPACE_REFUSED)
async def test_type_namespace_and_bases_are_checked_like_a_class_statement(sb, backend, code, fragment):
    result = await sb.run(f"{code}\nreturn 1", backend=backend)
    sb.assert_error(result, "exception", "TypeError", fragment)
    assert sb.spy.calls == []


async def test_type_on_a_host_base_leaves_the_host_class_unchanged(isolated):
    code = (
        "import collections, textwrap\n"
        "O = type('O', (collections.OrderedDict,), {'__missing__': lambda self, k: 'mine', 'tag': 1})\n"
        "W = type('W', (textwrap.TextWrapper,), {'sentence_end_re': None})\n"
        "O.extra = 1\nW.x_marker = 2\n"
        "return [O()['k'], W.sentence_end_re, type(collections.OrderedDict) is type]"
    )
    check = (
        "import collections, textwrap\n"
        "state = [hasattr(collections.OrderedDict, 'extra'), hasattr(collections.OrderedDict, '__missing__'),"
        " hasattr(textwrap.TextWrapper, 'x_marker'), textwrap.TextWrapper.sentence_end_re is not None]"
    )
    report = isolated(code, check)
    assert report["result"]["value"] == ["mine", None, True], report
    assert report["before"] == report["after"] == [False, False, False, True]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_type_made_class_is_owned_and_a_host_class_is_not(sb, backend):
    code = (
        "import collections\nX = type('X', (), {})\nX.a = 1\nsetattr(X, 'b', 2)\nX.__call__ = lambda self: 3\n"
        "out = [X.a, X.b, X()()]\n"
        "for f in [lambda: setattr(collections.OrderedDict, 'a', 1), lambda: setattr(type(1), 'a', 1)]:\n"
        "    try:\n        f()\n    except TypeError as e:\n        out.append(str(e))\nreturn out"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [1, 2, 3, "cannot modify class 'OrderedDict': only classes defined in the snippet can be changed",
                            "cannot modify class 'int': only classes defined in the snippet can be changed"]


DUNDER_WRITES_REFUSED = [
    pytest.param("int.__add__ = lambda a, b: 0", "AttributeError", '"__add__" is not accessible', id="builtin-class"),
    pytest.param("import collections\ncollections.OrderedDict.__call__ = print", "AttributeError",
                 '"__call__" is not accessible', id="host-class"),
    pytest.param("setattr(str, '__getitem__', print)", "AttributeError", '"__getitem__" is not accessible',
                 id="setattr-builtin"),
    pytest.param("import collections\ncollections.OrderedDict.__deepcopy__ = print", "AttributeError",
                 '"__deepcopy__" is not accessible', id="host-hook"),
    pytest.param("import re\np = re.compile('a')\np.__call__ = print", "AttributeError", '"__call__" is not accessible',
                 id="host-instance"),
    pytest.param("x = 1\nx.__add__ = print", "AttributeError", '"__add__" is not accessible', id="int-instance"),
    pytest.param("d = {}\nd.__getitem__ = print", "AttributeError", '"__getitem__" is not accessible',
                 id="plain-container"),
    pytest.param("import enum\nenum.Enum.__len__ = print", "AttributeError", '"__len__" is not accessible',
                 id="host-enum-base"),
    pytest.param("class C:\n    pass\nsetattr(C, '__bases__', (int,))", "AttributeError",
                 '"__bases__" is not accessible', id="own-class-bases"),
    pytest.param("class C:\n    pass\nsetattr(C, '__annotations__', {})", "AttributeError",
                 '"__annotations__" is not accessible', id="own-class-metaclass-data"),
    pytest.param("class C:\n    pass\nsetattr(C, '__reduce_ex__', print)", "AttributeError",
                 '"__reduce_ex__" is not accessible', id="own-class-reduce"),
    pytest.param("class C:\n    pass\nc = C()\nc.__deepcopy__ = print", "AttributeError",
                 '"__deepcopy__" is not accessible', id="own-instance-copy-hook"),
    pytest.param("class C:\n    pass\nc = C()\nc.__getattr__ = print", "AttributeError",
                 '"__getattr__" is not accessible', id="own-instance-getattr"),
    pytest.param("import json\njson.dumps.__doc__ = 'x'", "AttributeError", '"__doc__" is not accessible',
                 id="doc-host-function"),
    pytest.param("int.__doc__ = 'x'", "AttributeError", '"__doc__" is not accessible', id="doc-builtin"),
    pytest.param("import textwrap\nsetattr(textwrap.TextWrapper, '__doc__', 'x')", "AttributeError",
                 '"__doc__" is not accessible', id="doc-host-class"),
    pytest.param("print.__doc__ = 'x'", "AttributeError", '"__doc__" is not accessible', id="doc-run-builtin"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "error", "fragment"), DUNDER_WRITES_REFUSED)
async def test_dunder_writes_stay_refused_off_the_snippets_own_classes(sb, backend, code, error, fragment):
    result = await sb.run(f"{code}\nreturn 1", backend=backend)
    sb.assert_error(result, "exception", error, fragment)
    await sb.assert_next_run_ok()


async def test_refused_dunder_writes_leave_host_classes_unchanged(isolated):
    code = (
        "import json, collections, enum\nout = []\n"
        "for target, name in [(int, '__add__'), (collections.Counter, '__call__'), (collections.OrderedDict, '__deepcopy__'),"
        " (enum.Enum, '__len__'), (json.dumps, '__doc__'), (str, '__getitem__')]:\n"
        "    try:\n        setattr(target, name, print)\n    except (AttributeError, TypeError):\n        out.append(name)\n"
        "return out"
    )
    check = (
        "import json, collections, enum\n"
        "state = [int.__add__(1, 2), '__call__' in vars(collections.Counter), '__deepcopy__' in vars(collections.OrderedDict),"
        " '__len__' in vars(enum.Enum), json.dumps.__doc__[:20], str.__getitem__('ab', 1)]"
    )
    report = isolated(code, check)
    assert report["result"]["value"] == ["__add__", "__call__", "__deepcopy__", "__len__", "__doc__", "__getitem__"]
    assert report["before"] == report["after"]
    assert report["before"][:5] == [3, False, False, False, "Serialize ``obj`` to"]


HOOK_WRITES = [
    pytest.param("C.__deepcopy__ = grab", id="statement"),
    pytest.param("setattr(C, '__deepcopy__', grab)", id="setattr"),
    pytest.param("D = type('D', (), {'__deepcopy__': grab})\nC = D", id="type-namespace"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("write", HOOK_WRITES)
async def test_a_written_deepcopy_hook_gets_the_copys_plain_memo(sb, backend, write):
    # However the hook got onto the class, the `copy` prelude calls it as the snippet's own code
    # with its memo: a plain dict of the snippet's objects (tests/security/test_copy_memo.py).
    code = (
        "import copy\nseen = []\ndef grab(self, memo):\n    seen.append(memo)\n    return 'copied'\n"
        "class C:\n    pass\n" + write + "\n"
        "try:\n    r = copy.deepcopy(C())\nexcept TypeError as e:\n    r = str(e)\n"
        "return [r, [type(m).__name__ for m in seen], [sorted(type(v).__name__ for v in m.values()) for m in seen]]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["copied", ["dict"], [["list", "str"]]]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_run_builtins_hide_what_they_are_bound_to(sb, backend):
    code = (
        "out = []\nfor f in [lambda: print._fn, lambda: getattr(print, '_fn'), lambda: getattr(print, '__self__'),"
        " lambda: vars(print), lambda: setattr(print, 'x', 1), lambda: type(print)('print', getattr)]:\n"
        "    try:\n        out.append(repr(f()))\n    except Exception as e:\n        out.append(type(e).__name__)\n"
        "return out + [repr(print), repr(type(print))]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value[:6] == ["AttributeError", "AttributeError", "AttributeError", "TypeError", "TypeError",
                                "TypeError"], result.value
    assert "Output" not in result.value[-2] and "RunGuards" not in "".join(result.value)


# -- sealed classes: judged by the class factory, whatever the bases' __init_subclass__ does --------
SKIP = "class Skip:\n    __slots__ = ()\n    def __init_subclass__(cls, **kw):\n        pass\n"
SEALED_BASES = [
    pytest.param("import asyncio\nB = type(asyncio.timeout(None))", "asyncio.Timeout cannot be subclassed", id="timeout"),
    pytest.param("import asyncio\nB = asyncio.TaskGroup", "asyncio.TaskGroup cannot be subclassed", id="taskgroup"),
    pytest.param("import asyncio\nB = asyncio.Lock", "asyncio.Lock cannot be subclassed", id="lock"),
    pytest.param("import asyncio\nB = asyncio.Queue", "asyncio.Queue cannot be subclassed", id="queue"),
    pytest.param("import asyncio\nasync def f():\n    pass\nB = type(asyncio.create_task(f()))",
                 "asyncio.Task cannot be subclassed", id="task"),
    pytest.param("import pathlib\nB = pathlib.PurePosixPath", "pathlib.PurePosixPath cannot be subclassed", id="purepath"),
    pytest.param("import pathlib\nB = pathlib.Path", "pathlib.Path cannot be subclassed", id="path"),
    pytest.param("import pathlib\nB = type(pathlib.PurePath('a/b').parents)", "pathlib._PathParents cannot be subclassed",
                 id="parents"),
    pytest.param("import io\nB = io.BytesIO", "io.BytesIO cannot be subclassed", id="bytesio"),
    pytest.param("B = type(object.__setattr__).__mro__[1]", "'ReadOnly' cannot be subclassed", id="guards-readonly"),
    pytest.param("B = type(object.__setattr__)", "'_CheckedWrite' cannot be subclassed", id="checked-write"),
    pytest.param("B = type(print)", "'builtin_function_or_method' cannot be subclassed", id="run-builtin"),
    pytest.param("import json\nB = type(json)", "'ModuleShim' cannot be subclassed", id="module-shim"),
    pytest.param("B = type(tools)", "'Namespace' cannot be subclassed", id="tools-namespace"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["statement", "type"])
@pytest.mark.parametrize(("make", "fragment"), SEALED_BASES)
async def test_sealed_classes_cannot_be_subclassed_behind_a_base_that_skips_init_subclass(
    sb, backend, form, make, fragment
):
    # A property on the subclass would catch what the sandbox's own code writes into its private
    # slots (`Timeout.__aenter__` stores the run's scheduler task): the class is never made.
    body = (
        "got = []\n"
        + (
            "class T(Skip, B):\n    @property\n    def _task(self):\n        return got[-1]\n"
            "    @_task.setter\n    def _task(self, v):\n        got.append(v)\n"
            if form == "statement"
            else "T = type('T', (Skip, B), {})\n"
        )
        + "return 'made'"
    )
    result = await sb.run(f"{make}\n{SKIP}{body}", backend=backend)
    sb.assert_error(result, "exception", "TypeError", fragment)
    assert sb.spy.calls == []
    await sb.assert_next_run_ok(backend)


SLOTS_LIAR = (
    "class Liar:\n    def __init__(self):\n        self.n = 0\n"
    "    def __iter__(self):\n        self.n += 1\n"
    "        return iter(['a'] if self.n == 1 else ['__getattr__', '__deepcopy__'])\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("form", ["class Y:\n    __slots__ = Liar()\n", "Y = type('Y', (), {'__slots__': Liar()})\n"])
async def test_slots_are_read_once_and_the_class_gets_what_was_checked(sb, backend, form):
    result = await sb.run(SLOTS_LIAR + form + "return [sorted(k for k in vars(Y) if 'a' <= k[:1]), Y.__slots__]",
                          backend=backend)
    assert result.ok, result
    assert result.value == [["a"], ["a"]]  # no `__getattr__`/`__deepcopy__` slot descriptors
    refused = await sb.run("class Y:\n    __slots__ = iter(['__getattr__'])\nreturn 1", backend=backend)
    sb.assert_error(refused, "exception", "__slots__ name '__getattr__' is not allowed")


def test_the_class_factory_never_asks_a_writable_metaclass() -> None:
    """A base whose metaclass no run shares exists only after an escape (the real `type` in
    hand); its `__hash__`/`__eq__` could claim to be a checked replacement or no sealed class,
    so the factory refuses it before any table lookup. Shared metaclasses (`ABCMeta`, the enum
    shim's, `typing`'s) build classes as before."""
    import abc

    from sandbox.guards import RunGuards

    asked: list[str] = []
    liar = type("Liar", (type,), {"__hash__": lambda c: asked.append("hash") or 0,
                                  "__eq__": lambda c, o: asked.append("eq") or True})
    base = liar("B", (), {})
    factory = RunGuards().class_factory
    with pytest.raises(TypeError, match="the metaclass of base 'B' is not supported in the sandbox"):
        factory("C", (base,), {"__module__": "__snippet__", "__qualname__": "C"})
    assert asked == []
    made = factory("A", (abc.ABC,), {"__module__": "__snippet__", "__qualname__": "A"})
    assert type(made) is abc.ABCMeta


#: Class keywords and bases a class statement may not use, however they are spelled: keywords
#: reach host metaclasses and `__init_subclass__` hooks, and `**{"_root": True}` made a snippet
#: subclass of typing's aliases, whose inherited `__getattr__`/`__setattr__` (host code) served
#: the snippet's private reads and writes from any object: a review read the run's guards and
#: the unchecked `object.__setattr__` that way.
CLASS_STATEMENT_REFUSED = [
    pytest.param("import typing\nkw = {'_root': True}\nclass A(type(typing.List[int]), **kw):\n    pass",
                 "class keyword '_root' is not allowed", id="private-keyword-by-mapping"),
    pytest.param("kw = {'metaclass': type}\nclass A(**kw):\n    pass",  # the policy names the metaclass itself
                 "got multiple values for keyword argument 'metaclass'", id="metaclass-by-mapping"),
    pytest.param("import typing\nclass A(type(typing.List[int])):\n    pass",
                 "cannot be subclassed in the sandbox: its code serves attribute access", id="host-getattr-base"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), CLASS_STATEMENT_REFUSED)
async def test_class_keywords_and_attribute_hooks_of_host_bases_are_refused(sb, backend, code, fragment):
    result = await sb.run(code + "\nreturn 1", backend=backend)
    sb.assert_error(result, "exception", "TypeError", fragment)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_snippets_own_attribute_hooks_and_public_keywords_still_work(sb, backend):
    code = """
class Base:
    def __init_subclass__(cls, tag="", **kw):
        super().__init_subclass__(**kw)
        cls.tag = tag
    def __getattr__(self, name):
        return "dynamic " + name
kw = {"tag": "t"}
class Child(Base, **kw):
    pass
return [Child.tag, Child().anything]
"""
    await sb.assert_harmless(code, ["t", "dynamic anything"], backend=backend)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_dunder_assignments_and_c_data_model_methods_work_as_in_python(sb, backend):
    """What the sandbox does to names and to C code held as data-model methods (plain copies,
    forwarders that run only in the run's steps) changes nothing a program sees: every
    assignment form of a name, a `staticmethod` or a `partial` read off the class, a rebuilt
    `@dataclass(slots=True)` class, and CPython's evaluation order (the value first)."""
    code = """
import dataclasses, functools
order = []
def f():
    "doc"
def g():
    pass
def note(what, value):
    order.append(what)
    return value
g.__name__, g.__doc__ = f.__name__, f.__doc__
g.__doc__ += " (cached)"
f.__qualname__ = g.__qualname__ = "shared"
note("target", g).__module__ = note("value", "mod")
class Registry:
    __call__ = staticmethod(max)
class Sized:
    __len__ = functools.partial(len, [1, 2, 3])
@dataclasses.dataclass(slots=True, eq=False)
class Node:
    name: str
    __hash__ = object.__hash__
n = Node("a")
return [g.__name__, g.__doc__, f.__qualname__, g.__qualname__, g.__module__, order,
        Registry.__call__(1, 5), Registry()(2, 4), Sized.__len__(), len(Sized()), len({n, n})]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["f", "doc (cached)", "shared", "shared", "mod", ["value", "target"], 5, 4, 3, 3, 1]


#: A protocol whose statement fails after CPython made the class (`Protocol.__init_subclass__`
#: refuses a base that is no protocol), handed to the snippet by a body descriptor's
#: `__set_name__`: it stays in `Iterable.__subclasses__()` with typing's hook.
HALF_BUILT = """
import graphlib, typing
got = []
class Grab:
    def __set_name__(self, owner, name):
        got.append(owner)
class D:
    def __get__(self, obj, owner=None):
        return len
class NotAProtocol:
    pass
try:
    class P(typing.Protocol, typing.Iterable, NotAProtocol):
        g = Grab()
        m0 = D()
except TypeError:
    pass
out = []
try:
    class Q(got[0], graphlib.TopologicalSorter):
        pass
except TypeError as e:
    out.append(str(e))
try:
    typing.runtime_checkable(got[0])
except TypeError as e:
    out.append(str(e))
out.append(await tools.check())
return out
"""


#: The same escape with no bases at all (`object.__init_subclass__` refuses a keyword after
#: CPython made the class): a later review's, which a search of the given bases missed.
HALF_BUILT_NO_BASES = """
import graphlib
got = []
class Grab:
    def __set_name__(self, owner, name):
        got.append(owner)
try:
    class P(x=1):
        g = Grab()
except TypeError:
    pass
try:
    class Q(got[0], graphlib.TopologicalSorter):
        pass
except TypeError as e:
    return str(e)
return "accepted"
"""


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
async def test_a_class_whose_statement_failed_with_no_bases_is_nobodys_base(sb, backend):
    result = await sb.run(HALF_BUILT_NO_BASES, backend=backend)
    assert result.error is None and "its class statement failed" in result.value, result


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
async def test_a_class_whose_statement_failed_is_nobodys_base_and_answers_no_host_check(sb, backend):
    """A review caught such a class: the class factory's steps after CPython's had never run on
    it, so it was no base the host-state check saw (graphlib's host code then wrote onto a shared
    function), and its ABC hook was typing's raw one, which the host's own `isinstance(x,
    Iterable)` ran outside the run (`RunOverError` in the host). Such a class is disowned: never a
    base, never the snippet's own, its hook answers only in the run's steps."""
    import collections.abc

    class HostThing:
        pass

    async def check() -> bool:
        return isinstance(HostThing(), collections.abc.Iterable)

    result = await sb.run(HALF_BUILT, backend=backend, bindings={"check": check})
    assert result.error is None, result
    base, checkable, host = result.value
    assert "its class statement failed" in base and "defined in the snippet" in checkable, result.value
    assert host is False


#: A failed class statement inside another class's `__set_name__`: only the inner class is the
#: failed one. A first version disowned every class carrying the run's token, the outer one too,
#: whose own statement then failed with the token's name in its message (a review's).
NESTED_FAILURE = """
class Bad:
    def __init_subclass__(cls):
        raise ValueError("no")
got = []
class D:
    def __set_name__(self, owner, name):
        got.append(owner)
        try:
            class X(Bad):
                pass
        except ValueError:
            pass
class A:
    d = D()
    def __add__(self, o):
        return 1
class Sub(A):
    pass
A.q = 1
return [got[0] is A, A() + 1, Sub() + 2, A.q]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_failed_statement_inside_another_class_statement_disowns_only_its_own_class(sb, backend):
    result = await sb.run(NESTED_FAILURE, backend=backend)
    assert result.error is None, result
    assert result.value == [True, 1, 1, 1]


async def test_a_failed_class_statement_never_walks_every_class(sb, monkeypatch):
    """Looking among every class for the ones a failed statement made cost a review 65 ms per
    statement once it had made 50,000 classes, a few ticks of the budget each: a run overran its
    wall time by minutes. The class factory knows the classes it started (`_BuildToken`), so no
    walk of the class tree starts inside a run's step."""
    from sandbox import crossing, guards

    walks_in_a_step = []
    real = crossing.every_class

    def every_class():
        if crossing.STEPPING.run is not None:
            walks_in_a_step.append(1)
        return real()

    monkeypatch.setattr(crossing, "every_class", every_class)
    monkeypatch.setattr(guards, "every_class", every_class, raising=False)
    result = await sb.run(HALF_BUILT_NO_BASES, backend="inprocess")
    assert result.error is None and "its class statement failed" in result.value, result
    assert walks_in_a_step == []


#: An enum base's `_generate_next_value_` goes into a subclass's namespace before its body: a
#: value with `__set_name__` there would get the class before the run's token is recorded.
PREPARED_SET_NAME = """
import enum
got = []
class S:
    def __set_name__(self, owner, name):
        got.append(owner)
class E(enum.Enum):
    pass
E._generate_next_value_ = S()
try:
    class F(E):
        B = 1
except TypeError as e:
    return [str(e), len(got)]
return ["made", len(got)]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_value_a_metaclass_prepares_gets_no_class_before_the_factory_knows_it(sb, backend):
    result = await sb.run(PREPARED_SET_NAME, backend=backend)
    assert result.error is None, result
    assert result.value == ["class 'F' cannot be made in the sandbox: its base puts '_generate_next_value_', "
                            "an object with __set_name__, before the class body", 0]


#: A class not yet the run's own used as a base with a host class whose code trusts private
#: names the first defines: the class being built (its `__set_name__` runs before the factory
#: records it as owned), or the one `@dataclass(slots=True)` builds from it, outside the factory.
NOT_YET_OWNED_BASE = """
import dataclasses, graphlib, statistics
calls = []
out = []
class Grab:
    def __set_name__(self, owner, name):
        calls.append(owner)
        if len(calls) == WHEN:
            try:
                class Q(owner, graphlib.TopologicalSorter):
                    pass
                q = Q()
                try:
                    q.get_ready()
                except Exception:
                    pass
                out.append("accepted")
            except TypeError as e:
                out.append(str(e))
DECORATOR
class C:
    x: int = 0
    g = Grab()
    _node2info = property(lambda s: {"k": statistics.mean}, lambda s, v: None)
    _ready_nodes = property(lambda s: ["k"], lambda s, v: None)
out.append(getattr(statistics.mean, "npredecessors", "absent"))
return out
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("when", "decorator"), [(1, ""), (2, "@dataclasses.dataclass(slots=True)")],
                         ids=["being-built", "rebuilt-by-dataclass-slots"])
async def test_a_class_not_yet_owned_plants_no_state_a_host_base_trusts(sb, backend, when, decorator):
    """Reviews had `graphlib`'s `get_ready` write `npredecessors` onto the shared
    `statistics.mean` through such a base: the factory checked the names of the run's own bases
    only. Every base that is not a shared class is checked now."""
    code = NOT_YET_OWNED_BASE.replace("WHEN", str(when)).replace("DECORATOR", decorator)
    _assert_refused_and_unwritten(await sb.run(code, backend=backend), "cannot have 'C' as a base, which defines '_node2info'")


def _assert_refused_and_unwritten(result, fragment: str) -> None:
    """The subclass beside `graphlib.TopologicalSorter` was refused, and `get_ready` never wrote
    `npredecessors` onto the shared `statistics.mean` (during the run or after it)."""
    import statistics

    assert result.error is None, result
    refused, written = result.value
    assert fragment in refused, result.value
    assert written == "absent"
    assert "npredecessors" not in vars(statistics.mean)


#: A base the run does not own (yet) whose `__getattr__` is a `staticmethod` of the snippet's
#: function, beside `graphlib.TopologicalSorter`: its reads of `_node2info`/`_ready_nodes` fall
#: through to the hook, and `get_ready` writes `npredecessors` onto what it answers.
FOREIGN_GETATTR_BASE = """
import dataclasses, graphlib, statistics
def ga(name):
    if name == "_node2info":
        return {"k": statistics.mean}
    if name == "_ready_nodes":
        return ["k"]
    if name == "_npassedout":
        return 0
    raise AttributeError(name)
got = []
out = []
def subclass(owner):
    try:
        class Q(owner, graphlib.TopologicalSorter):
            def __init__(self):
                pass
        try:
            Q().get_ready()
        except Exception:
            pass
        out.append("accepted")
    except TypeError as e:
        out.append(str(e))
class Grab:
    def __set_name__(self, owner, name):
        got.append(owner)
        if len(got) == WHEN:
            subclass(owner)
        if len(got) == RAISE_AT:
            raise ValueError("escape")
try:
    DECORATOR
    class C:
        g = Grab()
        __getattr__ = staticmethod(ga)
except Exception:
    pass
if not out:
    subclass(got[-1])
out.append(getattr(statistics.mean, "npredecessors", "absent"))
return out
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("when", "raise_at", "decorator"), [
    (1, 0, ""), (2, 0, "@dataclasses.dataclass(slots=True)"), (0, 2, "@dataclasses.dataclass(slots=True)")],
    ids=["being-built", "rebuilt-by-dataclass-slots", "rebuilt-and-escaped"])
async def test_a_class_not_yet_owned_brings_no_attribute_hook_beside_a_host_base(sb, backend, when, raise_at, decorator):
    """A review's: the factory wrapped or refused a base's `__getattr__` only when the run owned
    the base, and refused a foreign one only when it was a plain function; a `staticmethod`
    answered `graphlib`'s reads of its own state, which wrote onto the shared `statistics.mean`."""
    code = (FOREIGN_GETATTR_BASE.replace("WHEN", str(when)).replace("RAISE_AT", str(raise_at))
            .replace("DECORATOR", decorator or "pass"))
    _assert_refused_and_unwritten(await sb.run(code, backend=backend),
                                  "cannot be subclassed in the sandbox: its code serves attribute access")
