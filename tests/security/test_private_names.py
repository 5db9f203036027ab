"""Private names: the snippet's own `_x` names work on objects it made; host objects' private
attributes, the guard machinery's names and private modules stay refused, and nothing a
refused read was after (a host module, a host secret) reaches the snippet."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_own_private_names_work(sb, backend):
    code = """
_cache = {}
def _helper(_x):
    return _x * 2
class Box:
    _limit = 3
    def __init__(self):
        self._items = []
        self.__secret = 7
    def add(self, x):
        self._items.append(_helper(x))
        return self.__secret
b = Box()
return [b.add(1), b._items, Box._limit, getattr(b, '_items'), hasattr(b, '_nope'), b._Box__secret]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [7, [2], 3, [2], False, 7]


PRIVATE_ON_HOST = [
    pytest.param("import json\nreturn str(json._shim_attrs)", "exception", ['"_shim_attrs" is not accessible'],
                 id="shim-private-slot"),
    pytest.param("return str(tools._ns_entries)", "exception", ['"_ns_entries" is not accessible'],
                 id="namespace-private-slot"),
    pytest.param("import textwrap\nclass W(textwrap.TextWrapper):\n    pass\nreturn str(W()._munge_whitespace)",
                 "exception", ['"_munge_whitespace" is not accessible'], id="host-base-private-method"),
    pytest.param("import statistics\nreturn statistics.NormalDist()._mu", "exception", ['"_mu" is not accessible'],
                 id="host-instance-private-slot"),
    pytest.param("import json\nreturn getattr(json, '_shim_attrs')", "exception", ['"_shim_attrs" is not accessible'],
                 id="computed-private-on-shim"),
    pytest.param("import json\njson._x = 1\nreturn 1", "exception", ['"_x" is not accessible'],
                 id="private-write-on-shim"),
    pytest.param("import difflib\ndifflib.SequenceMatcher._x = 1\nreturn 1", "exception", ['"_x" is not accessible'],
                 id="private-write-on-host-class"),
    pytest.param("return _getattr_", "syntax", ['"_getattr_"', "reserved"], id="machinery-getattr"),
    pytest.param("_write_ = lambda o, n=None: o\nreturn 1", "syntax", ['"_write_"', "reserved"], id="machinery-write"),
    pytest.param("__builtins__['open']\nreturn 1", "syntax", ['"__builtins__"'], id="dunder-builtins-name"),
    pytest.param("import _io\nreturn 1", "syntax", ['"_io"'], id="private-module"),
    pytest.param("from json import _default_encoder\nreturn 1", "syntax", ['"_default_encoder"'], id="private-member-import"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), PRIVATE_ON_HOST)
async def test_private_names_of_host_objects_stay_refused(sb, backend, code, kind, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, kind, *fragments)
    await sb.assert_next_run_ok(backend)


async def test_private_write_on_host_class_leaves_it_unchanged(isolated):
    code = "import difflib\ntry:\n    difflib.SequenceMatcher._pwned = 1\nexcept Exception:\n    pass\nreturn 1"
    report = isolated(code, "import difflib\nstate = hasattr(difflib.SequenceMatcher, '_pwned')")
    assert report["before"] is False and report["after"] is False
    assert json.dumps(report["next"]["value"]) == '"[1]"'


