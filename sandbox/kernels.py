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

import collections
import dataclasses
import datetime
import decimal
import fractions
import functools
import io
import itertools
import os
import random
import re
import statistics
import types
import typing
import uuid
import weakref
from collections.abc import Callable
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from . import guards as guards_module
from .crossing import judge
from .guards import RunGuards, is_snippet_function
from .policy import HOST_METHOD_NAMES, RUNTIME_CHECKED_ATTRIBUTES

#: Exact types a plain kernel accepts as they are (immutable, no snippet code in them).
PLAIN_SCALARS = frozenset({str, bytes, int, float, bool, type(None)})

#: How deep a plain kernel argument may nest.
MAX_PLAIN_DEPTH = 100


#: What a container being copied stands for in a walk's memo until its copy is made.
_BUSY = object()


def plain(value: Any, depth: int = 0, memo: dict[int, tuple[Any, Any]] | None = None) -> Any:
    """`value` as exact plain data, or `TypeError`. Containers are copied through the base
    types' own iterators (a subclass is refused, not read), so nothing of the snippet runs, and
    each once (`memo`): a list holding the same list twice, forty levels deep, is copied with
    its sharing in forty steps, not 2**40 (a review blocked the host for minutes that way)."""
    kind = type(value)
    if kind in PLAIN_SCALARS:
        return value
    if depth >= MAX_PLAIN_DEPTH:
        raise ValueError("a kernel argument is nested too deeply")
    if kind is not tuple and kind is not list and kind is not dict:
        raise TypeError(f"expected plain data (str, bytes, int, float, bool, None, tuple, list, dict), "
                        f"got a '{_type_name(kind)}'")
    memo = {} if memo is None else memo
    seen = memo.get(id(value))
    if seen is not None and seen[0] is value:
        if seen[1] is _BUSY:
            raise ValueError("a kernel argument contains itself")
        return seen[1]
    memo[id(value)] = (value, _BUSY)
    if kind is tuple:
        made: Any = tuple([plain(item, depth + 1, memo) for item in tuple.__iter__(value)])
    elif kind is list:
        made = [plain(item, depth + 1, memo) for item in list.__iter__(value)]
    else:
        made = {plain(k, depth + 1, memo): plain(v, depth + 1, memo) for k, v in dict.items(value)}
    memo[id(value)] = (value, made)
    return made


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

    __slots__ = ("_guards", "_layouts")

    def __init__(self, guards: RunGuards) -> None:
        self._guards = guards
        #: `copy_layout` per class of the snippet's (a class's bases never change).
        self._layouts: dict[type, tuple[str, type]] = {}

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

    def type_of(self, obj: Any) -> type:
        """The snippet's one-argument `type(obj)` as a plain call (the run's `type` is a class,
        and calling it costs a `__new__`): never a metaclass, the run's `type` for a class."""
        found = type(obj)
        return self._guards.safe_type if issubclass(found, type) else found

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

    def own_state(self, x: Any) -> Any:
        """The instance dictionary of the snippet's own object (what its `vars()` is), or None
        when it has none."""
        if not self._guards.owns_class(type(x)):
            raise TypeError("own_state() only applies to the snippet's own objects")
        if self._guards.holds_host_state(x):
            # State a host base's code trusts is the host's (`guards._defined_by_snippet`): the
            # copy's memo once handed its original dictionary out.
            raise TypeError(f"cannot copy a '{type(x).__name__}' object in the sandbox: a class it derives "
                            "from keeps its own state in it")
        try:
            state = object.__getattribute__(x, "__dict__")
        except AttributeError:
            return None
        return state if type(state) is dict else None

    def copy_hook(self, x: Any, deep: bool) -> Any:
        """The snippet's own `__copy__` (read off the class, as `copy.copy` does) or
        `__deepcopy__` (off the object, so an instance dictionary or a `__getattr__` may answer),
        as its guarded read gives it; None when it is switched off (`None`), when nothing
        defines it, or when a host base defines it (that hook knows the host's state, not the
        snippet's: the prelude copies by the base's layout instead). Found without raising, so
        a copy of many objects does not pay for an `AttributeError` each."""
        name = "__deepcopy__" if deep else "__copy__"
        cls = type(x)
        guards = self._guards
        if deep:
            try:
                own = object.__getattribute__(x, "__dict__")
            except AttributeError:
                own = None
            if type(own) is dict and name in own:
                return guards.getattr(x, name)
        mro = type.__getattribute__(cls, "__mro__")
        for klass in mro:
            if name in type.__getattribute__(klass, "__dict__"):
                return guards.getattr(x if deep else cls, name) if guards.owns_class(klass) else None
        if deep and any("__getattr__" in type.__getattribute__(k, "__dict__") for k in mro):
            try:
                return guards.getattr(x, name)
            except AttributeError:
                return None
        return None

    def rebind_method(self, method: Any, copy_object: Callable[[Any], Any]) -> Any:
        """A deep copy of a bound method: bound to `copy_object(obj)` when its object `obj` is
        the snippet's own (and the copy is of the same class, so the function gets the kind of
        object it was bound to), else the method itself. The object is handed only to the
        prelude's copy, never out."""
        if type(method) is not types.MethodType:
            raise TypeError("rebind_method() needs a bound method")
        obj = method.__self__
        if isinstance(obj, type) or not self._guards.owns(obj) or is_snippet_function(obj):
            return method
        made = copy_object(obj)
        if type(made) is not type(obj):
            return method
        return types.MethodType(method.__func__, made)

    def datetime_args(self, x: Any) -> tuple[Any, ...]:
        """What an instance of the snippet's subclass of a `datetime` class is made from: its
        base's own pickle arguments (the packed `bytes`, and a `tzinfo`), read by the base."""
        layout, base = self.copy_layout(type(x))
        if layout != "datetime":
            raise TypeError("datetime_args() only applies to subclasses of the datetime classes")
        return tuple(base.__reduce__(x)[1])

    def copy_layout(self, cls: Any) -> tuple[str, type]:
        """How `copy` rebuilds an instance of the snippet's own class `cls`: the prelude's rule
        and the host base that decides it (the first host class along the MRO with a layout of
        its own). Host classes that only add methods (pure-Python classes defining no copy
        hooks, no `__new__` and no slots) are passed over; any other host base is refused,
        because its own copy protocol would be the only one that knows its state."""
        found = self._layouts.get(cls) if isinstance(cls, type) else None  # no snippet metaclass: hashed by identity
        if found is not None:
            return found
        if not (isinstance(cls, type) and self._guards.owns_class(cls)):
            raise TypeError("copy_layout() only applies to classes defined in the snippet")
        for klass in type.__getattribute__(cls, "__mro__"):
            if self._guards.owns_class(klass):
                continue
            layout = _COPY_LAYOUTS.get(klass)
            if layout is not None:
                found = self._layouts[cls] = (layout, klass)
                return found
            if not (_passive(klass) or _named_tuple_class(klass) or _builtin_exception(klass)):
                raise TypeError(f"cannot copy a '{_type_name(cls)}' object in the sandbox: its base "
                                f"class '{_type_name(klass)}' does not support copying here")
        return "object", object  # pragma: no cover - every MRO ends with object

    def blank(self, cls: Any, *value: Any) -> Any:
        """A new instance of the snippet's own class `cls` without running its `__init__` (what
        `copy` makes before it copies the state): the host base's `__new__`, with the exact
        builtin value of an immutable base (`builtin_value`) when there is one."""
        layout, base = self.copy_layout(cls)
        if layout in ("value", "frozenset", "tuple"):
            if len(value) != 1 or type(value[0]) is not (tuple if layout == "frozenset" else base):
                raise TypeError(f"blank() of a '{_type_name(base)}' subclass needs its exact value")
            return base.__new__(cls, value[0])
        if layout == "datetime":
            if not value or not all(type(v) in (bytes, int) or isinstance(v, datetime.tzinfo) for v in value):
                raise TypeError(f"blank() of a '{_type_name(base)}' subclass needs its pickle arguments")
            return base.__new__(cls, *value)
        if value or layout in ("exception", "random", "partial", "decimal"):
            raise TypeError(f"blank() does not apply to a '{_type_name(base)}' subclass")
        return base.__new__(cls)

    def copy_host_slots(self, new: Any, old: Any) -> None:
        """Copy the private slots of a `Fraction`, `UUID` or `NormalDist` base (immutable values)
        from `old` onto `new`, two instances of the same class of the snippet's."""
        cls = type(new)
        if type(old) is not cls or not self._guards.owns_class(cls):
            raise TypeError("copy_host_slots() needs two instances of one class of the snippet's")
        layout, base = self.copy_layout(cls)
        for slot in _HOST_SLOTS.get(base, ()):
            try:
                slot.__set__(new, slot.__get__(old))
            except AttributeError:
                continue

    def runtime_checkable(self, cls: Any) -> Any:
        """`typing.runtime_checkable` on the snippet's own protocol classes only: it writes a
        flag on the class it gets."""
        self._guards.require_owned_class(cls, "runtime_checkable")
        return typing.runtime_checkable(cls)


