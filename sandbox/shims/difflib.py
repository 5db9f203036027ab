"""`difflib`: matchers and diff generators over the snippet's own sequences. `HtmlDiff` is left
out (templates as class attributes shared with the host)."""

from __future__ import annotations

import difflib
from typing import Any

from .base import pick

NAME = "difflib"


def attrs() -> dict[str, Any]:
    return pick(
        difflib,
        ["SequenceMatcher", "Differ", "unified_diff", "context_diff", "ndiff", "get_close_matches", "restore"],
    )
