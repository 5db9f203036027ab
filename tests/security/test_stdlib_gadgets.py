"""Stdlib gadget audit: what host stdlib code does when a snippet CALLS it with crafted arguments.

The reachability crawl covers objects reachable by attribute reads. This file covers the other
half: every exposed stdlib callable was read for `setattr`/`getattr` with computed names,
`eval`/`exec`, class creation from data, instance-level special-method lookups, callbacks fed
with host objects, and process-global caches keyed by snippet objects. Each case runs the
crafted call and checks the error or harmless outcome plus the absence of the effect.

Holes are kept as strict xfails (`HOLE: ...`) so the suite flips when they are fixed.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


def HOLE(reason: str):  # noqa: N802 - reads like a marker
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# == HOLE 1: cached_property plants `__reduce_ex__` in an instance dict; deepcopy calls it ==========
#
# functools.cached_property.__get__ (functools.py, `cache[self.attrname] = val`) writes into the
# instance `__dict__` under `self.attrname`. On a snippet-owned subclass `attrname` is an ordinary
# writable attribute, so any string works, "__reduce_ex__" included. copy.deepcopy (copy.py,
# `reductor = getattr(x, "__reduce_ex__", None)`) looks the reductor up on the INSTANCE, so the
# snippet's function returns `(func, args, (None, slotstate))` and copy._reconstruct runs
# `setattr(y, key, value)` for every slotstate item on `y = func()`: any host object, any name.
# Setting `_count = -1` on the shim's checked `operator.attrgetter` class turns its name check
# off; the rest is the review-3 escape (guards module globals -> real builtins -> os).
PLANT = """
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
    await attrgetter_plant.assert_worker_escape_fails(PLANT)


def test_cached_property_reduce_ex_plant_inprocess(attrgetter_plant):
    report = attrgetter_plant.assert_inprocess_contained(PLANT)
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
    sb.assert_error(await sb.run(code), "syntax", "_x")


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


# == HOLE 2: the re module's global cache keyed by a snippet int subclass ========================
#
# re._compile (re/__init__.py) caches `_cache[type(pattern), pattern, flags] = p` with the
# caller's `flags` object as part of the key. A snippet int subclass with `__hash__` = hash(0)
# and an `__eq__` that says True to 0 makes the entry answer every later plain
# `re.compile(P)` / `re.match(P, s)` in the process: here "^[a-z]+$" comes back MULTILINE, so a
# host-side validator in a binding accepts "abc\\nrm -rf /". The snippet's `__eq__` also keeps
# running inside later host calls (it could raise and break them).
RE_POISON = """
import re
class F(int):
    def __eq__(self, other):
        return other == 0 or int(self) == other
    def __hash__(self):
        return hash(0)
for i in range(600):
    re.compile("evict" + str(i))
re.compile("^[a-z]+$", F(re.MULTILINE))
return bool(re.match("^[a-z]+$", "abc\\nrm -rf /"))
"""


def test_re_cache_poisoning_by_flags_subclass(isolated):
    check = "import re\nstate = bool(re.match('^[a-z]+$', 'abc\\nrm -rf /'))"
    report = isolated(RE_POISON, check)
    assert report["before"] is False
    assert report["after"] is False


async def test_re_cache_poisoning_confined_to_worker(sb):
    result = await sb.run(RE_POISON, backend="worker")
    assert result.ok, result  # it poisons its own, single-use process only
    nxt = await sb.run('import re\nreturn bool(re.match("^[a-z]+$", "abc\\nrm -rf /"))', backend="worker")
    assert nxt.ok and nxt.value is False


async def test_re_pattern_str_subclass_does_not_hit_other_entries(sb):
    code = """
import re
class S(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash("^[a-z]+$")
re.compile(S("^[a-z]+$"), re.M)
return bool(re.match("^[a-z]+$", "abc\\nzzz"))
"""
    result = await sb.run(code, backend="worker")
    assert result.ok and result.value is False, result