# -- statistics ---------------------------------------------------------------------------------
class NormalDist(statistics.NormalDist):
    """`statistics.NormalDist`, except that `samples` without a seed draws from a generator of
    its own, seeded afresh: the stdlib's draws from `random`'s module-level generator, the
    host's (a review's run shifted the host's seeded sequence, and saw its draws). What its
    operators and `from_samples` make is this class too."""

    __slots__ = ()

    def samples(self, n: int, *, seed: Any = None) -> list[float]:
        return super().samples(n, seed=os.urandom(16) if seed is None else seed)

    @classmethod
    def from_samples(cls, data: Any) -> NormalDist:
        return _ours(statistics.NormalDist.from_samples(data))


def _ours(made: Any) -> Any:
    return NormalDist(made.mean, made.stdev) if type(made) is statistics.NormalDist else made


def _returning_ours(name: str) -> Any:
    method = getattr(statistics.NormalDist, name)

    def wrapped(self: Any, *args: Any) -> Any:
        return _ours(method(self, *args))

    wrapped.__name__ = wrapped.__qualname__ = name
    return wrapped


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__pos__",
              "__neg__"):
    setattr(NormalDist, _name, _returning_ours(_name))
NormalDist.__module__ = "statistics"
guards_module.CHECKED_REPLACEMENTS.add(NormalDist)  # the stdlib class stays out of every MRO a snippet sees


