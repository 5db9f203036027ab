"""Attributes and dunders: literal, computed and str-subclass attribute names, class patterns,
class bodies and metaclasses, and host code that reads or writes an attribute the snippet names.

Every snippet, if the guard let it through, would reach a real function's globals (and from
there `open` or `os.environ`) and return the secret. Literal attribute names are refused by the
compile policy (`syntax`); computed ones by the runtime guard (`exception: AttributeError`).
Host code must never read or write a private name the snippet chose.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# The tail most escapes use once they hold a real function's globals dict `G`.
READ = "return G['__builtins__']['open'](SECRET_PATH).read()"


PRIVATE = 'names starting with "_" are private'
#: `__subclasses__` answers on the snippet's own classes only (judged at run time).
HOST_SUBCLASSES = '"__subclasses__" is only available on classes the snippet defines'


DUNDER = [
    # `__class__` and `__mro__` are introspection now (`type(x)`, the visible MRO); the chain's
    # last link, the one that reaches every loaded class, stays refused.
    pytest.param("return (1).__class__.__mro__[1].__subclasses__()", "exception",
                 ["AttributeError", HOST_SUBCLASSES], id="literal-class-mro-subclasses"),
    pytest.param("import json\nG = json.dumps.__globals__\n" + READ, "syntax",
                 ['attribute "__globals__" is not allowed'], id="literal-globals"),
    pytest.param("def f():\n    pass\nreturn f.__code__.co_consts", "syntax",
                 ['attribute "__code__"'], id="literal-code"),
    pytest.param("return super().__getattribute__('x')", "syntax",
                 ['"__getattribute__"'], id="literal-getattribute"),
    pytest.param("return object.__subclasses__()", "exception",
                 [HOST_SUBCLASSES], id="literal-object-subclasses"),
    # A class's `__dict__` is a read-only copy: nothing written through it reaches the class
    # (see test_class_dict_hands_out_no_writable_dictionary).
    pytest.param("class A:\n    pass\nA.__dict__['__class__'] = property(lambda s: int)\nreturn 1", "exception",
                 ["TypeError", "'mappingproxy' object does not support item assignment"], id="literal-class-dict"),
    pytest.param("import json\nreturn json.dumps.__init__.__self__", "syntax",
                 ['"__self__"'], id="init-then-self-literal"),
    pytest.param("import statistics\nG = getattr(statistics.mean, '__globals__')\n" + READ, "exception",
                 ["AttributeError", 'attribute "__globals__" is not accessible', PRIVATE], id="getattr-globals"),
    pytest.param("import statistics\nG = getattr(statistics.mean, '__' + 'glob' + 'als__')\n" + READ, "exception",
                 ["AttributeError", '"__globals__" is not accessible'], id="getattr-computed-globals"),
    # `__class__` is `type(x)`: the class of a class is the sandbox's `type`, and the class
    # hands out no subclass list.
    pytest.param("c = getattr(1, '__class__')\nif c is not int or getattr(c, '__class__') is not type:\n"
                 "    raise LookupError('not type(x)')\nreturn str(getattr(c, '__subclasses__')())", "exception",
                 ["AttributeError", HOST_SUBCLASSES], id="getattr-class"),
    pytest.param("import statistics\nm = getattr(statistics.mean, '__init__')\nG = getattr(getattr(m, '__self__'), '__globals__')\n" + READ,
                 "exception", ["AttributeError", '"__init__" is not accessible'], id="getattr-init-self"),
    pytest.param("bases = type(1).mro()\nsubs = getattr(bases[-1], '__subclasses__')()\nreturn [str(s) for s in subs]",
                 "exception", ["AttributeError", HOST_SUBCLASSES], id="type-mro-subclasses"),
    pytest.param("import statistics\nif not hasattr(statistics.mean, '__globals__'):\n    raise LookupError('hasattr said no')\nG = getattr(statistics.mean, '__globals__')\n" + READ,
                 "exception", ["LookupError: hasattr said no"], id="hasattr-globals"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('__globals__')(statistics.mean)\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-globals"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('mean.__globals__')(statistics)\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-dotted"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('mean', '__globals__')(statistics)[1]\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-second-name"),
    pytest.param("import operator\nr = operator.methodcaller('__reduce_ex__', 2)(1)\nreturn str(r)",
                 "exception", ["AttributeError", '"__reduce_ex__" is not accessible'], id="methodcaller-reduce"),
    pytest.param("import statistics\nx = vars(statistics.mean)\nreturn str(x)", "exception",
                 ["TypeError", "vars() of a 'function' object is not available"], id="vars"),
    pytest.param("import statistics\nG = getattr(statistics.mean, 'func_globals', None) or getattr(statistics.mean, '__builtins__')\n" + READ,
                 "exception", ["AttributeError", '"__builtins__" is not accessible'], id="getattr-builtins"),
    # A snippet function's `__init__`/`__init_subclass__` are `object`'s, not the snippet's own.
    pytest.param("def f():\n    pass\nreturn str(f.__init_subclass__)", "exception",
                 ["AttributeError", '"__init_subclass__" is not accessible'], id="own-function-init-subclass"),
    pytest.param("def f():\n    pass\nsetattr(f, '__code__', None)\nreturn 1", "exception",
                 ["AttributeError", '"__code__" is not accessible'], id="setattr-code"),
    pytest.param(
        "class P:\n    pass\nmatch P():\n    case P(__class__=c):\n        return str(c)",
        "syntax", ['attribute "__class__" is not allowed in a class pattern'], id="match-class-pattern-dunder"),
    pytest.param(
        "class P:\n    pass\nmatch (lambda: 0):\n    case object(__globals__=G):\n        return str(G)",
        "syntax", ['"__globals__" is not allowed in a class pattern'], id="match-class-pattern-globals"),
    # A class may define `__getattr__` now; bound to the guarded `getattr` it reads nothing the
    # guard refuses.
    pytest.param("class A:\n    __getattr__ = getattr\nreturn str(getattr(A(), '__globals__'))", "exception",
                 ["AttributeError", '"__globals__" is not accessible'], id="class-body-dunder-assign"),
    pytest.param(
        "import json\nmatch '{0.__globals__[json].sys.modules}':\n    case str(format=f):\n        return str(f(json.dumps))",
        "syntax", ['attribute "format" is not allowed in a class pattern'], id="match-class-pattern-real-format"),
    pytest.param(
        "import typing\nmatch typing.Type:\n    case object(mro=m):\n        return str(m(int))",
        "syntax", ['attribute "mro" is not allowed in a class pattern'], id="match-class-pattern-raw-mro"),
    pytest.param("class A:\n    def __getattribute__(self, n):\n        return 1\nreturn 1", "syntax",
                 ['"__getattribute__"'], id="class-def-undefinable-dunder"),
    pytest.param("class M(type(int)):\n    pass\nreturn 1", "exception",
                 ["TypeError", "defining metaclasses is not allowed"], id="metaclass-by-base"),
    pytest.param("class A(metaclass=type):\n    pass\nreturn 1", "syntax",
                 ["metaclass= is not allowed"], id="metaclass-keyword"),
    pytest.param("__metaclass__ = type\nclass A:\n    pass\nreturn 1", "syntax",
                 ['"__metaclass__"'], id="dunder-metaclass-global"),
]


@pytest.mark.parametrize(("code", "kind", "fragments"), DUNDER)
async def test_dunder_chains_refused(sb, code, kind, fragments):
    result = await sb.run(code)
    sb.assert_error(result, kind, *fragments)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(
    ("code", "fragments"),
    [
        pytest.param("import statistics\nG = getattr(statistics.mean, '__globals__')\nreturn G['sys'].modules['os'].environ[ENV_NAME]",
                     ['"__globals__" is not accessible'], id="getattr-env"),
        pytest.param("import operator, statistics\nG = operator.attrgetter('__globals__')(statistics.mean)\nreturn G['sys'].modules['os'].environ[ENV_NAME]",
                     ['"__globals__" is not accessible'], id="attrgetter-env"),
    ],
)
async def test_computed_getattr_guard_on_both_backends(sb, backend, code, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", *fragments)


# A str subclass is a str: the guard's own checks call methods the snippet overrides.
STR_SUBCLASS = (
    "class S(str):\n"
    "    def startswith(self, *a):\n"
    "        return False\n"
    "    def endswith(self, *a):\n"
    "        return False\n"
    "    def __str__(self):\n"
    "        return 'harmless'\n"
)


# Fixed: names are copied to plain `str` before they are checked and used.
STR_SUBCLASS_HOLES = [
    pytest.param(STR_SUBCLASS + "import statistics\nG = getattr(statistics.mean, S('__globals__'))\n" + READ,
                 id="getattr-str-subclass-startswith"),
    pytest.param(STR_SUBCLASS + "import statistics\nif hasattr(statistics.mean, S('__globals__')):\n    G = getattr(statistics.mean, S('__globals__'))\n    " + READ + "\nraise LookupError('hasattr said no')",
                 id="hasattr-str-subclass"),
    pytest.param(STR_SUBCLASS + "import operator, statistics\nG = operator.attrgetter(S('__globals__'))(statistics.mean)\n" + READ,
                 id="attrgetter-str-subclass-__str__"),
    pytest.param(STR_SUBCLASS + "import statistics\nB = getattr(statistics.mean, S('__globals__'))['__builtins__']\n"
                 "def gen():\n    yield 1\nfr = B['getattr'](gen(), 'gi_frame')\nG = B['getattr'](fr, 'f_globals')\n"
                 "return [str(k) for k in G] + [B['open'](SECRET_PATH).read()]",
                 id="frame-via-real-getattr"),
]


@pytest.mark.parametrize("code", STR_SUBCLASS_HOLES)
async def test_str_subclass_attribute_names(sb, code):
    result = await sb.run(code)
    if "hasattr" in code:  # hasattr answers False, so the snippet gives up
        sb.assert_error(result, "exception", "LookupError", "hasattr said no")
    else:
        sb.assert_error(result, "exception", "AttributeError", "is not accessible")
    assert sb.secret.token not in str(result)


POLICY_REFUSED = {
    # Positional class patterns are Python now; a class without `__match_args__` gets CPython's error.
    "pos_class_pattern": ("class P:\n    pass\nmatch P():\n    case P(1):\n        pass\nreturn 1", "exception",
                          "P() accepts 0 positional sub-patterns (1 given)"),
    "class_kw_private": ("class A(_x=1):\n    pass\nreturn 1", "syntax", "_x"),
}


# A static refusal does not depend on the backend: in-process is enough.
@pytest.mark.parametrize("backend", ["inprocess"])
@pytest.mark.parametrize("name", sorted(POLICY_REFUSED))
async def test_class_pattern_and_keyword_refused(sb, name, backend):
    code, kind, fragment = POLICY_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


async def test_setattr_dunder_refused(sb):
    code = 'class K: pass\nk = K()\nsetattr(k, "_" + "_deepcopy__", 1)\nreturn 1'
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "private")


async def test_metaclass_refused(sb):
    r = await sb.run("class M(type(object)):\n    pass\nreturn 1", backend="inprocess")
    sb.assert_error(r, "exception", "metaclasses")


# == class patterns read `__match_args__` with a native getattr ====================================

#
# A chain of gadgets would put `__match_args__ = ('__globals__',)` on a snippet class that every
# function is an instance of (enum's functional API defines `__reduce_ex__`, copy's reconstruction
# runs the setattr, `typing.Protocol` subclasses `register` any type); `case Q(g)` then reads
# `__globals__` of the guarded `getattr`: the real `sandbox.guards` module dict and its builtins.
# The enum functional API refuses names starting with "_" (the first gadget), and a class
# pattern's `__match_args__` is checked before CPython reads it (the last step; see
# test_class_pattern_reads_no_refused_attribute).


ESCAPE = """
import enum, copy, typing
class P(typing.Protocol):
    pass
