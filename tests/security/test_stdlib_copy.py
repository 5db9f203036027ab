"""copy: `copy.copy`/`deepcopy` (and the deep copies inside `dataclasses.asdict`) call reduce hooks
and run `setattr` for reconstructed state. No snippet may plant a hook the copy then calls, hand
in a memo that decides the copy, or copy a shim, a binding or a pending call; copies of the
snippet's own objects and of host-class subclasses stay ordinary. In-process cases run in a
child interpreter and check that host classes are unchanged.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# == copy._reconstruct as a setattr gadget =========================================================

#
# `enum.Enum(name, {...})` would put dict keys into the class namespace without the policy's name
# checks, so a snippet could define `__reduce_ex__`; `copy.copy(x)` calls it and `_reconstruct`
# then runs `setattr(y, key, value)` for a "slot state" dict: any name, on any object, no `_write_`.


SETATTR_GADGET = """
import enum, copy, json, textwrap
def ident(x):
    return x
def red(self, proto):
    return (ident, (TARGET,), (None, {NAME: VALUE}))
E = enum.Enum('E', {'A': 1, '__reduce_ex__': red, '__copy__': None})
copy.copy(E.A)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_copy_reconstruct_cannot_setattr_host_classes(sb, backend):
    code = (
        SETATTR_GADGET.replace("TARGET", "textwrap.TextWrapper")
        .replace("NAME", "'pwned'").replace("VALUE", "1")
        + "return textwrap.TextWrapper.pwned"
    )
    result = await sb.run(code, backend=backend)
    # The gadget's first link, an enum defining __reduce_ex__, is refused.
    sb.assert_error(result, "exception", "enum member name '__reduce_ex__' is not allowed")
    import textwrap

    assert not hasattr(textwrap.TextWrapper, "pwned")
    await sb.assert_next_run_ok(backend)


def test_copy_gadget_cannot_corrupt_shared_host_class(isolated):
    code = (
        SETATTR_GADGET.replace("TARGET", "type(json)")
        .replace("NAME", "'__getattr__'").replace("VALUE", "lambda self, name: 'PWNED'")
        + "return json.dumps([1])"
    )
    report = isolated(
        code, "import sandbox.shims as s\nstate = sorted(k for k in vars(s.ModuleShim) if 'getattr' in k or k == 'pwned')\nstate = [state, repr(s.ModuleShim.__getattr__.__module__)]"
    )
    assert not report["hung"]
    assert report["result"]["error"] is not None, report["result"]
    assert report["after"] == report["before"]
    assert report["next"]["value"] == "[1]"