# -- copy ---------------------------------------------------------------------------------------
# The `copy` prelude walks containers and the snippet's own objects itself; what it asks of
# these kernels is how a *host* class's value is copied (by a rule per type, never by its reduce
# protocol) and how an instance of the snippet's own class is made without its `__init__`.

#: Host values `copy`/`deepcopy` hand back as they are: immutable, so a copy is the same value.
COPY_IMMUTABLE = frozenset(
    {decimal.Decimal, fractions.Fraction, uuid.UUID, statistics.NormalDist, NormalDist, datetime.date,
     datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone, re.Pattern,
     re.Match, weakref.ref, type(Ellipsis), types.GenericAlias, types.UnionType,
     functools._lru_cache_wrapper}  # type: ignore[attr-defined] - its own hooks return it
)

#: The host base that decides how an instance of the snippet's own class is rebuilt, by the
#: name of the prelude's rule (and, for `value`/`tuple`, which builtin the value is).
_COPY_LAYOUTS: dict[type, str] = {
    object: "object", collections.ChainMap: "object", datetime.tzinfo: "object",
    list: "list", dict: "dict", collections.OrderedDict: "dict", collections.Counter: "dict",
    collections.defaultdict: "defaultdict", set: "set", bytearray: "bytearray",
    collections.deque: "deque", str: "value", bytes: "value", int: "value", float: "value",
    complex: "value", frozenset: "frozenset", tuple: "tuple", BaseException: "exception",
    random.Random: "random", functools.partial: "partial", decimal.Decimal: "decimal",
    fractions.Fraction: "slots", uuid.UUID: "slots", statistics.NormalDist: "slots",
    datetime.date: "datetime", datetime.datetime: "datetime", datetime.time: "datetime",
    datetime.timedelta: "datetime",
}

