"""`sandbox.run`: the one call most users need, with backends picked by name."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Literal, Protocol

from .control import RunController
from .execution import syntax_result
from .host import Bindings
from .inprocess import InProcessRuntime
from .jail import LAYERS, JailStatus
from .jsonvalue import escape_surrogates
from .limits import DEFAULT_LIMITS, Limits
from .policy import PolicyError, compile_snippet
from .result import RunError, RunResult
from .workers import WorkerRuntime

BackendName = Literal["worker", "inprocess"]


class Runtime(Protocol):
    """What a backend provides: one method that runs one snippet."""

    name: str

    async def run(
        self,
        code: str,
        *,
        bindings: Bindings,
        limits: Limits,
        namespace: str = "tools",
        docs: Mapping[str, str] | None = None,
        controller: RunController | None = None,
    ) -> RunResult: ...


_default_lock = threading.Lock()
_defaults: dict[str, Runtime] = {}


def get_runtime(backend: BackendName | Runtime = "worker") -> Runtime:
    """The shared runtime for a backend name (created on first use), or `backend` itself."""
    if not isinstance(backend, str):
        return backend
    if backend not in ("worker", "inprocess"):
        raise ValueError(f"unknown backend {backend!r}; use 'worker' or 'inprocess'")
    with _default_lock:
        runtime = _defaults.get(backend)
        if runtime is None:
            runtime = WorkerRuntime() if backend == "worker" else InProcessRuntime()
            _defaults[backend] = runtime
        return runtime


def jail_status(backend: BackendName | Runtime = "worker") -> JailStatus:
    """Which jail layers confine runs on `backend` on this host: the one call that tells.

    For the worker backend this starts its template if needed and blocks until it has
    reported (well under a second). The in-process backend has no jail at all."""
    runtime = get_runtime(backend)
    if isinstance(runtime, WorkerRuntime):
        return runtime.jail_status()
    return JailStatus(missing={layer: f"the {runtime.name} backend runs in the host's own process"
                               for layer in LAYERS})


def check(code: str, *, limits: Limits = DEFAULT_LIMITS) -> RunError | None:
    """The `syntax` error a run of `code` would end with before running (its size, the parser,
    the compile policy), or None: compiles under the policy and executes nothing, so a tool can
    give the verdict of `run` without running the snippet."""
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    try:
        compile_snippet(escape_surrogates(code), limits)
    except PolicyError as exc:
        return syntax_result(exc).error
    return None


async def run(
    code: str,
    *,
    bindings: Bindings | None = None,
    limits: Limits = DEFAULT_LIMITS,
    namespace: str = "tools",
    docs: Mapping[str, str] | None = None,
    backend: BackendName | Runtime = "worker",
    controller: RunController | None = None,
) -> RunResult:
    """Run a snippet (the body of an async function) and return what it printed and returned.

    bindings: async host functions the snippet calls as `<namespace>.<name>(...)`.
    docs: per-name text; when given, the snippet also gets `<namespace>.describe(name)` and
        `<namespace>.list()`.
    Never raises for anything the snippet does; errors come back in `RunResult.error`.
    Cancelling the awaiting task ends the run (and kills its worker) and propagates.
    """
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    if not namespace.isidentifier():
        raise ValueError(f"namespace must be an identifier, got {namespace!r}")
    return await get_runtime(backend).run(
        code,
        bindings=dict(bindings or {}),
        limits=limits,
        namespace=namespace,
        docs=docs,
        controller=controller,
    )
