"""Test-only god mode for sessions: runs get the real `setattr`, `object.__setattr__` and
`getattr` as the builtins `real_setattr`/`real_object_setattr`/`real_getattr` ("suppose the
Python layers were broken"). Only
the builtins change; the policy, guards, shims and jail are the usual ones.

A test template imports this and calls `install()` before it starts (`_template_prelude`); an
in-process test patches `sandbox.execution.build_builtins` with `wrap(...)` for itself. Importing
it changes nothing.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any


def wrap(build: Callable[..., Any]) -> Callable[..., Any]:
    def god_builtins(*args: Any, extra: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        powers = {"real_setattr": builtins.setattr, "real_object_setattr": object.__setattr__,
                  "real_getattr": builtins.getattr}
        return build(*args, extra={**(extra or {}), **powers}, **kwargs)

    return god_builtins


def install() -> None:
    import sandbox.execution as execution

    execution.build_builtins = wrap(execution.build_builtins)  # type: ignore[assignment]