#: Private slots of host bases that hold the whole value (each an immutable object), copied
#: onto a new instance of the snippet's subclass through the base's own member descriptors.
_HOST_SLOTS: dict[type, tuple[Any, ...]] = {
    base: tuple(base.__dict__[name] for name in names)
    for base, names in (
        (fractions.Fraction, ("_numerator", "_denominator")),
        (uuid.UUID, ("int", "is_safe")),
        (statistics.NormalDist, ("_mu", "_sigma")),
    )
}

#: Names whose presence in a host class's dictionary means it copies in its own way.
_COPY_PROTOCOL = frozenset(
    {"__reduce_ex__", "__reduce__", "__getstate__", "__setstate__", "__getnewargs__",
     "__getnewargs_ex__", "__copy__", "__deepcopy__", "__new__"}
)

_HEAPTYPE = 1 << 9

#: Builtin iterators whose remaining items a copy of them yields (the copy reads the same
#: container; iterating it leaves the original where it was).
_SEQUENCE_ITERATORS = frozenset(
    type(it) for it in (
        iter([]), reversed([]), iter(()), iter(range(0)), iter(range(1 << 70)), iter(""), iter("\u20ac"),
        iter(b""), iter(bytearray()), iter({}), iter({}.values()), iter({}.items()),
        reversed({}), reversed({}.values()), reversed({}.items()), iter(set()),
    )
)

#: Builtin and itertools iterators rebuilt from their own reduce value: what it holds (other
#: iterators, functions, values) is the snippet's to copy; its lists are copied first.
_COMPOSITE_ITERATORS = frozenset(
    {enumerate, zip, map, filter, reversed, type(iter(int, 1)), itertools.count, itertools.repeat,
     itertools.cycle, itertools.chain, itertools.islice, itertools.compress, itertools.dropwhile,
     itertools.takewhile, itertools.filterfalse, itertools.starmap, itertools.accumulate,
     itertools.zip_longest, itertools.product, itertools.permutations, itertools.combinations,
     itertools.combinations_with_replacement}
)

#: The containers a sequence iterator's reduce value may hold.
_SEQUENCES = frozenset({list, tuple, str, bytes, bytearray, range})

#: Sequences whose items are atoms (a deep copy of an iterator over one is a shallow one).
_ATOM_SEQUENCES = frozenset({str, bytes, range})

_TEE = type(itertools.tee([])[0])

#: What a composite iterator's reduce value may name as its constructor.
_ITERATOR_MAKERS = frozenset(_COMPOSITE_ITERATORS | {iter})


def _fresh(value: Any) -> Any:
    """A part of a reduce value that the prelude gets, with its own lists copied (a `cycle`'s
    saved items are the iterator's own list, not the snippet's)."""
    if type(value) is list:
        return list(list.__iter__(value))
    if type(value) is tuple:
        return tuple([list(list.__iter__(v)) if type(v) is list else v for v in tuple.__iter__(value)])
    return value


