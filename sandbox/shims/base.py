"""What every shim is made of: the read-only module look-alike and the helpers that fill it.

A snippet never gets a real module object: real modules reach `os` and `sys` through plain
attributes (`datetime.sys`, `json.decoder.re`...). A `ModuleShim` exposes a fixed table of
functions, classes and constants, refuses writes, and has no attribute of its own that leads
anywhere.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import BuiltinFunctionType, FunctionType, MappingProxyType, MethodType, ModuleType
from typing import Any

from .. import prelude
from ..crossing import _SCALARS, judge_crossing, plain_str
from ..guards import ReadOnly, RunGuards, make_globals
from ..prelude import is_prelude_code


class ModuleShim(ReadOnly):
    """A read-only module look-alike. Only the listed names exist on it."""

    __slots__ = ("_shim_name", "_shim_attrs")

    def __init__(self, name: str, attrs: Mapping[str, Any]) -> None:
        try:
            object.__getattribute__(self, "_shim_name")
        except AttributeError:
            pass
        else:
            raise TypeError("a module shim cannot be re-initialised")
        object.__setattr__(self, "_shim_name", name)
        object.__setattr__(self, "_shim_attrs", MappingProxyType(dict(attrs)))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._shim_attrs[name]
        except KeyError:
            raise AttributeError(
                f"module '{self._shim_name}' has no attribute '{name}' in the sandbox"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"cannot modify module '{self._shim_name}' in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot modify module '{self._shim_name}' in the sandbox")

    def __dir__(self) -> list[str]:
        return sorted(self._shim_attrs)

    def __repr__(self) -> str:
        return f"<module '{self._shim_name}' (sandbox)>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("cannot pickle 'module' object")  # CPython's own words for a module


@dataclass
class ShimContext:
    """What a per-run shim may use: the run's guards, asyncio table, wall-time limit, deadline
    (a `time.monotonic()` value), how to end the run past it (the stop recorded in the run's
    own verdict; in-process every later cooperative check raises too, so a caught stop does not
    let the run go on; None outside a run) and log."""

    guards: RunGuards
    asyncio_attrs: Mapping[str, Any]
    wall_time: float = 30.0
    deadline: float = math.inf
    expire: Callable[[], BaseException] | None = None
    print_fn: Callable[..., None] = print
    #: "unbound" (never an execution's: tests, tools), "run" (`ShimSet.begin_run`), or "over"
    #: (`ShimSet.end_run`, between a session's runs): per-run shims that act on the host
    #: thread refuse unless "unbound" or in a step.
    phase: str = "unbound"
    state: dict[str, Any] = field(default_factory=dict)
    #: The run's builtins and compiler hooks, refilled in place for each run (a session's
    #: preludes outlive a run), and the namespaces of the preludes this ShimSet has run.
    builtins: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, Any] = field(default_factory=dict)
    preludes: list[dict[str, Any]] = field(default_factory=list)

    def stepping(self) -> bool:
        """A step of this run is running, on this thread (`state["in_run"]` holds the stepping
        thread's id): snippet code a host thread's garbage collection runs during a step (a freed
        generator's `finally`) is not in the run, and must not get that thread's decimal context
        or block it in `time.sleep`."""
        return self.state.get("in_run") == threading.get_ident()

    def run_prelude(self, name: str, module: str, kernels: Mapping[str, Any]) -> dict[str, Any]:
        """Run prelude `name` as module `module` of this run: globals built like the snippet's
        (the run's builtins, guards and hooks) plus `kernels`; returns its namespace."""
        module_globals = make_globals(self.builtins, self.guards, **self.hooks)
        module_globals["__name__"] = module
        self.preludes.append(module_globals)
        return prelude.run(name, module_globals, {
            key: _returns_judged(value, f"{module}.{key}") if _judgeable(value) else value
            for key, value in kernels.items()
        })


def pick(module: Any, names: Iterable[str]) -> dict[str, Any]:
    """The listed names of a module (those it has on this Python)."""
    return {name: getattr(module, name) for name in names if hasattr(module, name)}


def public(module: Any, exclude: Iterable[str] = ()) -> dict[str, Any]:
    """A module's public API (its `__all__` when it has one), never another module object:
    `statistics.sys` is a plain attribute."""
    skip = set(exclude)
    names = getattr(module, "__all__", None) or dir(module)
    return {
        name: getattr(module, name)
        for name in names
        if not name.startswith("_")
        and name not in skip
        and not isinstance(getattr(module, name), ModuleType)
    }


#: What the shims' own wrappers copy from the function they stand for: never `__wrapped__` (it
#: would hand the snippet the unchecked original), `__dict__` or `__annotations__` (host dicts).
_SHIM_WRAPPER_NAMES = ("__module__", "__name__", "__qualname__", "__doc__")


def named_after(fn: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`functools.wraps` for a shim's wrapper, without `__wrapped__`: the wrapper shows the
    original's name and docs, and nothing leads from it to the original."""

    def name(wrapper: Callable[..., Any]) -> Callable[..., Any]:
        for attr in _SHIM_WRAPPER_NAMES:
            setattr(wrapper, attr, getattr(fn, attr))
        return wrapper

    return name


#: Shims whose functions are C code, or thin Python front-ends to C code, over plain data: they
#: build their results from what they are given, never read a snippet object's attributes, and
#: pass callbacks only the snippet's own items or fresh plain values (`key=`, `object_hook=`,
#: `re.sub`'s `Match`; BOUNDARY.md's P/O rows). Their functions cross unwrapped: judging them
#: would tax the hot calls (`math.sqrt` in a loop; `re.findall`'s 1M-item list in W6) for
#: nothing. Every other shim function returns through the judge.
PLAIN_RESULT_SHIMS = frozenset({
    "math", "bisect", "heapq", "itertools", "binascii", "zlib", "unicodedata", "hashlib", "base64",
    "struct", "re", "fnmatch", "json", "html", "shlex", "secrets", "operator", "random", "time",
})

#: Keywords through which host functions take snippet callbacks (`sorted`-style keys, json's
#: hooks, dataclasses' factories, difflib's junk tests): what host code passes them is judged.
#: Only keywords of callbacks that are called, never stored: `field(default=f)` keeps `f`.
CALLBACK_KEYWORDS = frozenset({
    "key", "object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant",
    "dict_factory", "tuple_factory", "isjunk", "linejunk", "charjunk",
})
#: Callbacks passed by position: (shim, function) -> the index of the callback.
CALLBACK_POSITIONS: Mapping[tuple[str, str], int] = MappingProxyType({("functools", "reduce"): 0})

_JUDGED_KINDS = (FunctionType, BuiltinFunctionType, MethodType)


def judged_callback(fn: Callable[..., Any], what: str) -> Callable[..., Any]:
    """`fn`, a callback a snippet passes to host code, behind the judge: every argument the host
    passes it crosses like a return value (`judge_crossing`)."""
    scalars = _SCALARS

    def callback(*args: Any, **kwargs: Any) -> Any:
        if not scalars.issuperset(map(type, args)):
            args = tuple([judge_crossing(a, what, True) for a in args])
        if kwargs and not scalars.issuperset(map(type, kwargs.values())):
            kwargs = {k: judge_crossing(v, what, True) for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return callback


def judged(fn: Callable[..., Any], what: str) -> Callable[..., Any]:
    """A shim function behind the judge: what it returns crosses by `judge_crossing`, and the
    callbacks it is given (`CALLBACK_KEYWORDS`, `CALLBACK_POSITIONS`) get judged arguments.
    Named after `fn` (`__name__`, `__qualname__`, `__doc__`, `__module__`), with nothing that
    leads to it."""
    module, _, name = what.rpartition(".")
    position = CALLBACK_POSITIONS.get((module, name))
    keywords = CALLBACK_KEYWORDS

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not keywords.isdisjoint(kwargs):
            kwargs = {k: judged_callback(v, what) if k in keywords and callable(v) else v for k, v in kwargs.items()}
        if position is not None and len(args) > position and callable(args[position]):
            args = (*args[:position], judged_callback(args[position], what), *args[position + 1:])
        value = fn(*args, **kwargs)
        return value if type(value) in _SCALARS else judge_crossing(value, what)

    return named_after(fn)(call)


def _returns_judged(kernel: Callable[..., Any], what: str) -> Callable[..., Any]:
    """A kernel as its prelude sees it: what it returns crosses by `judge_crossing`, like a shim
    function's return (a prelude runs with the snippet's rights, so it is a crossing too)."""
    scalars = _SCALARS

    def call(*args: Any, **kwargs: Any) -> Any:
        value = kernel(*args, **kwargs)
        return value if type(value) in scalars else judge_crossing(value, what)

    return named_after(kernel)(call)


def judged_table(module: str, attrs: Mapping[str, Any]) -> dict[str, Any]:
    """A shim's table with its functions behind the judge (`judged`), unless the shim is one of
    `PLAIN_RESULT_SHIMS`. Classes, constants, the preludes' functions (snippet-level code, under
    the policy already) and functions that carry attributes of their own (`typing.NamedTuple`
    and `TypedDict` are bases through their `__mro_entries__`) are left as they are."""
    if module in PLAIN_RESULT_SHIMS:
        return dict(attrs)
    return {name: judged(value, f"{module}.{name}") if _judgeable(value) else value for name, value in attrs.items()}


def _judgeable(value: Any) -> bool:
    if type(value) is FunctionType:
        return not is_prelude_code(value.__code__) and not value.__dict__
    return type(value) in _JUDGED_KINDS


def plain_text(value: Any, what: str) -> str | bytes:
    """An argument a process-wide stdlib cache is keyed on (a compiled pattern's source), as a
    plain `str`/`bytes` copy; anything else is a `TypeError` before the stdlib sees it:
    `plain_str` passes other objects through, and one stored as a cache key would have its own
    `__eq__` run by the host's later lookups."""
    if isinstance(value, (str, bytes, bytearray)):
        return plain_str(value)  # type: ignore[no-any-return]
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")
