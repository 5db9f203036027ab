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


#: Ways to put a comparison or `__exit__` into a class without the prologue: refused.
UNJUDGED = {
    "lambda-in-body": ("class C:\n    __eq__ = lambda s, o: True\nreturn C() == 1",
                       "TypeError: __eq__ must be defined with 'def __eq__(...)' in the sandbox"),
    "other-name-in-body": ("def same(s, o):\n    return True\nclass C:\n    __lt__ = same\nreturn C() < 1",
                           "TypeError: __lt__ must be defined with 'def __lt__(...)' in the sandbox"),
    "type-namespace": ("C = type('C', (), {'__ror__': lambda s, o: o})\nreturn 1",
                       "__ror__ must be defined with 'def __ror__(...)' in the sandbox"),
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
