"""sdk_gen: tool schemas in, a typed Python SDK text out, plus a pre-flight check.

Dependencies point one way: `sdk_gen` takes plain data (names, descriptions, JSON Schemas) and
never imports `codemode` or `sandbox`; `codemode` composes it with the sandbox.
"""

from __future__ import annotations

from .export import export_models
from .names import map_names, sanitize_name
from .preflight import Diagnostic, check
from .sdk import DEFAULT_BUDGET, SDK, ToolSpec, clear_cache, generate

__all__ = [
    "DEFAULT_BUDGET",
    "SDK",
    "Diagnostic",
    "ToolSpec",
    "check",
    "clear_cache",
    "export_models",
    "generate",
    "map_names",
    "sanitize_name",
]

for _name in __all__:  # tracebacks and reprs name the public path, not the defining module
    _obj = globals()[_name]
    if (isinstance(_obj, type) or callable(_obj) and hasattr(_obj, "__code__")) and _obj.__module__.startswith(
        __name__ + "."
    ):
        _obj.__module__ = __name__
del _name, _obj
