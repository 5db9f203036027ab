"""The `copy` prelude: `copy.copy`/`deepcopy` walk the snippet's objects as its own code.

No host code acts on a snippet's object while it is copied: the stdlib's `copy`/`copyreg` never
run and no reduce protocol is called (checked with a profiler over the hostile zoo), a
`__deepcopy__` gets a plain memo of the snippet's own objects, cycles and shared parts come out
as in CPython, nesting deeper than the recursion limit is one clear error, and the host classes'
values copy by a rule per type (or are refused with one sentence).
"""

from __future__ import annotations

import copy as host_copy
import copyreg
import sys
from typing import Any

import pytest

from .hostile_zoo import ZOO_NAMES, ZOO_SOURCE, find_forbidden, module_dicts, run_snippet

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

COPY_THE_ZOO = "import copy\n" + ZOO_SOURCE + """
OUT = {}
MEMOS = []
for name in sorted(ZOO):
    for how in ('copy', 'deepcopy'):
        start = len(LOG)
        try:
            made = getattr(copy, how)(ZOO[name])
            outcome = 'ok'
        except Exception as e:
            made, outcome = e, 'raised'
        OUT[name + ':' + how] = (outcome, made, LOG[start:])
return {'OUT': OUT, 'LOG': LOG, 'PLANTS': PLANTS}
"""

#: Host code that would act on a snippet's object if it ran during the copies.
_HOST_COPY_FILES = frozenset({host_copy.__file__, copyreg.__file__})
_REDUCE_NAMES = frozenset({"__reduce_ex__", "__reduce__", "__getstate__", "__setstate__"})


def _copy_the_zoo_under_a_profiler() -> tuple[Any, Any, list[str]]:
    seen: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_filename in _HOST_COPY_FILES:
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")
        elif event == "c_call" and getattr(arg, "__name__", None) in _REDUCE_NAMES:
            seen.append(f"C {arg!r}")

    sys.setprofile(profile)
    try:
        got, ex = run_snippet(COPY_THE_ZOO)
    finally:
        sys.setprofile(None)
    return got, ex, seen


def test_copying_the_hostile_zoo_runs_no_host_copy_code() -> None:
    got, ex, seen = _copy_the_zoo_under_a_profiler()
    # Neither the stdlib's copy machinery nor any reduce protocol ran on a zoo object.
    assert seen == []
    assert {name.split(":")[0] for name in got["OUT"]} >= set(ZOO_NAMES) - {"planted_error"}
    # The pickle hooks could not be planted, and none was ever called.
    assert all(v.startswith("refused") for v in got["PLANTS"].values()), got["PLANTS"]
    assert not [entry for entry in got["LOG"] if entry[0] in ("reduce_hook", "state_hook")]
    # Nothing a copy returned, raised or handed to a hook is forbidden.
    run_getattr = ex.globals["_getattr_"]
    modules = module_dicts()
    for key, (_, made, log) in got["OUT"].items():
        assert find_forbidden(made, run_getattr=run_getattr, module_dicts=modules) == [], key
        assert find_forbidden(log, run_getattr=run_getattr, module_dicts=modules) == [], key


def test_zoo_copies_are_ordinary_copies() -> None:
    got, _, _ = _copy_the_zoo_under_a_profiler()
    out = got["OUT"]
    for name in ("lying_str", "lying_int", "lying_bytes", "lying_float", "lying_list", "lying_dict",
                 "reduces_only", "with_properties", "nested", "tuple_of_lies", "hostile_error",
                 "lying_str_self", "bytes_keyed", "str_keyed", "real_dataclass", "descriptor"):
        for how in ("copy", "deepcopy"):
            outcome, made, _ = out[f"{name}:{how}"]
            assert outcome == "ok", (name, how, made)
    # Builtin subclasses keep their class and their exact value; instances their `__dict__`.
    assert type(out["lying_str:deepcopy"][1]).__name__ == "LyingStr"
    assert str.__str__(out["lying_str:deepcopy"][1]) == "ab"
    assert int.__int__(out["lying_int:copy"][1]) == 3
    assert list.__len__(out["lying_list:deepcopy"][1]) == 2
    reduced = out["reduces_only:deepcopy"][1]
    assert type(reduced).__name__ == "ReducesOnly" and str.__str__(vars(reduced)["x"]) == "x"
    # The hooks of the snippet's own classes are its own code: `__copy__` with no argument,
    # `__deepcopy__` with the walk's memo, a plain dict.
    copied = [entry for entry in out["copy_hooks:copy"][2] if entry[0] == "CopyHooks.__copy__"]
    assert copied == [("CopyHooks.__copy__", (), {})]
    deep = [entry for entry in out["copy_hooks:deepcopy"][2] if entry[0] == "CopyHooks.__deepcopy__"]
    assert len(deep) == 1 and type(deep[0][1][0]) is dict


