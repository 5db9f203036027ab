"""`textwrap`: wrapping and indenting text."""

from __future__ import annotations

import textwrap
from typing import Any

from ._base import pick

NAME = "textwrap"


def attrs() -> dict[str, Any]:
    return pick(textwrap, ["wrap", "fill", "dedent", "indent", "shorten", "TextWrapper"])
