"""`textwrap`: wrapping, filling, shortening and indenting text; pure string functions and a
checked `TextWrapper`.

The stdlib's `TextWrapper` calls `text.translate(self.unicode_whitespace_trans)`: a `str`
subclass's own `translate` received the class-level table every run shares, and could change
it for the host. The sandbox's `TextWrapper` copies the text to an exact `str` before it
munges whitespace (so only C string methods see the table) and keeps the table as a read-only
mapping; the real class is behind it, hidden from `mro()` like the other checked replacements.
`wrap`, `fill` and `shorten` use it.
"""

from __future__ import annotations

import textwrap
from types import MappingProxyType
from typing import Any

from ..guards import CHECKED_REPLACEMENTS
from .base import named_after, pick

NAME = "textwrap"


class TextWrapper(textwrap.TextWrapper):
    """`textwrap.TextWrapper` that munges whitespace of an exact `str` copy only."""

    unicode_whitespace_trans = MappingProxyType(dict(textwrap.TextWrapper.unicode_whitespace_trans))

    def _munge_whitespace(self, text: Any) -> Any:
        if isinstance(text, str):
            text = str.__str__(text)
        return super()._munge_whitespace(text)


CHECKED_REPLACEMENTS.add(TextWrapper)
TextWrapper.__module__ = "textwrap"


@named_after(textwrap.wrap)
def wrap(text: Any, width: int = 70, **kwargs: Any) -> list[str]:
    return TextWrapper(width=width, **kwargs).wrap(text)


@named_after(textwrap.fill)
def fill(text: Any, width: int = 70, **kwargs: Any) -> str:
    return TextWrapper(width=width, **kwargs).fill(text)


@named_after(textwrap.shorten)
def shorten(text: Any, width: int, **kwargs: Any) -> str:
    if isinstance(text, str):
        text = str.__str__(text)
    return TextWrapper(width=width, max_lines=1, **kwargs).fill(" ".join(text.strip().split()))


def attrs() -> dict[str, Any]:
    return {**pick(textwrap, ["dedent", "indent"]), "wrap": wrap, "fill": fill, "shorten": shorten,
            "TextWrapper": TextWrapper}
