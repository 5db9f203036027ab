"""Exit codes and the one-line messages every command shares.

0 success, 1 the run (or check) failed, 2 usage, input or configuration error, 130 interrupted.
A bad input is one ``codemode: error: ...`` line on stderr, never a traceback.
"""

from __future__ import annotations

import sandbox

__all__ = [
    "ERROR_LINE",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "INTERNAL_ERROR",
    "INTERRUPTED",
    "INTERRUPTED_LINE",
    "WARNING_LINE",
    "UsageError",
    "failure_line",
    "only_error",
]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
#: What a shell reports for a process ended by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130
ERROR_LINE = "codemode: error: {message}\n"
WARNING_LINE = "codemode: warning: {message}\n"
INTERRUPTED = "interrupted"
INTERRUPTED_LINE = "codemode: interrupted\n"
INTERNAL_ERROR = "internal error: {error} (this is a bug in codemode; --debug shows the traceback)"


class UsageError(Exception):
    """A bad option, file or plugin: exit code 2."""


def only_error(error: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups (else the group)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _located(name: str, message: str) -> str:
    """Prefix a message with the file name."""
    return f"{name}: {message}"


def failure_line(name: str, error: sandbox.RunError) -> str:
    """What ``run`` (and ``check``, for a refused snippet) prints for a failed run."""
    return _located(name, f"Error: code run failed ({error.kind}): {error.message}")
