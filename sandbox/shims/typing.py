"""`typing`: the names models use in hints, and `runtime_checkable` for the snippet's own
protocols (a prelude, `sandbox/prelude/typing.rpy`: the stdlib's writes a flag on any class it
gets). `get_type_hints` and `ForwardRef` are left out: they `eval` strings.

A runtime protocol's `isinstance` check is the stdlib's: it looks the protocol's member names up
on the object with `hasattr` and returns only a bool."""

from __future__ import annotations

import functools
import typing
from typing import Any

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


class _Annotated(ReadOnly):
    """`typing.Annotated`, whose aliases cannot be called: calling one calls its first argument
    and writes `__orig_class__` onto whatever comes back, with host rights, and that can be a
    host object a class or function returns (a review wrote onto a host function and onto a
    class `functools` makes). `Annotated[int, "unit"]` as a hint works as in CPython."""

    __slots__ = ()

    def __getitem__(self, params: Any) -> Any:
        alias = typing.Annotated[params]
        made = alias.copy_with((alias.__origin__,))  # not the cached alias, which the host shares
        type(made).__setattr__(made, "_inst", False)
        return made

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
