"""`abc`: `ABC` and `abstractmethod`, as a prelude (`sandbox/prelude/abc.rpy`).

`ABC` is the real one: `ABCMeta` over a class body is host machinery the sandbox already runs
for `typing.Protocol` (it reads the body's values' `__isabstractmethod__`), and CPython refuses
to instantiate an abstract class. `abstractmethod` marks only the snippet's own functions.
`ABC.register` on the snippet's own ABCs is judged like any `register` read. Left out:
`ABCMeta` (the policy refuses `metaclass=`; `ABC` is the way in), `get_cache_token`, `update_abstractmethods` and the deprecated `abstractproperty` family.
"""

from __future__ import annotations

import abc
from typing import Any

from ..kernels import RunKernels
from .base import ShimContext

NAME = "abc"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    kernels = RunKernels(ctx.guards)
    namespace = ctx.run_prelude("abc", NAME, {"mark_abstract": kernels.mark_abstract})
    return {"ABC": abc.ABC, "abstractmethod": namespace["abstractmethod"]}
