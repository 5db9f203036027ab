"""`numbers`: the numeric ABCs, for `isinstance` checks and subclassing (their `register` is
refused by the attribute guard, as for every ABC)."""

from __future__ import annotations

import numbers
from typing import Any

from .base import pick

NAME = "numbers"


def attrs() -> dict[str, Any]:
    return pick(numbers, ["Number", "Complex", "Real", "Rational", "Integral"])
