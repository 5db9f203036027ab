"""Objects that forward attribute reads, and the stdlib state they could reach.

A typing alias (`typing.Annotated[X, 0]`, `typing.Type`), a `types.GenericAlias` or a bound
method hands out its target's attributes. The runtime guard used to decide `format`, `mro` and
`register` by the receiver's type, so a forwarding receiver got the real `str.format`, the raw
`type.mro` (which lists the real memberless enum bases) and a host ABC's `register`. The guard
now judges what the read returns, by identity, whatever the receiver is. The same file covers
the neighbouring holes: copy hooks defined at class level, ABC registration through any alias,
and stdlib methods that cache process-wide on a caller's `str` (`datetime.strptime`,
`Pattern.sub`). Each case asserts the refusal (or the plain-string call) and the absence of the
effect; the last section checks that ordinary typing, formatting and copying keep working.
"""

from __future__ import annotations

import collections.abc
import copy
import datetime
import enum
import operator
import re
import sys
from typing import Any

import pytest

import sandbox
from sandbox import shims
from sandbox.execution import Execution

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: Snippet expressions that wrap `@` in an object forwarding attribute reads to it.
FORWARDERS = {
    "Annotated": "typing.Annotated[@, 0]",
    "GenericAlias": "type(list[int])(@, ())",
    "typing-alias": "type(typing.List[int])(@, ())",
    "MethodType": "type(C().m)(@, 0)",
}
PRELUDE = """
import typing, enum, datetime, re, copy, operator
class C:
    def m(self):
        return 1
"""


def wrap(kind: str, target: str) -> str:
    return FORWARDERS[kind].replace("@", target)


