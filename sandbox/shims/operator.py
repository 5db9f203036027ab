"""`operator`: the public API, with `attrgetter` and `methodcaller` as a prelude
(`sandbox/prelude/operator.rpy`). They take attribute names as data; as the snippet's own
classes they read each name with the snippet's own guarded getattr, so no name check lives in
host code (or in state a real `setattr` could change), and `type(attrgetter('x'))('__globals__')`
is refused like `getattr(x, '__globals__')`.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

from ..kernels import RunKernels
from .base import ShimContext, public

NAME = "operator"
PER_RUN = True


@functools.cache
def _static() -> dict[str, Any]:
    return public(operator, exclude=["attrgetter", "methodcaller"])


def build(ctx: ShimContext) -> dict[str, Any]:
    namespace = ctx.run_prelude("operator", NAME, {"read": RunKernels(ctx.guards).reader()})
    return {**_static(), "attrgetter": namespace["attrgetter"], "methodcaller": namespace["methodcaller"]}
