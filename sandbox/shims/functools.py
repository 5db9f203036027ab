"""`functools`: `reduce`, `partial`, the caches, `cmp_to_key`, `partialmethod`, a checked
`cached_property`, `total_ordering` for the snippet's own classes, and `wraps`/`update_wrapper`,
`lru_cache`/`cache` as a prelude (`sandbox/prelude/functools.rpy`): they read and write with the
snippet's own rights, and the caches name their C wrapper through a kernel.

`cached_property` writes its value straight into an instance's `__dict__` under its name, so
the sandbox's version checks that name when it is used (and reads it once: the property's own
function could rename it mid-call). `total_ordering` rewrites the class it gets, so it applies
to the snippet's own classes only.
"""

from __future__ import annotations

import dataclasses
import functools
import keyword
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any

from ..crossing import judging_method, rehome_forwarders
from ..guards import (
    CHECKED_REPLACEMENTS,
    HOST_STATE_CLASH,
    RunGuards,
    attribute_problem,
    plain_name,
)
from ..kernels import RunKernels
from ..policy import is_dunder
from .base import ShimContext, named_after, pick

NAME = "functools"
PER_RUN = True

_MISSING_VALUE = object()


class cached_property(functools.cached_property):  # noqa: N801 - the stdlib's name
    """`functools.cached_property` whose attribute name is checked when it is used."""

    def __set_name__(self, owner: Any, name: str) -> None:
        _check_cache_name(name)
        super().__set_name__(owner, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        name = self.attrname
        if name is None:
            raise TypeError("cannot use cached_property without assigning it in a class body")
        _check_cache_name(name)
        name = str.__str__(name)
        if not any(type.__getattribute__(klass, "__dict__").get(name) is self
                   for klass in type.__getattribute__(type(instance), "__mro__")):
            # It writes into the instance's dictionary: only an instance of a class holding it
            # (a forwarder once bound it to a shared `typing` alias).
            raise TypeError(f"cached_property {name!r} does not belong to a '{type(instance).__name__}' object")
        cache = object.__getattribute__(instance, "__dict__")
        if type(cache) is not dict:
            raise TypeError("cached_property needs an instance with a plain __dict__")
        value = dict.get(cache, name, _MISSING_VALUE)
        if value is _MISSING_VALUE:
            value = self.func(instance)
            dict.__setitem__(cache, name, value)
        return value


CHECKED_REPLACEMENTS.add(cached_property)


def _check_cache_name(name: Any) -> None:
    if name is None:
        return
    problem = attribute_problem(plain_name(name), write=True) if isinstance(name, str) else "bad name"
    if problem or type(name) is not str:
        raise TypeError(f"cached_property name {name!r} is not allowed in the sandbox")


def refuse_field_subclasses(cls: Any) -> None:
    """`@dataclass` pastes every field name into source it executes, so each must be a plain
    identifier: only the real `Field` class may appear, and every name it will use (the class's
    own annotations, which a `TypedDict` base fills from any string it was given, and the fields
    of every dataclass base) must be a plain `str` that is an identifier and not a keyword."""
    for value in type.__getattribute__(cls, "__dict__").values():
        if isinstance(value, dataclasses.Field) and type(value) is not dataclasses.Field:
            raise TypeError("dataclass fields must be made with dataclasses.field()")
    for klass in type.__getattribute__(cls, "__mro__"):
        own = type.__getattribute__(klass, "__dict__")
        names = list(own.get("__annotations__", None) or ())
        fields = own.get("__dataclass_fields__", None) or {}
        for key, value in dict(fields).items():
            # `@dataclass` reads a base's fields natively from this (writable) dict: a snippet
            # object there would answer `.name` and `_field_type` with source to paste.
            if type(value) is not dataclasses.Field or type(key) is not str or value.name != key:
                raise TypeError("dataclass fields must be made with dataclasses.field()")
        names += list(fields)
        names += [f.name for f in fields.values() if isinstance(f, dataclasses.Field)]
        for name in names:
            if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name):
                raise TypeError(f"dataclass field names must be identifiers, got {str(name)[:60]!r}")
            if is_dunder(name):
                # The generated methods read and write each field natively (`self.__class__ = v`).
                raise TypeError(f"dataclass field names cannot be dunders in the sandbox, got {name!r}")


