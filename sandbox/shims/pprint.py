"""`pprint`: `pformat`, `pprint`, `pp`, `PrettyPrinter`, `saferepr`, `isreadable` and
`isrecursive`, as a prelude (`sandbox/prelude/pprint.rpy`, a port of CPython's): the container
walk, the sorting and every `repr()` run as the snippet's own code, and a dataclass's fields are
read with the snippet's own `getattr` (the stdlib's host code read them by the names a
`__dataclass_fields__` gave). `pprint`/`pp` print to the run's log (the stdlib's print to the
process's standard output), so `stream=` is refused."""

from __future__ import annotations

import types
from typing import Any

from ..kernels import RunKernels
from .base import ShimContext
from .functools import is_generated_method

NAME = "pprint"
PER_RUN = True

#: What the prelude defines for this module.
EXPORTS = ("pformat", "pprint", "pp", "PrettyPrinter", "saferepr", "isreadable", "isrecursive")


def _generated_repr(method: Any) -> bool:
    """`type(x).__repr__` is the `__repr__` that `@dataclass` generated (CPython's pprint asks
    `__wrapped__`, which the sandbox's generated methods do not carry)."""
    return is_generated_method(method, "__repr__")


def _namespace_names(obj: Any) -> list[str]:
    """The attribute names of a `types.SimpleNamespace`, in order: plain strings only, read from
    its exact instance dictionary (the values are then read with the snippet's own getattr)."""
    if not isinstance(obj, types.SimpleNamespace):
        raise TypeError("expected a types.SimpleNamespace")
    found = object.__getattribute__(obj, "__dict__")
    if type(found) is not dict:
        raise TypeError("expected a types.SimpleNamespace")
    return [str.__str__(name) for name in dict.keys(found) if isinstance(name, str)]


_NUMBERS = frozenset({int, float, bool})


def _sorts_plainly(container: Any) -> bool:
    """An exact dict, set or frozenset whose keys are all exact `str`, or all exact numbers:
    sorting them compares with `<` in C, never raises and runs no snippet code, so CPython's
    `SafeKey` wrappers change nothing (the prelude's fast path)."""
    if type(container) not in (dict, set, frozenset):
        return False
    kinds = {type(key) for key in container}
    return kinds == {str} or (bool(kinds) and kinds <= _NUMBERS)


def _is_exact_namespace(obj: Any) -> bool:
    return type(obj) is types.SimpleNamespace


def build(ctx: ShimContext) -> dict[str, Any]:
    kernels = RunKernels(ctx.guards)
    namespace = ctx.run_prelude("pprint", NAME, {
        "type_of": kernels.type_of,
        "read": kernels.reader(),
        "sorts_plainly": _sorts_plainly,
        "generated_repr": _generated_repr,
        "namespace_names": _namespace_names,
        "MAPPINGPROXY_REPR": types.MappingProxyType.__repr__,
        "is_exact_namespace": _is_exact_namespace,
        "SIMPLE_NAMESPACE_REPR": types.SimpleNamespace.__repr__,
    })
    return {name: namespace[name] for name in EXPORTS}