def test_a_deepcopy_hook_gets_a_memo_of_the_snippets_own_objects() -> None:
    code = "import copy\n" + ZOO_SOURCE + """
box = {'hooked': CopyHooks(), 'everything': Everything(), 'items': [LyingStr('k'), (1, [2])]}
LOG.clear()
copy.deepcopy(box)
return LOG
"""
    log, ex = run_snippet(code)
    owns = ex.globals["_getattr_"].__self__.owns
    memos = [args[0] for tag, args, _ in log if tag in ("CopyHooks.__deepcopy__", "recorder") and args]
    assert memos and all(type(memo) is dict for memo in memos)
    for memo in memos:
        # Keyed on the run's own `id()` numbers, holding the snippet's objects and their copies.
        assert all(type(key) is int and 0x1000 <= key < 0x100000 for key in memo), memo
        values = [v for value in memo.values() for v in (value if type(value) is list else [value])]
        assert all(type(v) in (dict, list, tuple, str, int) or owns(v) for v in values), values


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cycles_and_shared_parts_copy_as_in_cpython(sb, backend):
    code = """
import copy, collections
class Node:
    def __init__(self):
        self.me = self
        self.items = []
class Slotted:
    __slots__ = ('peer', '__secret')
    def __init__(self):
        self.peer = self
        self.__secret = [1]
    def secret(self):
        return self.__secret
lst = [1]
lst.append(lst)
d = {}
d['d'] = d
n = Node()
n.items.append(n)
t_list = []
t = (t_list,)
t_list.append(t)
s = set()
holder = Node()
holder.s = s
s.add(holder)
q = collections.deque()
q.append(q)
od = collections.OrderedDict()
od['od'] = od
sl = Slotted()
shared = [0]
pair = [shared, shared]
c = copy.deepcopy([lst, d, n, t, s, q, od, sl, pair])
cl, cd, cn, ct, cs, cq, cod, csl, cpair = c
(h,) = cs
return [cl[1] is cl, cl is not lst, cd['d'] is cd, cn.me is cn, cn.items[0] is cn, cn is not n,
        ct[0][0] is ct, h.s is cs, cq[0] is cq, cod['od'] is cod, csl.peer is csl,
        csl.secret() == [1], csl.secret() is not sl.secret(), cpair[0] is cpair[1], cpair[0] is not shared]
"""
    await sb.assert_harmless(code, [True] * 15, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_nesting_past_the_recursion_limit_is_one_clear_error(sb, backend):
    code = """
import copy
class Node:
    def __init__(self, nxt):
        self.nxt = nxt
x = []
n = None
for i in range(3000):
    x = [x]
    n = Node(n)
out = []
for value in (x, n):
    for memo in (None, {}):
        try:
            copy.deepcopy(value, memo)
            out.append('copied')
        except ValueError as e:
            out.append(str(e))
shallow = copy.copy(x)
return out + [shallow is not x, shallow[0] is x[0]]
"""
    message = "deepcopy(): the object is nested too deeply to copy in the sandbox"
    await sb.assert_harmless(code, [message] * 4 + [True, True], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_iterators_copy_from_where_they_are(sb, backend):
    code = """
import copy, itertools
out = []
it = iter([[1], [2], [3]])
next(it)
shallow, deep = copy.copy(it), copy.deepcopy(it)
a, b = next(shallow), next(deep)
out += [a is next(it), b == [2] and b is not a, list(shallow), list(deep)]
d = {'a': 1, 'b': 2}
out.append(list(copy.deepcopy(iter(d.items()))))
e = enumerate(['x', 'y'], 5)
next(e)
out.append(list(copy.copy(e)))
z = zip([1, 2], [[3], [4]])
zd = copy.deepcopy(z)
out.append([p for p in zd])
m = map(str, [1, 2])
out.append(list(copy.deepcopy(m)))
r = itertools.repeat([1], 2)
rd = list(copy.deepcopy(r))
out.append([rd, rd[0] is rd[1]])
def gen():
    yield 1
try:
    copy.copy(gen())
except TypeError as error:
    out.append(str(error))
return out
"""
    await sb.assert_harmless(code, [
        True, True, [[3]], [[3]], [["a", 1], ["b", 2]], [[6, "y"]], [[1, [3]], [2, [4]]], ["1", "2"],
        [[[1], [1]], True], "cannot copy a 'generator' object in the sandbox",
    ], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_iterators_over_atoms_and_tees_copy_without_materialising(sb, backend):
    # A deep copy of an iterator over a range or a text shares it (its items are atoms): the
    # kernel never lists what is left of a range; a tee copies as `tee.__copy__` does.
    code = """
import copy, itertools
it = iter(range(5000))
next(it)
t1, t2 = itertools.tee([1, 2])
c = copy.copy(t1)
s = iter("abc")
next(s)
out = [next(copy.deepcopy(it)), next(copy.copy(it)), next(it), list(c), list(t1), list(copy.deepcopy(s))]
try:
    copy.deepcopy(t2)
except TypeError as e:
    out.append(str(e))
return out
"""
    await sb.assert_harmless(
        code, [1, 1, 1, [1, 2], [1, 2], ["b", "c"], "cannot deep-copy an 'itertools.tee' iterator in the sandbox"],
        backend=backend,
    )


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_method_deep_copies_with_its_own_object_only(sb, backend):
    # As in CPython, a deep copy of the snippet's bound method is bound to its object's copy; a
    # method of a host object (`random.randint`, `calendar.month`) is its own copy: its object
    # (the run's `Random`, the module's `TextCalendar`) is never reached.
    code = """
import copy, random, calendar
class H:
    def __init__(self):
        self.v = [5]
    def m(self):
        return self.v
h = H()
m2 = copy.deepcopy(h.m)
h.v.append(6)
pair = copy.deepcopy([h, h.m])
return [m2(), h.m(), pair[1]() is pair[0].v, copy.deepcopy(random.randint) is random.randint,
        copy.deepcopy(calendar.month) is calendar.month, copy.copy(h.m) == h.m]
"""
    await sb.assert_harmless(code, [[5], [5, 6], True, True, True, True], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_host_values_copy_by_their_type(sb, backend):
    code = """
import copy, collections, datetime, io, string, textwrap, calendar, difflib, random, functools
class D(datetime.date):
    pass
class TZ(datetime.tzinfo):
    def utcoffset(self, dt):
        return datetime.timedelta(hours=1)
class DT(datetime.datetime):
    pass
P = collections.namedtuple('P', 'a b')
class Q(P):
    pass
d = D(2020, 1, 2)
d.tag = 't'
dt = DT(2020, 1, 2, 3, tzinfo=TZ())
q = Q(1, [2])
s = io.StringIO('abc')
s.read(1)
w = textwrap.TextWrapper(width=5)
t = string.Template('$a')
r = random.Random(7)
p = functools.partial(max, [1], key=len)
out = []
for how in (copy.copy, copy.deepcopy):
    c = [how(v) for v in (d, dt, q, s, w, t, calendar.TextCalendar(3), r, p)]
    out.append([type(v).__name__ for v in c])
    out.append([c[0] == d and c[0].tag == 't', c[1] == dt and c[1].utcoffset().seconds == 3600,
                c[2] == q and (c[2][1] is q[1]) == (how is copy.copy), c[3].read(), c[4].width,
                c[5].template, c[6].firstweekday, c[7].random() == random.Random(7).random(),
                c[8]([1, 2], [3]), c[8].args[0] is p.args[0]])
return out
"""
    names = ["D", "DT", "Q", "StringIO", "TextWrapper", "Template", "TextCalendar", "Random", "partial"]
    await sb.assert_harmless(code, [
        names, [True, True, True, "bc", 5, "$a", 3, True, [1, 2], True],
        names, [True, True, True, "bc", 5, "$a", 3, True, [1, 2], False],
    ], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_exceptions_copy_from_their_arguments_and_public_attributes(sb, backend):
    code = """
import copy, json
class Mine(Exception):
    def __init__(self, what):
        super().__init__(what)
        self.what = [what]
e = ValueError('x')
e.note = [1]
e.add_note('n')
m = Mine('w')
try:
    json.loads('{')
except json.JSONDecodeError as err:
    j = err
out = []
for how in (copy.copy, copy.deepcopy):
    ce, cm, cj = how(e), how(m), how(j)
    out.append([type(ce).__name__, str(ce), ce.note, ce.__notes__, (ce.note is e.note) == (how is copy.copy),
                type(cm).__name__, cm.what, (cm.what is m.what) == (how is copy.copy), cj.pos, cj.lineno])
return out
"""
    row = ["ValueError", "x", [1], ["n"], True, "Mine", ["w"], True, 1, 1]
    await sb.assert_harmless(code, [row, row], backend=backend)


#: Host values that copied with the real `copy` (checked against main before the prelude): each
#: still copies and deep-copies, to an equal value of the same class.
STILL_COPYABLE = (
    "decimal.Decimal('1.5')", "fractions.Fraction(1, 3)", "uuid.UUID(int=5)", "statistics.NormalDist(1, 2)",
    "datetime.date(2020, 1, 1)", "datetime.datetime(2020, 1, 1)", "datetime.timedelta(1)", "datetime.timezone.utc",
    "re.compile('a')", "collections.OrderedDict(a=[1])", "collections.Counter('ab')",
    "collections.defaultdict(list, a=[1])", "collections.deque([[1]], 3)", "collections.ChainMap({'a': [1]}, {})",
    "typing.List[int]", "list[int]", "zoneinfo.ZoneInfo('UTC')", "pathlib.PurePosixPath('/a')", "decimal.Context(prec=3)",
    "time.gmtime(0)", "slice(1)", "range(3)", "operator.attrgetter('a')", "calendar.month", "object()",
)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_host_values_that_copied_before_still_copy(sb, backend):
    code = (
        "import copy, collections, datetime, decimal, fractions, operator, pathlib, re, statistics, time, typing\n"
        "import uuid, zoneinfo, calendar\nout = []\n"
        f"for v in [{', '.join(STILL_COPYABLE)}]:\n"
        "    for how in (copy.copy, copy.deepcopy):\n"
        "        c = how(v)\n"
        "        out.append(type(c) is type(v) and (c == v or repr(c) == repr(v) or type(v) in (object, operator.attrgetter)))\n"
        "return out"
    )
    await sb.assert_harmless(code, [True] * (2 * len(STILL_COPYABLE)), backend=backend)


REFUSED = {
    "host-base-with-its-own-copy-protocol": (
        "import copy, json\nclass E(json.JSONDecodeError):\n    pass\nreturn copy.copy(E('m', 'doc', 1))",
        "cannot copy a 'E' object in the sandbox: its base class 'JSONDecodeError' does not support copying here",
    ),
    "host-object-holding-more-than-plain-data": (
        "import copy, graphlib\nts = graphlib.TopologicalSorter({'a': ['b']})\nreturn copy.deepcopy(ts)",
        "cannot deep-copy this 'TopologicalSorter' object in the sandbox: it holds more than plain data",
    ),
    "a-shim": ("import copy, json\nreturn copy.deepcopy(json)", "cannot pickle 'module' object"),
    "a-coroutine": (
        "import copy\nasync def f():\n    pass\nc = f()\ntry:\n    copy.copy(c)\nfinally:\n    c.close()",
        "cannot copy a 'coroutine' object in the sandbox",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_what_has_no_copy_is_refused_in_one_sentence(sb, name):
    code, message = REFUSED[name]
    await sb.assert_refused(code, "exception", f"TypeError: {message}", backend="inprocess")
