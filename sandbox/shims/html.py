"""`html`: `escape` and `unescape` (pure string functions)."""

from __future__ import annotations

import html
from typing import Any

from .base import pick

NAME = "html"


def attrs() -> dict[str, Any]:
    return pick(html, ["escape", "unescape"])
