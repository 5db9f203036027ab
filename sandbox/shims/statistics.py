"""`statistics`: the public API (never `statistics.sys`, a plain module attribute), with a
`NormalDist` whose `samples` never draws from the host's generator."""

from __future__ import annotations

import statistics
from typing import Any

from ..kernels import NormalDist
from .base import public

NAME = "statistics"


def attrs() -> dict[str, Any]:
    return {**public(statistics), "NormalDist": NormalDist}
