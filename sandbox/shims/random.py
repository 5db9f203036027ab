"""`random`: the module-level functions, bound to a generator of this run's own (so no run sees
or sets another's state), and the `Random` class."""

from __future__ import annotations

import random
from typing import Any

from .base import ShimContext

NAME = "random"
PER_RUN = True

_METHODS = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "gauss", "seed", "getrandbits", "triangular", "betavariate", "expovariate",
    "normalvariate", "lognormvariate", "vonmisesvariate", "gammavariate", "paretovariate",
    "weibullvariate", "randbytes",
)


def build(ctx: ShimContext) -> dict[str, Any]:
    rng = random.Random()
    return {**{n: getattr(rng, n) for n in _METHODS}, "Random": random.Random}