def _reduced_iterator(it: Any) -> tuple[Any, tuple[Any, ...], Any]:
    """The `(maker, args, state)` an exact builtin iterator reduces to."""
    reduced = type(it).__reduce__(it)
    maker, args = reduced[0], reduced[1]
    state = reduced[2] if len(reduced) > 2 else None
    if maker not in _ITERATOR_MAKERS or type(args) is not tuple:
        raise TypeError(f"cannot copy a '{_type_name(type(it))}' object in the sandbox")
    return maker, args, state


def _rebuilt_iterator(kind: type, maker: Any, args: tuple[Any, ...], state: Any) -> Any:
    made = maker(*args)
    if type(made) is not kind:
        raise TypeError(f"cannot copy a '{_type_name(kind)}' object in the sandbox")
    if state is not None:
        made.__setstate__(state)
    return made


def copy_iterator(it: Any, deep: bool) -> Any:
    """A copy of an exact builtin iterator, by kind: `("copy", new)` when it is done (a shallow
    copy, which shares what the original iterates), `("items", remaining)` for a deep copy of a
    sequence iterator (a fresh list of what it has left to yield: the prelude copies them),
    `("reduce", kind, maker, args, state)` for a deep copy of a composite one (the prelude copies
    args and state, then calls `rebuild_iterator`), or None when `it` is no such iterator."""
    kind = type(it)
    if kind in _SEQUENCE_ITERATORS:
        maker, args, state = _reduced_iterator(it)
        # `iter(container)` / `reversed(container)` over an exact builtin container (a dict's or
        # set's iterator reduces to a fresh list of what it has left): no snippet code runs.
        if maker not in (iter, reversed) or len(args) != 1 or type(args[0]) not in _SEQUENCES:
            raise TypeError(f"cannot copy a '{_type_name(kind)}' object in the sandbox")
        made = maker(args[0])
        if state is not None:
            made.__setstate__(state)
        if deep and type(args[0]) not in _ATOM_SEQUENCES:
            return ("items", list(made))  # no longer than the container it already holds
        return ("copy", made)  # the items of a range or a text are atoms: the deep copy is this
    if kind is _TEE:
        if deep:
            raise TypeError("cannot deep-copy an 'itertools.tee' iterator in the sandbox")
        return ("copy", kind.__copy__(it))
    if kind in _COMPOSITE_ITERATORS:
        maker, args, state = _reduced_iterator(it)
        if deep:
            # The prelude copies these parts: its own lists copied, and each part judged, so
            # nothing comes back that the snippet may not hold.
            args, state = tuple([_fresh(a) for a in args]), _fresh(state)
            for part in (*args, state):
                judge(part)
            return ("reduce", kind, maker, args, state)
        return ("copy", _rebuilt_iterator(kind, maker, args, state))
    return None


def rebuild_iterator(kind: Any, maker: Any, args: Any, state: Any) -> Any:
    """The iterator `copy_iterator` described, from the prelude's copies of its parts."""
    if kind not in _COMPOSITE_ITERATORS or maker not in _ITERATOR_MAKERS or type(args) is not tuple:
        raise TypeError("not an iterator description from copy_iterator")
    return _rebuilt_iterator(kind, maker, args, state)


def _sandbox_hook(kind: type, names: tuple[str, ...]) -> Any:
    """The first of `names` along `kind`'s MRO when the sandbox's own code defines it there (its
    stand-ins: run builtins, module shims, bindings, `BytesIO`, `ZoneInfo`, paths)."""
    for klass in type.__getattribute__(kind, "__mro__"):
        attrs = type.__getattribute__(klass, "__dict__")
        for name in names:
            if name in attrs:
                fn = attrs[name]
                module = getattr(fn, "__module__", None)
                if (isinstance(fn, types.FunctionType) and not is_snippet_function(fn)
                        and type(module) is str and module.startswith("sandbox.")):
                    return fn
                return None
    return None


