"""`fnmatch`: shell-style matching on strings. The stdlib caches compiled patterns
process-wide, keyed on the pattern as passed, so every function gets plain strings, and a
pattern that is not text at all is refused before it can become a cache key."""

from __future__ import annotations

import fnmatch
from typing import Any

from .base import plain_str, plain_text

NAME = "fnmatch"


_PATTERN = "fnmatch pattern"


def fnmatch_(name: Any, pat: Any) -> bool:
    return fnmatch.fnmatch(plain_str(name), plain_text(pat, _PATTERN))


def fnmatchcase(name: Any, pat: Any) -> bool:
    return fnmatch.fnmatchcase(plain_str(name), plain_text(pat, _PATTERN))


def filter_(names: Any, pat: Any) -> list[Any]:
    return fnmatch.filter([plain_str(n) for n in names], plain_text(pat, _PATTERN))


def translate(pat: Any) -> str:
    return fnmatch.translate(plain_text(pat, _PATTERN))


fnmatch_.__name__ = "fnmatch"
filter_.__name__ = "filter"


def attrs() -> dict[str, Any]:
    return {"fnmatch": fnmatch_, "fnmatchcase": fnmatchcase, "filter": filter_, "translate": translate}