# == HOLE 3: typing's global lru caches keyed by snippet objects ================================
#
# typing._tp_cache wraps `__getitem__` of the special forms and aliases in a process-wide
# functools.lru_cache (typing.py, `_tp_cache` / `_caches`). An instance of a snippet class with
# `__call__` (so it passes `_type_check`), `__hash__` = hash(int) and `__eq__` -> True becomes the
# cached answer for the host's own `typing.List[int]` once the host entry has been evicted
# (maxsize 128): host code then gets `List[<snippet object>]`, and the snippet's `__eq__` runs in
# every later lookup.
TYPING_POISON = """
import typing
class K:
    def __call__(self):
        return None
for i in range(300):
    typing.List[K()]
class E:
    def __call__(self):
        return None
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash(int)
typing.List[E()]
return repr(typing.List[int])
"""


def test_typing_cache_poisoning(isolated):
    check = "import typing\nstate = typing.List[int].__args__[0] is int"
    report = isolated(TYPING_POISON, check)
    assert report["before"] is True
    assert report["after"] is True


async def test_typing_cache_poisoning_confined_to_worker(sb):
    result = await sb.run(TYPING_POISON, backend="worker")
    assert result.ok, result
    nxt = await sb.run("import typing\nreturn repr(typing.List[int])", backend="worker")
    assert nxt.ok and nxt.value == "typing.List[int]"


async def test_typing_literal_cache_is_typed(sb):
    code = """
import typing
class E(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash("a")
for i in range(300):
    typing.Literal[i]
typing.Literal[E("zzz")]
return repr(typing.Literal["a"])
"""
    result = await sb.run(code, backend="worker")
    assert result.ok and result.value == "typing.Literal['a']", result


# == closed or harmless paths =====================================================================