# -- mro: the hidden enum bases stay hidden ---------------------------------------------------------
MRO_READS = {
    **{f"{kind}[Enum].mro()": wrap(kind, "enum.Enum") + ".mro()" for kind in FORWARDERS},
    "typing.Type.mro(Enum)": "typing.Type.mro(enum.Enum)",
    "typing.Type[int].mro(Enum)": "typing.Type[int].mro(enum.Enum)",
    "Annotated[Enum].mro via getattr": "getattr(typing.Annotated[enum.Enum, 0], 'mro')()",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("expr", MRO_READS.values(), ids=MRO_READS.keys())
async def test_mro_through_a_forwarder_hides_the_enum_bases(sb, backend: str, expr: str) -> None:
    result = await sb.run(PRELUDE + f"return [repr(c) for c in {expr}]", backend=backend)
    assert result.ok, result
    # Exactly what `enum.Enum.mro()` shows: the shim class and `object`, never the real base.
    assert result.value == ["<enum 'Enum'>", "<class 'object'>"], result.value
    sb.assert_no_leak(result)


#: Route (a): the raw `type.mro` lists the real `enum.Enum`; its functional API defines a
#: class-level `__reduce_ex__`, and `copy.copy` then runs `setattr(attrgetter, "_count", -1)`.
ENUM_COPY_PLANT = PRELUDE + """
R = {real}
def mk():
    return operator.attrgetter
def red(self, proto):
    return (mk, (), (None, {{"_count": -1}}))
E = R("E", {{"A": 1, "__reduce_ex__": red, "__copy__": None}})
copy.copy(E.A)
"""
REAL_ENUM_READS = {
    "typing.Type.mro": "typing.Type.mro(enum.Enum)[1]",
    "Type[int].mro": "typing.Type[int].mro(enum.Enum)[1]",
    "Annotated.mro": "typing.Annotated[enum.Enum, 0].mro()[1]",
    "GenericAlias.mro": "type(list[int])(enum.Enum, ()).mro()[1]",
}


@pytest.mark.parametrize("real", REAL_ENUM_READS.values(), ids=REAL_ENUM_READS.keys())
async def test_enum_copy_plant_through_a_forwarder_escape_fails_worker(attrgetter_plant, real: str) -> None:
    await attrgetter_plant.assert_worker_escape_fails(ENUM_COPY_PLANT.format(real=real))


def test_enum_copy_plant_through_a_forwarder_inprocess(attrgetter_plant) -> None:
    report = attrgetter_plant.assert_inprocess_contained(
        ENUM_COPY_PLANT.format(real=REAL_ENUM_READS["typing.Type.mro"])
    )
    assert "object() takes no arguments" in report["result"]["error"]["message"]


# -- class-level copy hooks ----------------------------------------------------------------------
def _snippet_function() -> tuple[Any, list[Any]]:
    """A function compiled from a snippet (what a data-driven class builder could be handed), and
    the list it records its calls in."""
    code = """
import operator
calls = []
def mk():
    return operator.attrgetter
def red(self, proto):
    calls.append(proto)
    return (mk, (), (None, {"_count": -1}))
return [red, calls]
"""
    ex = Execution(code, [], sandbox.Limits())
    ex.start()
    ex.step()
    main = ex.scheduler.main
    assert main is not None and main.done and main.error is None
    red, calls = main.value
    return red, calls


def _run_copy_shim() -> Any:
    """A run's own `copy` module, as its snippet imports it."""
    ex = Execution("return 1", [], sandbox.Limits())
    return ex.globals["__builtins__"]["__import__"]("copy", ex.globals, None, (), 0)


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_class_level_reduce_hook_from_data_is_never_called(how: str) -> None:
    """Even with the real enum base in hand (as route (a) had), a class-level reduce hook that no
    class statement defined is never called: the prelude runs no reduce protocol, and an enum
    member is its own copy."""
    red, calls = _snippet_function()
    copier = getattr(_run_copy_shim(), how)
    made = enum.Enum("Made", {"A": 1, "__reduce_ex__": red, "__copy__": None})  # type: ignore[misc]
    assert copier(made.A) is made.A
    if how == "deepcopy":
        assert copier([{"k": made.A}])[0]["k"] is made.A  # nested: a deep copy reaches it too
    assert calls == []


def test_class_level_getstate_hook_from_data_is_refused_uncalled() -> None:
    red, calls = _snippet_function()
    made = type("Made", (), {"__getstate__": red})
    copy_shim = _run_copy_shim()
    for copier in (copy_shim.copy, copy_shim.deepcopy):
        with pytest.raises(TypeError, match="cannot copy a 'Made' object in the sandbox"):
            copier(made())
    assert calls == []


# -- format: the real str.format never comes back ------------------------------------------------
FORMAT_READS = {
    **{f"{kind}[str].format": wrap(kind, "str") + ".format('{0.__globals__}', getattr)" for kind in FORWARDERS},
    **{f"{kind}[str].format_map": wrap(kind, "str") + ".format_map('{x.__globals__}', {'x': getattr})"
       for kind in FORWARDERS},
    "GenericAlias['...'].format": "type(list[int])('{0.__globals__}', ()).format(getattr)",
    "Annotated[str] via getattr": "getattr(typing.Annotated[str, 0], 'format')('{0.__globals__}', getattr)",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("expr", FORMAT_READS.values(), ids=FORMAT_READS.keys())
async def test_format_through_a_forwarder_is_guarded(sb, backend: str, expr: str) -> None:
    result = await sb.run(PRELUDE + f"print('before')\nprint({expr})", backend=backend)
    sb.assert_error(result, "exception", "__globals__", "private")
    assert result.logs == ["before"], result.logs  # nothing of the host's globals was printed


async def test_format_route_to_import_fails(sb) -> None:
    code = PRELUDE + "return typing.Annotated[str, 0].format('{0.__globals__[_builtins].__import__}', getattr)"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "private")
    assert "__import__" not in repr(result.value)


# -- ABC registration through any alias ------------------------------------------------------------
REGISTER_READS = {
    **{f"{kind}[Mapping].register": wrap(kind, "typing.Mapping") + ".register(int)" for kind in FORWARDERS},
    "Annotated[Annotated[Mapping]].register": "typing.Annotated[typing.Annotated[typing.Mapping, 0], 1].register(int)",
    "Mapping.mro()[0].register": "typing.Mapping.mro()[0].register(int)",
    "getattr(Annotated[Mapping], 'register')": "getattr(typing.Annotated[typing.Mapping, 0], 'register')(int)",
}


@pytest.mark.parametrize("expr", REGISTER_READS.values(), ids=REGISTER_READS.keys())
async def test_abc_register_through_a_forwarder_is_refused(sb, expr: str) -> None:
    result = await sb.run(PRELUDE + expr + "\nreturn isinstance(1, typing.Mapping)")
    sb.assert_error(result, "exception", "ABC registration is not available")
    assert not issubclass(int, collections.abc.Mapping)


def test_abc_register_through_a_forwarder_leaves_the_host_abc_unchanged(isolated) -> None:
    code = PRELUDE + REGISTER_READS["Annotated[Mapping].register"]
    report = isolated(code, "import collections.abc\nstate = issubclass(int, collections.abc.Mapping)")
    assert report["before"] is False and report["after"] is False
    assert "ABC registration is not available" in report["result"]["error"]["message"]


async def test_data_driven_register_is_refused_like_a_direct_read(sb) -> None:
    result = await sb.run(PRELUDE + "return repr(operator.methodcaller('register', int)(typing.Mapping))")
    sb.assert_error(result, "exception", "ABC registration is not available")
    assert not issubclass(int, collections.abc.Mapping)


@pytest.mark.parametrize(
    ("expr", "direct"),
    [("operator.attrgetter('mro')(typing.Type)", "typing.Type.mro"),
     ("operator.attrgetter('strptime')(datetime.datetime)", "datetime.datetime.strptime"),
     ("operator.methodcaller('sub', 'x', 'a')(re.compile('a'))", "re.compile('a').sub('x', 'a')")],
)
async def test_data_driven_getters_get_the_judged_values(sb, expr: str, direct: str) -> None:
    # attrgetter/methodcaller read with the snippet's own getattr (they are prelude code), so a
    # judged name comes back as the same stand-in a direct read gives.
    result = await sb.run(PRELUDE + f"return [repr({expr}), repr({direct})]")
    assert result.error is None, result.error
    assert result.value[0] == result.value[1]


# -- stdlib caches keyed on a caller's str ------------------------------------------------------------
#: A `str` subclass that claims to be `target` (same hash, equal to it) while holding other text.
LIAR = """
class Liar(str):
    def __hash__(self):
        return hash(TARGET)
    def __eq__(self, other):
        return other == TARGET
"""

STRPTIME_CALLS = {
    "datetime.strptime": "datetime.datetime.strptime('05', Liar('%d'))",
    "instance.strptime": "datetime.datetime(2000, 1, 1).strptime('05', Liar('%d'))",
    "subclass.strptime": "D.strptime('05', Liar('%d'))",
    "Annotated.strptime": "typing.Annotated[datetime.datetime, 0].strptime('05', Liar('%d'))",
    "GenericAlias.strptime": "type(list[int])(datetime.datetime, ()).strptime('05', Liar('%d'))",
    "getattr strptime": "getattr(datetime.datetime, 'strptime')('05', Liar('%d'))",
}


@pytest.mark.parametrize("call", STRPTIME_CALLS.values(), ids=STRPTIME_CALLS.keys())
async def test_strptime_with_a_lying_str_leaves_the_host_cache_unpoisoned(call: str) -> None:
    """In-process, the host's own `strptime` (here: a binding, during the run) must still parse
    with its own format, and `_strptime`'s cache holds only plain strings."""
    target = "%Y-%j-" + call.split("(")[0][-3:]  # a format the host has not cached yet
    import _strptime

    seen: list[Any] = []

    async def probe() -> list[Any]:
        keys = [type(k).__name__ for k in list(_strptime._regex_cache)]
        parsed = datetime.datetime.strptime("2020-001-" + target[-3:], target).year
        seen.append(parsed)
        return [parsed, sorted(set(keys))]

    code = (
        f"import datetime, typing\nTARGET = {target!r}\n" + LIAR
        + "class D(datetime.datetime):\n    pass\n"
        + f"got = {call}\nreturn [got.day, await tools.probe()]"
    )
    try:
        result = await sandbox.run(code, bindings={"probe": probe}, backend="inprocess")
    finally:
        _strptime._regex_cache.clear()
    assert result.ok, result
    assert result.value == [5, [2020, ["str"]]], result.value
    assert seen == [2020]


async def test_strptime_with_a_lying_str_works_in_a_worker(sb) -> None:
    code = "import datetime\nTARGET = '%Y'\n" + LIAR + "return datetime.datetime.strptime('07', Liar('%d')).day"
    result = await sb.run(code)
    assert result.ok and result.value == 7, result


RE_SUB_CALLS = {
    "re.sub": "re.sub('(a)', Liar(r'\\1x'), 'a')",
    "re.subn": "re.subn('(a)', Liar(r'\\1x'), 'a')[0]",
    "re.sub(repl=)": "re.sub('(a)', repl=Liar(r'\\1x'), string='a')",
    "Pattern.sub": "re.compile('(a)').sub(Liar(r'\\1x'), 'a')",
    "Pattern.subn": "re.compile('(a)').subn(Liar(r'\\1x'), 'a')[0]",
    "re.Pattern.sub unbound": "re.Pattern.sub(re.compile('(a)'), Liar(r'\\1x'), 'a')",
    "Annotated[pattern].sub": "typing.Annotated[re.compile('(a)'), 0].sub(Liar(r'\\1x'), 'a')",
    "getattr(pattern, 'sub')": "getattr(re.compile('(a)'), 'sub')(Liar(r'\\1x'), 'a')",
}


@pytest.mark.parametrize("call", RE_SUB_CALLS.values(), ids=RE_SUB_CALLS.keys())
def test_re_sub_with_a_lying_template_leaves_the_host_cache_unpoisoned(isolated, call: str) -> None:
    """`re` caches compiled replacement templates process-wide (`re._compile_repl`), keyed on the
    template object; the in-process backend does not clear it, so the host's own `re.sub` after
    the run must still use its own template."""
    code = "import re, typing\nTARGET = '\\\\1y'\n" + LIAR + f"return {call}"
    report = isolated(code, "import re\nstate = re.sub('(a)', r'\\1y', 'a')")
    assert report["result"]["error"] is None, report
    assert report["result"]["value"] == "ax"  # the snippet's own call used its own text
    assert report["before"] == "ay" and report["after"] == "ay", report


BYTES_LIARS = {
    "bytes, C methods": "class Liar(bytes):\n    __hash__ = TARGET.__hash__\n    __eq__ = bytes.__ne__\n",
    "bytes, Python methods": "class Liar(bytes):\n    def __hash__(self):\n        return hash(TARGET)\n"
                             "    def __eq__(self, other):\n        return other == TARGET\n",
    "bytearray": "class Liar(bytearray):\n    def __hash__(self):\n        return hash(TARGET)\n"
                 "    def __eq__(self, other):\n        return other == TARGET\n",
}
BYTES_SUB_CALLS = {
    "Pattern.sub": "re.compile(b'(a)').sub(Liar(rb'\\1x'), b'a')",
    "Pattern.subn": "re.compile(b'(a)').subn(Liar(rb'\\1x'), b'a')[0]",
    "re.sub": "re.sub(b'(a)', Liar(rb'\\1x'), b'a')",
}


@pytest.mark.parametrize("liar", BYTES_LIARS.values(), ids=BYTES_LIARS.keys())
@pytest.mark.parametrize("call", BYTES_SUB_CALLS.values(), ids=BYTES_SUB_CALLS.keys())
def test_re_sub_with_a_lying_bytes_template_leaves_the_host_cache_unpoisoned(isolated, call: str, liar: str) -> None:
    """The same for a `bytes` or `bytearray` template: `Pattern.sub` got the subclass itself
    (only `str` was copied), and `re._compile_repl` kept it; the host's own `re.sub` then got the
    run's template, or ran the dead run's `__eq__`."""
    code = "import re\nTARGET = b'\\\\1y'\n" + liar + f"return ({call}).decode()"
    report = isolated(code, "import re\nstate = re.sub(b'(a)', rb'\\1y', b'a').decode()")
    assert report["result"]["error"] is None, report
    assert report["result"]["value"] == "ax"  # the snippet's own call used its own text
    assert report["before"] == "ay" and report["after"] == "ay", report


# -- what keeps working -------------------------------------------------------------------------------
POSITIVE = {
    "dataclass with typing annotations": ("""
import dataclasses, typing
@dataclasses.dataclass
class Row:
    name: str
    tags: typing.List[str] = dataclasses.field(default_factory=list)
    note: typing.Optional[str] = None
    size: int | None = None
    meta: typing.Annotated[int, "unit:px"] = 0
    kind: typing.ClassVar[str] = "row"
r = Row("a", ["x"], size=3)
return [r.name, r.tags, r.note, r.size, r.meta, Row.kind, [f.name for f in dataclasses.fields(Row)]]
""", ["a", ["x"], None, 3, 0, "row", ["name", "tags", "note", "size", "meta"]]),
    "NamedTuple class and functional": ("""
import typing
class P(typing.NamedTuple):
    x: int
    y: typing.Optional[int] = None
Q = typing.NamedTuple("Q", [("a", int), ("b", str)])
return [P(1)._asdict(), list(Q(1, "b")), P._fields, Q._fields]
""", [{"x": 1, "y": None}, [1, "b"], ["x", "y"], ["a", "b"]]),
    "TypedDict class and functional": ("""
import typing
class Movie(typing.TypedDict, total=False):
    title: str
    year: typing.NotRequired[int]
T = typing.TypedDict("T", {"x": int})
m: Movie = {"title": "x"}
return [m, T(x=1), Movie(title="y", year=1)]
""", [{"title": "x"}, {"x": 1}, {"title": "y", "year": 1}]),
    "alias equality, union and subscription": ("""
import typing
A = typing.Annotated[int, "m"]
return [A == typing.Annotated[int, "m"], A == typing.Annotated[int, "n"],
        (int | None) == typing.Optional[int], typing.List[int] == typing.List[int],
        repr(typing.Dict[str, typing.List[int]]), repr(int | str),
        typing.Union[int, str] == typing.Union[str, int], repr(list[int])]
""", [True, False, True, True, "typing.Dict[str, typing.List[int]]", "int | str", True, "list[int]"]),
    "mro through aliases of ordinary classes": ("""
import typing
class B:
    pass
class K(B):
    pass
return [[c.__name__ for c in typing.Annotated[K, 0].mro()], [c.__name__ for c in typing.List[int].mro()],
        [c.__name__ for c in typing.Type.mro(K)], [c.__name__ for c in K.mro()]]
""", [["K", "B", "object"], ["list", "object"], ["K", "B", "object"], ["K", "B", "object"]]),
    "str.format on real strings and subclasses": ("""
class S(str):
    pass
d = {"a": [1, 2]}
return ["{0}-{x}".format(1, x="y"), "{a[1]}".format_map(d), str.format("{}!", 3), S("{0:>3}").format(7),
        "{0.real}".format(5), f"{3:02d}"]
""", ["1-y", "2", "3!", "  7", "5", "03"]),
    "strptime and sub with plain and subclass strings": ("""
import datetime, re, typing
class S(str):
    pass
class D(datetime.datetime):
    pass
d = D.strptime("2021-02-03", S("%Y-%m-%d"))
p = re.compile("(a)")
return [datetime.datetime.strptime("2020", "%Y").year, type(d).__name__, d.day,
        re.sub("(a)", S(r"<\\1>"), "xa"), p.sub(lambda m: m.group(1).upper(), "aa"),
        p.subn(r"\\1\\1", "a"), re.sub(r"a", "b", "aa", count=1)]
""", [2020, "D", 3, "x<a>", "AA", ["aa", 1], "ba"]),
    "copy and deepcopy of stdlib and snippet objects": ("""
import copy, collections, dataclasses, datetime, decimal, enum, fractions, re, typing, uuid
class Color(enum.Enum):
    RED = 1
@dataclasses.dataclass(frozen=True, slots=True)
class Pt:
    x: int
class Box:
    def __init__(self, items):
        self.items = items
P = collections.namedtuple("P", "a b")
class N(typing.NamedTuple):
    a: int
objs = [fractions.Fraction(1, 3), decimal.Decimal("1.5"), collections.OrderedDict(a=1), collections.Counter("aab"),
        collections.deque([1]), collections.defaultdict(list, {"k": [1]}), P(1, 2), N(3), Pt(4), Color.RED,
        datetime.datetime(2020, 1, 2), uuid.UUID(int=5), re.compile("a")]
out = []
for o in objs:
    out.append(copy.copy(o) == o and copy.deepcopy(o) == o)
b = Box([1, [2]])
b2 = copy.deepcopy(b)
b2.items[1].append(3)
return [out, b.items, b2.items, copy.copy(b).items is b.items, dataclasses.asdict(Pt(1))]
""", [[True] * 13, [1, [2]], [1, [2, 3]], True, {"x": 1}]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "expected"), POSITIVE.values(), ids=POSITIVE.keys())
async def test_legitimate_uses_keep_working(sb, backend: str, code: str, expected: Any) -> None:
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == expected


@pytest.mark.parametrize("hook", ["__reduce_ex__", "__getstate__"])
async def test_a_snippet_cannot_define_copy_hooks_in_a_class_statement(sb, hook: str) -> None:
    """The policy keeps the pickling hooks out of class statements, which leaves data-driven
    class builders as the only source of a class-level hook the copy check has to refuse.
    `__copy__`/`__deepcopy__` are the snippet's own code (see the test below)."""
    code = f"import copy\nclass C:\n    def {hook}(self, *a):\n        print('hook ran')\nreturn copy.copy(C())"
    result = await sb.run(code)
    sb.assert_error(result, "syntax", hook)
    assert "hook ran" not in result.logs


SNIPPET_COPY_HOOKS = """
import copy, json
class C:
    def __init__(self):
        self.items = [json]
    def __copy__(self):
        print('copy ran', type(self).__name__)
        return 'copied'
    def __deepcopy__(self, memo):
        print('deep ran', type(memo).__name__)
        return 'deep'
out = [copy.copy(C()), copy.deepcopy(C()), copy.deepcopy([C()])]
for name in ('__copy__', '__deepcopy__'):
    try:
        getattr(json, name)
        out.append(name + ' read')
    except AttributeError:
        out.append(name + ' refused')
return out
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_snippet_copy_hooks_run_as_its_own_code(sb, backend: str) -> None:
    """`__copy__`/`__deepcopy__` defined in a class statement (issue 12) are called with the
    snippet's own object (and, for deepcopy, the copy's memo: a plain dict of the snippet's own
    objects, tests/security/test_copy_memo.py); the hooks of host objects stay unreadable."""
    result = await sb.run(SNIPPET_COPY_HOOKS, backend=backend)
    assert result.ok, result
    assert result.value == ["copied", "deep", ["deep"], "__copy__ refused", "__deepcopy__ refused"]
    assert result.logs == ["copy ran C", "deep ran dict", "deep ran dict"]
    sb.assert_no_leak(result)


def test_the_guard_hands_back_sandbox_versions_by_identity() -> None:
    """The guard's judgement depends on what comes back, not on who was asked."""
    import typing

    from sandbox.guards import guarded_getattr, safe_format

    assert guarded_getattr(typing.Annotated[str, 0], "format") is safe_format
    mro = guarded_getattr(typing.Type, "mro")  # noqa: UP006 - the typing alias is the point
    assert mro(shims._static_attrs()["enum"]["Enum"]) == [shims._static_attrs()["enum"]["Enum"], object]
    bound = guarded_getattr(typing.Annotated[re.compile("q"), 0], "sub")
    assert type(bound).__name__ == "_PlainStrMethod" and bound("r", "q") == "r"
    assert guarded_getattr(operator, "sub") is operator.sub  # an unrelated `sub` is left alone
    assert sys.modules["datetime"].datetime.strptime("1", "%d").day == 1
    assert copy.copy(1) == 1


