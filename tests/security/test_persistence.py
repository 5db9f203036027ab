"""Nothing one run does reaches a later run: what runs share is frozen, or made per run.

Assume the Python layers are broken: a snippet holds the real `setattr`, `object.__setattr__`
and `type.__setattr__`. It still changes nothing a later in-process run sees: every class the
runs share is immutable (CPython's immutable-type flag: the real `setattr`, `type.__setattr__`
and a `__class__` swap raise), every module object is made per run, the class factory's tables
are read-only, and the shared functions and objects CPython cannot make read-only (a function's
`__defaults__` and `__dict__`, an enum member's `__dict__`) are put back after the run. The
god-mode test checks it by a fingerprint of the whole shared graph, in its own interpreter.
"""

from __future__ import annotations

import enum
import functools
import json
import re
import subprocess
import sys
import textwrap
import types
import typing
from pathlib import Path
from typing import Any

import god_mode_worker
import persistence_driver
import pytest

import sandbox
from sandbox import crossing, guards, shims
from sandbox import execution as execution_module
from sandbox.execution import Execution

DRIVER = Path(__file__).with_name("persistence_driver.py")
ROOT = Path(sandbox.__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def god_mode() -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(DRIVER), "20000"], capture_output=True, text=True, timeout=900, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_god_mode_writes_reach_no_later_run(god_mode: dict[str, Any]) -> None:
    # The snippet really wrote: thousands of attributes of thousands of reachable objects.
    reached, writes = god_mode["god"]
    assert reached > 5_000 and writes > 5_000, god_mode["god"]
    assert god_mode["objects"] > 5_000, god_mode["objects"]
    # ... and the shared graph a later run starts from is the pristine one, object by object.
    assert god_mode["changed_count"] == 0, json.dumps(god_mode["changed"], indent=1)[:4000]
    assert god_mode["added_count"] == 0, god_mode["added"][:50]
    # The next run behaves as the one before the god-mode run did.
    assert god_mode["after"] == god_mode["warm"], god_mode
    # The put-back after it started from the cheap check, which saw the writes.
    assert god_mode["probe_reused"], god_mode


def _first_run() -> None:
    Execution("return 1", [], sandbox.Limits())  # freezes on the first run of a process


HOST_CLASSES = ["textwrap.TextWrapper", "json.JSONDecodeError", "collections.Counter", "fractions.Fraction",
                "difflib.SequenceMatcher", "enum.Enum", "uuid.UUID"]
#: Classes a prelude makes afresh for every run (the run's own code, so writable as a snippet's).
PRELUDE_CLASSES = ["string.Template", "pprint.PrettyPrinter", "contextlib.ExitStack"]


@pytest.mark.parametrize("path", HOST_CLASSES)
def test_the_host_classes_a_shim_exposes_are_immutable(path: str) -> None:
    _first_run()
    module, _, name = path.partition(".")
    shim = shims.ShimSet(guards.RunGuards(), {}).get(module)
    cls = object.__getattribute__(shim, "_shim_attrs")[name]
    before = dict(type.__getattribute__(cls, "__dict__"))
    for write in (setattr, type.__setattr__):
        with pytest.raises(TypeError, match="immutable type"):
            write(cls, "planted", 1)
    with pytest.raises(TypeError, match="immutable type"):
        delattr(cls, "__doc__")
    assert dict(type.__getattribute__(cls, "__dict__")) == before


@pytest.mark.parametrize("path", PRELUDE_CLASSES)
def test_a_prelude_class_is_made_per_run_so_a_write_reaches_no_other_run(path: str) -> None:
    _first_run()
    module, _, name = path.partition(".")
    first, second = (object.__getattribute__(shims.ShimSet(guards.RunGuards(), {}).get(module), "_shim_attrs")[name]
                     for _ in range(2))
    assert first is not second
    type.__setattr__(first, "planted", 1)  # even a real setattr, not the run's checked one
    assert "planted" not in type.__getattribute__(second, "__dict__")
    third = object.__getattribute__(shims.ShimSet(guards.RunGuards(), {}).get(module), "_shim_attrs")[name]
    assert "planted" not in type.__getattribute__(third, "__dict__")


