"""sandbox: run model-written Python snippets safely.

Dependency direction: `sandbox` stands alone. It knows nothing of tools, registries or SDKs;
`codemode` composes it. A snippet is the body of an async function, compiled under a restricted
policy and run in a single-use, resource-limited worker process (or in-process, for trusted
code). It reaches the host only through named async functions ("bindings"), by JSON messages.
"""

from .api import BackendName, Runtime, check, get_runtime, jail_status, run
from .control import RunController, RunOverError
from .host import BindingError, call_abandoned
from .inprocess import InProcessRuntime
from .jail import JailError, JailStatus
from .jsonvalue import escape_surrogates
from .limits import DEFAULT_LIMITS, Limits
from .result import ERROR_KINDS, ErrorKind, JailLevel, RunError, RunResult
from .scheduler import ToolCallError
from .sessions import DEFAULT_SESSION_LIMITS, Session, SessionLimits, open_session
from .shims import ALLOWED_MODULES
from .workers import WorkerRuntime

__all__ = [
    "ALLOWED_MODULES",
    "DEFAULT_LIMITS",
    "DEFAULT_SESSION_LIMITS",
    "ERROR_KINDS",
    "BackendName",
    "BindingError",
    "ErrorKind",
    "InProcessRuntime",
    "JailError",
    "JailLevel",
    "JailStatus",
    "Limits",
    "RunController",
    "RunError",
    "RunOverError",
    "RunResult",
    "Runtime",
    "Session",
    "SessionLimits",
    "ToolCallError",
    "WorkerRuntime",
    "call_abandoned",
    "check",
    "escape_surrogates",
    "get_runtime",
    "jail_status",
    "open_session",
    "run",
]

for _name in __all__:  # tracebacks and reprs name the public path, not the defining module
    _obj = globals()[_name]
    if (isinstance(_obj, type) or callable(_obj) and hasattr(_obj, "__code__")) and _obj.__module__.startswith(
        __name__ + "."
    ):
        _obj.__module__ = __name__
del _name, _obj
