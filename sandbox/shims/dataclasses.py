"""`dataclasses`: `@dataclass` for the snippet's own classes (it rewrites the class and pastes
field names into source it executes, so only real `Field` objects from class bodies go in),
the field helpers, and `asdict`/`astuple` behind the `copy` shim's check (they deep-copy)."""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import ShimContext, pick
from .copy import checked_copying
from .functools import owned_only

NAME = "dataclasses"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    return {
        **pick(
            dataclasses,
            ["field", "fields", "replace", "is_dataclass", "FrozenInstanceError", "MISSING", "KW_ONLY", "InitVar"],
        ),
        "asdict": checked_copying(dataclasses.asdict),
        "astuple": checked_copying(dataclasses.astuple),
        "dataclass": owned_only(dataclasses.dataclass, ctx.guards, "@dataclass"),
    }