@pytest.mark.parametrize(
    "name, code, kind, fragments",
    [
        (
            "namedtuple_str_subclass_lying_isidentifier",
            """
import collections
class S(str):
    def __str__(self):
        return self
    def isidentifier(self):
        return True
    def startswith(self, p):
        return False
collections.namedtuple("P", [S("a=open(OUT_PATH, 'w')")])
""",
            "exception",
            ("TypeError", "must be strings"),
        ),
        (
            "namedtuple_injected_field_plain",
            'import collections\ncollections.namedtuple("P", ["a=open(" + OUT_PATH + ", 1)"])',
            "exception",
            ("ValueError",),
        ),
        (
            "namedtuple_underscore_field",
            "import collections\ncollections.namedtuple('P', ['__class__'])",
            "exception",
            ("ValueError",),
        ),
        (
            "namedtuple_injected_typename",
            'import collections\ncollections.namedtuple("P(): pass\\nopen(" + OUT_PATH + ")", ["a"])',
            "exception",
            ("ValueError",),
        ),
        (
            "typing_namedtuple_functional_underscore",
            "import typing\ntyping.NamedTuple('P', [('_x', int)])",
            "exception",
            ("ValueError",),
        ),
        (
            "enum_functional_type_metaclass",
            'import enum\nenum.Enum("X", [("a", ("N", (object,), {"q": 1}))], type=type)',
            "exception",
            ("TypeError",),
        ),
        (
            "enum_functional_type_host_class_not_owned",
            'import enum\nX = enum.Enum("X", "a", type=int)\nX.q = 1',
            "exception",
            ("TypeError", "cannot modify class"),
        ),
        (
            "enum_flag_bad_boundary",
            "import enum\nclass C(enum.Flag, boundary=print):\n    A = 1\nC(7)",
            "exception",
            ("ValueError",),
        ),
        (
            "enum_memberless_shared_intflag",
            "import enum\nenum.IntFlag(7)",
            "exception",
            ("TypeError", "no members"),
        ),
        (
            "dataclasses_replace_dunder_change",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n"
            "dataclasses.replace(P(1), **{'__class__': int})",
            "exception",
            ("TypeError",),
        ),
        (
            "dataclass_on_host_class",
            "import dataclasses, fractions\ndataclasses.dataclass(fractions.Fraction)",
            "exception",
            ("TypeError", "only applies to classes defined in the snippet"),
        ),
        (
            "total_ordering_on_host_class",
            "import functools, difflib\nfunctools.total_ordering(difflib.SequenceMatcher)",
            "exception",
            ("TypeError", "only applies to classes defined in the snippet"),
        ),
        (
            "uuid_subclass_setattr_immutable",
            "import uuid\nclass U(uuid.UUID):\n    pass\nu = U(int=5)\nu.int = 7",
            "exception",
            ("TypeError", "immutable"),
        ),
        (
            "random_subclass_crafted_state",
            "import random, copy\nclass R(random.Random):\n    def getstate(self):\n"
            "        return (3, (1,) * 5, None)\ncopy.copy(R(1))",
            "exception",
            ("Error",),
        ),
        (
            "random_setstate_crafted",
            "import random\nr = random.Random()\nr.setstate((3, tuple(range(700)), None))",
            "exception",
            ("Error",),
        ),
        (
            "operator_setitem_module_shim",
            "import operator, json\noperator.setitem(json, 'dumps', print)",
            "exception",
            ("TypeError",),
        ),
        (
            "operator_delitem_module_shim",
            "import operator, json\noperator.delitem(json, 'dumps')",
            "exception",
            ("TypeError",),
        ),
        (
            "dataclass_string_initvar_annotation_looks_up_no_module",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    b: 'InitVar[int]' = 2",
            "exception",
            ("AttributeError",),
        ),
        (
            "typing_generic_string_args",
            "import typing\ntyping.Generic[\"open(OUT_PATH, 'w')\"]",
            "exception",
            ("TypeError",),
        ),
        (
            "fraction_duck_rational",
            "import fractions\nclass Q:\n    numerator = 1\n    denominator = 0\nfractions.Fraction(Q())",
            "exception",
            ("TypeError",),
        ),
        (
            "template_subclass_bad_pattern",
            "import string\nclass T(string.Template):\n    idpattern = '('\nT('$a').substitute(a=1)",
            "exception",
            ("error",),
        ),
    ],
)
async def test_closed_gadgets(sb, name, code, kind, fragments):
    result = await sb.run(code, backend="worker")
    sb.assert_error(result, kind, *fragments)
    await sb.assert_next_run_ok()


