"""The prelude'd functions give what CPython gives on ordinary inputs: each program runs once as
a snippet (both backends) and once as a plain CPython coroutine, and the results must be equal,
error messages included."""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import pytest
from sandbox_helpers import run

PROGRAMS = {
    "operator-getters": """
import operator
class P:
    def __init__(self, x, y):
        self.x = x
        self.y = y
        self.me = self
rows = [P(3, 'c'), P(1, 'a'), P(2, 'b')]
out = [[p.y for p in sorted(rows, key=operator.attrgetter('x'))],
       operator.attrgetter('x', 'me.y')(rows[0]),
       operator.methodcaller('split', ',', maxsplit=1)('a,b,c'),
       repr(operator.attrgetter('a', 'b.c')), repr(operator.methodcaller('f', 1, k='v')),
       list(map(operator.itemgetter(1), [(1, 2), (3, 4)]))]
for bad in (lambda: operator.attrgetter(1), lambda: operator.methodcaller(2), lambda: operator.attrgetter('nope')(rows[0])):
    try:
        bad()
    except (TypeError, AttributeError) as e:
        out.append([type(e).__name__, str(e)])
return out
""",
    "functools-wrappers": """
import functools
def deco(f):
    @functools.wraps(f)
    def inner(*a, **k):
        return f(*a, **k)
    return inner
@deco
def add(a: int, b: int = 2) -> int:
    return a + b
add.extra = 1
@deco
def again(x):
    return x
calls = []
@functools.lru_cache(maxsize=2)
def sq(x):
    calls.append(x)
    return x * x
@functools.lru_cache
def plain(x):
    return -x
@functools.lru_cache(typed=True)
def typed(x):
    return type(x).__name__
@functools.cache
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
out = [add.__name__, sorted(add.__annotations__), add(1), add.__wrapped__(1, 1), again.__name__,
       [sq(2), sq(2), sq(3), sq(4), sq(2)], calls, list(sq.cache_info()), sq.cache_parameters(),
       plain(3), plain.__name__, [typed(1), typed(1.0)], fib(40), fib.cache_info().hits]
sq.cache_clear()
out.append(list(sq.cache_info()))
out.append(functools.WRAPPER_ASSIGNMENTS)
for bad in (lambda: functools.lru_cache('x'), lambda: functools.lru_cache(maxsize=1)(3)):
    try:
        bad()
    except TypeError as e:
        out.append(str(e))
return out
""",
    "copy-and-deepcopy": """
import copy, collections, dataclasses, datetime, fractions, functools, random
class Box:
    def __init__(self, items):
        self.items = items
        self.me = self
class Hooked:
    def __init__(self, v):
        self.v = v
    def __copy__(self):
        return Hooked(['shallow'])
    def __deepcopy__(self, memo):
        return Hooked(copy.deepcopy(self.v, memo) + ['deep'])
class Slotted:
    __slots__ = ('a', '__b')
    def __init__(self):
        self.a = [1]
        self.__b = (2, [3])
    def b(self):
        return self.__b
@dataclasses.dataclass(frozen=True, slots=True)
class Frozen:
    x: list
class L(list):
    pass
class C(collections.Counter):
    pass
class S(str):
    pass
class F(fractions.Fraction):
    pass
class D(datetime.date):
    pass
shared = [0]
lst = [shared, shared, {'k': (shared,)}]
lst.append(lst)
b = Box([shared])
l = L([[1]])
l.tag = [2]
out = []
orig = [lst, b, Hooked([1]), Slotted(), Frozen([4]), l, C('aab'), S('s'), F(1, 3), D(2020, 1, 2),
        collections.OrderedDict(a=[1]), collections.defaultdict(list, k=[1]), collections.deque([[1]], 2),
        collections.ChainMap({'a': [1]}), functools.partial(max, [1], key=len)]
for how in (copy.copy, copy.deepcopy):
    c = [how(v) for v in orig]
    cl, cb, ch, cs, cf, cL, cC, cS, cF, cD, cod, cdd, cq, ccm, cp = c
    out.append([cl[0] is cl[1], cl[3] is cl, cl[0] is shared, cb.me is cb, cb.items[0] is shared, ch.v,
                cs.a, cs.b(), cs.a is orig[3].a, cf.x, type(cL).__name__, cL, cL.tag, dict(cC), type(cC).__name__,
                str(cS), type(cS).__name__, str(cF), type(cF).__name__, cD.isoformat(), type(cD).__name__,
                list(cod.items()), dict(cdd), cdd.default_factory is list, list(cq), cq.maxlen, ccm['a'],
                cp([1, 2], [3]), cp.args[0] is orig[14].args[0]])
it = iter([[1], [2], [3]])
next(it)
r = random.Random(5)
out.append([list(copy.copy(it)), list(copy.deepcopy(it)), copy.deepcopy(r).random() == r.random(),
            copy.copy(1.5), copy.deepcopy((1, 'a'))])
memo = {}
x = [1]
y = copy.deepcopy([x, x], memo)
out.append([y[0] is y[1], memo[id(x)] is y[0]])
return out
""",
    "dataclass-helpers": """
import dataclasses
from typing import ClassVar
@dataclasses.dataclass(frozen=True)
class Pt:
    x: int
    y: int = 0
    k: ClassVar[int] = 3
@dataclasses.dataclass
class Box:
    p: Pt
    rows: list
    tags: tuple = ()
    hidden: int = dataclasses.field(default=7, init=False)
b = Box(Pt(1, 2), [Pt(3), {'k': [Pt(4)]}], ('a', Pt(5)))
out = [dataclasses.asdict(b), dataclasses.astuple(b), [f.name for f in dataclasses.fields(b)],
       dataclasses.replace(Pt(1), y=9) == Pt(1, 9), dataclasses.replace(b, rows=[]).hidden,
       dataclasses.asdict(Pt(1), dict_factory=lambda kv: [list(p) for p in kv])]
for bad in (lambda: dataclasses.replace(b, hidden=1), lambda: dataclasses.replace(1),
            lambda: dataclasses.asdict(Box), lambda: dataclasses.fields(1), lambda: dataclasses.replace(Pt(1), z=1)):
    try:
        bad()
    except (TypeError, ValueError) as e:
        out.append([type(e).__name__, str(e)])
return out
""",
    "urlencode": """
from urllib.parse import urlencode, quote
return [urlencode({'q': 'a b&c', 'n': 1, b'x': b'y z'}), urlencode([('a', [1, 2]), ('b', 'c')], doseq=True),
        urlencode({'a': [1, 2]}), urlencode({'a': 'b c/d'}, safe='/', quote_via=quote), urlencode([]),
        urlencode({'é': 'ü'}, encoding='latin-1')]
""",
    "pprint-dataclasses-and-collections": """
import pprint, dataclasses, collections
@dataclasses.dataclass
class Pt:
    name: str
    items: list
    hidden: int = dataclasses.field(default=3, repr=False)
@dataclasses.dataclass(repr=False)
class Quiet(Pt):
    pass
@dataclasses.dataclass
class Own:
    x: list
    def __repr__(self):
        return 'Own(...)'
@dataclasses.dataclass
class Node:
    label: str
    child: object = None
n = Node('a' * 30)
n.child = Node('b' * 30, n)
data = {'pt': Pt('n' * 30, list(range(25))), 'quiet': Quiet('q', list(range(25))), 'own': Own(list(range(40))),
        'node': n, 'counter': collections.Counter('abracadabra' * 5), 'deque': collections.deque(range(30)),
        'bounded': collections.deque(range(30), maxlen=40), 'ordered': collections.OrderedDict(b=list(range(20)), a=1),
        'default': collections.defaultdict(list, {'x': list(range(25))}),
        'chain': collections.ChainMap({'a': list(range(20))}, {'b': 'x' * 70}),
        'empty': [collections.Counter(), collections.deque(), collections.OrderedDict(), collections.defaultdict(int),
                  collections.ChainMap(), set(), frozenset(), '', b''],
        'text': 'lorem ipsum dolor sit amet ' * 6 + '\\nnext line', 'raw': b'0123456789' * 12,
        'bytearray': bytearray(b'ab' * 50), 'sets': [set(range(30)), frozenset('abcdefghijklmnopqrstuvwxyz')],
        'nums': [10 ** 12, -(10 ** 15), 1.5, 2j]}
out = []
for width in (1, 30, 80):
    for compact in (False, True):
        out.append(pprint.pformat(data, width=width, compact=compact))
out.append(pprint.pformat(data, indent=4, depth=2, sort_dicts=False, underscore_numbers=True))
out.append(pprint.pformat(Pt('p', [Pt('q', list(range(20)))]), width=20))
return out
""",
    "pprint-printer-and-helpers": """
import pprint
class Upper(pprint.PrettyPrinter):
    def format(self, object, context, maxlevels, level):
        if isinstance(object, str):
            return repr(object.upper()), True, False
        return super().format(object, context, maxlevels, level)
data = {'b': ['x' * 20, 'y' * 20, ('z',)], 'a': {'k': 'v', 'n': [1, 2, [3, [4, [5]]]]}}
rec = [1, 2]
rec.append(rec)
p = pprint.PrettyPrinter(indent=2, width=30, depth=3, compact=True)
out = [p.pformat(data), Upper(width=20).pformat(data), p.isreadable(data), p.isrecursive(data),
       Upper().isreadable(['a']), pprint.saferepr(data), pprint.isreadable(data),
       pprint.isreadable(pprint), pprint.isrecursive(rec), pprint.saferepr({1: rec}).split(' with id')[0],
       pprint.pformat(1234567, underscore_numbers=True), pprint.pformat(True, underscore_numbers=True)]
for bad in (lambda: pprint.PrettyPrinter(indent=-1), lambda: pprint.pformat(1, depth=0),
            lambda: pprint.pformat(1, width=0), lambda: pprint.pformat(1, indent='x')):
    try:
        bad()
    except ValueError as e:
        out.append([type(e).__name__, str(e)])
return out
""",
    "string-template": """
import string
t = string.Template('$who likes ${what} for $$5, $who')
class Mapping:
    def __getitem__(self, key):
        if key == 'what':
            return ['tea']
        raise KeyError(key)
class Percent(string.Template):
    delimiter = '%'
    idpattern = '[a-z]+'
class Braces(string.Template):
    braceidpattern = '[A-Z.]+'
class Own(string.Template):
    pattern = r'@(?:(?P<escaped>@)|(?P<named>[a-z]+)|\\{(?P<braced>[a-z]+)\\}|(?P<invalid>))'
class Odd(string.Template):
    pattern = r'#(?P<named>[a-z]+)|(?P<other>!)'
out = [t.substitute(who='tim', what='kung pao'), t.substitute({'who': 'a', 'what': 'b'}, who='kw'),
       t.safe_substitute(Mapping(), who='ann'), t.safe_substitute(), t.get_identifiers(), t.is_valid(),
       string.Template('$ x').is_valid(), Percent('%a %% %b').safe_substitute(a=1),
       Braces('${A.B} $x').substitute({'A.B': 1, 'x': 2}), Own('@a @@ @{b}').substitute(a=1, b=2),
       Own.pattern.pattern, repr(Percent.flags), repr(string.Template.flags), Percent.pattern.flags,
       t.template, string.Template.delimiter, string.Template.idpattern,
       string.capwords(' aBc  dEf ')]
for bad in (lambda: string.Template('line one\\nabcd $').substitute(), lambda: string.Template('${a').substitute(a=1),
            lambda: t.substitute(who='x'), lambda: t.substitute(Mapping(), who='w', what2=1),
            lambda: t.substitute({}, {}), lambda: Odd('!').substitute(), lambda: Odd('!').is_valid(),
            lambda: Odd('!').get_identifiers(), lambda: Odd('#a').substitute(a=1)):
    try:
        bad()
    except (ValueError, KeyError, TypeError, IndexError) as e:
        out.append([type(e).__name__, str(e) if not isinstance(e, ValueError) else str(e.args[0])])
return out
""",
    "contextlib-common": """
import contextlib
log = []
@contextlib.contextmanager
def step(name):
    log.append('+' + name)
    try:
        yield name
    finally:
        log.append('-' + name)
with contextlib.ExitStack() as stack:
    names = [stack.enter_context(step(n)) for n in 'ab']
    with contextlib.suppress(ZeroDivisionError):
        1 / 0
with contextlib.nullcontext('n') as n:
    log.append(n)
try:
    with step('c'):
        raise KeyError('k')
except KeyError as e:
    log.append(repr(e))
return [log, names]
""",
}


def _cpython(code: str) -> Any:
    src = "async def __w__():\n" + textwrap.indent(code.strip("\n"), "    ")
    namespace: dict[str, Any] = {}
    exec(compile(src, "<cpython>", "exec", dont_inherit=True), namespace)
    return asyncio.run(namespace["__w__"]())


def _json(value: Any) -> Any:
    """What the value looks like after the run's JSON boundary (tuples become lists), with the
    wrapper's name out of qualnames (the sandbox shows a snippet's classes as a script would)."""
    if isinstance(value, str):
        return value.replace("__w__.<locals>.", "")
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_prelude_modules_match_cpython(name: str, backend: str) -> None:
    code = PROGRAMS[name]
    expected = _json(_cpython(code))
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == expected
