"""Curated stand-ins for the stdlib modules a snippet may import, one module per shim.

A snippet never gets a real module object (see `base.ModuleShim`). Each shim module here names
the stdlib module it stands for (`NAME`), holds its allowlist, and says in its docstring why each
member is in and what was left out. A shim is either static (`attrs()`, computed once per process
and shared, since it holds only functions, classes and constants) or per-run (`PER_RUN = True`,
`build(ctx)`), when it holds per-run state (`random`) or the run's guards (`dataclasses`).

Left out everywhere: anything that touches files, processes, the network, the environment or
interpreter internals.
"""

from __future__ import annotations

import functools as _functools
import importlib
import math as _math
import time as _time
from collections.abc import Callable, Mapping
from types import BuiltinFunctionType, ModuleType
from typing import Any

from .. import crossing, guards
from ..control import RunOverError
from ..guards import RunGuards, build_builtins
from ..raised import mark_raised
from . import (
    abc,
    asyncio,
    base64,
    binascii,
    bisect,
    calendar,
    collections,
    contextlib,
    copy,
    csv,
    dataclasses,
    datetime,
    decimal,
    difflib,
    enum,
    fnmatch,
    fractions,
    functools,
    graphlib,
    hashlib,
    heapq,
    html,
    io,
    itertools,
    json,
    math,
    numbers,
    operator,
    pathlib,
    pprint,
    random,
    re,
    secrets,
    shlex,
    statistics,
    string,
    struct,
    textwrap,
    time,
    tomllib,
    typing,
    unicodedata,
    urllib_parse,
    uuid,
    zlib,
    zoneinfo,
)
from .base import ModuleShim, ShimContext, judged_table
from .enum import _EnumType  # noqa: F401 - checked by the security tests
from .functools import cached_property

_SHIM_MODULES: tuple[ModuleType, ...] = (
    abc, asyncio, base64, binascii, bisect, calendar, collections, contextlib, copy, csv,
    dataclasses, datetime, decimal, difflib, enum, fnmatch, fractions, functools, graphlib, hashlib, heapq, html, io,
    itertools, json, math, numbers, operator, pathlib, pprint, random, re, secrets, shlex,
    statistics, string, struct, textwrap, time, tomllib, typing, unicodedata, urllib_parse, uuid,
    zlib, zoneinfo,
)
_BY_NAME: dict[str, ModuleType] = {m.NAME: m for m in _SHIM_MODULES}

#: Packages whose allowed submodules are shims (`import urllib.parse`): package -> submodules.
_PACKAGES: dict[str, tuple[str, ...]] = {"urllib": ("parse",)}

ALLOWED_MODULES: tuple[str, ...] = tuple(sorted([*_BY_NAME, *_PACKAGES]))


@_functools.cache
def _static_attrs() -> dict[str, dict[str, Any]]:
    """Attribute tables of the shims that hold no per-run state, computed once per process."""
    return {name: m.attrs() for name, m in _BY_NAME.items() if not getattr(m, "PER_RUN", False)}


@_functools.cache
def _judged_static_attrs() -> dict[str, dict[str, Any]]:
    """The static tables as the snippet gets them: functions behind the judge (`base.judged`)."""
    return {name: judged_table(name, table) for name, table in _static_attrs().items()}


#: The sandbox modules whose classes a snippet reaches (the judge's stand-ins, asyncio, the
#: scheduler's requests, the namespace, the stop exception, the shims): frozen with the shims.
#: Host-side modules (sessions, workers, the jail, this package's `ShimSet`) are not: a snippet
#: never reaches them. The shim modules' own classes are frozen with their shim's table.
SNIPPET_SIDE_MODULES = (
    "sandbox.crossing", "sandbox.guards", "sandbox.aio", "sandbox.scheduler", "sandbox.namespace",
    "sandbox.control", "sandbox.raised", "sandbox.output", "sandbox.jsonvalue", "sandbox.shims.base",
)


