"""Kernels: the host code a prelude calls, each safe to hand to a snippet directly.

A prelude (`sandbox.prelude`) runs with the snippet's rights; what it cannot write in
restricted Python it asks of a kernel. A kernel is host code, so it must never act on a
snippet's object the way `dataclasses.replace` or `copy.deepcopy` did (read attributes by names
the object chose, call its hooks, store it in process-wide state). Two kinds keep that true:

- *plain* kernels (`@kernel`) accept only exact plain data: `str`, `bytes`, `int`, `float`,
  `bool`, `None`, and `tuple`/`list`/`dict` of those, checked by exact type and rebuilt through
  the base types' own methods, so no snippet method (`__eq__`, `__hash__`, `__iter__`,
  `__bytes__`, `__index__`) runs while they work;
- *run* kernels (`RunKernels`, and `field_table`) change only the run's own objects, checked by
  identity against the run's guards (a class the snippet made, its own function); anything
  else they read through exact types' slots (a `dataclasses.Field`'s member descriptors), with
  the run's guarded `getattr`, or treat as an operator would (call it).

Both raise plain `TypeError`/`ValueError` with one sentence, never a new exception type.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .guards import RunGuards, is_snippet_function
from .policy import HOST_METHOD_NAMES, RUNTIME_CHECKED_ATTRIBUTES

#: Exact types a plain kernel accepts as they are (immutable, no snippet code in them).
PLAIN_SCALARS = frozenset({str, bytes, int, float, bool, type(None)})

#: How deep a plain kernel argument may nest.
MAX_PLAIN_DEPTH = 100


def plain(value: Any, depth: int = 0) -> Any:
    """`value` as exact plain data, or `TypeError`. Containers are copied through the base
    types' own iterators (a subclass is refused, not read), so nothing of the snippet runs."""
    kind = type(value)
    if kind in PLAIN_SCALARS:
        return value
    if depth >= MAX_PLAIN_DEPTH:
        raise ValueError("a kernel argument is nested too deeply")
    if kind is tuple:
        return tuple([plain(item, depth + 1) for item in tuple.__iter__(value)])
    if kind is list:
        return [plain(item, depth + 1) for item in list.__iter__(value)]
    if kind is dict:
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in dict.items(value)}
    raise TypeError(f"expected plain data (str, bytes, int, float, bool, None, tuple, list, dict), "
                    f"got a '{_type_name(kind)}'")


def _type_name(kind: type) -> str:
    name = type.__dict__["__name__"].__get__(kind)
    return name if type(name) is str else "object"