def _passive(klass: type) -> bool:
    """A pure-Python host class that only adds methods: no copy hooks, no `__new__`, no slots
    (`copy` would rebuild its instances from their dictionary alone). Of the sandbox's own
    classes only its checked replacements of stdlib classes count: the others keep what a
    snippet must not duplicate (a copy would skip the constructor that refuses to make one)."""
    attrs = type.__getattribute__(klass, "__dict__")
    module = attrs.get("__module__")
    if type(module) is str and module.split(".")[0] == "sandbox" and klass not in guards_module.CHECKED_REPLACEMENTS:
        return False
    return bool(type.__getattribute__(klass, "__flags__") & _HEAPTYPE
                and not _COPY_PROTOCOL.intersection(attrs) and not attrs.get("__slots__"))


def _builtin_exception(klass: type) -> bool:
    """A builtin exception class between the snippet's class and `BaseException`: its instances
    are rebuilt from their arguments, as `BaseException.__reduce__` says."""
    return issubclass(klass, BaseException) and type.__getattribute__(klass, "__module__") == "builtins"


def _named_tuple_class(klass: type) -> bool:
    """A class `collections.namedtuple` made: a tuple whose own copy hooks only hand the tuple's
    items to its `__new__`."""
    attrs = type.__getattribute__(klass, "__dict__")
    return (tuple in type.__getattribute__(klass, "__mro__") and "_fields" in attrs and "_make" in attrs
            and not _COPY_PROTOCOL.difference({"__new__", "__getnewargs__"}).intersection(attrs))


def _plain_state(value: Any, depth: int = 0, memo: dict[int, tuple[Any, Any]] | None = None) -> Any:
    """A fresh copy of plain data (`plain`'s, and sets of scalars), or `COPY_UNHANDLED`; a
    container reached twice is copied once and shared, as `deepcopy` shares it."""
    kind = type(value)
    if kind in PLAIN_SCALARS or kind is complex:
        return value
    if depth >= MAX_PLAIN_DEPTH:
        return COPY_UNHANDLED
    if kind in (set, frozenset):
        items = [v for v in kind.__iter__(value)]
        return kind(items) if all(type(v) in PLAIN_SCALARS for v in items) else COPY_UNHANDLED
    if kind not in (list, tuple, dict):
        return COPY_UNHANDLED
    memo = {} if memo is None else memo
    seen = memo.get(id(value))
    if seen is not None and seen[0] is value:
        return COPY_UNHANDLED if seen[1] is _BUSY else seen[1]
    memo[id(value)] = (value, _BUSY)
    made: Any = COPY_UNHANDLED
    if kind in (list, tuple):
        items = [_plain_state(v, depth + 1, memo) for v in kind.__iter__(value)]
        if not any(v is COPY_UNHANDLED for v in items):
            made = items if kind is list else tuple(items)
    else:
        pairs = [(_plain_state(k, depth + 1, memo), _plain_state(v, depth + 1, memo)) for k, v in dict.items(value)]
        if not any(k is COPY_UNHANDLED or v is COPY_UNHANDLED for k, v in pairs):
            made = dict(pairs)
    memo[id(value)] = (value, made)
    return made


def _copy_passive_instance(x: Any, kind: type, deep: bool) -> Any:
    """An instance of a pure-Python host class (a `TextWrapper`, a `Calendar`, a `Template`)
    copied as `copy` would, from its dictionary: shared values for a shallow copy; for a deep
    one, only a dictionary of plain data, copied here (its values are the host object's own,
    which the snippet's hooks must not be handed)."""
    if not all(k is object or _passive(k) for k in type.__getattribute__(kind, "__mro__")):
        return COPY_UNHANDLED
    try:
        state = object.__getattribute__(x, "__dict__")
    except AttributeError:
        return COPY_UNHANDLED
    if type(state) is not dict or not all(type(k) is str for k in state):
        return COPY_UNHANDLED
    if deep:
        state = _plain_state(state)
        if state is COPY_UNHANDLED:
            raise TypeError(f"cannot deep-copy this '{_type_name(kind)}' object in the sandbox: "
                            "it holds more than plain data")
    made = object.__new__(kind)
    dict.update(object.__getattribute__(made, "__dict__"), state)
    return made


