"""`json`: `dumps`, `loads` and their error. The submodules (`json.decoder`, `json.scanner`) are
left out: they are real modules that reach `re` and `sys`."""

from __future__ import annotations

import json
from typing import Any

from .base import pick

NAME = "json"


def attrs() -> dict[str, Any]:
    return pick(json, ["dumps", "loads", "JSONDecodeError"])