def _freeze_shared(ctx: ShimContext) -> None:
    """Once per process, before the first run: make what every run shares immutable (see
    `sandbox.crossing`). The per-run shims are built once here, with the first run's context,
    only to find the shared objects their tables hold; that build is dropped."""
    if crossing.SHARED.ready:
        return
    guards.freeze_tables()
    shared = crossing.SHARED
    shared.freeze((), modules=SNIPPET_SIDE_MODULES)
    # The run's C builtins (`abs`, `len`...) and builtin types are the process's own: a C
    # function's `__module__` is writable, and so are the `staticmethod` objects of a C type
    # (`str.maketrans`), so they are recorded with the core (the builtins mapping is per run).
    # Every builtin class but the run's own `type` is frozen: `ExceptionGroup` is a heap type,
    # and a review wrote onto it through a generic alias's call.
    shared.freeze([v for v in ctx.builtins.values() if type(v) is BuiltinFunctionType or (
        isinstance(v, type) and crossing.SafeType not in type.__getattribute__(v, "__mro__"))])
    static = _static_attrs()
    for module in _SHIM_MODULES:
        table = module.build(ctx) if getattr(module, "PER_RUN", False) else static[module.NAME]
        shared.freeze((*table.values(), *getattr(module, "METACLASSES", ())), modules=(module.__name__,),
                      group=module.NAME)
        if not getattr(module, "PER_RUN", False):
            # The judging wrappers are shared too (their `__dict__`, `__doc__`... are recorded).
            shared.freeze(_judged_static_attrs()[module.NAME].values(), group=module.NAME)
    crossing.register_host_methods(shared.reached)
    shared.ready = True


class ShimSet:
    """The shims of one run (or session), built on first import. Every run gets its own
    `ModuleShim` objects: static shims over the tables computed once per process (functions,
    classes and constants, all frozen or restored by `sandbox.crossing`), per-run shims over
    tables built for this run alone. Nothing one run does to a module object reaches another."""

    def __init__(self, guards: RunGuards, asyncio_attrs: Mapping[str, Any], *, wall_time: float = 30.0,
                 deadline: float | None = None, expire: Callable[[], BaseException] | None = None,
                 print_fn: Callable[..., None] = print, _freezing: bool = False) -> None:
        if deadline is None:
            deadline = _time.monotonic() + wall_time
        self._ctx = ShimContext(guards, asyncio_attrs, wall_time, deadline, expire, print_fn)
        self._shims: dict[str, ModuleShim] = {}
        if not crossing.SHARED.ready and not _freezing:
            # The freeze builds the per-run tables, preludes too, from a context of its own: the
            # shared records then hold that build, never this run's hooks (a prelude's `_tick_`
            # bound to this run's budget kept the first run's objects alive for the process).
            scratch = ShimSet(type(guards)(), asyncio_attrs, _freezing=True)
            scratch._bind_default_builtins()
            _freeze_shared(scratch._ctx)

    @property
    def context(self) -> ShimContext:
        """What the per-run shims share with the execution (`state["in_run"]` while it steps)."""
        return self._ctx

    def begin_run(self, wall_time: float, print_fn: Callable[..., None], *,
                  deadline: float | None = None, expire: Callable[[], BaseException] | None = None) -> None:
        """Point the per-run shims at the run about to start (a session's shims outlive a run):
        its wall-time limit and deadline, how it expires, and its log."""
        self._ctx.wall_time = wall_time
        self._ctx.deadline = _time.monotonic() + wall_time if deadline is None else deadline
        self._ctx.expire = expire
        self._ctx.print_fn = print_fn
        self._ctx.phase = "run"

    def bind_run(self, builtins: Mapping[str, Any], hooks: Mapping[str, Any]) -> None:
        """The run's builtins and compiler hooks (`_tick_`, `_raise_`, ...), for the preludes:
        refilled in place, so the preludes a session ran in an earlier run follow this one."""
        ctx = self._ctx
        if not ctx.preludes:
            # Nothing holds the previous run's: no copy (a run that imports no prelude pays nothing).
            ctx.builtins = builtins if type(builtins) is dict else dict(builtins)
            ctx.hooks = dict(hooks)
            return
        ctx.builtins.clear()
        ctx.builtins.update(builtins)
        ctx.hooks.clear()
        ctx.hooks.update(hooks)
        for module_globals in ctx.preludes:
            module_globals.update(hooks)

    def end_run(self) -> None:
        """A session's run is over: the shims let go of it (its log, its expiry, its builtins and
        hooks, also in the preludes' globals) until `begin_run` and `bind_run` point them at
        the next (`SessionState.leave`). Code that still calls them meanwhile stops."""
        ctx = self._ctx
        ctx.phase = "over"  # not "unbound", which is what the fields below read as alone
        ctx.expire = None
        ctx.deadline = -_math.inf
        ctx.print_fn = _no_run
        for module_globals in ctx.preludes:
            for name in ctx.hooks:
                module_globals.pop(name, None)
        ctx.builtins.clear()
        ctx.hooks.clear()

    def release(self) -> None:
        """The run, or the session, is over for good: `end_run`, and what the guards' caches
        keep of its classes goes (`Execution.release`, `SessionState.release`)."""
        self.end_run()
        self._ctx.guards.release()

    def restore_shared(self) -> int:
        """Put back whatever the run changed in the shared state it could reach (the core, and
        what the modules it imported reach): see `crossing.SharedState.restore`."""
        return crossing.SHARED.restore(self.shared_groups())

    def shared_groups(self) -> tuple[str, ...]:
        """The put-back groups of the shared state this set's runs could reach, as plain names:
        what puts the state back after the run's objects are gone holds none of them."""
        return ("core", *self._shims)

    def _bind_default_builtins(self) -> None:
        """The builtins a snippet of this ShimSet would get, until an execution binds its own."""
        ctx = self._ctx
        self.bind_run(build_builtins(ctx.guards, print_fn=ctx.print_fn, import_fn=make_import(self)),
                      {"_raise_": mark_raised})

    def get(self, name: str) -> ModuleShim | None:
        shim = self._shims.get(name)
        if shim is not None:
            return shim
        if name in _PACKAGES:
            # A package shim (`urllib`) holds only its allowed submodules.
            subs = {sub: self.get(f"{name}.{sub}") for sub in _PACKAGES[name]}
            shim = self._shims[name] = ModuleShim(name, subs)
            return shim
        module = _BY_NAME.get(name)
        if module is None:
            return None
        if getattr(module, "PER_RUN", False) and not self._ctx.builtins:
            if self._ctx.phase != "unbound":
                raise RunOverError()  # between a session's runs: no run to build it for
            self._bind_default_builtins()  # used outside an execution (tests, tools)
        if getattr(module, "PER_RUN", False):
            attrs = judged_table(name, module.build(self._ctx))
        else:
            attrs = _judged_static_attrs()[name]
        shim = self._shims[name] = ModuleShim(name, attrs)
        return shim


