"""`copy`: `copy`, `deepcopy` and `Error`, as a prelude (`sandbox/prelude/copy.rpy`).

The real `copy` looks hooks up on objects, calls their reduce protocol, and drives `setattr` on
whatever object a reduce callable returns with whatever names its state gives, with host
rights; its memo, handed to every `__deepcopy__`, keeps the originals alive, host objects
included. The prelude walks the snippet's objects as the snippet's own code instead: every read
and write is a guarded one, a `__deepcopy__` gets a plain memo of the snippet's own objects, and
no reduce protocol runs on a snippet object. Host classes' values are copied by a rule per type
(`sandbox.kernels.copy_host`, `copy_iterator`, `RunKernels.copy_layout`), or refused.
"""

from __future__ import annotations

import collections
import copy
import enum
import functools
import types
from typing import Any

from .. import kernels
from ..kernels import COPY_ATOMIC, RunKernels
from .base import ShimContext

NAME = "copy"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    run = RunKernels(ctx.guards)
    namespace = ctx.run_prelude("copy", NAME, {
        "ATOMIC": COPY_ATOMIC, "DEEP_ATOMIC": COPY_ATOMIC - {types.MethodType}, "MethodType": types.MethodType,
        "UNHANDLED": kernels.COPY_UNHANDLED, "rebind_method": run.rebind_method,
        "MAPPINGS": frozenset({collections.OrderedDict, collections.Counter, collections.defaultdict}),
        "deque": collections.deque, "defaultdict": collections.defaultdict, "ChainMap": collections.ChainMap,
        "Enum": enum.Enum, "partial": functools.partial,
        "owns": ctx.guards.owns, "ident": ctx.guards.id, "copy_hook": run.copy_hook, "own_state": run.own_state,
        "copy_layout": run.copy_layout, "blank": run.blank,
        "copy_host_slots": run.copy_host_slots, "datetime_args": run.datetime_args, "copy_host": kernels.copy_host,
        "copy_iterator": kernels.copy_iterator, "rebuild_iterator": kernels.rebuild_iterator,
        "copy_refusal": kernels.copy_refusal, "exception_parts": kernels.exception_parts, "builtin_value": kernels.builtin_value,
    })
    return {"copy": namespace["copy"], "deepcopy": namespace["deepcopy"], "Error": copy.Error}