@pytest.mark.parametrize(
    "name, code, expected",
    [
        (
            "forward_refs_are_compiled_not_evaluated",
            """
import typing
class TD(typing.TypedDict):
    a: "open(OUT_PATH, 'w')"
T = typing.TypedDict("T", {"b": "open(OUT_PATH, 'w')"})
L = typing.List["open(OUT_PATH, 'w')"]
V = typing.TypeVar("V", bound="open(OUT_PATH, 'w')")
N = typing.NamedTuple("N", [("c", "open(OUT_PATH, 'w')")])
return "ok"
""",
            "ok",
        ),
        (
            "namedtuple_module_is_just_data",
            "import collections\nP = collections.namedtuple('P', 'a b', defaults=[print], module=print)\n"
            "return [P(1).b is print, P(1)._asdict()['a']]",
            [True, 1],
        ),
        (
            "dataclass_plain_annotations",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: list = None\n"
            "return dataclasses.asdict(P(1))",
            {"a": 1, "b": None},
        ),
        (
            "asdict_factory_gets_plain_pairs",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: list\n"
            "seen = []\ndef fac(pairs):\n    seen.append([type(k).__name__ for k, v in pairs])\n    return dict(pairs)\n"
            "dataclasses.asdict(P(1, [2]), dict_factory=fac)\ndataclasses.astuple(P(1, [2]), tuple_factory=list)\n"
            "return seen",
            [["str", "str"]],
        ),
        (
            "json_loads_cls_is_a_plain_call",
            "import json\nseen = []\ndef cls(**kw):\n    seen.append(sorted(kw))\n    class D:\n"
            "        def decode(self, s):\n            return s\n    return D()\n"
            "return [json.loads('[1]', cls=cls, parse_int=str), seen]",
            ["[1]", [["parse_int"]]],
        ),
        (
            "json_dumps_cls_and_default",
            "import json\nclass O:\n    pass\nreturn json.dumps({'a': O()}, default=lambda o: type(o).__name__)",
            '{"a": "O"}',
        ),
        (
            "json_hooks_get_plain_data",
            "import json\nseen = []\ndef hook(pairs):\n    seen.append(pairs)\n    return 1\n"
            "json.loads('{\"a\": {\"b\": 2}}', object_pairs_hook=hook)\nreturn seen",
            [[["b", 2]], [["a", 1]]],
        ),
        (
            "template_custom_pattern_reads_mapping_only",
            "import string\nclass T(string.Template):\n    delimiter = '%'\n    idpattern = '[_a-z]+'\n"
            "return T('%__class__ %x').substitute({'__class__': 'c', 'x': 'y'})",
            "c y",
        ),
        (
            "textwrap_subclass_public_overrides",
            "import textwrap\nclass W(textwrap.TextWrapper):\n    def wrap(self, text):\n        return ['w']\n"
            "return [W(width=5).fill('aaa bbb ccc'), textwrap.shorten('a b c d e f', 5)]",
            ["w", "[...]"],
        ),
        (
            "heapq_bisect_key_callbacks_see_items",
            "import heapq, bisect\nseen = set()\ndef k(x):\n    seen.add(type(x).__name__)\n    return x\n"
            "a = [1, 3]\nbisect.insort(a, 2, key=k)\nm = list(heapq.merge([1], [2], key=k))\n"
            "heapq.nsmallest(1, [5, 4], key=k)\nreturn [a, m, sorted(seen)]",
            [[1, 2, 3], [1, 2], ["int"]],
        ),
        (
            "sequence_matcher_isjunk_sees_elements",
            "import difflib\nseen = set()\ndef j(x):\n    seen.add(type(x).__name__)\n    return False\n"
            "difflib.SequenceMatcher(j, 'abc', 'abd').ratio()\nreturn sorted(seen)",
            ["str"],
        ),
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
        (
            "cast_annotated_literal_are_inert",
            "import typing\nA = typing.Annotated[int, print]\n"
            "return [typing.cast(A, 'x'), repr(typing.Literal[1, 'a'])]",
            ["x", "typing.Literal[1, 'a']"],
        ),
        (
            "operator_inplace_on_own_objects",
            "import operator\na = [1]\noperator.iadd(a, [2])\nd = {}\noperator.setitem(d, '__class__', 1)\n"
            "return [a, operator.concat('a', 'b'), d, operator.itemgetter(0, 1)(a)]",
            [[1, 2], "ab", {"__class__": 1}, [1, 2]],
        ),
        (
            "defaultdict_factory_gets_no_arguments",
            "import collections\nseen = []\ndef fac(*a):\n    seen.append(len(a))\n    return 0\n"
            "d = collections.defaultdict(fac)\nd['x']\nreturn seen",
            [0],
        ),
    ],
)
async def test_harmless_gadgets(sb, name, code, expected):
    result = await sb.run(code, backend="worker")
    assert result.error is None, result.error
    assert result.value == expected
    sb.assert_no_leak(result)


async def test_enum_functional_class_is_not_owned_and_names_checked(sb):
    code = """
import enum
X = enum.IntEnum("X", [("a", 1)], module="os", qualname="os.path")
return [X.a.value, X.a.name]
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok and result.value == [1, "a"], result
    bad = await sb.run('import enum\nenum.Enum("X", [("__reduce_ex__", 1)])', backend="inprocess")
    sb.assert_error(bad, "exception", "not allowed")
