"""`operator`: the public API, with `attrgetter` and `methodcaller` replaced by sandbox classes.

They take attribute names as data. These classes check the names in their constructor, so
`type(operator.attrgetter("x"))("__globals__")` is checked too; the real C getter sits in a
private slot. They also refuse the names whose values the runtime guard judges (`format`,
`register`, `mro`, ...), since the C getters read them unjudged.
"""

from __future__ import annotations

import operator
from typing import Any

from ..guards import ReadOnly, attribute_problem, plain_name
from ..policy import RUNTIME_CHECKED_ATTRIBUTES
from .base import public

NAME = "operator"


def _checked_names(names: tuple[Any, ...], count: int, what: str) -> list[Any]:
    checked = list(names)
    for i in range(min(count, len(names))):
        name = plain_name(names[i])
        for part in name.split("."):
            problem = attribute_problem(part) or (
                f'attribute "{part}" is not accessible through {what}'
                if part in RUNTIME_CHECKED_ATTRIBUTES else None
            )
            if problem:
                raise AttributeError(problem)
        checked[i] = name
    return checked


class _CheckedGetter(ReadOnly):
    __slots__ = ("_real",)
    _factory: Any = None
    _what = ""
    _count = 0  # how many leading arguments are names (0: all of them)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        count = self._count or len(args)
        object.__setattr__(self, "_real", self._factory(*_checked_names(args, count, self._what), **kwargs))

    def __call__(self, obj: Any) -> Any:
        return self._real(obj)

    def __repr__(self) -> str:
        return f"<{self._what}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"{self._what} objects cannot be copied")


class attrgetter(_CheckedGetter):  # noqa: N801 - the stdlib's name
    __slots__ = ()
    _factory = operator.attrgetter
    _what = "attrgetter"


class methodcaller(_CheckedGetter):  # noqa: N801 - the stdlib's name
    __slots__ = ()
    _factory = operator.methodcaller
    _what = "methodcaller"
    _count = 1


def attrs() -> dict[str, Any]:
    return {
        **public(operator, exclude=["attrgetter", "methodcaller"]),
        "attrgetter": attrgetter,
        "methodcaller": methodcaller,
    }
