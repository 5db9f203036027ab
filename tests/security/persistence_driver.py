"""Driver for the god-mode persistence test (`test_persistence.py`), run in its own interpreter.

It fingerprints the graph every in-process run shares, runs one snippet that holds the *real*
`setattr`, `object.__setattr__` and `type.__setattr__` (test-only builtins: a Python-layer break
assumed) and writes a planted object to every attribute of everything it can reach, then runs a
second snippet and fingerprints the shared graph again. It prints one JSON line: the differences
(path -> before/after) and what the runs returned. In its own process, because a write that
does persist would corrupt whatever runs next.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import sys
import types
from collections import deque
from typing import Any

import sandbox
import sandbox.execution as execution
from sandbox import crossing, shims

MAX_OBJECTS = 200_000

#: Exact types with no state of their own: reached, never expanded.
_LEAVES = (
    int, bool, float, complex, str, bytes, type(None), range, slice, type(Ellipsis),
    type(NotImplemented), types.BuiltinFunctionType, types.MethodDescriptorType,
    types.WrapperDescriptorType, types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.MethodWrapperType, types.CodeType,
)
_FUNCTION_STATE = ("__code__", "__defaults__", "__kwdefaults__", "__dict__", "__annotations__",
                   "__name__", "__qualname__", "__doc__", "__module__")


def shared_roots() -> list[tuple[str, Any]]:
    """What every run starts from and shares: the shims' tables (through a run's own import),
    the run's builtins' classes and values."""
    ex = execution.Execution("return 1", ["f"], sandbox.Limits())
    b = ex.globals["__builtins__"]
    roots: list[tuple[str, Any]] = [(f"builtins.{k}", v) for k, v in b.items()
                                    if not k.startswith("__") or k == "__build_class__"]
    importer = b["__import__"]
    for mod in shims.ALLOWED_MODULES:
        shim = importer(mod, ex.globals, None, (), 0)
        roots.append((f"type({mod})", type(shim)))
        for name, value in object.__getattribute__(shim, "_shim_attrs").items():
            roots.append((f"{mod}.{name}", value))
    return roots


def _edges(obj: Any) -> list[tuple[str, Any]]:
    """Where the state of `obj` lives, read without running any of its code."""
    out: list[tuple[str, Any]] = [("|type", type(obj))]
    if type(obj) is types.BuiltinFunctionType:
        return out + [(".__module__", obj.__module__)]  # writable (and put back)
    if isinstance(obj, types.ModuleType) or type(obj) in _LEAVES:
        return out
    if isinstance(obj, type):
        out += [(f".{k}", v) for k, v in type.__getattribute__(obj, "__dict__").items()]
        out += [(f"|base{i}", c) for i, c in enumerate(type.__getattribute__(obj, "__mro__"))]
        return out
    if type(obj) is types.FunctionType:
        out += [(f".{n}", getattr(obj, n)) for n in _FUNCTION_STATE if n not in ("__code__",)]
        out += [(".__code__", obj.__code__)]
        out += [(f".__dict__[{k!r}]", v) for k, v in obj.__dict__.items()]
        out += [(f".__defaults__[{i}]", v) for i, v in enumerate(obj.__defaults__ or ())]
        out += [(f".__kwdefaults__[{k!r}]", v) for k, v in (obj.__kwdefaults__ or {}).items()]
        out += [(f".__closure__[{i}]", cell) for i, cell in enumerate(obj.__closure__ or ())]
        return out
    if type(obj) is types.CellType:
        # As the freeze walks them: a cell's function or class is followed, the rest (a cache,
        # the context of the run that built a per-run shim) is the function's working state.
        try:
            held = obj.cell_contents
        except ValueError:
            return out + [(".cell_contents", "<empty>")]
        return out + [(".cell_contents", held if type(held) is types.FunctionType or isinstance(held, type)
                       else f"<{type(held).__name__} at {id(held):x}>")]
    if type(obj) in (dict, types.MappingProxyType):
        return out + [(f"[{k!r}]", v) for k, v in list(obj.items()) if type(k) in _LEAVES]
    if type(obj) in (list, tuple, set, frozenset, deque):
        return out + [(f"[{i}]", v) for i, v in enumerate(list(obj))]
    if isinstance(obj, (staticmethod, classmethod)):
        out.append((".__func__", obj.__func__))
    if isinstance(obj, property):
        out += [(f".{n}", getattr(obj, n)) for n in ("fget", "fset", "fdel")]
    if isinstance(obj, types.MethodType):
        out += [(".__func__", obj.__func__), (".__self__", obj.__self__)]
    try:
        found = object.__getattribute__(obj, "__dict__")
    except (AttributeError, TypeError):
        found = None
    if type(found) is dict:
        out += [(".__dict__", found)] + [(f".{k}", v) for k, v in found.items() if type(k) is str]
    for klass in type.__getattribute__(type(obj), "__mro__"):
        if not type.__dict__["__flags__"].__get__(klass) & (1 << 9):
            continue
        for name, member in type.__getattribute__(klass, "__dict__").items():
            if type(member) is types.MemberDescriptorType:
                try:
                    out.append((f".{name}", member.__get__(obj, type(obj))))
                except AttributeError:
                    out.append((f".{name}", "<unset>"))
    return out


def fingerprint(roots: list[tuple[str, Any]], shared: set[int] | None = None) -> tuple[dict[str, str], list[Any]]:
    """path -> what is there (the identity of a shared object, or the type of one made per
    run: not in `shared`), for every object reachable from `roots` through `_edges`; and the
    objects, kept alive."""
    seen: dict[int, str] = {}
    keep: list[Any] = []
    prints: dict[str, str] = {}
    queue: deque[tuple[str, Any]] = deque(roots)
    while queue and len(seen) < MAX_OBJECTS:
        path, obj = queue.popleft()
        flags = type.__dict__["__flags__"].__get__(obj) if isinstance(obj, type) else 0
        where = f"{id(obj):x}" if shared is None or id(obj) in shared else "per-run"
        prints[path] = f"{type(obj).__name__}@{where}/{flags >> 8 & 1}"
        if id(obj) in seen:
            continue
        seen[id(obj)] = path
        keep.append(obj)
        edges = _edges(obj)
        if where == "per-run" and type(obj) is dict:
            # A run's own dict keyed by ids (`RunGuards.owned`: the classes it made, by
            # identity) has other keys every run: its int-keyed entries go by position.
            edges = [(f"[#{i}]", child) if step[1:-1].isdigit() else (step, child)
                     for i, (step, child) in enumerate(edges)]
        for step, child in edges:
            queue.append((path + step, child))
    return prints, keep


GOD_SNIPPET = """
import asyncio, base64, binascii, bisect, calendar, collections, copy, csv, dataclasses, datetime
import decimal, difflib, enum, fnmatch, fractions, functools, graphlib, hashlib, heapq, html, io
import itertools, json, math, numbers, operator, pathlib, pprint, random, re, secrets, shlex
import statistics, string, struct, textwrap, time, tomllib, typing, unicodedata, urllib.parse
import uuid, zlib, zoneinfo
roots = [asyncio, base64, binascii, bisect, calendar, collections, copy, csv, dataclasses,
         datetime, decimal, difflib, enum, fnmatch, fractions, functools, graphlib, hashlib,
         heapq, html, io, itertools, json, math, numbers, operator, pathlib, pprint, random, re,
         secrets, shlex, statistics, string, struct, textwrap, time, tomllib, typing,
         unicodedata, urllib, urllib.parse, uuid, zlib, zoneinfo, print, getattr, setattr, type,
         super, tools, ToolCallError, re.compile('a'), textwrap.TextWrapper(), decimal.Context(),
         datetime.datetime.now(), pathlib.PurePath('a'), asyncio.Lock(), io.BytesIO(b'x')]
