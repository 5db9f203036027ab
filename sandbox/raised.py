"""Telling a `MemoryError` the snippet raised itself from one the interpreter raised.

Only a real allocation failure is the run's `memory` kind; a snippet's own `raise MemoryError`
(or one it throws into a generator or coroutine) is an `exception`. The mark is set here, by the
`_raise_` hook the policy compiles every `raise` into and by the guarded `throw`/`athrow`.
"""

from __future__ import annotations

from typing import Any

#: Instance attribute set on a `MemoryError` the snippet raised with its own `raise` statement.
#: It starts with "_", so the policy and the guards keep the snippet from reading or removing it.
_RAISED_MARK = "_sandbox_raised_by_snippet_"


def mark_raised(exc: Any) -> Any:
    """The `_raise_` hook: the policy compiles `raise X` as `raise _raise_(X)`.

    A `MemoryError` (class or instance, subclasses included) the snippet raises this way is
    marked, so it is reported as an `exception` with its own message, not as the memory limit.
    An instance that already carries a traceback was raised before: re-raising it keeps what it
    was (a real out-of-memory error caught and re-raised with `raise e` is still `memory`).
    Anything else passes through unchanged; the interpreter then raises it, or refuses it."""
    if isinstance(exc, type) and issubclass(exc, MemoryError):
        exc = exc()
    if issubclass(type(exc), MemoryError) and exc.__traceback__ is None:
        BaseException.__setattr__(exc, _RAISED_MARK, True)
    return exc


def raised_by_snippet(exc: BaseException) -> bool:
    return vars(exc).get(_RAISED_MARK) is True


def out_of_memory(exc: BaseException) -> bool:
    """`exc` is an allocation failure the interpreter raised: the run's `memory` kind, wherever
    in the run it surfaced (the snippet's code, or the loop's own callbacks)."""
    return type(exc) is MemoryError and not raised_by_snippet(exc)
