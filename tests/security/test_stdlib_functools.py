"""functools: `cached_property` writes into an instance dict under its `attrname`, so no name it
stores under may be private, however and whenever the name is set (class body, attribute write,
renaming from inside its own function, a subclass of the real class reached through `mro()`);
`partial`, `partialmethod`, `lru_cache` and `total_ordering` hand out nothing the guard refuses
and change no host class. In-process plants run in a child interpreter and must leave the host
classes unchanged.
`wraps`/`update_wrapper` write only onto the snippet's own functions, with the stdlib's fixed
names (never a caller-chosen `__code__`).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# == closed: cached_property plants `__reduce_ex__` in an instance dict; deepcopy calls it =========
#
# functools.cached_property.__get__ (functools.py, `cache[self.attrname] = val`) writes into the
# instance `__dict__` under `self.attrname`. On a snippet-owned subclass `attrname` is an ordinary
# writable attribute, so any string works, "__reduce_ex__" included. copy.deepcopy (copy.py,
# `reductor = getattr(x, "__reduce_ex__", None)`) looks the reductor up on the INSTANCE, so the
# snippet's function returns `(func, args, (None, slotstate))` and copy._reconstruct runs
# `setattr(y, key, value)` for every slotstate item on `y = func()`: any host object, any name.
# Setting `_count = -1` on the shim's checked `operator.attrgetter` class turns its name check
# off; the rest is conftest's ATTRGETTER_ESCAPE (guards module globals -> real builtins -> os).
REDUCE_EX_PLANT = """
import functools, copy, operator
class CP(functools.cached_property):
    pass
def getred(inst):
    def red(proto):
        return (lambda: operator.attrgetter, (), (None, {"_count": -1}))
    return red
cp = CP(getred)
class V:
    x = cp
cp.attrname = "__reduce_ex__"
v = V()
v.x
copy.deepcopy(v)
"""


async def test_cached_property_reduce_ex_plant_escape_worker(attrgetter_plant):
    # The worker is a fresh, separate-uid process, so the corruption dies with it; the escape
    # still hands the snippet the worker's real `os` module (arbitrary code in the worker).
    # The in-process variant is run in a child process (below): it corrupts shared host state.
    await attrgetter_plant.assert_worker_escape_fails(REDUCE_EX_PLANT)


def test_cached_property_reduce_ex_plant_inprocess(attrgetter_plant):
    report = attrgetter_plant.assert_inprocess_contained(REDUCE_EX_PLANT)
    assert report["next"]["error"] is None


async def test_cached_property_attrname_cannot_name_a_dunder(sb):
    code = """
import functools, copy
seen = []
class CP(functools.cached_property):
    pass
def getcopier(inst):
    def copier(memo):
        seen.append(len(memo))
        return 1
    return copier
cp = CP(getcopier)
class V:
    x = cp
cp.attrname = "__deepcopy__"
v = V()
v.x
return [copy.deepcopy(v) == 1, seen]
"""
    result = await sb.run(code, backend="worker")
    # Fixed means: the write of attrname (or the dunder key) is refused.
    sb.assert_error(result, "exception")


async def test_cached_property_attrname_private_in_class_body_refused(sb):
    code = """
import functools
class V:
    _x = functools.cached_property(lambda self: 1)
"""
    # Private names are the snippet's own now (issue 12), so the policy lets `_x` through; the
    # checked cached_property still refuses to cache under a "_" name when the class is built.
    sb.assert_error(await sb.run(code), "exception", "RuntimeError", "__set_name__", "'_x'")


async def test_cached_property_subclass_cannot_name_a_dunder(sb):
    code = (
        "import functools\nclass CP(functools.cached_property):\n    pass\n"
        "cp = CP(lambda self: 42)\ncp.attrname = '__class__'\n"
        "class C:\n    pass\nC.v = cp\nc = C()\nreturn [c.v, type(c).__name__]"
    )
    result = await sb.run(code)
    # The shim's cached_property checks its name when used: no dunder lands in an instance dict.
    sb.assert_error(result, "exception", "cached_property name '__class__' is not allowed")


CACHED_PROPERTY_REFUSED = {
    # cached_property names
    "cp_str_subclass_name": (
        "import functools\nclass S(str):\n    pass\nclass CP(functools.cached_property):\n    pass\n"
        "cp = CP(lambda s: 1)\nclass V:\n    x = cp\ncp.attrname = S('y')\nreturn V().x", "exception", "cached_property"),
    "cp_dunder_name": (
        "import functools\nclass CP(functools.cached_property):\n    pass\ncp = CP(lambda s: 1)\n"
        "class V:\n    x = cp\ncp.attrname = '__reduce_ex__'\nreturn V().x", "exception", "cached_property"),
    "cp_get_dunder": ("import functools\ncp = functools.cached_property(len)\nreturn cp.__get__(None, int)", "exception",
                      '"__get__" is not accessible'),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CACHED_PROPERTY_REFUSED))
async def test_cached_property_refused(sb, name, backend):
    code, kind, fragment = CACHED_PROPERTY_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


async def test_cached_property_subclass_cannot_override_get(sb):
    code = """