def test_every_class_of_a_stdlib_module_behind_a_shim_is_immutable() -> None:
    # A call result's class is a host class the snippet holds as `type(x)`, and host code it
    # steers writes onto what a snippet callable returns (a generic alias's call sets
    # `__orig_class__`): a review planted one onto `functools._CacheInfo`, which no shim table
    # holds. So every class of a stdlib module whose functions or classes a shim shares is
    # frozen, private ones too.
    import _hashlib
    import difflib
    import graphlib

    _first_run()
    # Also a C module's exception class (`hashlib.pbkdf2_hmac` raises it; no table holds it),
    # and the builtins that are heap types (`ExceptionGroup`).
    for cls in (functools._CacheInfo, difflib.Match, graphlib._NodeInfo, typing._GenericAlias,
                _hashlib.UnsupportedDigestmodError, ExceptionGroup):
        assert crossing.is_immutable(cls), cls
    crawled = set(crossing.SHARED._module_records)
    assert {"functools", "difflib", "graphlib", "typing", "enum", "dataclasses", "_hashlib", "builtins"} <= crawled
    mutable = []
    for name in sorted(crawled):
        module = sys.modules.get(name)
        if module is None or not crossing._in_stdlib(module):
            continue
        for value in vars(module).values():
            if (issubclass(type(value), type) and crossing.is_heap_type(value) and crossing._defined_in(value, name)
                    and not crossing.is_immutable(value)):
                mutable.append(f"{name}.{value.__qualname__}")
    assert not mutable, mutable
    # A site package is never frozen whole: it may rightly change its own classes.
    assert not crossing._in_stdlib(sys.modules["anyio"])


#: A child: one run freezes; the second reads `__annotations__` off C classes the host shares.
ANNOTATIONS_CHILD = """
import functools, json, re, sys, types, anyio
sys.path.insert(0, ROOT)
import sandbox
from sandbox import crossing
CODE = '''
import functools, re
from typing import Protocol, runtime_checkable
@runtime_checkable
class P(Protocol):
    def zzz(self): ...
classmethod(re.Pattern)
classmethod(type(functools.cmp_to_key(lambda a, b: 0)(1)))
return [issubclass(re.Pattern, P), isinstance(functools.partial(print), P), isinstance(re.match("a", "a"), P)]
'''
def kinds():
    return {cls.__qualname__: type(type.__getattribute__(cls, "__dict__").get("__annotations__")).__name__
            for cls in (re.Pattern, re.Match, functools.partial)}
async def main():
    await sandbox.run("return 1", backend="inprocess")
    before = kinds()
    result = await sandbox.run(CODE, backend="inprocess")
    seen, pending, left = set(), [object], []
    while pending:
        for cls in type.__subclasses__(pending.pop()):
            if cls not in seen:
                seen.add(cls)
                pending.append(cls)
                annotations = type.__getattribute__(cls, "__dict__").get("__annotations__")
                if crossing.is_heap_type(cls) and crossing.is_immutable(cls) and type(annotations) is dict and not annotations:
                    left.append(cls.__qualname__)
    @functools.wraps(functools.partial(print))
    def wrapper():
        pass
    return {"value": result.value, "before": before, "after": kinds(), "left": left,
            "lazy": len(crossing._LAZY_ANNOTATIONS)}
print(json.dumps(anyio.run(main)))
"""


