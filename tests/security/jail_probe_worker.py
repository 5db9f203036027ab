"""Imported by a probe template before it starts: swaps the snippet step for unrestricted Python.

This is the test-only way to ask "suppose the Python layers were already broken": the code a
probe run sends is executed with the real builtins, `os`, `socket` and `ctypes`, inside a real
worker, after every layer of the jail is in place (the syscall filter is loaded just before this
step, exactly as for a snippet). The code sets `result` to a JSON value.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import sys

import sandbox.worker as worker
from sandbox.result import RunResult


def attempt(fn, *args):
    """Call fn; {"ok": repr} if it returned, {"errno": name} if it raised OSError."""
    try:
        value = fn(*args)
    except OSError as exc:
        return {"errno": errno.errorcode.get(exc.errno, str(exc.errno)) if exc.errno else type(exc).__name__}
    except BaseException as exc:  # noqa: BLE001 - reported to the test, which decides
        return {"raised": type(exc).__name__, "message": str(exc)[:200]}
    if fn is os.fork and value == 0:  # a child that should never exist
        os._exit(0)
    return {"ok": repr(value)[:200]}


def syscall(name: str, *args: int):
    """Make one raw system call by name; returns its result, raises OSError(errno) on -1."""
    import pyseccomp

    libc = ctypes.CDLL(None, use_errno=True)
    number = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
    res = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if res == -1:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return res


def syscall_number(number: int, *args: int):
    """Make one raw system call by number."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))


_KEEP: list = []


def path(text: str) -> int:
    """The address of a NUL-terminated copy of `text`, for raw system calls."""
    cell = ctypes.create_string_buffer(text.encode())
    _KEEP.append(cell)
    return ctypes.addressof(cell)


def buf(size: int = 512) -> int:
    """The address of a scratch buffer, for raw system calls that write one."""
    cell = ctypes.create_string_buffer(size)
    _KEEP.append(cell)
    return ctypes.addressof(cell)


class _RawExecution:
    def __init__(self, code: str, names: list[str], limits, namespace: str = "tools", docs=None,
                 compiled=None, **session) -> None:
        self.code = code
        if callable(compiled):
            compiled()  # the host's code frame follows the request: read it (and run `code` raw)

    def failure(self, error):
        return RunResult(error=error)


def _raw_drive(execution: _RawExecution, channel) -> RunResult:
    scope = {"os": os, "socket": socket, "ctypes": ctypes, "sys": sys, "attempt": attempt,
             "syscall": syscall, "syscall_number": syscall_number, "path": path, "buf": buf,
             "result": None}
    exec(compile(execution.code, "<probe>", "exec"), scope)
    return RunResult(value=scope["result"])


_real_run = worker._run


def _probe_run(*args, **kwargs):
    """The worker's own `_run` (limits and timers, under the filter loaded while idle), with the
    snippet step swapped. Patched in the child only, after the template's and the child's
    warm-ups. The raw step has no output of its own to report."""
    worker.Execution = _RawExecution  # type: ignore[misc, assignment]
    worker._drive = _raw_drive  # type: ignore[assignment]
    result, _ = _real_run(*args, **kwargs)
    return result, None


worker._run = _probe_run  # type: ignore[assignment]
