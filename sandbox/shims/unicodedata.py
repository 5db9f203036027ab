"""`unicodedata`: lookups in the Unicode database; the old-version database object is left out."""

from __future__ import annotations

import unicodedata
from typing import Any

from .base import public

NAME = "unicodedata"


def attrs() -> dict[str, Any]:
    return public(unicodedata, exclude=["ucd_3_2_0", "UCD"])
