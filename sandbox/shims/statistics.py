"""`statistics`: the public API (never `statistics.sys`, a plain module attribute), with a
`NormalDist` whose `samples` never draws from the host's generator."""

from __future__ import annotations

import os
import statistics
from typing import Any

from ..guards import CHECKED_REPLACEMENTS
from .base import public

NAME = "statistics"


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
CHECKED_REPLACEMENTS.add(NormalDist)  # the stdlib class stays out of every MRO a snippet sees


def attrs() -> dict[str, Any]:
    return {**public(statistics), "NormalDist": NormalDist}
