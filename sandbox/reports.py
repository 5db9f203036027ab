"""What CPython and the stdlib report of a run's code goes nowhere on the host.

A run's code, or what CPython runs of a run late (a freed generator's delegate `close`), can
make `warnings` print snippet-chosen text to the host's stderr and keep it in a host module's
`__warningregistry__` for good, and CPython print "Exception ignored in ..." with the snippet's
text through the host's `sys.unraisablehook`. A `warnings` filter and a hook in front of the
host's drop both while a run's code may run on the thread (a step, a collection, the end of a
run). Both are process-wide settings the host owns and may change at any time, so they are put
back in front at each in-process run's start and end and each session's end (a review's
session, thrown away after the host's `catch_warnings` had ended, printed a late warning). Not
inside a collection: C code may be reading the filters around the allocation that started it
(a version that did cut the host's filters short and crashed CPython). So what the host's own
collector finalizes of a session's earlier run, after the host put a filter or a hook of its
own in front, is reported as the host's settings say.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable
from typing import Any

from .control import COLLECTING, RELEASING
from .crossing import STEPPING

__all__ = ["quiet_reports", "run_code_runs_here"]


class _InARun:
    """The message pattern of a `warnings` filter that matches any text while a run's code, or
    what CPython runs of a run late, runs on this thread: a step, a collection, the end of a run.
    A warning raised there (the stdlib's `re` parser warns about a snippet's pattern; CPython's
    "coroutine ... was never awaited" names a snippet's coroutine) is ignored, where `warnings`
    would have kept its snippet-chosen text in the host module's `__warningregistry__` for good
    and printed it to the host's stderr (reviews grew `sandbox.scheduler`'s and
    `sandbox.shims.re`'s registries with every run). "ignore" writes no registry entry."""

    __slots__ = ()

    def match(self, text: str) -> bool:
        return run_code_runs_here()


def run_code_runs_here() -> bool:
    """A run's code, or what CPython runs of a run late, may run on this thread now."""
    return STEPPING.run is not None or COLLECTING.running or RELEASING.active


#: Ignored: what a run's code warns, and CPython's never-awaited warning about a snippet's
#: coroutine freed in a sandbox frame between steps. A run's unawaited tool calls are reported
#: in its own log (`output.render_logs`).
_QUIET = (
    ("ignore", _InARun(), Warning, None, 0),
    ("ignore", re.compile(r"coroutine .* was never awaited", re.I), RuntimeWarning,
     re.compile(r"(sandbox(\..*)?|__snippet__)\Z"), 0),
)


class _QuietUnraisable:
    """`sys.unraisablehook` in front of the host's: drops CPython's "Exception ignored in ..."
    report while a run's code runs on this thread (`run_code_runs_here`), where the exception's text is the
    snippet's (a review's freed generator's delegate `close`, `partial(int, text)`, printed that
    text to the host's stderr); otherwise passes it on."""

    __slots__ = ("host",)

    def __init__(self, host: Callable[[Any], object]) -> None:
        self.host = host

    def __call__(self, unraisable: Any) -> None:
        if not run_code_runs_here():
            self.host(unraisable)


def quiet_reports() -> None:
    """Put `_QUIET` first among the `warnings` filters, should it not be there (a host's
    `catch_warnings` drops it when it exits; a filter the host adds goes in front of it), and
    `_QuietUnraisable` in front of the host's unraisable hook (see the module docs for where:
    a review's session, thrown away after the host's `catch_warnings` had ended, printed a `re`
    warning to the host's stderr). Never inside a collection (see the module docs): a host
    object's finalizer that closes a session there finds them as they are."""
    if COLLECTING.running:
        return
    if warnings.filters[:len(_QUIET)] != list(_QUIET):
        warnings.filters[:] = [*_QUIET, *(kept for kept in warnings.filters if kept not in _QUIET)]
        warnings._filters_mutated()  # type: ignore[attr-defined]
    if type(sys.unraisablehook) is not _QuietUnraisable:
        sys.unraisablehook = _QuietUnraisable(sys.unraisablehook)
