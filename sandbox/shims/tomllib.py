"""`tomllib`: `loads`, `load` (from the snippet's own binary stream) and `TOMLDecodeError`."""

from __future__ import annotations

import tomllib
from typing import Any

from .base import pick

NAME = "tomllib"


def attrs() -> dict[str, Any]:
    return pick(tomllib, ["loads", "load", "TOMLDecodeError"])
