"""What CPython passes to the snippet's own methods: the other operand, and the traceback.

C code picks the arguments of a comparison or a reflected operator, not the snippet: a
`mappingproxy` compared or or-ed with a snippet object hands that object its own dictionary
(`proxy == x` calls `x.__eq__(d)`, `proxy | x` calls `x.__ror__(d)`), and such proxies stand
before host state (textwrap's translation table, a compiled pattern's `groupindex`, the shared
empty metadata of `dataclasses.field`). `with` hands `__exit__` the traceback, and frames stand
behind it. A review reached and changed all of those. The policy gives every method of those
names a prologue (`policy.OPERAND_METHODS`, `EXIT_METHODS`): a dict operand arrives as a copy,
other operands judged, the traceback as None. Each case asserts the absence of the effect.
"""

from __future__ import annotations

import dataclasses
import re
import string
import textwrap
from typing import Any

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: Snippets that take hold of a proxy's dictionary, write into it, and return what the host's
#: own use of it gives afterwards (unchanged when the write reached only a copy).
PROXY_ROUTES = {
    "textwrap-ror": ("""
import textwrap
class Grab:
    def __ror__(self, other):
        return other
d = textwrap.TextWrapper.unicode_whitespace_trans | Grab()
d[ord('a')] = ord('Z')
return textwrap.fill('banana split', 20)
""", "banana split"),
    "groupindex-eq": ("""
import re
got = []
class Grab:
    def __eq__(self, other):
        got.append(other)
        return False
p = re.compile("(?P<first>x)(?P<second>y)")
p.groupindex == Grab()
got[0]["first"] = 2
return p.match("xy").group("first")
""", "x"),
    "template-ne-varargs": ("""
import string
got = []
class Grab:
    def __ne__(*args):
        got.append(args[1])
        return True
string.Template.pattern.groupindex != Grab()
got[0]["named"] = got[0]["braced"]
return string.Template("$who likes ${what}").substitute(who="tim", what="kung pao")
""", "tim likes kung pao"),
    "metadata-reflected-lt": ("""
import dataclasses
got = []
class Grab:
    def __gt__(self, other):
        got.append(other)
        return True
dataclasses.field().metadata < Grab()
got[0]["planted"] = 1
@dataclasses.dataclass
class P:
    x: int = 0
return len(dataclasses.fields(P)[0].metadata)
""", 0),
    # `proxy | x` after `x | proxy` returned NotImplemented: the proxy or-s its dictionary
    # with x, so x's own `__or__` (not a reflected one) receives it.
    "groupindex-left-or": ("""
import re
got = []
class Grab:
    def __or__(self, other):
        got.append(other)
        return NotImplemented
try:
    Grab() | re.compile("(?P<first>x)(?P<second>y)").groupindex
except TypeError:
    pass
for seen in got:
    if type(seen) is dict:
        seen["first"] = 2
return re.compile("(?P<first>x)(?P<second>y)").match("xy").group("first")
""", "x"),
    # Host methods a snippet class inherits pass the operand on: `OrderedDict`'s and
    # `defaultdict`'s `|` (C) build `type(self)(operand)`, so the snippet's `__init__` would
    # receive the proxy's dictionary.
    "ordereddict-subclass-init": ("""
import collections, re
got = []
class Grab(collections.OrderedDict):
    def __init__(self, *args):
        got.extend(args)
        super().__init__()
re.compile("(?P<first>x)(?P<second>y)").groupindex | Grab()
for seen in got:
    if type(seen) is dict:
        seen["first"] = 2
return re.compile("(?P<first>x)(?P<second>y)").match("xy").group("first")
""", "x"),
    "defaultdict-subclass-init": ("""
import collections, textwrap
got = []
class Grab(collections.defaultdict):
    def __init__(self, *args):
        got.extend(args)
        super().__init__(*args)
textwrap.TextWrapper.unicode_whitespace_trans | Grab(int)
for seen in got:
    if type(seen) is dict:
        seen[ord('a')] = ord('Z')
return textwrap.fill('banana split', 20)
""", "banana split"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "expected"), PROXY_ROUTES.values(), ids=PROXY_ROUTES.keys())
async def test_a_proxys_dictionary_reaches_a_snippet_method_only_as_a_copy(sb, backend: str, code: str,
                                                                          expected: Any) -> None:
    trans = dict(textwrap.TextWrapper.unicode_whitespace_trans)
    template = dict(string.Template.pattern.groupindex)
    await sb.assert_harmless(code, expected, backend=backend)
    # The host's own objects, in this process (the in-process run shares them).
    assert dict(textwrap.TextWrapper.unicode_whitespace_trans) == trans
    assert dict(string.Template.pattern.groupindex) == template
    assert textwrap.fill("banana split", 20) == "banana split"
    assert string.Template("$a").substitute(a=1) == "1"
    assert len(dataclasses.field().metadata) == 0
    assert re.compile("(?P<first>x)(?P<second>y)").match("xy").group("first") == "x"


