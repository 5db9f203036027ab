"""Third adversarial review: gadget chains through the shims and builtins.

The angle: innocent stdlib behaviour that (a) defines dunders outside the policy's checks,
(b) reads or writes attributes with attacker-chosen names in host code, or (c) hands host
objects to snippet callbacks. Every shim name and builtin was walked for those three shapes.
The holes this review found are fixed and their cases assert the fixed behaviour. The rest pin down paths
that are closed (or harmless) today so that they stay that way.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# -- 1. type() hands out the real, unchecked operator.attrgetter / methodcaller classes ----------
#
# The shim's `operator.attrgetter` is a checking factory, but it returns a real
# `operator.attrgetter` instance, and `type()` of that is the real C class, whose constructor
# checks nothing. One line later the snippet reads `__globals__` of the guarded `getattr`
# builtin: the real `sandbox.guards` module dict, with the real builtins module in it.
ATTRGETTER_ESCAPE = """
import operator
AG = type(operator.attrgetter('real'))
g = AG('__globals__')(getattr)
B = g['_builtins']
"""

METHODCALLER_ESCAPE = """
import operator
MC = type(operator.methodcaller('upper'))
fmt = MC('format', getattr)
"""


async def test_attrgetter_class_from_type_reads_host_file_inprocess(sb):
    code = ATTRGETTER_ESCAPE + "return B.open(SECRET_PATH).read()"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception")
    await sb.assert_next_run_ok("inprocess")


async def test_attrgetter_class_from_type_gets_real_os_in_worker(sb):
    code = ATTRGETTER_ESCAPE + (
        "os = AG('__import__')(B)('os')\n"
        "return [type(os).__name__, os.getpid() > 1, repr(B)]"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception")
    await sb.assert_next_run_ok()


async def test_methodcaller_class_from_type_is_real_format_inprocess(sb):
    code = METHODCALLER_ESCAPE + (
        "return fmt('{0.__globals__[weakref].sys.modules[os].environ[' + ENV_NAME + ']}')"
    )
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception")


async def test_methodcaller_class_from_type_is_real_format_in_worker(sb):
    code = METHODCALLER_ESCAPE + "return fmt('{0.__globals__[_builtins]}')"
    result = await sb.run(code)
    sb.assert_error(result, "exception")
    assert "builtins" not in repr(result.value)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_checked_attrgetter_factory_still_refuses(sb, backend):
    # The factory itself holds: dotted paths are checked part by part.
    code = "import operator\nreturn operator.attrgetter('real.__class__')(1)"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "private")
    code = "import operator\nreturn operator.methodcaller('format', 1)('{0}')"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "methodcaller")


# -- 2. The enum functional API check reads the names one way, enum reads them another -----------
#
# `_EnumType.__call__` checks `names.keys()` (mappings), `n[0]` (pairs) or one pass over an
# iterable; `EnumType._create_` iterates the mapping, unpacks each pair with iteration, and
# iterates the iterable a second time. A dict subclass with its own `keys()`, a list subclass
# with its own `__getitem__`, or an iterable that yields different names on its second pass
# each define `__reduce_ex__` again, which re-opens the copy-reconstruct setattr gadget from
# the second review.
ENUM_PRELUDE = """
import enum, copy
def red(self, proto):
    return (print, ('reduced',))
"""

ENUM_BYPASSES = {
    "dict-keys": """
class D(dict):
    def keys(self):
        return ['A']
E = enum.Enum('E', D({'A': 1, '__reduce_ex__': red, '__copy__': None}))
""",
    "pair-getitem": """
class P(list):
    def __getitem__(self, i):
        return 'B'
E = enum.Enum('E', [P(['A', 1]), P(['__reduce_ex__', red]), P(['__copy__', None])])
""",
    "second-pass": """
class It:
    def __init__(self):
        self.n = 0
    def __iter__(self):
        self.n += 1
        if self.n == 1:
            return iter([('A', 1)])
        return iter([('A', 1), ('__reduce_ex__', red), ('__copy__', None)])
