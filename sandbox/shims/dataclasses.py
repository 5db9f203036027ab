"""`dataclasses`: `@dataclass` for the snippet's own classes (it rewrites the class and pastes
field names into source it executes, so only real `Field` objects from class bodies go in),
and the field helpers `fields`, `replace`, `asdict` and `astuple` as a prelude
(`sandbox/prelude/dataclasses.rpy`): they read fields with the snippet's own `getattr` and
build with its own constructors, so a planted `__dataclass_fields__` gets exactly the
snippet's rights; the field list comes from a kernel that reads only exact `Field` objects."""

from __future__ import annotations

import dataclasses
from typing import Any

from ..kernels import PLAIN_SCALARS, RunKernels, field_table
from .base import ShimContext, pick
from .functools import owned_only

NAME = "dataclasses"
PER_RUN = True

#: What `asdict`/`astuple` return as they are (CPython deep-copies them, which changes nothing).
_ATOMIC = frozenset({*PLAIN_SCALARS, complex})


def build(ctx: ShimContext) -> dict[str, Any]:
    kernels = RunKernels(ctx.guards)
    namespace = ctx.run_prelude(
        "dataclasses", NAME,
        {"field_table": field_table, "owns": kernels.owns, "read": kernels.reader(), "ATOMIC": _ATOMIC},
    )
    return {
        **pick(dataclasses, ["field", "is_dataclass", "FrozenInstanceError", "MISSING", "KW_ONLY", "InitVar"]),
        **{name: namespace[name] for name in ("fields", "replace", "asdict", "astuple")},
        "dataclass": owned_only(dataclasses.dataclass, ctx.guards, "@dataclass", pastes_fields=True),
    }