import functools
class C(functools.cached_property):
    def __get__(self, inst, owner=None):
        return super(functools.cached_property, self).__get__(inst, owner)
class V:
    v = C(lambda self: 1)
return V().v
"""
    # A subclass may define `__get__` (issue 12); reaching the real, unchecked
    # `functools.cached_property.__get__` past the checked one stays refused: `super` never
    # starts past the sandbox's own class.
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "TypeError", "super() cannot start past 'cached_property'")


async def test_cached_property_rename_refused(sb):
    code = """
import functools
class K:
    @functools.cached_property
    def x(self):
        return 1
c = K.x
c.attrname = "_" + "_deepcopy__"
return K().x
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "cannot modify attributes")


# == closed: cached_property checks attrname BEFORE calling func, then writes under the new name ===
#
# shims.cached_property.__get__ checks `self.attrname`, then functools.cached_property.__get__
# calls `self.func(instance)` (snippet code) and writes `cache[self.attrname] = val`, re-reading
# attrname. The snippet's func renames the property to "__reduce_ex__" in between. The planted
# instance is then deep-copied inside a functools.partial: `_copy_problem` walks only dicts,
# lists, tuples, sets, deques and instance __dict__ values, never a partial's args, so the
# planted hook is not seen; copy._reconstruct runs setattr(operator.attrgetter, "_count", -1)
# and the shim's name check is off (a full escape: guards globals -> real builtins -> os).
TOCTOU_PLANT = """
import functools, copy, operator
class CP(functools.cached_property):
    pass
def getred(inst):
    cp.attrname = "__reduce_ex__"
    def red(proto):
        return (lambda: operator.attrgetter, (), (None, {"count": 1, "_count": -1}))
    return red
cp = CP(getred)
class V:
    x = cp
v = V()
v.x
copy.deepcopy(functools.partial(print, v))
"""


async def test_cached_property_toctou_partial_deepcopy_escape_worker(attrgetter_plant):
    await attrgetter_plant.assert_worker_escape_fails(TOCTOU_PLANT)


def test_cached_property_toctou_partial_deepcopy_inprocess(attrgetter_plant):
    attrgetter_plant.assert_inprocess_contained(TOCTOU_PLANT)


async def test_cached_property_rename_during_func_plants_nothing(sb):
    # The name is read and checked once; renaming the property from inside its own function
    # changes nothing about where the value is stored, so no dunder lands in the instance dict.
    code = """
import functools, copy
class CP(functools.cached_property):
    pass
def get(inst):
    cp.attrname = "__deepcopy__"
    return 1
cp = CP(get)
class V:
    x = cp
v = V()
first = v.x
return [first, copy.deepcopy(v).x]
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok, result
    assert result.value == [1, 1]


async def test_deepcopy_walk_sees_plain_containers(sb):
    # Control for the partial route above: the same plant reached through plain containers is caught.
    code = """
import functools, copy
class CP(functools.cached_property):
    pass
cp = CP(lambda inst: 1)
class V:
    x = cp
v = V()
v.x
v.y = [v]
return copy.deepcopy([[v], {"k": (v,)}]) is not None
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok, result


# == `.mro()` hands out the real functools.cached_property; the copy walk misses __self__ ==========
#
# The shim's `cached_property` is a checking subclass, but `functools.cached_property.mro()[1]`
# is the real class. A snippet subclass of it takes any `attrname` (an owned instance accepts
# writes) and its `__get__` stores the value under that name in the instance dict: a planted
# `__reduce_ex__`. `copy.deepcopy(c)` is refused by the walk, but the walk does not look into
# a bound method's `__self__`, a defaultdict's `default_factory`, iterators, or what `dataclasses.asdict`
# hands to the real (unchecked) `copy.deepcopy`, and each of those reaches the planted hook.
REAL_CP_PLANT = """
import functools, copy, textwrap, dataclasses, collections, itertools
Real = functools.cached_property.mro()[1]
class CP(Real):
    pass
def ident(x):
    return x
def red(proto):
    return (ident, (textwrap.TextWrapper,), (None, {'wrap': lambda self, text: ['PWNED']}))
cp = CP(lambda self: red)
cp.attrname = '__reduce_ex__'
class C:
    def m(self):
        return 1
    def __call__(self):
        return 0
C.v = cp
c = C()
c.v
try:
    copy.deepcopy(c)
except TypeError:
    pass
@dataclasses.dataclass
class D:
    x: object = None
ROUTE
return textwrap.wrap('a b c', 2)
"""


