"""`graphlib`: `TopologicalSorter` over the snippet's own nodes, and `CycleError`."""

from __future__ import annotations

import graphlib
from typing import Any

from .base import pick

NAME = "graphlib"


def attrs() -> dict[str, Any]:
    return pick(graphlib, ["TopologicalSorter", "CycleError"])
