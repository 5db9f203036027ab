"""`csv`: readers and writers over the snippet's own iterables and streams (`io.StringIO`).
Left out: `register_dialect`/`unregister_dialect`/`get_dialect`/`list_dialects` and
`field_size_limit` (process-wide state shared with the host in-process)."""

from __future__ import annotations

import csv
from typing import Any

from .base import pick

NAME = "csv"


def attrs() -> dict[str, Any]:
    return pick(
        csv,
        [
            "reader", "writer", "DictReader", "DictWriter", "Sniffer", "Error", "Dialect",
            "excel", "excel_tab", "unix_dialect", "QUOTE_ALL", "QUOTE_MINIMAL", "QUOTE_NONE",
            "QUOTE_NONNUMERIC",
        ],
    )