REAL_CP_ROUTES = {
    "bound-method": "copy.deepcopy(c.m)",
    "asdict": "dataclasses.asdict(D(c))",
    "defaultdict-factory": "copy.deepcopy(collections.defaultdict(c))",
    "list-iterator": "copy.deepcopy(iter([c]))",
    "itertools-repeat": "copy.deepcopy(itertools.repeat(c, 1))",
}


@pytest.mark.parametrize("route", sorted(REAL_CP_ROUTES))
def test_real_cached_property_plant_cannot_reach_copy(isolated, route):
    code = REAL_CP_PLANT.replace("ROUTE", REAL_CP_ROUTES[route])
    report = isolated(code, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]


async def test_cached_property_mro_hides_the_real_class(sb):
    code = "import functools\nreturn [repr(c) for c in functools.cached_property.mro()]"
    result = await sb.run(code)
    assert result.ok, result
    assert not any("functools.cached_property" in r for r in result.value), result.value


async def test_real_cached_property_plant_in_worker(sb):
    code = REAL_CP_PLANT.replace("ROUTE", "copy.deepcopy(c.m)")
    result = await sb.run(code)
    sb.assert_no_leak(result)
    assert result.value != ["PWNED"], result


async def test_real_cached_property_not_reachable_by_mro(sb):
    code = """
import functools
m = functools.cached_property.__mro__
return [[c is functools.cached_property for c in m], [c.__name__ for c in m], list(m) == functools.cached_property.mro()]
"""
    # `__mro__` is introspection (issue 12) and hides what `mro()` hides: the real class is not in it.
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r
    assert r.value == [[True, False], ["cached_property", "object"], True]


# == partial, partialmethod, lru_cache, total_ordering =============================================