class Q(P):
    pass
def ident(x):
    return x
def red(self, proto):
    return (ident, (Q,), (None, {'__match_args__': ('__globals__',)}))
E = enum.Enum('E', {'A': 1, '__reduce_ex__': red, '__copy__': None})
copy.copy(E.A)
Q.register(type(ident))
match getattr:
    case Q(g):
        pass
B = g['_builtins']
"""


ENUM_REFUSED = "enum member name '__reduce_ex__' is not allowed in the sandbox"


async def test_match_args_escape_inprocess_reads_host_file(sb):
    code = ESCAPE + "return B.open(SECRET_PATH).read()"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception", "ValueError", ENUM_REFUSED)


async def test_match_args_escape_worker_gets_real_os(sb):
    code = ESCAPE + (
        "os = B.getattr(B, '__import__')('os')\n"
        "return [type(os).__name__, os.getpid() > 1, sorted(os.environ)]"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ValueError", ENUM_REFUSED)
    assert "getpid" not in str(result.value) and result.logs == []


async def test_hostile_worker_frame_cannot_crash_the_host(sb):
    code = "import asyncio, json\n" + ESCAPE + (
        "os = B.getattr(B, '__import__')('os')\n"
        "body = json.dumps({'op': 'call', 'id': 1, 'name': [], 'a': [[], {}]}).encode()\n"
        "os.write(3, len(body).to_bytes(4, 'big') + body)\n"
        "await asyncio.sleep(1)\n"
    )
    try:
        result = await sb.run(code)
    except Exception as exc:  # the host must never see the worker's malformation as an exception
        pytest.fail(f"sandbox.run raised {type(exc).__name__}")
    # The escape is closed before it gets the real `os`; the host side of a frame whose name is
    # a list is covered with a scripted worker in tests/sandbox/test_worker.py (unhashable-name).
    sb.assert_error(result, "exception", "ValueError", ENUM_REFUSED)
    assert sb.spy.calls == []


async def test_match_class_pattern_on_own_class_cannot_set_match_args(sb):
    # A class body may define __match_args__ (it is the data model); a pattern that would read a
    # refused name through it is refused before CPython reads anything.
    code = (
        "import statistics\nclass Q:\n    __match_args__ = ('__globals__',)\n"
        "match Q():\n    case Q(g):\n        return sorted(g)\nreturn 1"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception", "TypeError", "would read attribute '__globals__'")
    # Writing it after the class statement stays refused.
    code = "class Q:\n    pass\nsetattr(Q, '__match_args__', ('__globals__',))\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "AttributeError", "private")


MATCH_ARGS_TOCTOU = """
n = [0]
class D:
    def __get__(self, inst, owner):
        n[0] += 1
        return ('real',) if n[0] % 2 == 1 else ('__traceback__',)
