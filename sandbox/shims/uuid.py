"""`uuid`: random and name-based UUIDs. `uuid1` is left out: it reads the host's MAC address
(and may run a program to find it)."""

from __future__ import annotations

import uuid
from typing import Any

from .base import pick

NAME = "uuid"


def attrs() -> dict[str, Any]:
    return pick(
        uuid,
        ["UUID", "uuid3", "uuid4", "uuid5", "NAMESPACE_DNS", "NAMESPACE_URL", "NAMESPACE_OID", "NAMESPACE_X500"],
    )