EXIT_CODE = """
import contextlib
got = []
class Positional:
    def __enter__(self):
        return self
    def __exit__(self, t, v, tb):
        got.append([t.__name__, str(v), tb])
        return True
class Star:
    def __enter__(self):
        return self
    def __exit__(self, *exc):
        got.append([exc[0].__name__, exc[2]])
        return True
class Async:
    async def __aenter__(self):
        return self
    async def __aexit__(self, t, v, tb):
        got.append([t.__name__, tb])
        return True
with Positional():
    1 / 0
with Star():
    [][1]
async with Async():
    raise ValueError("x")
def callback(t, v, tb):
    got.append(["stack", t.__name__, tb])
    return True
with contextlib.ExitStack() as stack:
    stack.push(callback)
    raise KeyError("k")
@contextlib.contextmanager
def managed():
    try:
        yield
    except LookupError as e:
        got.append(["generator", type(e).__name__])
with managed():
    raise IndexError("i")
return got
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_exit_methods_get_the_exception_but_no_traceback(sb, backend: str) -> None:
    await sb.assert_harmless(EXIT_CODE, [
        ["ZeroDivisionError", "division by zero", None], ["IndexError", None], ["ValueError", None],
        ["stack", "KeyError", None], ["generator", "IndexError"],
    ], backend=backend)


#: Ways to put a comparison or `__exit__` on a class after it was made: refused.
UNJUDGED = {
    "assigned-later": ("class C:\n    pass\ndef f(s, o):\n    return o\nC.__eq__ = f\nreturn 1",
                       'attribute "__eq__" can be defined only in the class body in the sandbox'),
    "setattr": ("class C:\n    pass\nsetattr(C, '__exit__', lambda *a: True)\nreturn 1",
                'attribute "__exit__" can be defined only in the class body in the sandbox'),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), UNJUDGED.values(), ids=UNJUDGED.keys())
async def test_a_comparison_without_the_prologue_is_refused(sb, backend: str, code: str, fragment: str) -> None:
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", fragment)


#: What a class body can hold under a comparison or operator name besides a `def` of that
#: name, which has no prologue of its own: each gets the class factory's judging forwarder
#: (`crossing.judged_methods`). Each snippet grabs what CPython passes from a pattern's
#: `groupindex` proxy, writes into it, and returns what the host's pattern answers afterwards.
_WRITE_AND_READ = """
for seen in got:
    if type(seen) is dict:
        seen["first"] = 2
return [sorted(type(seen).__name__ for seen in got),
        re.compile("(?P<first>x)(?P<second>y)").match("xy").group("first")]
