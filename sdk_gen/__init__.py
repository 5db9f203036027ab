"""sdk_gen: tool schemas in, a typed Python SDK text out, plus a pre-flight check.

Dependencies point one way: `sdk_gen` takes plain data (names, descriptions, JSON Schemas) and
never imports `codemode` or `sandbox`; `codemode` composes it with the sandbox.
"""

from __future__ import annotations

from ._check import Diagnostic, check
from ._export import export_models
from ._names import map_names, sanitize_name
from ._sdk import DEFAULT_BUDGET, SDK, ToolSpec, clear_cache, generate

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

for _name in __all__:
    _obj = globals()[_name]
    if hasattr(_obj, "__module__") and not isinstance(_obj, int):
        try:
            _obj.__module__ = __name__
        except (AttributeError, TypeError):
            pass
del _name, _obj