LEAF = ('method-wrapper', 'builtin_function_or_method', 'wrapper_descriptor', 'method_descriptor',
        'classmethod_descriptor', 'getset_descriptor', 'member_descriptor', 'int', 'str', 'float',
        'bool', 'bytes', 'NoneType', 'complex', 'code', 'builtin_method')
seen = set()
per_type = {}
order = []
queue = list(roots)
head = 0
while head < len(queue) and len(order) < LIMIT:
    obj = queue[head]
    head += 1
    key = id(obj)
    if key in seen:
        continue
    seen.add(key)
    order.append(obj)
    kind = type(obj)
    queue.append(kind)
    name_of = kind.__name__
    if name_of in LEAF:
        continue
    if not isinstance(obj, type) and name_of != 'function':
        per_type[name_of] = per_type.get(name_of, 0) + 1
        if per_type[name_of] > 20:
            continue
    if isinstance(obj, (list, tuple, set, frozenset)):
        queue.extend(list(obj)[:64])
    elif isinstance(obj, dict):
        queue.extend(list(obj.values())[:64])
    for name in real_dir(obj):
        try:
            queue.append(getattr(obj, name))
        except Exception:
            pass
class Planted:
    pass
planted = Planted()
writes = 0
for obj in order:
    for name in real_dir(obj) + ['__god__']:
        for write in (real_setattr, real_object_setattr, real_type_setattr):
            try:
                write(obj, name, planted)
                writes += 1
            except Exception:
                pass
    try:
        real_object_setattr(obj, '__class__', Planted)
        writes += 1
    except Exception:
        pass
