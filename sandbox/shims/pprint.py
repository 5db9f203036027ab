"""`pprint`: `pformat` and friends, with `pprint`/`pp` printing to the run's log (the stdlib's
print to the process's standard output). `PrettyPrinter` is left out for the same reason."""

from __future__ import annotations

import pprint
from typing import Any

from .base import ShimContext, pick

NAME = "pprint"
PER_RUN = True


def build(ctx: ShimContext) -> dict[str, Any]:
    def pprint_(obj: Any, stream: Any = None, indent: int = 1, width: int = 80, depth: Any = None, *,
                compact: bool = False, sort_dicts: bool = True, underscore_numbers: bool = False) -> None:
        if stream is not None:
            raise TypeError("pprint(stream=...) is not available in the sandbox; use pformat()")
        ctx.print_fn(pprint.pformat(obj, indent, width, depth, compact=compact, sort_dicts=sort_dicts,
                                underscore_numbers=underscore_numbers))

    def pp(obj: Any, *args: Any, sort_dicts: bool = False, **kwargs: Any) -> None:
        pprint_(obj, *args, sort_dicts=sort_dicts, **kwargs)

    pprint_.__name__ = "pprint"
    return {**pick(pprint, ["pformat", "saferepr", "isreadable", "isrecursive"]), "pprint": pprint_, "pp": pp}