FUNCTOOLS_CLOSED = [
    pytest.param("import functools\nreturn functools.partial(print).func.__self__", "syntax",
                 ["__self__"], id="partial-func-self"),
    # `__wrapped__` hands out the snippet's own functions only (test_lru_cache_wrapped_of_own_function).
    pytest.param("import functools, statistics\nreturn getattr(functools.lru_cache(statistics.mean), '__wrapped__')",
                 "exception", ["AttributeError", '"__wrapped__" is not accessible'], id="lru-cache-wrapped"),
    pytest.param("import functools\nc = functools.cached_property(lambda s: 1)\nreturn getattr(c.func, '__globals__')",
                 "exception", ["AttributeError", "private"], id="cached-property-func-globals"),
    pytest.param("import functools, re\nreturn functools.total_ordering(re.Pattern)", "exception",
                 ["TypeError", "only applies to classes defined in the snippet"], id="total-ordering-host"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), FUNCTOOLS_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_functools_closed_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


FUNCTOOLS_CLOSED_NAMED = [
    ("total_ordering on host class", "import functools, fractions\nfunctools.total_ordering(fractions.Fraction)\nreturn 1",
     "exception", ["only applies to classes defined in the snippet"]),
    ("partial.func write", "import functools\np = functools.partial(max, 1)\np.func = print\nreturn 1", "exception",
     ["cannot modify", "partial"]),
    ("lru_cache __wrapped__", "import functools, re\nf = functools.lru_cache(re.sub)\nreturn f.__wrapped__.__wrapped__",
     "exception", ['"__wrapped__" is not accessible']),
]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_lru_cache_wrapped_of_own_function(sb, backend):
    code = (
        "import functools\ndef f(x):\n    return x\ng = functools.lru_cache(f)\n"
        "def h():\n    pass\nfunctools.wraps(f)(h)\nreturn [g.__wrapped__ is f, h.__wrapped__ is f, g.__wrapped__(3)]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [True, True, 3]


@pytest.mark.parametrize("name,code,kind,fragments", FUNCTOOLS_CLOSED_NAMED, ids=[c[0] for c in FUNCTOOLS_CLOSED_NAMED])
async def test_functools_closed_paths(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


FUNCTOOLS_GADGETS_CLOSED = [
        (
            "total_ordering_on_host_class",
            "import functools, difflib\nfunctools.total_ordering(difflib.SequenceMatcher)",
            "exception",
            ("TypeError", "only applies to classes defined in the snippet"),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", FUNCTOOLS_GADGETS_CLOSED, ids=[c[0] for c in FUNCTOOLS_GADGETS_CLOSED])
async def test_functools_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


async def test_partialmethod_overridden_func_cannot_bind_host_descriptor(sb):
    code = """
import functools
class PM(functools.partialmethod):
    @property
    def func(self):
        return str.upper
    @property
    def args(self):
        return ()
    @property
    def keywords(self):
        return {}
class C:
    m = PM(len)
return C().m()
"""
    result = await sb.run(code)
    assert result.error is not None  # str.upper bound to a C instance: a type check, no escape
    sb.assert_no_leak(result)


FUNCTOOLS_CALLBACKS = [
    (
        "functools callbacks",
        "import functools\nf = functools.lru_cache(maxsize=2)(lambda x: x * 2)\n"
        "k = functools.cmp_to_key(lambda a, b: a - b)\n"
        "return [f(3), f(3), f.cache_info().hits, functools.partial(max, 1)(5), sorted([3, 1], key=k),"
        " functools.reduce(lambda a, b: a + b, [1, 2, 3])]",
        [6, 6, 1, 5, [1, 3], 6],
    ),
]


@pytest.mark.parametrize("case", FUNCTOOLS_CALLBACKS, ids=[c[0] for c in FUNCTOOLS_CALLBACKS])
async def test_functools_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


FUNCTOOLS_HARMLESS = [
        (
            "lru_cache_and_cmp_to_key_are_per_run_objects",
            "import functools\n@functools.lru_cache(typed=True)\ndef f(x):\n    return [x]\n"
            "k = functools.cmp_to_key(lambda a, b: (a > b) - (a < b))\n"
            "return [f(1) is f(1), sorted([3, 1, 2], key=k), f.cache_info().hits]",
            [True, [1, 2, 3], 1],
        ),
        (
            "partialmethod_and_partial_copies",
            "import functools, copy\nclass A:\n    def g(self, a, b):\n        return a + b\n"
            "    h = functools.partialmethod(g, 1)\np = functools.partial(max, 1)\n"
            "return [A().h(2), copy.copy(p)(5), copy.deepcopy(p)(0)]",
            [3, 5, 1],
        ),
]


@pytest.mark.parametrize("name, code, expected", FUNCTOOLS_HARMLESS, ids=[c[0] for c in FUNCTOOLS_HARMLESS])
async def test_functools_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)


# == functools.wraps / update_wrapper ============================================================
REFUSED = [
    pytest.param("import functools, json\nfunctools.update_wrapper(json.dumps, print)\nreturn 1",
                 ["only changes the snippet's own functions"], id="host-wrapper"),
    pytest.param("import functools\ndef f():\n    return 1\ndef g():\n    return 2\n"
                 "functools.update_wrapper(f, g, updated=('__globals__',))\nreturn f()",
                 ['"__globals__" is not accessible'], id="chosen-names"),
]


async def test_wraps_with_chosen_names_reads_and_writes_with_the_snippets_rights(sb):
    # `assigned`/`updated` are the caller's, as in CPython: each name is read and written with
    # the snippet's own guarded getattr/setattr, so `__code__` is never copied.
    code = ("import functools\ndef f():\n    return 1\ndef g():\n    return 2\n"
            "functools.update_wrapper(f, g, assigned=('__code__', '__name__'))\nreturn [f(), f.__name__]")
    await sb.assert_harmless(code, [1, "g"])


@pytest.mark.parametrize(("code", "fragments"), REFUSED)
async def test_wraps_stays_on_the_snippets_own_functions(sb, code, fragments):
    result = await sb.run(code)
    sb.assert_error(result, "exception", *fragments)


async def test_update_wrapper_leaves_host_functions_unchanged(isolated):
    code = "import functools, json\ntry:\n    functools.update_wrapper(json.dumps, print)\nexcept TypeError:\n    pass\nreturn 1"
    report = isolated(code, "import json\nstate = [json.dumps.__name__, hasattr(json.dumps, '__wrapped__')]")
    assert report["before"] == ["dumps", False] and report["after"] == report["before"]


def test_cached_property_writes_only_into_instances_of_a_class_that_holds_it() -> None:
    # It writes straight into the instance's dictionary; a forwarder once bound it to a shared
    # `typing` alias. It refuses an instance whose class does not hold it.
    import typing

    from sandbox.shims.functools import cached_property

    alias = typing.List  # noqa: UP006 - a shared alias is the target, not an annotation
    prop = cached_property(lambda self: "PLANTED")

    class Holder:
        value = prop

    assert Holder().value == "PLANTED"
    with pytest.raises(TypeError, match="does not belong to a '_SpecialGenericAlias' object"):
        prop.__get__(alias, type(alias))
    assert "value" not in vars(alias)