async def test_private_write_on_a_prelude_class_stays_in_the_run(sb):
    # `string.Template` is the run's own prelude class (as CPython's, it takes writes): a later
    # run gets a fresh one.
    first = await sb.run("import string\nstring.Template._pwned = 1\nreturn string.Template._pwned",
                         backend="inprocess")
    assert first.value == 1, first
    later = await sb.run("import string\nreturn hasattr(string.Template, '_pwned')", backend="inprocess")
    assert later.error is None and later.value is False, later


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_state_a_host_base_trusts_is_not_the_snippets(sb, backend):
    # An instance attribute of a snippet subclass counted as the snippet's own, also under a
    # name the host base's code uses: a review replaced `TopologicalSorter._node2info`, and
    # `get_ready` then wrote `npredecessors` onto a class of the host's.
    code = """
import graphlib, functools
CacheInfo = type(functools.cache(len).cache_info())
class T(graphlib.TopologicalSorter):
    def __init__(self):
        super().__init__()
        self._mine = 1
t = T()
t.add("b", "a")
t.prepare()
try:
    t._node2info = {"a": CacheInfo}
    refused = ""
except AttributeError as e:
    refused = str(e)
return [refused, sorted(t.get_ready()), t._mine, hasattr(CacheInfo, "npredecessors")]
"""
    await sb.assert_harmless(code, ['attribute "_node2info" is not accessible: names starting with "_" are private',
                                    ["a"], 1, False], backend=backend)
    import functools

    assert not hasattr(type(functools.lru_cache()(len).cache_info()), "npredecessors")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_snippet_base_or_getattr_serves_state_a_host_base_trusts(sb, backend):
    # The next review put `_node2info` in a snippet base listed first (a property, which the
    # host's native `self._node2info` finds before the instance dictionary); a `__getattr__`
    # answers that read too when the snippet's `__init__` skipped the base's. A base that
    # defines such a name is refused, nor can one be written onto it later; a `__getattr__`
    # never answers those names, nor can one be given later to a class such a class inherits
    # from. A class with no host base below it keeps both.
    code = """
import graphlib
class Info:
    def __init__(self):
        self.npredecessors = 0
        self.successors = []
target = Info()
out = []
class Mine:
    @property
    def _node2info(self):
        return {"a": target}
try:
    class B(Mine, graphlib.TopologicalSorter):
        pass
except TypeError as e:
    out.append(str(e))
class Plain:
    pass
class G(Plain, graphlib.TopologicalSorter):
    def __init__(self):
        pass
    def __getattr__(self, name):
        if name == "_node2info":
            return {"a": target}
        if name == "_ready_nodes":
            return ["a"]
        return "answered " + name
g = G()
try:
    g.get_ready()
except AttributeError as e:
    out.append(str(e))
out.append(g.anything)
for holder in (Plain, G):
    try:
        holder.__getattr__ = lambda self, name: {"a": target}
    except AttributeError as e:
        out.append(str(e))
try:
    Plain._node2info = property(lambda self: {"a": target})
except AttributeError as e:
    out.append(str(e))
class Free:
    pass
Free.__getattr__ = lambda self, name: name.upper()
Free._node2info = 1
return out + [Free().abc, Free._node2info, target.npredecessors]
"""
    private = 'attribute "{}" is not accessible: names starting with "_" are private'
    await sb.assert_harmless(code, [
        "class 'B' cannot have 'Mine' as a base, which defines '_node2info': the code of a host base class "
        "uses that name as its own state",
        "'G' object has no attribute '_ready_nodes'", "answered anything", private.format("__getattr__"),
        private.format("__getattr__"), private.format("_node2info"), "ABC", 1, 0,
    ], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_vars_and_dataclass_fields_never_plant_state_a_host_base_trusts(sb, backend):
    # A review filled the dictionary `vars()` handed out before the base's state was there, and
    # named a dataclass field `_node2info` (an annotation, not a body name): the generated
    # `__init__` wrote it natively, also as the field of a snippet base with no host base of
    # its own. `vars()` is decided by the class, and such a field is refused, in the class, in
    # its subclasses and in its snippet bases.
    code = """
import graphlib, dataclasses, re
out = []
class B(graphlib.TopologicalSorter):
    def __init__(self):
        pass
try:
    vars(B())["_node2info"] = {"a": re.I}
except TypeError as e:
    out.append(str(e))
try:
    @dataclasses.dataclass
    class D(graphlib.TopologicalSorter):
        _node2info: dict
except TypeError as e:
    out.append(str(e))
@dataclasses.dataclass
class Own:
    _node2info: dict
try:
    class FromOwn(Own, graphlib.TopologicalSorter):  # Own's generated `__init__` writes the field
        pass
except TypeError as e:
    out.append(str(e))
class Later:
    _node2info: dict  # an annotation only: not yet a field
class Below(Later, graphlib.TopologicalSorter):
    pass
try:
    dataclasses.dataclass(Later)
except TypeError as e:
    out.append(str(e))
class Plain:
    def __init__(self):
        self._x = 1
return out + [Own({"a": 1})._node2info, vars(Plain()), hasattr(re.I, "npredecessors")]
"""
    await sb.assert_harmless(code, [
        "vars() of a 'B' object is not available in the sandbox (a class it derives from keeps its own state there)",
        "dataclass 'D' cannot have a field '_node2info': the code of a host base class uses that name as its own "
        "state",
        "class 'FromOwn' cannot have 'Own' as a base, which defines '_node2info': the code of a host base class "
        "uses that name as its own state",
        "dataclass 'Later' cannot have a field '_node2info': the code of a host base class uses that name as its "
        "own state", {"a": 1}, {"_x": 1}, False,
    ], backend=backend)
    import re

    assert not hasattr(re.I, "npredecessors")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_names_written_before_a_host_subclass_and_mixed_instance_dicts_plant_no_host_state(sb, backend):
    # A review wrote `_node2info` onto a snippet base before any class with a host base
    # inherited it (directly, as a property, and from a base's `__init_subclass__`): the check
    # had read the base's body only. Another read `__dict__` through a snippet base listed
    # first, past the `vars()` refusal. A slot is checked under its mangled name. Protocols
    # that inherit protocols (host flags written as the class is made) still work.
    code = """
import graphlib, difflib, re, typing
out = []
class Free:
    pass
Free._node2info = {"a": re.I}
class AsProperty:
    pass
AsProperty._node2info = property(lambda self: {"a": re.I})
class Root:
    def __init_subclass__(cls, **kw):
        if cls.__name__ == "Planted":
            cls._node2info = {"a": re.I}
class Planted(Root):
    pass
for base in (Free, AsProperty, Planted):
    try:
        class Sub(base, graphlib.TopologicalSorter):
            def __init__(self):
                pass
    except TypeError as e:
        out.append(str(e))
class First:
    pass
class Later(First, graphlib.TopologicalSorter):
    def __init__(self):
        pass
try:
    Later().__dict__["_node2info"] = {"a": re.I}
except AttributeError as e:
    out.append(str(e))
try:
    class SequenceMatcher(difflib.SequenceMatcher):
        __slots__ = ("__chain_b",)
except TypeError as e:
    out.append(str(e))
class P(typing.Protocol):
    def f(self) -> int: ...
@typing.runtime_checkable
class Q(P, typing.Protocol):
    def g(self) -> int: ...
class Impl:
    def f(self):
        return 1
    def g(self):
        return 2
return out + [isinstance(Impl(), Q), hasattr(re.I, "npredecessors")]
"""
    clash = "the code of a host base class uses that name as its own state"
    await sb.assert_harmless(code, [
        f"class 'Sub' cannot have 'Free' as a base, which defines '_node2info': {clash}",
        f"class 'Sub' cannot have 'AsProperty' as a base, which defines '_node2info': {clash}",
        f"class 'Sub' cannot have 'Planted' as a base, which defines '_node2info': {clash}",
        "'__dict__' of a 'Later' object is not available in the sandbox (a class it derives from keeps its own "
        "state there)",
        f"class 'SequenceMatcher' cannot define '_SequenceMatcher__chain_b': {clash}",
        True, False,
    ], backend=backend)
    import re

    assert not hasattr(re.I, "npredecessors")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_class_body_never_defines_state_a_host_base_trusts(sb, backend):
    # The rule above held for instance attributes only: a review defined `_node2info` in the
    # class body (an instance without its own then finds the class's), and `get_ready` wrote
    # `npredecessors` onto a class of the host's. A body, `__slots__` and `type()`'s namespace
    # are all refused such a name, private methods too; enum's documented hooks stay the
    # subclass's own.
    code = """
import graphlib, functools, enum
CacheInfo = type(functools.cache(len).cache_info())
refused = []
def body():
    class T(graphlib.TopologicalSorter):
        _node2info = {"a": CacheInfo}
        _ready_nodes = ["a"]
        _npassedout = 0
        def __init__(self):
            pass
    return sorted(T().get_ready())
def method():
    class T(graphlib.TopologicalSorter):
        def _get_nodeinfo(self, node):
            return CacheInfo
def slots():
    class T(graphlib.TopologicalSorter):
        __slots__ = ("_node2info",)
def three_arguments():
    return type("T", (graphlib.TopologicalSorter,), {"_node2info": {}})
for make in (body, method, slots, three_arguments):
    try:
        make()
    except TypeError as e:
        refused.append(str(e))
class Color(enum.Enum):
    RED = 1
    @classmethod
    def _missing_(cls, value):
        return cls.RED
return [refused, Color(7).name, hasattr(CacheInfo, "npredecessors")]
"""
    said = ("class 'T' cannot define '{}': the code of a host base class uses that name as its own state")
    await sb.assert_harmless(code, [[said.format("_node2info"), said.format("_get_nodeinfo"),
                                     said.format("_node2info"), said.format("_node2info")],
                                    "RED", False], backend=backend)
    import functools

    assert not hasattr(type(functools.lru_cache()(len).cache_info()), "npredecessors")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_state_a_host_base_trusts_is_not_handed_out_by_vars_or_copy(sb, backend):
    # The same state reached another way: `vars()` returned the real instance dictionary, and
    # the copy prelude's memo kept the original it read through its state kernel.
    code = """
import graphlib, copy
class T(graphlib.TopologicalSorter):
    pass
t = T()
refused = []
for reach in (lambda: vars(t), lambda: copy.deepcopy(t, {}), lambda: copy.copy(t)):
    try:
        reach()
    except TypeError as e:
        refused.append(str(e).split(":")[0])
class Own:
    def __init__(self):
        self._x = 1
return [refused, vars(Own()), copy.deepcopy(Own())._x]
"""
    await sb.assert_harmless(code, [["vars() of a 'T' object is not available in the sandbox (a class it derives from "
                                     "keeps its own state there)", "cannot copy a 'T' object in the sandbox",
                                     "cannot copy a 'T' object in the sandbox"], {"_x": 1}, 1], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_frozen_dataclasss_generated_setattr_applies_the_write_rules(sb, backend):
    # Read out of `vars(F)`, the generated `__setattr__` wrote any name but its fields natively
    # (`super().__setattr__`): a review planted `_node2info` on a host-based subclass's instance
    # with it, and `graphlib` wrote onto `re.I`; it also wrote `__class__`.
    code = """
import dataclasses, graphlib, re
@dataclasses.dataclass(frozen=True)
class F:
    x: int = 0
class T(graphlib.TopologicalSorter, F):
    pass
raw = vars(F)["__setattr__"]
out = []
for name, value in (("_node2info", {"a": re.I}), ("__class__", F), ("x", 1)):
    try:
        raw(T(), name, value)
    except (AttributeError, TypeError, dataclasses.FrozenInstanceError) as e:
        out.append(type(e).__name__)
return out + [hasattr(re.I, "npredecessors")]
"""
    await sb.assert_harmless(code, ["AttributeError", "AttributeError", "FrozenInstanceError", False], backend=backend)
