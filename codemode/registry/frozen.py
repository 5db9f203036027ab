"""Immutable JSON: one conversion at the boundary instead of a deep copy per reader.

Arguments, values and content blocks cross several hands (hooks, the tool body, observers, the
event log). Converting them once into immutable containers lets every hand share one object
safely, so the pipeline never deep-copies on the hot path. ``FrozenDict`` subclasses ``dict`` and
``FrozenList`` subclasses ``tuple`` so ``json.dumps`` and ``isinstance(x, dict)`` keep working.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn

__all__ = ["FrozenDict", "FrozenList", "NotJSONError", "freeze", "thaw"]


class NotJSONError(TypeError):
    """A value holds something JSON cannot carry; ``path`` says where (``$.a[0]``)."""

    def __init__(self, path: str, type_name: str) -> None:
        super().__init__(f"{type_name} at {path} is not JSON")
        self.path = path
        self.type_name = type_name


def _readonly(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"{type(self).__name__} is immutable; thaw() it for a mutable copy")


class FrozenDict(dict):
    """A JSON object nobody can mutate. Only ``freeze`` should build one, so contents are frozen."""

    __slots__ = ()
    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly
    __ior__ = _readonly  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_dict, (dict(self),))

    def __copy__(self) -> FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict:
        return self

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


class FrozenList(tuple):
    """A JSON array nobody can mutate; a tuple, so it is also hashable when its items are."""

    __slots__ = ()

    def __copy__(self) -> FrozenList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenList:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenList, (tuple(self),))


def _rebuild_dict(items: dict[str, Any]) -> FrozenDict:
    return FrozenDict(items)


_SCALARS = (str, int, bool, type(None))


def freeze(value: Any, path: str = "$") -> Any:
    """Return an immutable deep copy of a JSON value.

    Raises ``NotJSONError`` for anything JSON cannot carry: non-string keys, sets, bytes,
    arbitrary objects, NaN and infinities. Already-frozen containers are returned as they are,
    which makes re-freezing a canonical value free.
    """
    cls = type(value)
    if cls is str or cls is int or cls is bool or value is None:
        return value
    if cls is FrozenDict or cls is FrozenList:
        return value
    if cls is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise NotJSONError(f"{path}[{key!r}]", "non-string key")
            t = type(item)
            out[key] = item if (t is str or t is int or t is bool or item is None) else freeze(
                item, f"{path}.{key}"
            )
        return FrozenDict(out)
    if cls is list or cls is tuple:
        return FrozenList([freeze(item, f"{path}[{i}]") for i, item in enumerate(value)])
    if cls is float:
        if not math.isfinite(value):
            raise NotJSONError(path, f"float {value!r}")
        return value
    if isinstance(value, dict):
        return freeze(dict(value), path)
    if isinstance(value, (list, tuple)):
        return freeze(list(value), path)
    if isinstance(value, _SCALARS):  # str/int subclasses such as enum members
        return (str if isinstance(value, str) else int)(value) if not isinstance(value, bool) else bool(value)
    if isinstance(value, float):
        return freeze(float(value), path)
    raise NotJSONError(path, type(value).__name__)


def thaw(value: Any) -> Any:
    """Return a plain, mutable deep copy (``dict`` and ``list``) of a frozen or plain JSON value."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value