class Q(Exception):
    __match_args__ = D()
    real = 1
try:
    raise Q()
except Q as e:
    caught = e
match caught:
    case Q(tb):
        return [str(tb), n[0]]
return 'no match'
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_class_pattern_reads_no_refused_attribute(sb, backend):
    # A descriptor as `__match_args__` could answer the guard's check with a harmless tuple and
    # CPython's read right after it with a refused name: the guard reads the class dictionary.
    result = await sb.run(MATCH_ARGS_TOCTOU, backend=backend)
    sb.assert_error(result, "exception", "TypeError", "__match_args__ must be a plain tuple")
    assert "traceback" not in str(result.value)
    # A plain tuple naming a refused attribute of the snippet's own exception is refused too.
    code = (
        "class Q(Exception):\n    __match_args__ = ('__traceback__',)\n"
        "try:\n    raise Q()\nexcept Q as e:\n    caught = e\n"
        "match caught:\n    case Q(tb):\n        return str(tb)\nreturn 'no match'"
    )
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "TypeError", "would read attribute '__traceback__'")
    assert result.value is None


CLASS_DICT_REFLECTED = """
class X:
    def __eq__(self, other):
        got.append(other)
        return True
    def __ror__(self, other):
        got.append(other)
        return {}
    __hash__ = None
got = []
class C:
    pass
C.__dict__ == X()
C.__dict__ | X()
for d in got:
    d['__class__'] = property(lambda s: int)
tokens = []
class B:
    def __init_subclass__(cls):
        tokens.extend(k for k in cls.__dict__ if k.startswith('__sandbox'))
class S(B):
    pass
return [isinstance(C(), int), len(got), tokens, '__class__' in C.__dict__]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_class_dict_hands_out_no_writable_dictionary(sb, backend):
    # `mappingproxy` compares and `|`s through its real dictionary, handing that to the other
    # operand's reflected method: a snippet could then define `__class__` (isinstance lies) or
    # the pickling hooks on its class. The class `__dict__` is a copy, without the ownership token.
    result = await sb.run(CLASS_DICT_REFLECTED, backend=backend)
    assert result.ok, result
    assert result.value == [False, 2, [], False]
    sb.assert_no_leak(result)


# == host code that reads or writes attributes the snippet names ===================================

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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_kwargs_names_reach_no_setattr(sb, backend):
    code = """
