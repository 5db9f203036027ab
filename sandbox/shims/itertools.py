"""`itertools`: the whole public API; iterator building blocks hold nothing of the host."""

from __future__ import annotations

import itertools
from typing import Any

from .base import public

NAME = "itertools"


def attrs() -> dict[str, Any]:
    return public(itertools)