return [len(order), writes]
"""

AFTER_SNIPPET = """
import json, re, textwrap, collections
return [1 + 1, json.dumps({'a': [1]}), re.sub('a', 'b', 'aa'), textwrap.dedent('  x'),
        collections.Counter('aab').most_common(1)[0][0], repr(print)]
"""


def _god_builtins(build: Any) -> Any:
    def god(*args: Any, extra: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        powers = {"real_setattr": builtins.setattr, "real_object_setattr": object.__setattr__,
                  "real_type_setattr": type.__setattr__, "real_dir": lambda x: list(dir(x)),
                  "LIMIT": LIMIT}
        return build(*args, extra={**(extra or {}), **powers}, **kwargs)

    return god


LIMIT = 20_000


async def main() -> dict[str, Any]:
    limits = sandbox.Limits(wall_time=600, cpu_time=600, max_output=1 << 20)
    warm = await sandbox.run(AFTER_SNIPPET, backend="inprocess", limits=limits)
    # A run that imports what the god-mode run imports: the put-back after the god-mode run then
    # answers "what changed?" with the cheap probe this run left (`crossing._Probe`), not the
    # first, slow put-back of a new set of modules.
    imports = GOD_SNIPPET.split("roots =")[0]
    same_imports = await sandbox.run(imports + "return 1", backend="inprocess", limits=limits)
    assert same_imports.ok, same_imports
    # What two runs both reach is shared; the rest (module shims, per-run shims' closures, the
    # run's builtins) is made per run and compared by type only. A run between the two: what
    # every run's clean-up lets go of is made again by the next (a per-run prelude's compiled
    # `re` pattern, once `re`'s cache is emptied), so it is no shared object a write could reach
    # a later run through.
    first, keep_first = fingerprint(shared_roots())
    between = await sandbox.run(imports + "return 1", backend="inprocess", limits=limits)
    assert between.ok, between
    second, keep_second = fingerprint(shared_roots())
    shared = {id(o) for o in keep_first} & {id(o) for o in keep_second}
    before, keep_before = fingerprint(shared_roots(), shared)
    probes = dict(crossing.SHARED._unions)
    build = execution.build_builtins
    execution.build_builtins = _god_builtins(build)
    try:
        god = await sandbox.run(GOD_SNIPPET, backend="inprocess", limits=limits)
    finally:
        execution.build_builtins = build
    # The god-mode run's put-back went through a probe made before it (no new union of groups).
    probe_reused = crossing.SHARED._unions.keys() == probes.keys() and all(
        crossing.SHARED._unions[k] is v for k, v in probes.items())
    after_run = await sandbox.run(AFTER_SNIPPET, backend="inprocess", limits=limits)
    after, keep_after = fingerprint(shared_roots(), shared)
    changed = {p: [before[p], after.get(p)] for p in before if after.get(p) != before[p]}
    added = sorted(p for p in after if p not in before)
    return {
        "objects": len(keep_before),
        "warm": warm.value,
        "god": god.value if god.ok else repr(god.error),
        "after": after_run.value if after_run.ok else repr(after_run.error),
        "changed": dict(sorted(changed.items())[:200]),
        "changed_count": len(changed),
        "added": added[:200],
        "added_count": len(added),
        "frozen": len(crossing.SHARED.frozen),
        "probe_reused": probe_reused,
    }


if __name__ == "__main__":
    if len(sys.argv) > 1:
        LIMIT = int(sys.argv[1])
    print(json.dumps(asyncio.run(main())))