import dataclasses, collections, decimal, textwrap
@dataclasses.dataclass
class D:
    a: int = 1
out = []
for fn in (lambda: dataclasses.replace(D(), **{'__class__': int}),
           lambda: collections.namedtuple('N', 'a')(1)._replace(**{'__class__': int}),
           lambda: decimal.Context(**{'__dict__': {}}),
           lambda: textwrap.TextWrapper(**{'__dict__': {}}),
           lambda: collections.namedtuple('N', 'a')._make([1, 2])):
    try:
        fn()
        out.append('ok')
    except Exception as e:
        out.append(type(e).__name__)
return [out, type(D()).__name__]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [["TypeError", "ValueError", "TypeError", "TypeError", "TypeError"], "D"]


async def test_overridden_descriptor_attributes_are_ignored_by_c_code(sb):
    code = """
import functools, enum, collections, fractions, uuid
class Pr(property):
    @property
    def fget(self):
        return len
class C:
    @Pr
    def x(self):
        return 1
class P(functools.partial):
    @property
    def func(self):
        return repr
class E(enum.Enum):
    A = 1
    @property
    def name(self):
        return "__class__"
class D(collections.defaultdict):
    @property
    def default_factory(self):
        return repr
class U(uuid.UUID):
    @property
    def hex(self):
        return "%s{0.__class__}"
class S(super):
    def __init__(self, *a):
        pass
return [C().x, P(len, "abc")(), repr(E.A), str(E.A), D(list)["k"], str(U(int=5)), type(S()).__name__]
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == [1, 3, "<E.A: 1>", "E.A", [], "00000000-0000-0000-0000-000000000005", "S"]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_positional_pattern_cannot_read_a_judged_name(sb, backend):
    """`case P(f)` reads `P.__match_args__` names natively, where no judge sees the value: a
    `str` subclass naming `format` would get the real `str.format`, which walks host objects."""
    code = """
import json
class P(str):
    __match_args__ = ("format",)
match P("{0.__globals__[json].sys.modules}"):
    case P(f):
        return str(f(json.dumps))
return "no match"
"""
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "would read attribute 'format'")