#: What `@dataclass` reads the field names it pastes into source from: the class's own
#: annotations, and every class's fields.
_FIELD_INPUTS = ("__annotations__", "__dataclass_fields__")
#: The module `@dataclass` sees for the class while it runs: it executes the generated methods
#: in `sys.modules[cls.__module__].__dict__`, and a snippet names any module there (a review's
#: `C.__module__ = "itertools"` put `__builtins__` into the host's `itertools` for good). This
#: one is the sandbox's own (`exec` adds `__builtins__`). `@dataclass` also looks a string
#: annotation's name up in it (`'ClassVar[int]'`, `'InitVar[int]'`), so it holds those two;
#: the module-qualified forms (`'typing.ClassVar[int]'`) are fields, as they would be in CPython
#: without the module imported.
_SNIPPET_MODULE = "sandbox.shims._dataclass_namespace"
_snippet_module = types.ModuleType(_SNIPPET_MODULE)
_snippet_module.ClassVar = typing.ClassVar  # type: ignore[attr-defined]
_snippet_module.InitVar = dataclasses.InitVar  # type: ignore[attr-defined]
sys.modules.setdefault(_SNIPPET_MODULE, _snippet_module)


def _read_only_field_inputs(cls: type, guards: RunGuards) -> list[tuple[type, str, Any, Any]]:
    """Put read-only copies of what `@dataclass` takes its field names from in place, for the
    length of the call, and check those (`refuse_field_subclasses`): snippet code runs inside
    the call (a default's `__get__`, which the decorator calls for every field), and a review
    had it swap a key of the class's live annotations after the check, a name that then ran as
    part of `__eq__`'s generated source. A class the snippet does not own is frozen. The
    class's `__module__` reads `_SNIPPET_MODULE` meanwhile. Returns what to put back
    (`_restore_field_inputs`)."""
    swapped: list[tuple[type, str, Any, Any]] = []
    try:
        module = type.__getattribute__(cls, "__dict__").get("__module__", None)
        type.__setattr__(cls, "__module__", _SNIPPET_MODULE)
        swapped.append((cls, "__module__", module, _SNIPPET_MODULE))
        for klass in type.__getattribute__(cls, "__mro__"):
            own = type.__getattribute__(klass, "__dict__")
            params = own.get("__dataclass_params__", None)
            if params is not None and type(params) is not dataclasses._DataclassParams:  # type: ignore[attr-defined]
                raise TypeError("dataclass parameters must be made by @dataclass")
            for name in _FIELD_INPUTS if klass is cls else _FIELD_INPUTS[1:]:
                held = own.get(name, None)
                if held is None or not guards.owns_class(klass):
                    continue
                if type(held) is not dict:
                    raise TypeError(f"{name} of a dataclass must be a plain dict in the sandbox")
                copy = types.MappingProxyType(dict.copy(held))
                type.__setattr__(klass, name, copy)
                swapped.append((klass, name, held, copy))
        refuse_field_subclasses(cls)
        _refuse_host_state_fields(cls, guards, swapped)
    except BaseException:
        _restore_field_inputs(swapped, cls)
        raise
    return swapped


def _refuse_host_state_fields(cls: type, guards: RunGuards, swapped: list[tuple[type, str, Any, Any]]) -> None:
    """No field is named for state a host base's code uses, of this class or of a snippet class
    that already inherits from it: the generated `__init__` (host code) would write the
    snippet's value there natively (a review's `_node2info: dict` field on a
    `graphlib.TopologicalSorter` subclass, which a class body could not define). A subclass made
    later is checked by the class factory (`guards._ClassFactory._defined_names`)."""
    used = guards.subtree_state_names(cls)
    if not used:
        return
    for _klass, name, _held, copy in swapped:
        if name in _FIELD_INPUTS:
            clash = sorted(used.intersection(k for k in copy if type(k) is str))
            if clash:
                raise TypeError(f"dataclass {cls.__name__!r} cannot have a field {clash[0]!r}: {HOST_STATE_CLASH}")


def _restore_field_inputs(swapped: list[tuple[type, str, Any, Any]], made: Any) -> None:
    """The snippet's own containers back where the copies still are (on the class the decorator
    returned too: `slots=True` builds a new one from the old one's dictionary)."""
    for klass, name, held, copy in reversed(swapped):
        for target in {klass, made} if klass is not made and isinstance(made, type) else {klass}:
            if type.__getattribute__(target, "__dict__").get(name, None) is copy:
                type.__setattr__(target, name, held)


