"""`typing`: the names models use in hints, and `runtime_checkable` for the snippet's own
protocols (a prelude, `sandbox/prelude/typing.rpy`: the stdlib's writes a flag on any class it
gets). `get_type_hints` and `ForwardRef` are left out: they `eval` strings.

A runtime protocol's `isinstance` check is the stdlib's: it looks the protocol's member names up
on the object with `hasattr` and returns only a bool."""

from __future__ import annotations

import functools
import typing
from typing import Any

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


@functools.cache
def _static() -> dict[str, Any]:
    return pick(
        typing,
        [
            "Any", "Optional", "Union", "List", "Dict", "Set", "FrozenSet", "Tuple", "Callable",
            "Iterable", "Iterator", "Sequence", "Mapping", "MutableMapping", "Literal",
            "TypedDict", "NamedTuple", "cast", "Final", "ClassVar", "TYPE_CHECKING", "Generic",
            "TypeVar", "Protocol", "Awaitable", "AsyncIterator", "NotRequired", "Required",
            "Self", "Annotated", "Coroutine", "Type", "DefaultDict", "Counter", "Deque",
            "OrderedDict", "AnyStr", "NoReturn", "Never",
        ],
    )
