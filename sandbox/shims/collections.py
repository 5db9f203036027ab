"""`collections`: the container classes. `collections.abc` is left out here (the ABCs'
`register` changes classes shared with the host); `typing` offers the same names for hints."""

from __future__ import annotations

import collections
from typing import Any

from .base import pick

NAME = "collections"


def attrs() -> dict[str, Any]:
    return pick(collections, ["Counter", "defaultdict", "OrderedDict", "deque", "namedtuple", "ChainMap"])