# -- a failed read's AttributeError.obj: the forwarding target is judged --------------------------
#: Reads that fail on a forwarder: CPython's `AttributeError.obj` is the object the lookup ran on
#: last, the real `type` behind `typing.Type`, the raw host function behind a bound method.
FAILED_READS = {
    "typing.Type": "typing.Type.no_such_name",
    "bound host method": "collections.Counter().copy.no_such_name",
}
#: Ways a snippet reads `obj` off the caught error; each is judged by the value.
OBJ_READS = {
    "source": "e.obj",
    "getattr": "getattr(e, 'obj')",
    "format": "'{0.obj}'.format(e)",
    "attrgetter": "operator.attrgetter('obj')(e)",
}
#: The chain a review ran (the real `type`, a metaclass that claims to be `int`, a positional
#: pattern reading `len.__self__`): it would return the secret file's text.
ESCAPE = """
import typing
try:
    typing.Type.no_such_name
except AttributeError as e:
    T = e.obj
M = T('M', (T,), {'__hash__': lambda c: hash(int), '__eq__': lambda c, o: True,
                  '__instancecheck__': lambda c, x: True})
def read(obj, name):
    R = M('R', (), {'__match_args__': (name,)})
    match obj:
        case R(v):
            return v
b = read(len, '__self__')
return b.open(SECRET_PATH).read()
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("read", OBJ_READS.values(), ids=OBJ_READS.keys())
@pytest.mark.parametrize("fail", FAILED_READS.values(), ids=FAILED_READS.keys())
async def test_a_failed_reads_target_is_judged(sb, backend: str, fail: str, read: str) -> None:
    code = (f"import typing, collections, operator\ntry:\n    {fail}\nexcept AttributeError as e:\n"
            f"    got = {read}\nreturn str(got)")
    result = await sb.run(code, backend=backend)
    if "Counter" not in fail:
        sb.assert_error(result, "exception", "is not accessible: it leads outside the sandbox")
        return
    # The raw function crosses as the judge's stand-in, behind the receiver check.
    assert result.ok, result
    assert "Counter.copy" in result.value
    if "format" not in read:
        checked = await sb.run(code.replace("return str(got)", "return got(collections.Counter)"), backend=backend)
        sb.assert_error(checked, "exception", "doesn't apply to a 'type' object")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_failed_read_escape_ends_at_the_judge(sb, backend: str) -> None:
    result = await sb.run(ESCAPE, backend=backend)
    sb.assert_error(result, "exception", '"obj" is not accessible')
    assert "line 6" in result.error.message
    pattern = await sb.run("import typing\ntry:\n    typing.Type.x\nexcept AttributeError as e:\n"
                           "    match e:\n        case AttributeError(obj=T):\n            return str(T)\n",
                           backend=backend)
    sb.assert_error(pattern, "exception", "class pattern AttributeError(...) would read attribute 'obj' unchecked")
    await sb.assert_next_run_ok(backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_snippets_own_obj_attribute_reads_as_before(sb, backend: str) -> None:
    code = """
class P:
    def __init__(self):
        self.obj = 7
try:
    P().missing
except AttributeError as e:
    failed_on_own = e.obj.obj
match P():
    case P(obj=v):
        return [P().obj, v, failed_on_own, getattr(P(), 'obj')]
"""
    await sb.assert_harmless(code, [7, 7, 7, 7], backend=backend)