def _own_receiver(cls: type, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """A method the decorator generated (host-compiled: its attribute reads and writes are not
    the snippet's) that runs only on instances of its class. `X.__init__(host_object, v)` would
    otherwise be a native `setattr` on any object."""

    def checked(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        if not issubclass(type(self), cls):
            raise TypeError(
                f"descriptor '{name}' for '{cls.__name__}' objects doesn't apply to a "
                f"'{type(self).__name__}' object"
            )
        return method(self, *args, **kwargs)

    checked.__name__ = name
    checked.__qualname__ = f"{cls.__qualname__}.{name}"
    checked.__doc__ = method.__doc__
    return checked


#: The code of every `_own_receiver` wrapper (one per generated method, all alike).
_OWN_RECEIVER_CODE = _own_receiver(object, "x", lambda self: None).__code__


def is_generated_method(value: Any, name: str) -> bool:
    """`value` is the method `name` that `@dataclass` generated, as `_own_receiver` wrapped it
    (CPython's `pprint` asks the generated `__repr__`'s `__wrapped__`, which ours does not carry
    on purpose). Only exact host functions are looked into, by the identity of their code."""
    if type(value) is not types.FunctionType or value.__code__ is not _OWN_RECEIVER_CODE:
        return False
    cells = dict(zip(_OWN_RECEIVER_CODE.co_freevars, value.__closure__ or (), strict=True))
    held = cells["name"].cell_contents
    if type(held) is not str or held != name:
        return False
    method = cells["method"].cell_contents
    if type(method) is not types.FunctionType:
        return False
    # `_recursive_repr` wraps the generated `__repr__`; an exact function runs no code on reads.
    original = method.__dict__.get("__wrapped__", method)
    if type(original) is not types.FunctionType:
        return False
    qualname = original.__qualname__
    return type(qualname) is str and "__create_fn__" in qualname


def _guard_generated(before: Mapping[str, Any], cls: Any) -> Any:
    """Wrap every function the decorator put on `cls` (those not in the class body `before`):
    behind a receiver check, and a comparison's operand judged first, as the class factory does
    for the class body (`total_ordering`'s `__gt__` calls `type(self).__lt__(self, other)`
    with what C code handed it)."""
    if not isinstance(cls, type):
        return cls
    for name, value in list(type.__getattribute__(cls, "__dict__").items()):
        if isinstance(value, types.FunctionType) and before.get(name) is not value:
            type.__setattr__(cls, name, judging_method(name, value, cls) or _own_receiver(cls, name, value))
    return cls


def owned_only(fn: Callable[..., Any], guards: RunGuards, what: str, *, pastes_fields: bool = False) -> Callable[..., Any]:
    """Class decorators that rewrite the class they get: only on the snippet's own classes.
    `pastes_fields`: the decorator pastes field names into source it executes (`@dataclass`),
    so it reads them from checked, read-only copies (`_read_only_field_inputs`)."""

    @named_after(fn)
    def decorate(cls: Any = None, /, **kwargs: Any) -> Any:
        if cls is None:
            return lambda c: decorate(c, **kwargs)
        guards.require_owned_class(cls, what)
        before = dict(type.__getattribute__(cls, "__dict__"))
        if not pastes_fields:
            refuse_field_subclasses(cls)
            made = fn(cls, **kwargs)
        else:
            swapped = _read_only_field_inputs(cls, guards)
            made = None
            try:
                made = fn(cls, **kwargs)
            finally:
                _restore_field_inputs(swapped, made)
        if isinstance(made, type) and made is not cls and made.__mro__[1:] == cls.__mro__[1:]:
            # `@dataclass(slots=True)` rebuilds the class from its dictionary: still the snippet's.
            guards.owned.add(made)
            rehome_forwarders(made, cls)
        return _guard_generated(before, made)

    return decorate


def build(ctx: ShimContext) -> dict[str, Any]:
    kernels = RunKernels(ctx.guards)
    namespace = ctx.run_prelude("functools", NAME, {
        "owns": kernels.owns, "copy_annotations": kernels.copy_annotations,
        "cache_wrapper": kernels.cache_wrapper, "wrap_function": kernels.wrap_function,
    })
    return {
        **{name: namespace[name] for name in _PRELUDE_NAMES},
        **pick(functools, ["reduce", "partial", "cmp_to_key", "partialmethod"]),
        "cached_property": cached_property,
        "total_ordering": owned_only(functools.total_ordering, ctx.guards, "total_ordering"),
    }


#: What the prelude (`sandbox/prelude/functools.rpy`) defines for this module.
_PRELUDE_NAMES = ("wraps", "update_wrapper", "WRAPPER_ASSIGNMENTS", "WRAPPER_UPDATES", "lru_cache", "cache")
