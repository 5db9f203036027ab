"""`textwrap`: wrapping, filling, shortening and indenting text; pure string functions and the
`TextWrapper` class."""

from __future__ import annotations

import textwrap
from typing import Any

from .base import pick

NAME = "textwrap"


def attrs() -> dict[str, Any]:
    return pick(textwrap, ["wrap", "fill", "dedent", "indent", "shorten", "TextWrapper"])