async def test_deepcopy_class_level_reduce_of_plain_instance_sets_nothing_on_hosts(sb):
    code = """
import copy, operator
class V:
    pass
v = V()
v.x = operator.attrgetter
w = copy.deepcopy(v)
return [w.x is operator.attrgetter, getattr(operator.attrgetter, "count", None)]
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok, result
    assert result.value == [True, None]


async def test_planted_hook_in_defaultdict_factory_or_bound_self_still_refused(sb):
    # The copy walk does not descend into defaultdict.default_factory or a bound method's
    # __self__; those are only dangerous with a planted hook, which setattr still refuses.
    code = "class A:\n    pass\na = A()\nsetattr(a, '__deepcopy__', print)\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "__deepcopy__")


# == what cannot be copied =========================================================================

UNCOPYABLE = [
    pytest.param("import copy\nreturn copy.deepcopy(tools)", "exception", ["TypeError", "cannot be copied"],
                 id="deepcopy-namespace"),
    pytest.param("import copy, json\nreturn copy.copy(json)", "exception", ["TypeError", "cannot pickle 'module' object"],
                 id="copy-shim"),
    pytest.param("import copy\nreturn copy.copy(tools.f)", "exception", ["TypeError", "cannot be copied"],
                 id="copy-binding"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), UNCOPYABLE)
@pytest.mark.filterwarnings("ignore")
async def test_uncopyable_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


UNCOPYABLE_NAMED = [
    ("copy a shim", "import copy, json\nreturn copy.copy(json)", "exception", ["cannot pickle 'module' object"]),
    ("deepcopy a binding", "import copy\nreturn copy.deepcopy(tools.f)", "exception", ["cannot be copied"]),
    ("copy a pending call", "import copy\nreturn copy.copy(tools.f(1))", "exception", ["cannot be copied"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", UNCOPYABLE_NAMED, ids=[c[0] for c in UNCOPYABLE_NAMED])
async def test_uncopyable_objects(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


COPY_REFUSED = {
    # copy
    "copy_deep_nesting": (
        "import copy\nx = []\nfor i in range(300000):\n    x = [x]\nreturn copy.deepcopy(x)", "exception", "nested too deeply"),
}


# A static refusal does not depend on the backend: in-process is enough.
@pytest.mark.parametrize("backend", ["inprocess"])
@pytest.mark.parametrize("name", sorted(COPY_REFUSED))
async def test_copy_refused(sb, name, backend):
    code, kind, fragment = COPY_REFUSED[name]
    # Building 300,000 levels takes seconds on a busy machine: limits that hold when it is
    # several times slower, so the refusal (not the wall clock) ends the run.
    result = await sb.run_heavy(code, backend=backend)
    sb.assert_error(result, kind, fragment)
    assert sb.spy.calls == []


# == deepcopy memo =================================================================================

async def test_a_snippet_memo_holds_only_its_own_objects_and_copies(sb):
    code = (
        "import copy, re, functools, collections\nmemo = {}\n"
        "objs = [re.compile('a'), functools.partial(max, 1), collections.ChainMap({}),"
        " collections.OrderedDict(a=1), collections.defaultdict(list)]\n"
        "copy.deepcopy(objs, memo)\n"
        "return sorted({type(v).__name__ for v in memo.values()}"
        " | {type(x).__name__ for v in memo.values() if type(v) is list for x in v})"
    )
    # CPython's memo kept what the reduce protocol visited (`copyreg` helpers, a partial's state
    # tuple, a class's dict); the prelude's holds the objects, their copies and their parts.
    await sb.assert_harmless(
        code, ["ChainMap", "OrderedDict", "Pattern", "defaultdict", "dict", "list", "partial"], backend="inprocess"
    )


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
async def test_deepcopy_positional_memo_is_the_snippets_dict(sb, backend):
    code = "import copy\nm = {}\nx = [1]\ny = copy.deepcopy(x, m)\nreturn [y, y is not x, m[id(x)] is y, m[id(m)] == [x]]"
    await sb.assert_harmless(code, [[1], True, True, True], backend=backend)


# == closed: copy.deepcopy's memo hands back the originals, e.g. a bound method's __self__ =========
#
# `copy._keep_alive` appends every original it copied to `memo[id(memo)]`; a snippet passing its
# own dict as memo reads them back. For `random.randint` (a bound method of the run's private
# `random.Random`) that is the `__self__` the guards refuse to hand out. The Random is per run,
# so nothing host-wide leaks today, but any Python-level bound method of a host object in a shim
# would give away its instance (and, through its reduce state, its attribute values).
MEMO_SELF = """
import copy, random
m = {}
copy.deepcopy(random.randint, m)
kept = [v for v in m.values() if type(v) is list]
return [type(x).__name__ for x in (kept[0] if kept else [])]
"""


async def test_deepcopy_memo_does_not_leak_method_self(sb):
    result = await sb.run(MEMO_SELF, backend="worker")
    sb.assert_no_leak(result)
    assert not (result.ok and "Random" in result.value), result


# == closed: copy.deepcopy trusts a snippet `memo` (dict subclass with its own get) ================
#
# `copy.deepcopy(x, memo)` asks `memo.get(id(obj), _nil)` for every object before copying it and
# returns whatever `get` hands back. `_checked_deepcopy` walks `x` (clean) and then passes the
# snippet's memo straight through, so `get` swaps in a state dict `{"__reduce_ex__": red}` for
# the clean instance's `__dict__`; copy._reconstruct runs `y.__dict__.update(state)` and the
# copy comes out with a reduce hook in its instance dict. `dataclasses.asdict` then deep-copies
# that value with the RAW `copy.deepcopy` (no `_copy_problem` walk), which calls the hook and
# runs `setattr(operator.attrgetter, "_count", -1)`: the shim's name check is off, and
# attrgetter("__globals__") reaches the guards' real builtins -> os.
MEMO_PLANT = """
import copy, operator, dataclasses
def red(proto):
    return (lambda: operator.attrgetter, (), (None, {"count": 1, "_count": -1}))
calls = []
class M(dict):
    def get(self, k, default=None):
        calls.append(1)
        if len(calls) == 3:  # x, type(x), then x's state dict
            return {"__reduce_ex__": red}
        return default
class X:
    pass
x = X()
x.a = 1
planted = copy.deepcopy(x, M())
@dataclasses.dataclass
class D:
    v: object
dataclasses.asdict(D(planted))
"""


async def test_deepcopy_snippet_memo_escape_worker(attrgetter_plant):
    await attrgetter_plant.assert_worker_escape_fails(MEMO_PLANT)


def test_deepcopy_snippet_memo_escape_inprocess(attrgetter_plant):
    attrgetter_plant.assert_inprocess_contained(MEMO_PLANT)


async def test_a_memo_answer_is_a_copy_and_plants_nothing(sb):
    # A lying memo decides what the copy *is*, as in CPython, and nothing more: the prelude never
    # `setattr`s state it found in the memo, and a planted dict stays a dict.
    code = """
import copy, dataclasses, operator
calls = []
class M(dict):
    def get(self, k, default=None):
        calls.append(1)
        return {"__reduce_ex__": 1, "__copy__": 2} if len(calls) == 1 else default
class X:
    pass
x = X()
x.a = 1
y = copy.deepcopy(x, M())
@dataclasses.dataclass
class D:
    v: object
z = copy.deepcopy(X())
return [type(y).__name__, sorted(copy.copy(y)), dataclasses.asdict(D(y)), sorted(vars(z)),
        getattr(operator.attrgetter, "count", None)]
