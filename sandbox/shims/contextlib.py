"""`contextlib`: `suppress`, `contextmanager`, `asynccontextmanager`, `ExitStack`,
`AsyncExitStack`, `nullcontext`, `closing`, `aclosing` and the abstract bases, as a prelude
(`sandbox/prelude/contextlib.rpy`): the snippet's own code, per run, so entering, exiting and
wrapping the snippet's objects happens with the snippet's rights and nothing else. Left out:
`redirect_stdout`/`redirect_stderr` and `chdir` (process-wide state)."""

from __future__ import annotations

from typing import Any

from .base import ShimContext

NAME = "contextlib"
PER_RUN = True

EXPORTS = (
    "AbstractAsyncContextManager", "AbstractContextManager", "AsyncContextDecorator",
    "AsyncExitStack", "ContextDecorator", "ExitStack", "aclosing", "asynccontextmanager",
    "closing", "contextmanager", "nullcontext", "suppress",
)


def build(ctx: ShimContext) -> dict[str, Any]:
    namespace = ctx.run_prelude("contextlib", NAME, {})
    return {name: namespace[name] for name in EXPORTS}
