"""`functools.wraps` and `__wrapped__`: neither hands the snippet a host object's attributes or a
checked wrapper's unchecked original.

The stdlib's `update_wrapper` copies `wrapped.__dict__` and sets `__wrapped__ = wrapped`, so
`functools.wraps(object)(f)` once put the real `object.__getattribute__` into `f.__dict__`; and
the shims' wrappers (`@dataclass`, `total_ordering`, `re.*`, `struct.*`, `urllib.parse.*`,
`dataclasses.asdict`) carried `__wrapped__` pointing at the unchecked original. The `functools`
shim copies only plain names from a host object, the shims' wrappers have no `__wrapped__`, and
the guard refuses any `__wrapped__` read that is not the snippet's own object.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from . import test_reachability as reach

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: F1: the real `object.__getattribute__` out of `f.__dict__`, then `shlex`'s globals and os.
WRAPS_OBJECT_ESCAPE = """
import functools, shlex
def f():
    pass
functools.wraps(object)(f)
ga = f.__dict__['__getattribute__']
os = ga(shlex.split, '__globals__')['shlex'].os
os.system('touch ' + OUT_PATH)
return os.environ.get(ENV_NAME)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_wraps_of_a_host_object_copies_no_attributes(sb, backend):
    result = await sb.run(WRAPS_OBJECT_ESCAPE, backend=backend)
    sb.assert_error(result, "exception", "KeyError", "__getattribute__")
    # What it does copy: the plain names, and no `__wrapped__` leading back to the host object.
    probe = """
import functools, json
def f():
    pass
g = functools.wraps(json.dumps)(f)
return [g is f, f.__name__, f.__qualname__, f.__module__, type(f.__doc__).__name__, sorted(vars(f)),
        hasattr(f, '__wrapped__')]
"""
    await sb.assert_harmless(probe, [True, "dumps", "dumps", "json", "str", [], False], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_wraps_of_the_snippets_own_function_works_as_in_python(sb, backend):
    code = """
import functools
def inner(x: int) -> int:
    return x
inner.__doc__ = "doc"
inner.tag = 1
@functools.wraps(inner)
def outer(x):
    return inner(x) + 1
return [outer.__name__, outer.__doc__, outer.tag, outer.__wrapped__ is inner, outer(1),
        sorted(outer.__annotations__)]
"""
    await sb.assert_harmless(code, ["inner", "doc", 1, True, 2, ["return", "x"]], backend=backend)


#: Every shim wrapper that once carried `__wrapped__` to its unchecked original.
SHIM_WRAPPERS = [
    "dataclasses.dataclass", "dataclasses.asdict", "dataclasses.astuple", "functools.total_ordering",
    "re.sub", "re.compile", "re.match", "struct.pack", "struct.calcsize", "urllib.parse.quote",
    "urllib.parse.urlsplit",
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("wrapper", SHIM_WRAPPERS)
async def test_shim_wrappers_have_no_wrapped_original(sb, backend, wrapper):
    module = wrapper.rsplit(".", 1)[0]
    code = f"import {module}\nreturn [{wrapper}.__name__, getattr({wrapper}, '__wrapped__', 'absent')]"
    await sb.assert_harmless(code, [wrapper.rsplit(".", 1)[1], "absent"], backend=backend)
    result = await sb.run(f"import {module}\nreturn repr({wrapper}.__wrapped__)", backend=backend)
    sb.assert_error(result, "exception", "AttributeError")


#: F2: the real `dataclass` pastes a field name into the `__eq__` source it executes.
REAL_DATACLASS_ESCAPE = """
import dataclasses
real = dataclasses.dataclass.__wrapped__
class C:
    pass
C.__annotations__["x,setattr(self,'m',__import__('os'))"] = int
real(C, init=False, repr=False)
c = C()
C.__eq__(c, c)
return c.m.environ.get(ENV_NAME)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_real_dataclass_is_out_of_reach(sb, backend):
    result = await sb.run(REAL_DATACLASS_ESCAPE, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "__wrapped__")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_wrapped_of_a_host_callable_is_refused(sb, backend):
    # Defence in depth: whatever object carries it, `__wrapped__` must be the snippet's own.
    code = "import functools\nreturn repr(functools.lru_cache(len).__wrapped__)"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "not the snippet's own")
    own = "import functools\ndef f(x):\n    return x\nreturn functools.lru_cache(f).__wrapped__ is f"
    await sb.assert_harmless(own, True, backend=backend)


#: F2 in-process: the unchecked originals cache on the arguments as passed, so a lying `str`
#: subclass poisons the host's own later calls; `total_ordering` rewrites a host class.
POISONERS = {
    "re.sub": """
import re
class L(str):
    def __hash__(self):
        return hash('<\\\\1>')
    def __eq__(self, other):
        return True
re.sub.__wrapped__('(a)', L('EVIL'), 'a')
""",
    "struct.pack": """
import struct
class L(str):
    def __hash__(self):
        return hash('<i')
    def __eq__(self, other):
        return True
struct.pack.__wrapped__(L('<q'), 1)
""",
    "total_ordering": """
import functools, numbers
functools.total_ordering.__wrapped__(numbers.Real)
""",
}
POISON_CHECK = (
    "import re, struct, numbers\n"
    "state = [re.sub('(a)', r'<\\1>', 'a'), struct.calcsize('<i'), ['__gt__' in vars(numbers.Real), '__ge__' in vars(numbers.Real)]]"
)


@pytest.mark.parametrize("route", sorted(POISONERS))
def test_unchecked_originals_cannot_poison_the_host(isolated, route):
    report = isolated(POISONERS[route] + "return 'poisoned'", POISON_CHECK)
    assert not report["hung"]
    result = report["result"]
    assert result["error"] is not None and result["error"]["kind"] == "exception", result
    assert "__wrapped__" in result["error"]["message"]
    assert report["before"] == ["<a>", 4, [False, False]]
    assert report["after"] == report["before"], report
    assert report["next"]["value"] == json.dumps([1])


# -- the reachability crawl, through these routes ------------------------------------------------
#: Snippet-made helpers for the crawl: a fresh function per `wraps`, the guard's `__wrapped__`
#: read, and what a snippet's `__deepcopy__` is handed when the object is deep-copied with it.
ROUTES_SNIPPET = """
import copy, functools
got = []
class S:
    def __deepcopy__(self, memo):
        got.append(memo)
        return self
def wrapped_by(x):
    def wrapper():
        pass
    functools.wraps(x)(wrapper)
    return wrapper
def wrapped_of(x):
    return x.__wrapped__
def memo_for(x):
    got.clear()
    copy.deepcopy([x, S()])
    return list(got)
return {'wrapped_by': wrapped_by, 'wrapped_of': wrapped_of, 'memo_for': memo_for}
"""

#: How many objects the deepcopy route is tried on (a deep copy walks the whole object).
MEMO_ROUTE_OBJECTS = 3000

#: What a snippet legitimately holds through these routes that the crawl would report: nothing
#: (a `__deepcopy__`'s memo is a plain dict of the snippet's own objects and their copies).
ROUTE_SANCTIONED: tuple[str, ...] = ()


def _route_children(helpers: dict[str, Any], counts: dict[str, int]) -> Any:
    original = reach._children

    def children(obj: Any, counters: dict[str, int], attrs: bool, run_getattr: Any) -> list[tuple[str, Any]]:
        out = original(obj, counters, attrs, run_getattr)
        if not attrs:
            return out
        try:
            out.append(("|fwd (@).__wrapped__", helpers["wrapped_of"](obj)))
            counts["wrapped"] += 1
        except Exception:
            pass
        try:
            wrapper = helpers["wrapped_by"](obj)
        except Exception:
            pass
        else:
            counts["wraps"] += 1
            out.append(("|fwd vars(functools.wraps(@)(f))", dict(vars(wrapper))))
            for name in ("__name__", "__qualname__", "__module__", "__doc__", "__annotations__"):
                out.append((f"|fwd functools.wraps(@)(f).{name}", getattr(wrapper, name, None)))
        if counts["memo"] < MEMO_ROUTE_OBJECTS:
            counts["memo"] += 1
            try:
                memos = helpers["memo_for"](obj)
            except Exception:
                memos = []
            for memo in memos:
                counts["memo-given"] += 1
                assert type(memo) is dict, f"a __deepcopy__ got {type(memo)!r}"
                out.append(("|fwd <memo of deepcopy([@, S()])>", memo))
        return out

    return children


def test_crawl_through_wraps_wrapped_and_deepcopy_memos_finds_nothing(monkeypatch):
    helpers = reach._run_sync(ROUTES_SNIPPET)
    counts = {"wrapped": 0, "wraps": 0, "memo": 0, "memo-given": 0}
    monkeypatch.setattr(reach, "_children", _route_children(helpers, counts))
    result = reach.crawl(*reach.build_roots())
    findings = {
        path: found for path, found in reach._unexpected(result.findings).items()
        if not any(name in found[0] for name in ROUTE_SANCTIONED)
    }
    assert not findings, "reachable through wraps / __wrapped__ / a deepcopy memo:\n" + reach._report(findings)
    # The routes were really taken: wraps on (nearly) everything, some objects with their own
    # `__wrapped__`, and a memo handed to the snippet's hook for most deep copies tried.
    assert counts["wraps"] > 10_000, counts
    assert counts["wrapped"] > 0, counts
    assert counts["memo-given"] > MEMO_ROUTE_OBJECTS // 4, counts
    assert result.objects > 10_000