"""
    await sb.assert_harmless(
        code, ["dict", ["__copy__", "__reduce_ex__"], {"v": {"__copy__": 2, "__reduce_ex__": 1}}, [], None],
        backend="inprocess",
    )


async def test_asdict_and_astuple_copy_leaves_with_the_prelude(sb):
    # `asdict`/`astuple` deep-copy the values that are neither dataclasses nor containers with
    # the `copy` prelude: a leaf's own `__deepcopy__` runs as the snippet's code, with a memo.
    code = """
import copy, dataclasses
seen = []
class Leaf:
    def __deepcopy__(self, memo):
        seen.append(type(memo).__name__)
        return "copied"
@dataclasses.dataclass
class D:
    v: object
leaf = Leaf()
return [copy.deepcopy(leaf), dataclasses.asdict(D(leaf)), dataclasses.astuple(D([leaf])), seen]
"""
    await sb.assert_harmless(code, ["copied", {"v": "copied"}, [["copied"]], ["dict"] * 3], backend="inprocess")


# == harmless copies ===============================================================================

async def test_generic_orig_class_and_lru_wrapper_dicts_copy_harmlessly(sb):
    # `G[int]()` stores `__orig_class__` and lru_cache stores `__wrapped__` in instance dicts:
    # host-written "_" keys, but not copy hooks, and the snippet cannot read or choose them.
    code = """
import typing, copy, functools
T = typing.TypeVar('T')
class G(typing.Generic[T]):
    pass
class CI:
    def __call__(self, x):
        return x
w = functools.lru_cache(CI())
return [type(copy.copy(G[int]())).__name__, type(copy.deepcopy(G[int]())).__name__,
        copy.deepcopy(w)(3), copy.copy(w)(4)]
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == ["G", "G", 3, 4]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reduce_state_from_snippet_subclasses_is_harmless(sb, backend):
    # Host classes whose __reduce__ returns state the snippet shapes: Random (getstate),
    # partial (instance dict, keywords), OrderedDict/Counter/defaultdict subclasses.
    code = """
import copy, random, functools, collections
class R(random.Random):
    def getstate(self):
        return (3, tuple(range(625)), None)
class P(functools.partial):
    pass
p = P(max, 1, **{'key': abs})
p.note = 'x'
class O(collections.OrderedDict):
    pass
o = O(a=1)
o.tag = 't'
class CI:
    def __call__(self):
        return 0
dd = collections.defaultdict(CI())
dd['k'] = 1
kw = functools.partial(dict, **{'__reduce_ex__': 1, '__class__': 2})
class H:
    def m(self):
        return 5
return [type(copy.copy(R(1))).__name__, copy.deepcopy(p)(2), copy.copy(p).note,
        copy.deepcopy(o).tag, dict(copy.deepcopy(dd)), sorted(copy.deepcopy(kw)()),
        copy.deepcopy(H().m)(), dict(copy.deepcopy(collections.Counter('aab')))]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["R", 2, "x", "t", {"k": 1}, ["__class__", "__reduce_ex__"], 5, {"a": 2, "b": 1}]
    assert not result.logs


async def test_deepcopy_iterator_is_harmless(sb):
    r = await sb.run("import copy\nit = iter([1, 2])\nreturn list(copy.deepcopy(it))", backend="inprocess")
    assert r.ok, r.error
    assert r.value == [1, 2]


COPY_HARMLESS = {
    "copy_random": ("import copy, random\nr = random.Random(1)\nreturn copy.deepcopy(r).random() == r.random()", True),
    "copy_ordered_dict": ("import copy, collections\nreturn list(copy.deepcopy(collections.OrderedDict(a=1)).items())",
                          [["a", 1]]),
}


@pytest.mark.parametrize("name", sorted(COPY_HARMLESS))
async def test_copy_harmless(sb, name):
    code, expected = COPY_HARMLESS[name]
    await sb.assert_harmless(code, expected, backend="inprocess")


COPY_GADGETS_HARMLESS = [
        (
            "copy_of_subclasses_of_host_classes",
            "import copy, collections, statistics, uuid, decimal, fractions\n"
            "class C(collections.Counter): pass\nclass O(collections.OrderedDict): pass\n"
            "class DD(collections.defaultdict): pass\nclass Q(collections.deque): pass\n"
            "class CM(collections.ChainMap): pass\nclass N(statistics.NormalDist): pass\n"
            "class U(uuid.UUID): pass\nclass D(decimal.Decimal): pass\nclass F(fractions.Fraction): pass\n"
            "objs = [C(a=1), O(a=1), DD(int, a=1), Q([1]), CM({'a': 1}), N(1, 2), U(int=5), D('1.5'), F(1, 3)]\n"
            "for o in objs:\n    if not isinstance(o, uuid.UUID):\n        o.tag = 't'\n"
            "out = [copy.deepcopy(o) == o and copy.copy(o) == o for o in objs]\n"
            "return out",
            [True] * 9,
        ),
]


@pytest.mark.parametrize("name, code, expected", COPY_GADGETS_HARMLESS, ids=[c[0] for c in COPY_GADGETS_HARMLESS])
async def test_copy_of_host_class_subclasses(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