def copy_host(x: Any, deep: bool) -> Any:
    """A copy of a host class's value by a rule for its exact type, or `COPY_UNHANDLED`: immutable
    values are their own copy; a `Random`'s copy gets its state (`getstate`/`setstate`); a decimal
    `Context` copies itself; the sandbox's own classes copy (or refuse to) with their own hooks.
    Nothing here reads an object of the snippet's."""
    kind = type(x)
    if kind in COPY_IMMUTABLE or isinstance(x, typing._Final):  # type: ignore[attr-defined]
        return x  # typing's objects are immutable too (aliases, TypeVars, special forms)
    if kind is object:
        return object()
    if kind is random.Random:
        made = random.Random()
        made.setstate(random.Random.getstate(x))
        return made
    if kind is decimal.Context:
        return decimal.Context.copy(x)
    if kind is io.StringIO:
        made = io.StringIO()
        made.__setstate__(io.StringIO.__getstate__(x))
        return made
    hook = _sandbox_hook(kind, ("__deepcopy__",) if deep else ("__copy__",))
    if hook is not None:
        return hook(x, {}) if deep else hook(x)
    reduce = _sandbox_hook(kind, ("__reduce_ex__", "__reduce__"))
    if reduce is not None:
        reduced = reduce(x, 4) if reduce.__name__ == "__reduce_ex__" else reduce(x)
        if type(reduced) is tuple and len(reduced) == 2:
            return reduced[0](*plain(reduced[1]))
        raise TypeError(f"cannot copy a '{_type_name(kind)}' object in the sandbox")
    return _copy_passive_instance(x, kind, deep)


def exception_parts(exc: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """What a host exception class's instance is rebuilt from (`type(exc)(*args)`, then its
    attributes): the class's own reduce value, as `copy` would use it, with only the public
    attributes (and `__notes__`) of its state, the ones the snippet reads by name anyway."""
    kind = type(exc)
    if not isinstance(exc, BaseException):
        raise TypeError("exception_parts() needs an exception")
    reduced = kind.__reduce__(exc)
    if type(reduced) is not tuple or len(reduced) < 2 or reduced[0] is not kind or type(reduced[1]) is not tuple:
        raise copy_refusal(exc)
    state = reduced[2] if len(reduced) > 2 and type(reduced[2]) is dict else {}
    public = {k: v for k, v in dict.items(state)
              if type(k) is str and (k[:1] != "_" or k == "__notes__")}
    return reduced[1], public


COPY_UNHANDLED: Any = type("COPY_UNHANDLED", (), {"__slots__": (), "__repr__": lambda self: "COPY_UNHANDLED"})()


def copy_refusal(x: Any) -> TypeError:
    """Why a value has no copy in the sandbox: one sentence naming its type."""
    return TypeError(f"cannot copy a '{_type_name(type(x))}' object in the sandbox")


def builtin_value(x: Any, layout: str) -> Any:
    """The exact builtin value inside an instance of a subclass of `str`, `bytes`, `int`,
    `float`, `complex`, `tuple` or `frozenset`, read through the base type's own slot (no method
    the subclass overrides runs); a `Decimal` subclass's as an exact `Decimal`."""
    for base in (str, bytes, int, float, complex, tuple, frozenset, decimal.Decimal):
        if isinstance(x, base):
            break
    else:
        raise TypeError("not a builtin value")
    if base is str:
        return str.__str__(x)
    if base is bytes:
        return bytes.__bytes__(x)
    if base is int:
        return int.__int__(x)
    if base is float:
        return float.__float__(x)
    if base is complex:
        return complex.__complex__(x)
    if base is tuple:
        return tuple(tuple.__iter__(x))
    if base is frozenset:
        return tuple(frozenset.__iter__(x))
    return decimal.Decimal(x)