def _no_run(*args: Any, **kwargs: Any) -> None:
    """The shims' log between a session's runs (`ShimSet.end_run`): no run to write into."""
    raise RunOverError()


def _import_error(name: str) -> ImportError:
    return ModuleNotFoundError(
        f"module '{name}' is not available in the sandbox; allowed modules: "
        + ", ".join(ALLOWED_MODULES),
        name=name,
    )


#: Host modules that stdlib C code imports lazily through the caller's `__import__`.
_INTERNAL_IMPORTS = frozenset({"_strptime"})


def make_import(shims: ShimSet) -> Callable[..., Any]:
    """The snippet's `__import__`: allowlisted names resolve to shims, anything else fails."""

    def import_(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0:
            raise ImportError("relative imports are not available in the sandbox")
        if not isinstance(name, str):
            raise ImportError("module name must be a string")
        if name in _INTERNAL_IMPORTS and level == 0 and not fromlist:
            # Imported by C code the snippet called (time.strptime): the module goes to that
            # caller, never to the snippet, whose own `import _x` the policy refuses.
            return importlib.import_module(name)
        shim = shims.get(name) if name in _BY_NAME or name in _PACKAGES else None
        if shim is None:
            raise _import_error(name)
        top, _, _ = name.partition(".")
        if top != name and not fromlist:
            # `import urllib.parse` binds the package, as Python does.
            shim = shims.get(top)
            assert shim is not None
        for item in fromlist or ():
            if not isinstance(item, str) or item not in shim._shim_attrs:
                raise ImportError(f"cannot import name '{item}' from '{name}' in the sandbox")
        return shim

    return import_


# The sandbox's replacement shows the package path, as a module shim's members would.
cached_property.__module__ = __name__

__all__ = [
    "ALLOWED_MODULES",
    "ModuleShim",
    "ShimSet",
    "cached_property",
    "make_import",
]