"""
FORWARDED = {
    "lambda": ("class G(dict):\n    __ror__ = lambda self, other: got.append(other)\n"
               "proxy | G()", ["dict"]),
    "function-of-another-name": ("def grab(self, other):\n    got.append(other)\n    return False\n"
                                 "class G:\n    __eq__ = grab\nproxy == G()", ["dict"]),
    "bound-builtin-method": ("class G(dict):\n    __ror__ = got.append\nproxy | G()", ["dict"]),
    "method-descriptor": ("class G(list):\n    __eq__ = list.append\ng = G()\nproxy == g\n"
                          "got.extend(g)", ["dict"]),
    "callable-instance": ("class Sink:\n    def __call__(self, other):\n        got.append(other)\n"
                          "        return False\nclass G:\n    __gt__ = Sink()\nproxy < G()", ["dict"]),
    # A staticmethod gets the operand first, where the prologue of a def does not look.
    "staticmethod": ("class G(dict):\n    @staticmethod\n    def __ror__(other):\n"
                     "        got.append(other)\nproxy | G()", ["dict"]),
    # The hook's name among the function's names, put there by an attribute write: it is
    # the prologue's load of the hook that counts, which no source can write.
    "hook-name-written-as-an-attribute": ("def grab(self, other):\n    got.append(other)\n    if not got:\n"
                                          "        self._operand_ = 0\n    return False\n"
                                          "class G:\n    __eq__ = grab\nproxy == G()", ["dict"]),
    # `total_ordering`'s `__gt__` calls `type(self).__lt__(self, other)`: a classmethod's
    # prologue would judge `self` there, and the operand would come third.
    "classmethod-under-total-ordering": (
        "import functools\n@functools.total_ordering\nclass G:\n    @classmethod\n"
        "    def __lt__(cls, a, b=None):\n        got.extend([a, b])\n        return False\n"
        "    def __eq__(self, other):\n        return False\nproxy < G()", ["NoneType", "dict"]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("body", "kinds"), FORWARDED.values(), ids=FORWARDED.keys())
async def test_what_a_class_holds_under_an_operator_name_gets_the_operand_judged(
        sb, backend: str, body: str, kinds: list[str]) -> None:
    code = ("import re\ngot = []\nproxy = re.compile('(?P<first>x)(?P<second>y)').groupindex\n"
            + body + _WRITE_AND_READ)
    await sb.assert_harmless(code, [kinds, "x"], backend=backend)
    assert re.compile("(?P<first>x)(?P<second>y)").match("xy").group("first") == "x"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_an_exit_method_of_another_kind_gets_no_traceback(sb, backend: str) -> None:
    """A comparison's prologue judges its operand, not the traceback `__exit__` gets fourth."""
    code = """
got = []
class B:
    def __eq__(self, o, v=None, tb=None):
        got.append(tb)
        return True
A = type('A', (), {'__enter__': lambda self: self, '__exit__': B.__eq__})
class Star:
    __enter__ = lambda self: self
    __exit__ = lambda self, *exc: got.append(exc[2]) or True
def leave(self, t, v, tb):
    got.append(tb)
    if not got:
        self._no_traceback_ = 0
    return True
class Named:
    __enter__ = lambda self: self
    __exit__ = leave
with A():
    1 / 0
with Star():
    [][1]
with Named():
    {}["k"]
return got
"""
    await sb.assert_harmless(code, [None, None, None], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_comparisons_and_reflected_operators_work_as_in_python(sb, backend: str) -> None:
    code = """
import functools
@functools.total_ordering
class V:
    def __init__(self, x):
        self.x = x
    def __eq__(self, other):
        return isinstance(other, V) and self.x == other.x
    def __lt__(self, other):
        return self.x < other.x
    def __radd__(self, other):
        return V(other + self.x)
    def __hash__(self):
        return hash(self.x)
class Seen:
    def __eq__(self, other):
        other["k"] = 2  # a dict operand is a copy: the caller's dict stays as it is
        return other == {"k": 2}
d = {"k": 1}
vs = sorted([V(3), V(1), V(2)])
return [V(1) == V(1), V(1) != V(2), V(3) > V(2), V(2) >= V(2), [v.x for v in vs], (5 + V(1)).x,
        d == Seen(), d, len({V(1), V(1)})]
"""
    await sb.assert_harmless(code, [True, True, True, True, [1, 2, 3], 6, True, {"k": 1}, 1], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_operators_a_snippet_class_inherits_from_the_host_work_as_in_python(sb, backend: str) -> None:
    """The forwarders the class factory gives a subclass of a host class
    (`crossing.operand_forwarders`) change nothing a snippet can see but the operand's origin:
    they run the host method on its own instances only, as CPython's descriptor would."""
    code = """
import collections, enum
class O(collections.OrderedDict):
    pass
class D(collections.defaultdict):
    pass
class Perm(enum.Flag):
    R = 1
    W = 2
d = {"z": 1}
both = O(b=2) | {"c": 3}
left = {"z": 1} | O(b=2)
refused = ""
try:
    O.__ror__(Perm.R, {})
except TypeError as e:
    refused = str(e)
return [type(both).__name__, list(both.items()), type(left).__name__, list(left.items()),
        O(a=1) == {"a": 1}, O(a=1) != O(a=2), type(d | D(int)).__name__, (Perm.R | Perm.W).value,
        refused, d]
"""
    await sb.assert_harmless(code, [
        "O", [["b", 2], ["c", 3]], "O", [["z", 1], ["b", 2]], True, True, "D", 3,
        "descriptor '__ror__' for 'OrderedDict' objects doesn't apply to a 'Perm' object", {"z": 1},
    ], backend=backend)



def test_the_factory_finds_what_a_class_would_inherit_in_cpythons_order() -> None:
    # The forwarders are chosen from the order computed before the class exists; it must be
    # CPython's own for any hierarchy (random ones here, each checked against `__mro__`).
    import random

    from sandbox.crossing import _linearization

    for seed in range(5):
        pick = random.Random(seed)
        classes: list[type] = [object]
        for i in range(200):
            bases = tuple(dict.fromkeys(pick.sample(classes, min(pick.randint(1, 3), len(classes)))))
            try:
                made = type(f"C{i}", bases, {})
            except TypeError:  # no consistent order: type() refuses, and so does the factory
                continue
            assert _linearization(bases) == list(made.__mro__[1:]), bases
            classes.append(made)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_forwarder_runs_only_on_instances_of_the_class_that_holds_it(sb, backend: str) -> None:
    # Called directly with a class as `self`, a forwarder over a classmethod bound it to that
    # class's type: a review got the real `type` and the enum metaclass that way.
    code = """
import enum
got = []
def grab(cls, other):
    got.append(cls)
    return True
class Door:
    __eq__ = classmethod(grab)
class Color(enum.Enum):
    R = 1
refused = []
for target in (int, Color):
    try:
        Door.__eq__(target, None)
    except TypeError as e:
        refused.append(str(e))
return [refused, Door() == 1, [c.__name__ for c in got]]
"""
    await sb.assert_harmless(code, [["descriptor '__eq__' for 'Door' objects doesn't apply to a 'type' object",
                                     "descriptor '__eq__' for 'Door' objects doesn't apply to a '_EnumType' object"],
                                    True, ["Door"]], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_operators_a_metaclass_adds_after_the_body_are_judged(sb, backend: str) -> None:
    # `EnumType` copies `Flag.__or__` into `class F(dict, Flag)` after the class is made, over
    # dict's own; the raw method passed a mappingproxy's dictionary on to the member's value.
    code = """
import enum, collections, dataclasses
got = []
class M:
    def copy(self):
        return self
    def update(self, other):
        got.append(other)
class F(dict, enum.Flag):
    A = 1
    def __getattr__(self, name):
        if name == "_value_":
            return 1
        raise AttributeError(name)
    def __init__(self, *args):
        self._value_ = collections.ChainMap(M())
try:
    F.A | dataclasses.field().metadata
except Exception:
    pass
for seen in got:
    if type(seen) is dict:
        seen["planted"] = "by a run"
class P(enum.Flag):
    R = 1
    W = 2
return [len(dataclasses.field().metadata), (P.R | P.W).value]
"""
    await sb.assert_harmless(code, [0, 3], backend=backend)
    assert len(dataclasses.field().metadata) == 0
