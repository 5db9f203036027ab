"""`typing`: the names models use in hints, and `runtime_checkable` for the snippet's own
protocols (a prelude, `sandbox/prelude/typing.rpy`: the stdlib's writes a flag on any class it
gets). `get_type_hints` and `ForwardRef` are left out: they `eval` strings.

A runtime protocol's `isinstance` check is the stdlib's: it looks the protocol's member names up
on the object with `hasattr` and returns only a bool."""

from __future__ import annotations

import functools
import gc
import operator
import types
import typing
from collections.abc import Callable
from typing import Any

from ..control import COLLECTING, RELEASING
from ..crossing import STEPPING
from ..guards import ReadOnly
from ..kernels import RunKernels
from .base import ShimContext, pick

NAME = "typing"
PER_RUN = True
#: The metaclasses `TypedDict` and `NamedTuple` (functions) build a snippet's classes with:
#: shared like the classes the table holds, so frozen with them (a class pattern and the class
#: factory accept only shared metaclasses: `guards.shared_metaclass`).
METACLASSES = (typing._TypedDictMeta, typing.NamedTupleMeta)  # type: ignore[attr-defined]


def build(ctx: ShimContext) -> dict[str, Any]:
    kernels = RunKernels(ctx.guards)
    namespace = ctx.run_prelude("typing", NAME, {"mark_runtime_protocol": kernels.runtime_checkable})
    return {**_static(), "runtime_checkable": namespace["runtime_checkable"]}


class _HintAlias(typing._AnnotatedAlias, _root=True):  # type: ignore[name-defined, call-arg, misc]
    """An `Annotated[...]` alias that is only a hint: every alias made from it (`copy_with`,
    subscripting a generic one, a copy) is one too, and calling one is refused. CPython's call
    calls the first argument and writes `__orig_class__` onto whatever comes back, with host
    rights, and that can be a host object a class or function returns (a review wrote onto a
    host function and onto a class `functools` makes, also through `copy_with` and
    `Annotated[T, m][X]`, which built CPython's callable alias again)."""

    def __init__(self, origin: Any, metadata: tuple[Any, ...]) -> None:
        super().__init__(origin, metadata)
        self._inst = False

    def copy_with(self, params: tuple[Any, ...]) -> Any:
        if len(params) != 1:
            raise TypeError("Annotated takes one type")
        return _HintAlias(params[0], self.__metadata__)

    def __reduce__(self) -> Any:
        return operator.getitem, (_ANNOTATED, (self.__origin__, *self.__metadata__))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("an Annotated type hint cannot be called in the sandbox; call the type it annotates")


class _Annotated(ReadOnly):
    """`typing.Annotated`, whose aliases are `_HintAlias`es. `Annotated[int, "unit"]` as a hint
    works as in CPython."""

    __slots__ = ()

    def __getitem__(self, params: Any) -> Any:
        alias = typing.Annotated[params]  # CPython's argument checks; the alias is not kept
        return _HintAlias(alias.__origin__, alias.__metadata__)

    def __repr__(self) -> str:
        return "typing.Annotated"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("typing.Annotated cannot be copied in the sandbox")


_ANNOTATED = _Annotated()


@functools.cache
def _static() -> dict[str, Any]:
    return {**pick(
        typing,
        [
            "Any", "Optional", "Union", "List", "Dict", "Set", "FrozenSet", "Tuple", "Callable",
            "Iterable", "Iterator", "Sequence", "Mapping", "MutableMapping", "Literal",
            "TypedDict", "NamedTuple", "cast", "Final", "ClassVar", "TYPE_CHECKING", "Generic",
            "TypeVar", "Protocol", "Awaitable", "AsyncIterator", "NotRequired", "Required",
            "Self", "Coroutine", "Type", "DefaultDict", "Counter", "Deque",
            "OrderedDict", "AnyStr", "NoReturn", "Never",
        ],
    ), "Annotated": _ANNOTATED}


