"""Review: new ways to plant "_" keys in an object's or class's `__dict__`, or to make host code
run setattr/getattr (or generate code) with a snippet-chosen name.

Two holes. First, `type(dataclasses.field())` is the real
`dataclasses.Field` class, a snippet may subclass it, and a subclass can override the `name`
slot with a property. `@dataclass` trusts `Field.name`: it (1) pastes it into the source of the
`__init__`/`__repr__`/`__eq__`/... it builds and `exec`s with the real builtins, and (2) calls
`setattr(cls, f.name, f.default)` on the snippet's class. Second, `cached_property.mro()` lists
the real `functools.cached_property`, whose subclasses plant any name in an instance dict, and
the copy walk misses bound methods' `__self__`, `defaultdict.default_factory` and
`dataclasses.asdict` (real `copy.deepcopy`). The rest pin down paths that are closed or harmless.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# -- 1. A Field subclass with a lying `name`: code injection into dataclasses' exec -------------
#
# `_repr_fn` generates `return self.__class__.__qualname__ + f"(NAME={self.NAME!r})"` and
# execs it with real builtins. A name such as `x" if 0 else EXPR if 1 else "` turns that line
# into `... f"(x" if 0 else EXPR if 1 else "={self.x" if 0 else EXPR if 1 else "!r})"`, so
# `repr(C())` evaluates EXPR as unrestricted host Python (`__import__('os')`, `open`, ...).
FIELD_PRELUDE = """
import dataclasses
FieldT = type(dataclasses.field())
class F(FieldT):
    def getn(self):
        return NAME
    def setn(self, v):
        pass
    name = property(getn, setn)
f = F(dataclasses.MISSING, dataclasses.MISSING, False, True, None, False, None, False)
"""

FIELD_INJECTION = FIELD_PRELUDE + """
NAME = "x\\" if 0 else EXPR if 1 else \\""
@dataclasses.dataclass(init=False, eq=False)
class C:
    a: int = f
return repr(C())
"""


async def test_field_subclass_name_cannot_inject_code_worker(sb):
    code = FIELD_INJECTION.replace("EXPR", "repr(__import__('os').system)")
    result = await sb.run(code)
    sb.assert_no_leak(result)
    assert "built-in function system" not in str(result.value), result
    assert result.error is not None, result


async def test_field_subclass_name_cannot_read_host_file_inprocess(sb):
    code = FIELD_INJECTION.replace("EXPR", "open(SECRET_PATH).read()")
    result = await sb.run(code, backend="inprocess")
    sb.assert_no_leak(result)
    assert result.error is not None, result


def test_field_subclass_name_cannot_change_host_module(isolated):
    code = FIELD_INJECTION.replace(
        "EXPR", "str(setattr(__import__('textwrap'), 'wrap', lambda *a, **k: ['PWNED']))"
    )
    report = isolated(code, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]


# -- 2. The same Field subclass makes @dataclass setattr a dunder on the class -------------------
#
# `_process_class` reads `f.name` three times in a row: `fields[f.name] = f`,
# `isinstance(getattr(cls, f.name, None), Field)`, `setattr(cls, f.name, f.default)`. A name that
# answers "a" twice and "__reduce_ex__" the third time puts the snippet's function in the class
# dict as `__reduce_ex__`; `copy.copy` then reconstructs with `setattr(TextWrapper, 'wrap', ...)`.
# (The copy walk skips classes, and no instance dict is involved.)
FIELD_PLANT = """
import dataclasses, copy, textwrap
FieldT = type(dataclasses.field())
state = {'n': 0}
class F(FieldT):
    def getn(self):
        state['n'] += 1
        return 'a' if state['n'] <= 2 else '__reduce_ex__'
    def setn(self, v):
        pass
    name = property(getn, setn)
def ident(x):
    return x
def red(self, proto):
    return (ident, (textwrap.TextWrapper,), (None, {'wrap': lambda self, text: ['PWNED']}))
f = F(red, dataclasses.MISSING, False, False, None, False, None, False)
@dataclasses.dataclass(init=False, eq=False, repr=False, match_args=False)
class C:
    a: int = f
copy.copy(C())
return textwrap.wrap('a b c', 2)
"""


def test_field_subclass_name_cannot_plant_class_dunder(isolated):
    report = isolated(FIELD_PLANT, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]
    assert report["next"]["value"] == "[1]"


async def test_real_field_names_still_come_from_the_class_body(sb):
    # The decorator overwrites a plain Field's name with the (policy-checked) annotation name.
    code = (
        "import dataclasses\n@dataclasses.dataclass\nclass C:\n"
        "    a: int = dataclasses.field(default=1)\n"
        "return [f.name for f in dataclasses.fields(C)] + [repr(C())]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == ["a", "C(a=1)"]


# -- 3. Host code that writes "_" keys or takes **kwargs names: harmless today ------------------


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


async def test_planted_hook_in_defaultdict_factory_or_bound_self_still_refused(sb):
    # The copy walk does not descend into defaultdict.default_factory or a bound method's
    # __self__; those are only dangerous with a planted hook, which setattr still refuses.
    code = "class A:\n    pass\na = A()\nsetattr(a, '__deepcopy__', print)\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "__deepcopy__")


# -- 4. `.mro()` hands out the real functools.cached_property; the copy walk misses __self__ ------
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
