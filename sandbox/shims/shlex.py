"""`shlex`: `split`, `quote` and `join` on strings. `split` needs a string (given `None`, the
stdlib reads the process's standard input); the `shlex` lexer class is left out for the same
reason."""

from __future__ import annotations

import shlex
from typing import Any

from .base import pick

NAME = "shlex"


def split(s: Any, comments: bool = False, posix: bool = True) -> list[str]:
    if not isinstance(s, str):
        raise TypeError(f"shlex.split() needs a string, not '{type(s).__name__}'")
    return shlex.split(str.__str__(s), comments, posix)


def attrs() -> dict[str, Any]:
    return {**pick(shlex, ["quote", "join"]), "split": split}