#: What a hint in `typing`'s caches may be made of: plain values, anything compared by identity
#: (classes, functions, type variables), and typing's own hint objects made of the same.
_PLAIN_PARTS = frozenset({str, int, bytes, bool, float, type(None), type(Ellipsis), types.CodeType})
_HINT_TYPES = frozenset(
    {value for value in vars(typing).values() if isinstance(value, type) and value.__module__ == "typing"}
    | {types.GenericAlias, types.UnionType, _HintAlias}
)
#: Parts of one cached call read at most (a deeper hint is made again instead of cached).
_HINT_BUDGET = 256


def _state(value: Any) -> list[Any]:
    """Everything a typing object holds, read natively: its `__dict__`'s values and its slots'
    (its `==` and hash may read any of them: a `ForwardRef`'s read `__forward_module__`)."""
    parts: list[Any] = []
    try:
        parts.extend(object.__getattribute__(value, "__dict__").values())
    except AttributeError:
        pass
    for klass in type(value).__mro__:
        namespace = type.__getattribute__(klass, "__dict__")
        slots = namespace.get("__slots__", ())
        for name in (slots,) if type(slots) is str else slots:
            member = namespace.get(name)
            if type(member) is types.MemberDescriptorType:
                try:
                    parts.append(member.__get__(value, type(value)))
                except AttributeError:
                    pass
    return parts


def plain_hints(values: tuple[Any, ...]) -> bool:
    """`values` compare and hash without any code of a run: plain scalars (exact types), exact
    tuples and lists of them, objects compared by identity (their type's `==` and hash are
    `object`'s: classes, functions, type variables) and typing's own hint objects whose whole
    state (`_state`) is made of the same, walked with a stack and a budget."""
    pending = list(values)
    budget = _HINT_BUDGET
    while pending:
        budget -= 1
        if budget < 0:
            return False
        value = pending.pop()
        kind = type(value)
        if kind in _PLAIN_PARTS:
            continue
        if kind is tuple or kind is list or kind is frozenset:
            pending.extend(value)
        elif kind in _HINT_TYPES:
            pending.extend(_state(value))
        elif not _compared_by_identity(kind):
            return False
    return True


def _compared_by_identity(kind: type) -> bool:
    """Instances of `kind` compare and hash as `object` does (read off the class, natively)."""
    return (type.__getattribute__(kind, "__eq__") is object.__eq__
            and type.__getattribute__(kind, "__hash__") is object.__hash__)


class _PlainHintCache:
    """One of `typing`'s caches of subscriptions (`List[x]`, `Literal[x]`...), filled by the
    host's own code only, with plain hints only (`plain_hints`): inside an in-process run's step,
    a collection or the end of a run (`control.RELEASING`), and for anything not plain, it raises
    `TypeError`, and typing's own wrapper then makes the hint uncached, as it does for an
    unhashable one. A hint a run made is then never kept past the run: a review's late code
    cached a dead run's functions, and the cache's eviction, in the host's own `typing.List[...]`,
    freed them there, outside any collection; a `str` subclass with str's own `==` and hash, cached
    late, answered the host's `typing.List['Foo']` with a dead run's `ForwardRef`."""

    __slots__ = ("cached",)

    def __init__(self, cached: Callable[..., Any]) -> None:
        self.cached = cached

    def __call__(self, *args: Any, **kwds: Any) -> Any:
        if (kwds or STEPPING.run is not None or COLLECTING.running or RELEASING.active
                or not plain_hints(args)):
            raise TypeError("not the host's plain hint: made, not cached")
        return self.cached(*args)


def _cache_plain_hints_only() -> None:
    """Put a `_PlainHintCache` in front of each of `typing`'s caches, in the closure cell of the
    wrapper `typing._tp_cache` made (typing clears the caches themselves, `typing._cleanups`)."""
    caches = [clear.__self__ for clear in typing._cleanups]  # type: ignore[attr-defined]
    ids = {id(cache) for cache in caches}
    for holder in gc.get_referrers(*caches):
        if type(holder) is types.CellType and id(holder.cell_contents) in ids:
            holder.cell_contents = _PlainHintCache(holder.cell_contents)


_cache_plain_hints_only()