E = enum.Enum('E', It())
""",
}


@pytest.mark.parametrize("variant", sorted(ENUM_BYPASSES))
async def test_enum_functional_api_check_cannot_be_bypassed(sb, variant):
    code = ENUM_PRELUDE + ENUM_BYPASSES[variant] + "copy.copy(E.A)\nreturn 'copied'"
    result = await sb.run(code)
    if variant == "second-pass":
        # The names are read once, into a plain list: the second, poisoned pass never happens.
        assert result.ok and result.value == "copied", result
    else:
        sb.assert_error(result, "exception", "not allowed")
    assert "reduced" not in result.logs


def test_enum_bypass_copy_gadget_cannot_modify_host_class(isolated):
    code = ENUM_PRELUDE.replace("red(self, proto):\n    return (print, ('reduced',))",
                                "red(self, proto):\n    return (ident, (textwrap.TextWrapper,), "
                                "(None, {'wrap': lambda self, text: ['PWNED']}))") + (
        "import textwrap\n"
        "def ident(x):\n    return x\n"
        + ENUM_BYPASSES["dict-keys"]
        + "copy.copy(E.A)\nreturn textwrap.wrap('a b c', 2)"
    )
    report = isolated(code, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]
    assert report["next"]["value"] == "[1]"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_enum_functional_api_plain_forms_still_refused(sb, backend):
    for names in ("'A __reduce_ex__'", "{'A': 1, '__copy__': None}", "[('A', 1), ('_x', 2)]"):
        code = f"import enum\nE = enum.Enum('E', {names})\nreturn 1"
        result = await sb.run(code, backend=backend)
        sb.assert_error(result, "exception", "not allowed")


async def test_enum_functional_api_keywords_are_harmless(sb):
    # type= (a mixin), module= and qualname= are data; they define no dunder of their own.
    code = (
        "import enum\nclass X:\n    pass\n"
        "E = enum.Enum('E', 'A B', type=X, module='os', qualname='os.path', start=5)\n"
        "return [E.A.value, E.__qualname__, E.__name__]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == [5, "os.path", "E"]


async def test_enum_class_keyword_simple_defines_nothing_private(sb):
    # `_simple=True` reaches EnumType.__new__ (class keywords are not name-checked), but the
    # class body is still checked, so no dunder can be defined that way.
    code = "import enum\nclass E(enum.Enum, _simple=True):\n    __reduce_ex__ = 1\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "syntax", "__reduce_ex__")


# -- 3. typing aliases forward `register` to the host's collections.abc classes ------------------


def test_typing_alias_register_cannot_change_host_abcs(isolated):
    code = "import typing\ntyping.Mapping.register(int)\ntyping.Iterable.register(type(None))\nreturn 1"
    report = isolated(
        code,
        "import collections.abc\n"
        "state = [isinstance(1, collections.abc.Mapping), isinstance(None, collections.abc.Iterable)]",
    )
    assert not report["hung"]
    assert report["after"] == report["before"] == [False, False], report
    assert report["next"]["value"] == "[1]"


def test_abc_subclass_register_cannot_poison_host_abc_cache(isolated):
    code = (
        "import typing\nclass M(typing.Sequence):\n    pass\nM.register(dict)\n"
        "return isinstance({}, typing.Sequence)"
    )
    report = isolated(
        code, "import collections.abc, gc\ngc.collect()\nstate = [isinstance({}, collections.abc.Sequence)]"
    )
    assert not report["hung"]
    assert report["after"] == report["before"] == [False], report
    assert report["next"]["value"] == "[1]"


async def test_protocol_register_on_own_class_is_refused(sb):
    # ABC registration is refused outright, even on the snippet's own classes: isinstance checks
    # against a host ABC walk its subclasses and cache what they find, on the host's class.
    code = (
        "import typing\nclass P(typing.Protocol):\n    pass\nclass Q(P):\n    pass\n"
        "Q.register(int)\nreturn isinstance(1, Q)"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ABC registration is not available")


# -- 4. type() of host objects the snippet holds -------------------------------------------------

TYPE_OF_CASES = [
    ("namespace", "N = type(tools)\nreturn N(object(), 'tools', ['x'], print)", "namespaces cannot be created"),
    ("pending", "P = type(tools.f(1))\nreturn P(1)", "cannot be created by a snippet"),
    ("metaclass", "import enum\nclass M(type(enum.Enum)):\n    pass\nreturn 1", "metaclasses"),
    ("three-arg", "return type('X', (), {'__reduce_ex__': 1})", "exactly one argument"),
    ("type-of-type", "return type(type)('X', (), {})", "exactly one argument"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,code,fragment", TYPE_OF_CASES, ids=[c[0] for c in TYPE_OF_CASES])
async def test_type_of_host_objects_builds_nothing(sb, backend, name, code, fragment):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", fragment)
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_binding_cannot_issue_calls(sb, backend):
    code = (
        "B = type(tools.f)\nseen = []\n"
        "b = B('tools', 'nope', seen.append)\n"
        "try:\n    b(1)\nexcept Exception as e:\n    seen.append(type(e).__name__)\n"
        "return [repr(x)[:30] for x in seen]"
    )
    result = await sb.run(code, backend=backend)
    sb.assert_no_leak(result)
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_bound_format_only_calls_what_it_is_given(sb, backend):
    # `_BoundFormat(template, fn)` only ever calls the snippet's own fn: no traversal happens.
    code = (
        "BF = type('{0}'.format)\nout = []\n"
        "BF('{0.__globals__}', lambda t, *a: out.append(t))(getattr)\n"
        "return [out, '{0.__globals__}'.format is None]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [["{0.__globals__}"], False]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_shim_builds_only_fake_modules(sb, backend):
    code = (
        "import json\nM = type(json)\nm = M('os', {'x': 1})\n"
        "class S(type(json)):\n    def __init__(self):\n        super().__init__('json', {})\n"
        "try:\n    S()\nexcept TypeError as e:\n    err = str(e)\nelse:\n    err = 'none'\n"
        "return [m.x, repr(m), json.dumps([1]), err]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value[:3] == [1, "<module 'os' (sandbox)>", "[1]"]


# -- 5. Callbacks: what host code hands to snippet functions -------------------------------------

CALLBACK_CASES = [
    (
        "dataclasses.asdict(dict_factory=)",
        "import dataclasses\nseen = []\ndef fac(pairs):\n    seen.append([type(p).__name__ for p in pairs])\n"
        "    return dict(pairs)\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
        "    y: list = dataclasses.field(default_factory=list)\n"
        "return [dataclasses.asdict(C(), dict_factory=fac), seen]",
        [{"x": 1, "y": []}, [["tuple", "tuple"]]],
    ),
    (
        "re.sub(repl=callable)",
        "import re\ngot = []\ndef repl(m):\n"
        "    got.append([type(m).__name__, type(m.re).__name__, m.string, m.regs, m.expand(r'<\\g<0>>')])\n"
        "    return 'X'\nreturn [re.sub('a', repl, 'banana'), got[0]]",
        ["bXnXnX", ["Match", "Pattern", "banana", [[1, 2]], "<a>"]],
    ),
    (
        "json.loads hooks",
        "import json\nseen = []\ndef hook(*a):\n    seen.append([type(x).__name__ for x in a])\n    return a[0]\n"
        "json.loads('{\"a\": [1.5, 2, NaN]}', object_hook=hook, parse_float=hook, parse_int=hook, parse_constant=hook)\n"
        "json.loads('{\"a\": 1}', object_pairs_hook=hook)\nreturn seen",
        [["str"], ["str"], ["str"], ["dict"], ["list"]],
    ),
    (
        "json cls=",
        "import json\nseen = []\nclass D:\n    def __init__(self, **kw):\n        seen.append(sorted(kw))\n"
        "    def decode(self, s):\n        return 'decoded'\nreturn [json.loads('1', cls=D, x=1), seen]",
        ["decoded", [["x"]]],
    ),
    (
        "json default=",
        "import json\nseen = []\ndef default(o):\n    seen.append(type(o).__name__)\n    return 'x'\n"
        "return [json.dumps({'a': {1}, 'b': object()}, default=default, sort_keys=True), seen]",
        ['{"a": "x", "b": "x"}', ["set", "object"]],
    ),
    (
        "difflib isjunk",
        "import difflib\nseen = []\ndef junk(c):\n    seen.append(type(c).__name__)\n    return c == ' '\n"
        "s = difflib.SequenceMatcher(junk, 'a b', 'a c')\nreturn [round(s.ratio(), 3), sorted(set(seen))]",
        [0.667, ["str"]],
    ),
    (
        "sort and heap keys",
        "import heapq, bisect\nseen = []\ndef k(x):\n    seen.append(type(x).__name__)\n    return -x\n"
        "return [heapq.nsmallest(2, [3, 1, 2], key=k), sorted([1, 3, 2], key=k), max([1, 2], key=k),"
        " bisect.bisect([1, 2, 3], -2, key=k), list(heapq.merge([1], [2], key=k)), sorted(set(seen))]",
        [[3, 2], [3, 2, 1], 1, 3, [2, 1], ["int"]],
    ),
    (
        "ExceptionGroup.split(callable)",
        "seen = []\ndef pred(e):\n    seen.append(type(e).__name__)\n    return isinstance(e, ValueError)\n"
        "eg = ExceptionGroup('g', [ValueError('a'), TypeError('b')])\nm, r = eg.split(pred)\n"
        "return [len(m.exceptions), len(r.exceptions), seen]",
        [1, 1, ["ExceptionGroup", "ValueError", "TypeError"]],
    ),
    (
        "tzinfo callbacks",
        "import datetime\nseen = []\nclass Tz(datetime.tzinfo):\n    def utcoffset(self, dt):\n"
        "        seen.append(type(dt).__name__)\n        return datetime.timedelta(0)\n"
        "    def dst(self, dt):\n        return datetime.timedelta(0)\n    def tzname(self, dt):\n        return 'Z'\n"
        "d = datetime.datetime(2020, 1, 1, tzinfo=Tz())\nreturn [d.isoformat(), d.strftime('%Z'), seen[:1]]",
        ["2020-01-01T00:00:00+00:00", "Z", ["datetime"]],
    ),
    (
        "iter(callable, sentinel)",
        "n = [0]\ndef f():\n    n[0] += 1\n    return n[0]\nreturn list(iter(f, 4))",
        [1, 2, 3],
    ),
    (
        "functools callbacks",
        "import functools\nf = functools.lru_cache(maxsize=2)(lambda x: x * 2)\n"
        "k = functools.cmp_to_key(lambda a, b: a - b)\n"
        "return [f(3), f(3), f.cache_info().hits, functools.partial(max, 1)(5), sorted([3, 1], key=k),"
        " functools.reduce(lambda a, b: a + b, [1, 2, 3])]",
        [6, 6, 1, 5, [1, 3], 6],
    ),
    (
        "itertools callbacks",
        "import itertools\nreturn [list(itertools.accumulate([1, 2, 3], lambda a, b: a * b)),"
        " [k for k, _ in itertools.groupby('aab', key=lambda c: c.upper())], list(itertools.starmap(pow, [(2, 3)]))]",
        [[1, 2, 6], ["A", "B"], [8]],
    ),
    (
        "defaultdict / ChainMap / Counter",
        "import collections\nd = collections.defaultdict(lambda: 'made')\ncm = collections.ChainMap({'a': 1}, {'b': 2})\n"
        "return [d['x'], cm.new_child({'c': 3})['c'], dict(cm.parents), collections.Counter('abca').most_common(1)]",
        ["made", 3, {"b": 2}, [["a", 2]]],
    ),
    (
        "string.Template subclass hooks",
        "import string\nclass T(string.Template):\n    delimiter = '%'\n    idpattern = '[a-z_]+'\n"
        "class M(dict):\n    def __getitem__(self, k):\n        return '<' + k + '>'\n"
        "return T('%__globals__ %x').substitute(M())",
        "<__globals__> <x>",
    ),
]


@pytest.mark.parametrize("case", CALLBACK_CASES, ids=[c[0] for c in CALLBACK_CASES])
async def test_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == expected
    sb.assert_no_leak(result)


# -- 6. Attribute reads and writes with chosen names in host code --------------------------------

CLOSED = [
    ("dataclass Field rename", "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
     "f = dataclasses.fields(C)[0]\nf.name = '__globals__'\nreturn 1", "exception", ["cannot modify", "Field"]),
    ("setattr Field rename", "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
     "setattr(dataclasses.fields(C)[0], 'name', '__globals__')\nreturn 1", "exception", ["cannot modify"]),
    ("replace on a function", "import dataclasses\nreturn dataclasses.replace(getattr, x=2)", "exception",
     ["dataclass instances"]),
    ("@dataclass on host class", "import dataclasses, textwrap\ndataclasses.dataclass(textwrap.TextWrapper)\nreturn 1",
     "exception", ["only applies to classes defined in the snippet"]),
    ("total_ordering on host class", "import functools, fractions\nfunctools.total_ordering(fractions.Fraction)\nreturn 1",
     "exception", ["only applies to classes defined in the snippet"]),
    ("partial.func write", "import functools\np = functools.partial(max, 1)\np.func = print\nreturn 1", "exception",
     ["cannot modify", "partial"]),
    ("TextWrapper instance write", "import textwrap\ntw = textwrap.TextWrapper()\ntw.width = 3\nreturn 1",
     "exception", ["cannot modify"]),
    ("host class write", "import textwrap\ntextwrap.TextWrapper.width = 1\nreturn 1", "exception",
     ["only classes defined in the snippet"]),
    ("typing alias write forwards to origin", "import typing\ntyping.List.pwned = 1\nreturn 1", "exception",
     ["cannot modify"]),
    ("typing alias setattr", "import typing\nsetattr(typing.Dict, 'pwned', 1)\nreturn 1", "exception",
     ["cannot modify"]),
    ("subclass typing alias class", "import typing, textwrap\nclass A(type(typing.List), _root=True):\n    pass\n"
     "a = A(textwrap.TextWrapper, 0)\na.pwned = 1\nreturn 1", "syntax", ['class keyword "_root" is not allowed']),
    ("decimal Context write", "import decimal\nctx = decimal.Context()\nctx.prec = 3\nreturn 1", "exception",
     ["cannot modify"]),
    ("lru_cache __wrapped__", "import functools\nf = functools.lru_cache(lambda x: x)\nreturn getattr(f, '__wrapped__')",
     "exception", ["private"]),
    ("random bound method __self__", "import random\nreturn getattr(random.random, '__self__')", "exception",
     ["private"]),
    ("typing alias __origin__", "import typing\nreturn getattr(typing.List, '__origin__')", "exception", ["private"]),
    ("re.Match __class__", "import re\nreturn getattr(re.match('a', 'a'), '__class__')", "exception", ["private"]),
    ("exception __traceback__", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    return getattr(e, '__traceback__')",
     "exception", ["private"]),
    ("generator gi_frame", "def g():\n    yield 1\nreturn getattr(g(), 'gi_frame')", "exception", ["internals"]),
    ("coroutine cr_await", "async def c():\n    return 1\nx = c()\ntry:\n    return getattr(x, 'cr_await')\n"
     "finally:\n    x.close()", "exception", ["internals"]),
    ("format traversal", "class C:\n    pass\nreturn '{0.__class__}'.format(C())", "exception", ["private"]),
    ("property(getattr)", "class C:\n    p = property(getattr)\nreturn C().p", "exception", ["missing 1 required"]),
    ("super(type, C)", "class A:\n    pass\nreturn super(type, A).mro()", "exception", ["must be an instance or subtype"]),
    ("copy a shim", "import copy, json\nreturn copy.copy(json)", "exception", ["cannot be copied"]),
    ("deepcopy a binding", "import copy\nreturn copy.deepcopy(tools.f)", "exception", ["cannot be copied"]),
    ("copy a pending call", "import copy\nreturn copy.copy(tools.f(1))", "exception", ["cannot be copied"]),
    ("describe internals", "d = tools.describe\nreturn getattr(d, '__self__')", "exception", ["private"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", CLOSED, ids=[c[0] for c in CLOSED])
async def test_closed_attribute_paths(sb, name, code, kind, fragments):
    result = await sb.run(code, docs={"f": "doc f", "g": "doc g"})
    sb.assert_error(result, kind, *fragments)
    assert sb.spy.calls == []


async def test_attribute_error_obj_only_returns_what_the_snippet_holds(sb):
    # AttributeError.obj (3.10+) carries the object a lookup failed on: it must never be a
    # host-internal object.
    code = (
        "import json\nout = []\n"
        "for thunk in (lambda: json.nope, lambda: tools.nope, lambda: getattr(print, 'nope'),"
        " lambda: tools.f(1).nope, lambda: '{0.nope}'.format(1)):\n"
        "    try:\n        thunk()\n    except AttributeError as e:\n"
        "        out.append(type(e.obj).__name__)\n"
        "return out"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert set(result.value) <= {"ModuleShim", "Namespace", "builtin_function_or_method", "function",
                                 "PendingCall", "int", "NoneType"}, result.value


async def test_deepcopy_memo_is_refused(sb):
    code = (
        "import copy, re, functools, collections\nmemo = {}\n"
        "objs = [re.compile('a'), functools.partial(max, 1), collections.ChainMap({}),"
        " collections.OrderedDict(a=1), collections.defaultdict(list)]\n"
        "copy.deepcopy(objs, memo)\n"
        "return sorted({type(v).__name__ for v in memo.values()}"
        " | {type(x).__name__ for v in memo.values() if type(v) is list for x in v})"
    )
    result = await sb.run(code)
    # A memo decides what each copy is and keeps the originals: the sandbox accepts none.
    sb.assert_error(result, "exception", "deepcopy(memo=...) is not supported")


async def test_cached_property_subclass_cannot_name_a_dunder(sb):
    code = (
        "import functools\nclass CP(functools.cached_property):\n    pass\n"
        "cp = CP(lambda self: 42)\ncp.attrname = '__class__'\n"
        "class C:\n    pass\nC.v = cp\nc = C()\nreturn [c.v, type(c).__name__]"
    )
    result = await sb.run(code)
    # The shim's cached_property checks its name when used: no dunder lands in an instance dict.
    sb.assert_error(result, "exception", "cached_property name '__class__' is not allowed")


async def test_namedtuple_and_typeddict_functional_forms_define_no_dunders(sb):
    code = (
        "import collections, typing\n"
        "N = collections.namedtuple('N', ['__globals__', 'ok'], rename=True, defaults=[1], module='os')\n"
        "T = typing.TypedDict('T', {'__globals__': int, '__class__': str})\n"
        "return [N._fields, sorted(T()), N(0)._replace(ok=2)]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == [["_0", "ok"], [], [0, 2]]


async def test_dataclass_options_keep_frozen(sb):
    code = (
        "import dataclasses\n@dataclasses.dataclass(slots=True, frozen=True, kw_only=True)\n"
        "class C:\n    a: int\n    b: int = 2\nc = C(a=1)\n"
        "try:\n    setattr(c, 'a', 5)\nexcept Exception as e:\n    err = type(e).__name__\n"
        "return [c.a, dataclasses.astuple(c), dataclasses.replace(c, b=3).b, err]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value[:3] == [1, [1, 2], 3]
    assert result.value[3] in ("FrozenInstanceError", "TypeError")


# -- 7. The bindings namespace with odd keys ----------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_tools_lookup_with_lying_str_subclass(sb, backend):
    code = (
        "class S(str):\n    def __eq__(self, o):\n        return True\n"
        "    def __hash__(self):\n        return hash('f')\n"
        "b = tools[S('f')]\nr = await b(1)\n"
        "r['other'] = repr(tools[S('zzz')])\n"
        "r['doc'] = tools.describe(S('g'))\nreturn r"
    )
    result = await sb.run(code, backend=backend, docs={"f": "doc f", "g": "doc g"})
    assert result.ok, result
    # A lying key resolves to a real binding (by hash), and the call carries the real name.
    assert result.value["other"] == "<host function tools.f>"
    assert result.value["doc"] in ("doc f", "doc g")
    assert len(sb.spy.calls) == 1


# -- 8. Odd builtins and coroutine protocol -----------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
async def test_generator_and_async_generator_methods(sb, backend):
    code = (
        "def g():\n    x = yield 1\n    yield x\nit = g()\nnext(it)\na = it.send('s')\n"
        "try:\n    it.throw(ValueError('t'))\nexcept ValueError:\n    pass\nit.close()\n"
        "async def ag():\n    yield 1\na2 = ag()\nv = await anext(a2)\nawait a2.aclose()\n"
        "return [a, v, it.gi_running]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["s", 1, False]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gather_with_non_awaitables_and_odd_sleep(sb, backend):
    code = (
        "import asyncio\nout = []\n"
        "try:\n    await asyncio.gather(5)\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "class N(float):\n    pass\nawait asyncio.sleep(N(0.0))\n"
        "try:\n    await asyncio.sleep(float('nan'))\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "r = await asyncio.gather(tools.f(1), return_exceptions=True)\nreturn [out, r]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value[0][1] == "ValueError"
    assert result.value[1] == [{"echo": [1], "kw": {}}]
    assert len(sb.spy.calls) == 1