def test_no_read_leaves_an_annotations_dict_in_a_frozen_c_class() -> None:
    # Reading `__annotations__` off a heap class that has none stores a new, writable dict in it,
    # past the immutable flag. The freeze gives Python classes a read-only mapping; a review's
    # `classmethod(re.Pattern)`, and typing's protocol check reading `__annotations__` over a
    # class's MRO, gave C classes CPython had made immutable itself (`re.Pattern`,
    # `functools.partial`, `_csv.reader` ...) a dict the host and every later run shared. Those
    # keep no entry (one is found on their instances too: a `partial` with `__annotations__`
    # breaks the host's `functools.wraps`), and the put-back drops what a run's reads stored, in
    # every such class, also those no module exposes (`functools.KeyWrapper`, a later review's).
    root = str(Path(sandbox.__file__).resolve().parent.parent)
    done = subprocess.run([sys.executable, "-c", ANNOTATIONS_CHILD.replace("ROOT", repr(root))],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["value"] == [False, False, False], report
    assert report["before"] == report["after"] == {"Pattern": "NoneType", "Match": "NoneType", "partial": "NoneType"}
    assert report["left"] == [] and report["lazy"] > 10, report


def test_the_freeze_keeps_nothing_of_the_run_that_triggered_it() -> None:
    # The first run's builtins are frozen with the core; its own `type` (which holds the run's
    # guards) is not one of them: `issubclass` against the sandbox's `type` answers as `type`
    # does, and a check made with it froze the run's `type` and recorded its guards for good.
    _first_run()
    held = [r.obj for r in crossing.SHARED.records.values()]
    assert not [o for o in held if isinstance(o, guards.RunGuards)]
    assert not [o for o in held if isinstance(o, types.MethodType) and isinstance(o.__self__, guards.RunGuards)]
    assert not [c for c in crossing.SHARED.frozen if crossing.SafeType in type.__getattribute__(c, "__mro__")
                and c is not crossing.SafeType]


def test_every_sandbox_class_a_snippet_reaches_is_immutable() -> None:
    _first_run()
    mutable = []
    for name in shims.SNIPPET_SIDE_MODULES + tuple(m.__name__ for m in shims._SHIM_MODULES):
        for value in vars(sys.modules[name]).values():
            if isinstance(value, type) and crossing._defined_in(value, name) and not crossing.is_immutable(value):
                mutable.append(f"{name}.{value.__qualname__}")
    assert not mutable, mutable
    # One of them, by a write of each kind, and a `__class__` swap into and out of it.
    from sandbox.shims.base import ModuleShim

    shim = shims.ShimSet(guards.RunGuards(), {}).get("json")
    with pytest.raises(TypeError, match="immutable type"):
        ModuleShim.__getattr__ = lambda self, name: 1

    class Other:
        __slots__ = ("_shim_name", "_shim_attrs")

    with pytest.raises(TypeError, match="__class__ assignment"):
        object.__setattr__(shim, "__class__", Other)
    with pytest.raises(TypeError, match="__class__ assignment"):
        object.__setattr__(Other(), "__class__", ModuleShim)


def test_module_shims_are_made_per_run() -> None:
    first = shims.ShimSet(guards.RunGuards(), {})
    second = shims.ShimSet(guards.RunGuards(), {})
    a, b = first.get("json"), second.get("json")
    assert a is not b and first.get("json") is a
    # A real write to one run's module object (god mode) is that run's alone.
    object.__setattr__(a, "_shim_attrs", types.MappingProxyType({"loads": print}))
    assert object.__getattribute__(b, "_shim_attrs")["loads"] is json.loads
    assert object.__getattribute__(shims.ShimSet(guards.RunGuards(), {}).get("json"), "_shim_attrs")["loads"] is json.loads


def test_the_class_factory_tables_are_read_only() -> None:
    _first_run()
    assert isinstance(guards.SEALED, types.MappingProxyType)
    assert isinstance(guards.CHECKED_REPLACEMENTS, frozenset)

    class Late:
        pass

    with pytest.raises(TypeError):
        guards.seal(Late)
    assert Late not in guards.SEALED


def test_restore_puts_back_what_cannot_be_frozen() -> None:
    """A shared function's defaults and attributes, a shared container's items: changed with the
    real `setattr`, put back after the run, compared by identity (no planted `__eq__` runs)."""
    _first_run()
    shim = shims.ShimSet(guards.RunGuards(), {})
    indent = object.__getattribute__(shim.get("textwrap"), "_shim_attrs")["indent"]
    defaults, doc = indent.__defaults__, indent.__doc__
    ran: list[str] = []

    class Lying:
        def __eq__(self, other: Any) -> bool:
            ran.append("eq")
            return True

        __hash__ = object.__hash__

    indent.__defaults__ = (Lying(),)
    indent.__doc__ = "planted"
    indent.planted = Lying()
    trans = textwrap.TextWrapper.unicode_whitespace_trans
    saved = dict(trans)
    trans[0x41] = Lying()
    assert shim.restore_shared() >= 2
    assert indent.__defaults__ is defaults and indent.__doc__ is doc and "planted" not in indent.__dict__
    assert trans == saved
    assert ran == []
    assert shim.restore_shared() == 0


def _records_of(groups: tuple[str, ...], kind: type, *, keyword_defaults: bool = False) -> list[Any]:
    found = []
    for group in groups:
        for record in crossing.SHARED.groups[group]:
            if type(record.obj) is kind and (not keyword_defaults or record.items[1]):
                found.append(record.obj)
    return found


def _a_fresh_union() -> shims.ShimSet:
    """A ShimSet whose put-back has run once (so its probe exists and is the reference)."""
    _first_run()
    shim = shims.ShimSet(guards.RunGuards(), {})
    for name in GROUPS[1:]:
        shim.get(name)
    shim.restore_shared()
    assert shim.restore_shared() == 0
    return shim


#: Together they hold every kind of record: `urllib.parse`'s result classes are namedtuples
#: (field accessors) with properties, `fractions.Fraction` has properties, the judging
#: stand-ins of every shim function are closures (cells).
GROUPS = ("core", "textwrap", "re", "collections", "fractions", "urllib.parse")


def _function_defaults(fn: Any, planted: Any) -> None:
    fn.__defaults__ = (planted,) * len(fn.__defaults__ or (1,))


def _function_keyword_default(fn: Any, planted: Any) -> None:
    fn.__kwdefaults__[next(iter(fn.__kwdefaults__))] = planted  # in place: the dict stays


def _function_attribute(fn: Any, planted: Any) -> None:
    fn.planted = planted  # into the existing, empty `__dict__`


def _function_code(fn: Any, planted: Any) -> None:
    fn.__code__ = fn.__code__.replace(co_consts=(*fn.__code__.co_consts, planted))  # a new code object


def _wrapper_reinitialised(wrapper: Any, planted: Any) -> None:
    type(wrapper).__init__(wrapper, lambda *a: planted)  # `__init__` again: a new callable, names copied


def _wrapper_attribute(wrapper: Any, planted: Any) -> None:
    object.__setattr__(wrapper, "planted", planted)


def _dict_value(mapping: Any, planted: Any) -> None:
    mapping[next(iter(mapping))] = planted


def _dict_key(mapping: Any, planted: Any) -> None:
    mapping["planted"] = planted


def _list_item(items: Any, planted: Any) -> None:
    items.append(planted)


def _property_reinitialised(prop: Any, planted: Any) -> None:
    property.__init__(prop, lambda self: planted)  # `__init__` again: new getter, no setter, its doc


def _property_fields(prop: Any, planted: Any) -> None:
    property.__init__(prop, prop.fget, lambda self, value: planted, lambda self: planted, planted)


def _property_named(prop: Any, planted: Any) -> None:
    prop.__set_name__(None, planted)  # the name its error messages give


def _property_doc(prop: Any, planted: Any) -> None:
    prop.__doc__ = planted  # a writable member of the C object


def _accessor_doc(accessor: Any, planted: Any) -> None:
    accessor.__doc__ = planted


def _cell_contents(cell: Any, planted: Any) -> None:
    cell.cell_contents = planted


def _cell_emptied(cell: Any, planted: Any) -> None:
    del cell.cell_contents


def _c_function_module(fn: Any, planted: Any) -> None:
    fn.__module__ = planted  # a writable member of a C function


def _instance_attribute(member: Any, planted: Any) -> None:
    object.__setattr__(member, "planted", planted)  # into an enum member's own `__dict__`


def _instance_dict_replaced(member: Any, planted: Any) -> None:
    object.__setattr__(member, "__dict__", {**object.__getattribute__(member, "__dict__"), "x": planted})


WRITES = [
    (types.FunctionType, False, _function_defaults), (types.FunctionType, True, _function_keyword_default),
    (types.FunctionType, False, _function_attribute), (types.FunctionType, False, _function_code),
    (staticmethod, False, _wrapper_reinitialised), (classmethod, False, _wrapper_reinitialised),
    (staticmethod, False, _wrapper_attribute), (dict, False, _dict_value), (dict, False, _dict_key),
    (list, False, _list_item), (property, False, _property_reinitialised), (property, False, _property_fields),
    (property, False, _property_named), (property, False, _property_doc),
    (crossing._TUPLEGETTER, False, _accessor_doc), (types.CellType, False, _cell_contents),
    (types.CellType, False, _cell_emptied), (types.BuiltinFunctionType, False, _c_function_module),
    (re.RegexFlag, False, _instance_attribute), (re.RegexFlag, False, _instance_dict_replaced),
]


@pytest.mark.parametrize(("kind", "keyword_defaults", "write"), WRITES, ids=[w.__name__.strip("_") for *_, w in WRITES])
def test_the_cheap_check_sees_every_kind_of_write(kind: type, keyword_defaults: bool, write: Any) -> None:
    """The put-back first asks a probe, which reads the recorded objects' memory (pointers, dict
    version tags) in one pass, whether anything changed: a write of each kind, to the first and
    the last recorded object of that kind, is seen and put back, and nothing planted runs."""
    shim = _a_fresh_union()
    candidates = [o for o in _records_of(GROUPS, kind, keyword_defaults=keyword_defaults)
                  if kind is not dict or o]  # a key of its own to replace
    assert candidates, kind
    ran: list[str] = []

    class Planted:
        def __eq__(self, other: Any) -> bool:
            ran.append("eq")
            return True

        def __hash__(self) -> int:
            ran.append("hash")
            return 0

    for target in (candidates[0], candidates[-1]):
        before = _state_of(target)
        write(target, Planted())
        assert _state_of(target) != before  # the write landed (compared by identity)
        assert shim.restore_shared() >= 1
        assert _state_of(target) == before
        assert shim.restore_shared() == 0  # the probe's new reference is the pristine state
    assert ran == []


def _state_of(obj: Any) -> list[int]:
    """Identities of everything a write could change in `obj`."""
    if type(obj) is types.FunctionType:
        return [id(getattr(obj, n)) for n in crossing._FUNCTION_STATE] + [
            id(v) for d in (obj.__dict__, obj.__kwdefaults__ or {}) for kv in d.items() for v in kv]
    if type(obj) in (staticmethod, classmethod):
        return [id(obj.__func__), id(obj.__dict__)] + [id(v) for kv in obj.__dict__.items() for v in kv]
    if type(obj) is dict:
        return [id(v) for kv in obj.items() for v in kv]
    if isinstance(obj, enum.Enum):
        own = object.__getattribute__(obj, "__dict__")
        return [id(own)] + [id(v) for kv in own.items() for v in kv]
    if type(obj) in crossing._C_FIELDS:
        # Its fields, and its memory (a property's name and where its doc came from are there only).
        words = crossing._words(obj, crossing._C_SPANS[type(obj)]).raw if type(obj) in crossing._C_SPANS else b""
        return [id(v) for v in crossing._c_fields(obj)] + list(words)
    return [id(v) for v in obj]


#: C-level fields a write can change on the objects every run shares, by type: what the walk
#: below finds, each put back by `crossing` (functions: `_FUNCTION_STATE`; `staticmethod`/
#: `classmethod` and containers: their callable and items; the rest: `crossing._C_FIELDS`). A
#: shim that exposes a C object with another writable field, or a C type that can be
#: initialised again, fails the test until the put-back covers it (or the shim stops sharing it).
PUT_BACK_C_FIELDS = {
    "function": {"__code__", "__defaults__", "__kwdefaults__", "__annotations__", "__name__", "__qualname__",
                 "__doc__", "__module__"},
    "staticmethod": {"__init__"}, "classmethod": {"__init__"},
    "dict": {"__init__"}, "list": {"__init__"}, "set": {"__init__"},
    "PlainKeyedMap": {"__init__"},  # a shared enum's value map: recorded and put back as a dict
    "property": {"__doc__", "__init__", "__set_name__"},
    "_tuplegetter": {"__doc__"},
    "cell": {"cell_contents"},
    "builtin_function_or_method": {"__module__"},
}
#: What else the crawl finds, and why it is not put back.
NOT_PUT_BACK_C_FIELDS = {
    # `_random.Random.__init__` seeds a Mersenne Twister state that `SystemRandom` never reads
    # (`random`/`getrandbits` read `os.urandom`), and the shared instance (`secrets`') is
    # reached only through its bound methods' `__self__`, which a snippet's reads refuse; the
    # instance's `__dict__` is recorded.
    "SystemRandom": {"__init__"},
}


def _shim_roots() -> list[tuple[str, Any]]:
    """What a run gets from the process: the shims' tables and the C builtins (the run's other
    builtins are its own guards, whose private slots lead to host-side objects of the run)."""
    return [(path, value) for path, value in persistence_driver.shared_roots()
            if not path.startswith("builtins.") or type(value) is types.BuiltinFunctionType]


def _shared_objects() -> list[Any]:
    """Every object two runs both reach from the shims and C builtins (`persistence_driver`'s
    walk: class dictionaries, function attributes and closures, instance dictionaries and
    slots): what every run of the process shares."""
    _first_run()
    _, first = persistence_driver.fingerprint(_shim_roots())
    _, second = persistence_driver.fingerprint(_shim_roots())
    again = {id(o) for o in second}
    return [o for o in first if id(o) in again]


def _writable_c_fields(obj: Any) -> set[str]:
    """The fields of `obj` that C code (not a Python class's `__slots__` or `__dict__`, which
    `_Record` covers) lets a write change: members and getsets that take their own value back,
    and the C hooks that re-point fields (`__init__`, `__setstate__`, `__set_name__`)."""
    found = set()
    for klass in type.__getattribute__(type(obj), "__mro__"):
        namespace = type.__getattribute__(klass, "__dict__")
        if "__slots__" in namespace or klass is object:
            continue
        for name, member in namespace.items():
            if name in ("__dict__", "__weakref__"):
                continue
            if type(member) in (types.MemberDescriptorType, types.GetSetDescriptorType):
                try:
                    member.__set__(obj, member.__get__(obj, type(obj)))
                except (AttributeError, TypeError, ValueError):
                    continue
                found.add(name)
            elif name in ("__init__", "__setstate__", "__set_name__") and type(member) in (
                    types.WrapperDescriptorType, types.MethodDescriptorType):
                found.add(name)
    try:
        object.__setattr__(obj, "__class__", type(obj))  # a `__class__` swap (refused for a frozen class)
        found.add("__class__")
    except TypeError:
        pass
    return found


def test_the_writable_c_fields_of_shared_objects_are_all_put_back() -> None:
    """The crawl: every C-level field of a shared object that a write (with the real `setattr`,
    or a C initialiser called again) can change is of a kind the put-back covers, and every
    shared object that has such fields is recorded (or, for a function, never crosses raw)."""
    shared = _shared_objects()
    assert len(shared) > 5_000
    found: dict[str, set[str]] = {}
    objects_of: dict[str, list[Any]] = {}
    for obj in shared:
        if isinstance(obj, type):
            continue  # classes: frozen (`test_the_host_classes_a_shim_exposes_are_immutable`)
        fields = _writable_c_fields(obj)
        if fields:
            found.setdefault(type(obj).__name__, set()).update(fields)
            objects_of.setdefault(type(obj).__name__, []).append(obj)
    known = {kind: PUT_BACK_C_FIELDS.get(kind, set()) | NOT_PUT_BACK_C_FIELDS.get(kind, set()) for kind in found}
    unhandled = {kind: fields - known[kind] for kind, fields in found.items()}
    assert not {k: v for k, v in unhandled.items() if v}, unhandled
    # A new kind is a decision (add it to the put-back, or say why not), not a drift.
    assert {"function", "property", "_tuplegetter", "cell", "builtin_function_or_method"} <= set(found)
    assert set(found) <= {*PUT_BACK_C_FIELDS, *NOT_PUT_BACK_C_FIELDS}, sorted(found)
    records = crossing.SHARED.records
    recorded_functions = [f for f in objects_of["function"] if id(f) in records]
    assert all(id(f) in records or crossing._owners(f) for f in objects_of["function"])
    # (Dicts and lists: recorded with what holds them, a function's `__dict__` or a class's.)
    # (A type's `__new__`, a C function, never crosses: `crossing.forbidden`.)
    for kind in ("staticmethod", "classmethod", "property", "_tuplegetter", "builtin_function_or_method"):
        assert [o for o in objects_of.get(kind, ()) if id(o) not in records and not crossing.forbidden(o)] == [], kind
    # Cells: every cell of a function that crosses raw (a receiver-checked method never does).
    cells = [c for f in recorded_functions for c in f.__closure__ or ()]
    assert len(cells) > 100 and [c for c in cells if id(c) not in records] == []
    # The decimal contexts a snippet reaches are not shared: none is in the shared graph.
    assert not [o for o in shared if type(o).__name__ == "Context"]


def test_c_fields_are_compared_by_attribute_where_the_layout_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an interpreter whose C objects are laid out otherwise (`_C_SPANS` empty), a property,
    a field accessor, a C function and a cell are recorded by their attributes: a write is
    still seen and put back, and the cheap check leaves them to `changed`."""
    monkeypatch.setattr(crossing, "_C_SPANS", types.MappingProxyType({}))

    def getter(self: Any) -> int:
        return 1

    def other(self: Any) -> int:
        return 2

    prop, cell = property(getter, None, None, "doc"), types.CellType(getter)
    accessor = crossing._TUPLEGETTER(0, "doc")
    c_function = {}.get  # a C function of its own (`__module__` unset)
    writes = [(prop, lambda: property.__init__(prop, other)), (cell, lambda: setattr(cell, "cell_contents", other)),
              (accessor, lambda: setattr(accessor, "__doc__", "planted")),
              (c_function, lambda: setattr(c_function, "__module__", "planted"))]
    for obj, write in writes:
        record = crossing._Record(obj)
        assert record.items is None and not record.changed()
        probe = crossing._Probe((record,))
        assert probe.views == () and probe.others == (record,)
        write()
        assert record.changed() and not probe.unchanged()
        record.restore()
        assert not record.changed() and probe.unchanged()
    assert (prop.fget, prop.__doc__, cell.cell_contents, accessor.__doc__) == (getter, "doc", getter, "doc")
    assert c_function.__module__ is None


def test_freezing_fails_closed_when_the_layout_is_not_cpythons(monkeypatch: pytest.MonkeyPatch) -> None:
    class Fresh:
        pass

    monkeypatch.setattr(crossing, "_FLAGS_OFFSET", crossing._FLAGS_OFFSET + 8)
    with pytest.raises(crossing.FreezeError, match="refusing to run unfrozen"):
        crossing.make_immutable(Fresh)
    Fresh.still = "writable"  # nothing was written to the wrong place
    assert not crossing.is_immutable(Fresh)


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_a_snippet_sees_frozen_shared_classes(backend: str) -> None:
    """The snippet's own write rules refuse first; the flag is what holds beyond them."""
    code = (
        "import textwrap\nclass C:\n    pass\nC.x = 1\n"
        "try:\n    textwrap.TextWrapper.width = 1\nexcept TypeError as e:\n    msg = str(e)\n"
        "return [C.x, msg, textwrap.TextWrapper().width]"
    )
    result = await sandbox.run(code, backend=backend, limits=sandbox.Limits(wall_time=10))  # type: ignore[arg-type]
    assert result.ok, result
    assert result.value[0] == 1 and result.value[2] == 70
    assert "cannot modify class 'TextWrapper'" in result.value[1]


#: `json.dumps` is the stdlib's own function (its shim hands it out as it is), `textwrap.dedent`
#: the shim's judging stand-in: both are shared by every run of the process.
GOD_WRITE = (
    "import json, textwrap\n"
    "real_setattr(json.dumps, '__kwdefaults__', {'skipkeys': False, 'ensure_ascii': True,"
    " 'check_circular': True, 'allow_nan': True, 'cls': None, 'indent': None, 'separators': None,"
    " 'default': None, 'sort_keys': True})\n"
    "real_setattr(textwrap.dedent, 'planted', 'planted')\n"
    "kept = 'kept'\n"
    "return [json.dumps({'b': 1, 'a': 2}), getattr(textwrap.dedent, 'planted', None)]"
)
GOD_LOOK = ("import json, textwrap\n"
            "return [json.dumps({'b': 1, 'a': 2}), getattr(textwrap.dedent, 'planted', None), kept]")


async def _god_mode_session_runs(backend: str, monkeypatch: pytest.MonkeyPatch, write: str, look: str,
                                 fresh_look: bool = False) -> tuple[Any, Any, Any]:
    """Two runs of one god-mode session (the real `setattr`, `object.__setattr__`, `getattr`),
    and with `fresh_look` `look` again in a new session of the same runtime: what the writing
    run returned, what the next run of the same session returned, what the new session's did."""
    limits = sandbox.Limits(wall_time=20, cpu_time=20)
    runtime: Any = backend
    if backend == "worker":
        here = Path(__file__).resolve().parent
        runtime = sandbox.WorkerRuntime(pool_size=1, _template_prelude=(
            f"import sys; sys.path.insert(0, {str(here)!r}); import god_mode_worker; god_mode_worker.install()"))
    else:
        monkeypatch.setattr(execution_module, "build_builtins", god_mode_worker.wrap(execution_module.build_builtins))
    session = sandbox.open_session(runtime)
    try:
        wrote = await session.run(write, limits=limits)
        assert wrote.ok, wrote
        pid = getattr(session, "pid", None)
        looked = await session.run(look, limits=limits)
        assert looked.ok, looked
        assert getattr(session, "pid", None) == pid and looked.reset is None  # the same worker, not a reset
        if not fresh_look:
            return wrote.value, looked.value, None
        other = sandbox.open_session(runtime)
        try:
            fresh = await other.run(look, limits=limits)
        finally:
            other.close()
        assert fresh.ok, fresh
        return wrote.value, looked.value, fresh.value
    finally:
        session.close()
        if backend == "worker":
            runtime.close()


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_a_god_mode_write_in_one_session_run_is_not_seen_by_the_next(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A session keeps its own globals across runs, never what a run wrote into the state every
    run of the process shares: the session worker puts it back before each `done`, as the
    in-process backend does after each run. God mode (the real `setattr`) stands for a break of
    the Python layers; the snippet's own write rules would refuse both writes first."""
    wrote, looked, _ = await _god_mode_session_runs(backend, monkeypatch, GOD_WRITE, GOD_LOOK)
    assert wrote == ['{"a": 2, "b": 1}', "planted"]  # the writes landed, in the writing run
    assert looked == ['{"b": 1, "a": 2}', None, "kept"]  # pristine, same session (its globals kept)


#: Writes to the C fields of shared objects: `property.__init__` again on `Fraction.numerator`
#: (read raw off the class dictionary: the snippet's own reads hand out a receiver-checked copy),
#: a C builtin's `__module__`, `staticmethod.__init__` again on `str.maketrans` (in the C type
#: `str`'s dictionary),
#: the writable `__doc__` of a namedtuple field accessor (`DecimalTuple.sign`), the cell of
#: `textwrap.dedent`'s judging stand-in that holds the real `dedent`, and the decimal contexts a
#: snippet reaches, none of them shared: the run's own (`getcontext()`, made per run, so its
#: `prec` and `traps` are new in the next run) and the `BasicContext` copy (the session's own,
#: like its module objects and globals: a new session gets a new copy). `DefaultContext`, the
#: one context the host's new contexts copy, is not exposed (`test_stdlib_decimal.py`).
GOD_WRITE_C_FIELDS = """
import decimal, fractions, textwrap
numerator = real_getattr(fractions.Fraction, '__dict__')['numerator']
real_getattr(numerator, '__init__')(lambda self: 'planted', None, None, 'planted doc')
real_setattr(decimal.DecimalTuple.sign, '__doc__', 'planted')
for cell in real_getattr(textwrap.dedent, '__closure__'):
    held = real_getattr(cell, 'cell_contents')
    if callable(held) and getattr(held, '__name__', None) == 'dedent':
        real_setattr(cell, 'cell_contents', lambda text: 'planted')
real_setattr(abs, '__module__', 'planted')
real_getattr(real_getattr(str, '__dict__')['maketrans'], '__init__')(lambda *args: 'planted')
context = decimal.getcontext()
context.prec = 3
context.traps[decimal.Inexact] = True
decimal.BasicContext.prec = 2
saw = [fractions.Fraction(3, 4).numerator, numerator.__doc__, decimal.DecimalTuple.sign.__doc__,
       textwrap.dedent('  x'), decimal.getcontext().prec, decimal.getcontext().traps[decimal.Inexact],
       decimal.BasicContext.prec, abs.__module__, repr(str.maketrans('a', 'b'))]
try:
    decimal.Decimal(1) / 3
    saw.append('no trap')
except decimal.Inexact:
    saw.append('trapped')
return saw
"""
GOD_LOOK_C_FIELDS = """
import decimal, fractions, textwrap
numerator = real_getattr(fractions.Fraction, '__dict__')['numerator']
return [fractions.Fraction(3, 4).numerator, numerator.__doc__, decimal.DecimalTuple.sign.__doc__,
        textwrap.dedent('  x'), decimal.getcontext().prec, decimal.getcontext().traps[decimal.Inexact],
        decimal.BasicContext.prec, str(decimal.Decimal(1) / 3), abs.__module__, repr(str.maketrans('a', 'b'))]
"""


@pytest.mark.anyio
@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_god_mode_writes_to_c_fields_are_not_seen_by_the_next_run(
        backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A property re-initialised, an accessor's doc, a closure cell, a C function's module, a C
    type's staticmethod and the decimal contexts, written with the real `setattr`/`getattr` in
    one session run: the writes land in that run,
    and the next run of the same session (same worker) sees the originals."""
    from fractions import Fraction

    pristine = type.__getattribute__(Fraction, "__dict__")["numerator"]
    fields = (pristine.fget, pristine.fset, pristine.fdel, pristine.__doc__)
    wrote, looked, fresh = await _god_mode_session_runs(
        backend, monkeypatch, GOD_WRITE_C_FIELDS, GOD_LOOK_C_FIELDS, fresh_look=True)
    assert wrote == ["planted", "planted doc", "planted", "planted", 3, True, 2, "planted", "'planted'",
                     "trapped"]  # all landed
    pristine_look = [3, None, "Alias for field number 0", "x", 28, False, 9, "0.3333333333333333333333333333",
                     "builtins", "{97: 98}"]
    assert looked == [*pristine_look[:6], 2, *pristine_look[7:]]  # the session's own BasicContext kept
    assert fresh == pristine_look
    # The host's own objects (this process's: the in-process backend's, and the worker's template).
    assert (pristine.fget, pristine.fset, pristine.fdel, pristine.__doc__) == fields
    assert Fraction(3, 4).numerator == 3 and textwrap.dedent("  x") == "x"
    assert abs.__module__ == "builtins" and str.maketrans("a", "b") == {97: 98}


def test_the_first_run_of_a_process_leaves_nothing_alive_in_the_shared_records() -> None:
    # The freeze, before the process's first run, built the per-run tables and preludes with
    # that run's own context; the shared records then held prelude functions whose globals a
    # run refills with its hooks, so the first run's budget (and what its last stop's traceback
    # held) stayed alive for the process. The freeze builds from a context of its own.
    root = ROOT
    probe = textwrap.dedent(f"""
        import gc, sys
        sys.path.insert(0, {str(root)!r})
        import sandbox
        from sandbox.execution import Budget, Execution
        run = Execution("import contextlib, functools\\nclass Marker:\\n    pass\\nm = Marker()\\nreturn 1",
                        [], sandbox.Limits(), budget=True)
        run.start()
        run.step()
        assert run.result().value == 1
        run.seal()
        del run
        gc.collect()
        print(sum(type(o) is Budget for o in gc.get_objects()), sum(type(o).__name__ == "Marker" for o in gc.get_objects()))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "0"], done.stdout