def kernel(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A plain kernel: every argument is checked and copied by `plain` before `fn` sees it."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return fn(*[plain(a) for a in args], **{k: plain(v) for k, v in kwargs.items()})

    del call.__wrapped__  # nothing leads from the kernel to its unchecked body
    return call


# -- run kernels --------------------------------------------------------------------------------

_FIELD_KINDS = {
    id(dataclasses._FIELD): "field",  # type: ignore[attr-defined]
    id(dataclasses._FIELD_CLASSVAR): "classvar",  # type: ignore[attr-defined]
    id(dataclasses._FIELD_INITVAR): "initvar",  # type: ignore[attr-defined]
}
_FIELD_TYPE = dataclasses.Field.__dict__["_field_type"]
_FIELD_NAME = dataclasses.Field.__dict__["name"]
_FIELD_INIT = dataclasses.Field.__dict__["init"]
_FIELD_DEFAULT = dataclasses.Field.__dict__["default"]


def field_table(fields: Any) -> tuple[tuple[Any, str, str, bool, bool], ...]:
    """A class's `__dataclass_fields__` as plain rows `(field, name, kind, init, has_default)`.

    Only an exact `dict` of exact `dataclasses.Field` objects with plain `str` names is read, and
    only through the `Field` slots: a dict planted in a class body holding anything else is
    refused, whatever its items claim."""
    if type(fields) is not dict:
        raise TypeError("__dataclass_fields__ must be a dict of dataclasses.Field objects")
    rows = []
    for key, field in dict.items(fields):
        if type(field) is not dataclasses.Field:
            raise TypeError("__dataclass_fields__ must be a dict of dataclasses.Field objects")
        name = _FIELD_NAME.__get__(field)
        if type(name) is not str or type(key) is not str or name != key:
            raise TypeError("__dataclass_fields__ must map each field's name to its Field")
        kind = _FIELD_KINDS.get(id(_FIELD_TYPE.__get__(field)), "field")
        init = _FIELD_INIT.__get__(field) is True
        has_default = _FIELD_DEFAULT.__get__(field) is not dataclasses.MISSING
        rows.append((field, name, kind, init, has_default))
    return tuple(rows)


#: Exact types `copy.copy`/`deepcopy` return as they are: immutable, or atomic to `copy`.
COPY_ATOMIC = frozenset(
    {
        type(None), int, float, bool, complex, str, bytes, range, slice, type(Ellipsis),
        type(NotImplemented), types.BuiltinFunctionType, types.FunctionType, types.MethodType,
        property, types.WrapperDescriptorType, types.MethodWrapperType, types.MethodDescriptorType,
    }
)


#: Public names the guard does more for than a plain read (judges, or refuses).
_NOT_PLAIN_READS = frozenset(RUNTIME_CHECKED_ATTRIBUTES | HOST_METHOD_NAMES | INSPECT_ATTRIBUTES)


class RunKernels:
    """The kernels that need the run: each takes only objects the run owns (by identity)."""

    __slots__ = ("_guards",)

    def __init__(self, guards: RunGuards) -> None:
        self._guards = guards

    def reader(self) -> Callable[[Any, Any], Any]:
        """The snippet's `getattr(obj, name)`, with a short path for the names whose guarded
        read is a plain read (public, neither judged nor refused): what `obj.name` compiles to.
        Every other name takes the run's guarded getattr. For the getters' hot loops."""
        checked = self._guards.getattr
        not_plain = _NOT_PLAIN_READS

        def read(obj: Any, name: Any) -> Any:
            if type(name) is str and name[:1] != "_" and name not in not_plain and not name.endswith("__roles__"):
                return getattr(obj, name)
            return checked(obj, name)

        return read

    def owns(self, obj: Any) -> bool:
        """The snippet (or a prelude) made this object, its class, or this function."""
        return self._guards.owns(obj)

    def copy_annotations(self, wrapper: Any, wrapped: Any) -> None:
        """`wrapper.__annotations__ = wrapped.__annotations__` (`functools.update_wrapper`),
        read with the snippet's rights and written only onto the snippet's own function: the
        policy lets a snippet read its own annotations but assign none."""
        try:
            value = self._guards.getattr(wrapped, "__annotations__")
        except AttributeError:
            return
        if is_snippet_function(wrapper) and isinstance(value, dict):
            wrapper.__annotations__ = value

    def wrap_function(self, wrapper: Any, wrapped: Any) -> bool:
        """`functools.update_wrapper` with the standard names, done at once when both are the
        snippet's own plain functions (the common `@wraps(f)` case); False otherwise, and the
        prelude takes the general path. Only fixed attributes of exact functions are read and
        written (the names, the docs, `__annotations__`, `__dict__`), so no snippet code runs."""
        if not (type(wrapper) is types.FunctionType and type(wrapped) is types.FunctionType
                and is_snippet_function(wrapper) and is_snippet_function(wrapped)):
            return False
        functools.update_wrapper(wrapper, wrapped)
        return True

    def cache_wrapper(self, fn: Any, maxsize: Any, typed: Any) -> Any:
        """`functools.lru_cache`'s C wrapper around `fn`, named after `fn` with the snippet's
        rights: `__dict__` and annotations only from the snippet's own functions, and from a
        host callable only its plain-string names and docs (the stdlib's `update_wrapper` would
        copy a host class's `__dict__`, raw methods included, onto the wrapper)."""
        if (maxsize is not None and type(maxsize) is not int) or type(typed) is not bool:
            raise TypeError("Expected first argument to be an integer, a callable, or None")
        if not callable(fn):
            raise TypeError("the first argument must be callable")
        wrapper = functools._lru_cache_wrapper(  # type: ignore[attr-defined]
            fn, maxsize, typed, functools._CacheInfo  # type: ignore[attr-defined]
        )
        if type(fn) is types.FunctionType and is_snippet_function(fn):
            functools.update_wrapper(wrapper, fn)  # fixed attributes of an exact function
        else:
            guards = self._guards
            for name in ("__module__", "__name__", "__qualname__", "__doc__"):
                try:
                    value = guards.getattr(fn, name)
                except AttributeError:
                    continue
                if value is None or type(value) is str:
                    setattr(wrapper, name, value)
                elif isinstance(value, str):
                    setattr(wrapper, name, str.__str__(value))
            # As in CPython; the guard hands `__wrapped__` out only when it is the snippet's own.
            wrapper.__wrapped__ = fn
        wrapper.cache_parameters = functools.partial(dict, maxsize=maxsize, typed=typed)
        return wrapper

    def mark_abstract(self, fn: Any) -> Any:
        """`abc.abstractmethod`: sets `__isabstractmethod__` on the snippet's own function (or on
        a `classmethod`/`staticmethod`/`property` of one); host objects are never written."""
        target = fn.__func__ if type(fn) in (classmethod, staticmethod) else fn
        if not (is_snippet_function(target) or (self._guards.owns(target) and not isinstance(target, type))):
            raise TypeError("abstractmethod() only applies to the snippet's own functions")
        object.__setattr__(target, "__isabstractmethod__", True)
        return fn

    def runtime_checkable(self, cls: Any) -> Any:
        """`typing.runtime_checkable` on the snippet's own protocol classes only: it writes a
        flag on the class it gets."""
        self._guards.require_owned_class(cls, "runtime_checkable")
        return typing.runtime_checkable(cls)
