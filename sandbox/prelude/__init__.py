"""Preludes: shim code written in restricted Python and run as the snippet's own code.

A shim that must traverse a snippet's objects (copy them, read their fields, wrap them) would
otherwise do it as host code, with host rights: every attribute it reads by a name the snippet
chose, and every value it hands back, is a crossing nobody judges. A prelude does that work
under the snippet's own policy instead: its source (`<module>.rpy` next to this file) is
compiled by the same `SnippetPolicy`, and runs with the run's own `_getattr_`, `_write_`, class
factory and builtins, so it can do nothing the snippet could not do itself. What it cannot
write in restricted Python it asks of host *kernels* (`sandbox.kernels`), which accept only
exact plain data, or only the run's own objects by identity, and are safe to hand to a snippet
directly.

Each prelude is compiled once per process (per budget mode) and executed per run, into a fresh
module namespace, on the run's first import of its module; a run that never imports it pays
nothing. Its frames are not the snippet's (`FILENAME`), so tracebacks show only snippet lines;
its functions and classes count as the run's own (see `is_prelude_code`).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from pathlib import Path
from types import CodeType
from typing import Any

from ..policy import SnippetPolicy

_HERE = Path(__file__).resolve().parent

#: The file name prelude code is compiled under: `<prelude:copy>`.
FILENAME_PREFIX = "<prelude:"


def filename(name: str) -> str:
    return f"{FILENAME_PREFIX}{name}>"


def is_prelude_code(code: CodeType) -> bool:
    """Code compiled from a prelude (per run, under the snippet's policy)."""
    return code.co_filename.startswith(FILENAME_PREFIX)


class PreludeError(RuntimeError):
    """A prelude's source broke the policy: a bug in the sandbox, never the snippet's fault."""


@functools.cache
def compiled(name: str, budget: bool) -> CodeType:
    """The prelude `name` compiled under the snippet policy (with budget ticks if `budget`),
    once per process: the code object is immutable, so every run shares it."""
    source = (_HERE / f"{name}.rpy").read_text(encoding="utf-8")
    tree = ast.parse(source, filename=filename(name), mode="exec")
    policy = SnippetPolicy(budget=budget)
    tree = policy.visit(tree)
    if policy.problems:
        lines = "; ".join(f"line {p.line}: {p.message}" for p in policy.problems)
        raise PreludeError(f"prelude {name!r} breaks the snippet policy: {lines}")
    ast.fix_missing_locations(tree)
    return compile(tree, filename(name), "exec", dont_inherit=True)


def names() -> tuple[str, ...]:
    """Every prelude there is (one `.rpy` source each)."""
    return tuple(sorted(p.stem for p in _HERE.glob("*.rpy")))


def preload(budget: bool = False) -> None:
    """Compile every prelude now: a confined worker cannot read the sources, and the worker
    template compiles them once before it forks, so no run pays for it."""
    for name in names():
        compiled(name, budget)


def run(name: str, module_globals: dict[str, Any], kernels: Mapping[str, Any] = {}) -> dict[str, Any]:
    """Execute prelude `name` into `module_globals` (the run's hooks and builtins, built by the
    caller as the snippet's are) with `kernels` bound as plain names; returns the namespace."""
    module_globals.update(kernels)
    exec(compiled(name, "_tick_" in module_globals), module_globals)
    return module_globals


__all__ = ["FILENAME_PREFIX", "PreludeError", "compiled", "filename", "is_prelude_code", "names", "preload", "run"]
