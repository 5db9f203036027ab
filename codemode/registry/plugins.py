"""Tool plugins: a module (by dotted path or ``.py`` file path) with ``apply(registry)``.

File plugins are imported under a private module name derived from the path, so two plugins with
the same file name in different folders do not collide, and loading one never shadows a real
package in ``sys.modules``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from .errors import PluginLoadError

__all__ = ["load_plugin"]


def load_plugin(registry: object, spec: str) -> ModuleType:
    """Import ``spec`` and call its ``apply(registry)``; return the module. ``registry`` is passed
    through untouched (a ``Registry``), so this module needs nothing of the registry's own.

    ``spec`` is a file path when it ends in ``.py`` or names an existing file, else a dotted module
    path. Raises ``PluginLoadError`` (cause chained) when the module cannot be found or imported,
    has no callable ``apply``, or ``apply`` raises.
    """
    module = _import(spec)
    apply = getattr(module, "apply", None)
    if not callable(apply):
        raise PluginLoadError(f"plugin {spec!r} has no apply(registry) function")
    try:
        apply(registry)
    except Exception as exc:
        raise PluginLoadError(f"plugin {spec!r} failed in apply(): {type(exc).__name__}: {exc}") from exc
    return module


def _import(spec: str) -> ModuleType:
    path = Path(spec)
    if spec.endswith(".py") or path.is_file():
        if not path.is_file():
            raise PluginLoadError(f"plugin file {spec!r} does not exist")
        resolved = path.resolve()
        digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
        name = f"_codemode_plugin_{resolved.stem}_{digest}"
        module_spec = importlib.util.spec_from_file_location(name, resolved)
        if module_spec is None or module_spec.loader is None:
            raise PluginLoadError(f"plugin file {spec!r} cannot be imported")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            sys.modules.pop(name, None)
            raise PluginLoadError(f"plugin file {spec!r} failed to import: {type(exc).__name__}: {exc}") from exc
        return module
    try:
        return importlib.import_module(spec)
    except ImportError as exc:
        raise PluginLoadError(f"plugin module {spec!r} cannot be imported: {exc}") from exc
    except Exception as exc:
        raise PluginLoadError(f"plugin module {spec!r} failed to import: {type(exc).__name__}: {exc}") from exc
