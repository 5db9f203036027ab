"""``codemode doctor``: which jail layers confine the worker backend on this host."""

from __future__ import annotations

from typing import TextIO

import sandbox

from .exits import EXIT_FAILED, EXIT_OK

__all__ = ["command"]

def command(stdout: TextIO) -> int:
    """Exit 0 when the worker backend gets its full jail here, 1 when it would refuse to run."""
    import platform

    try:
        status = sandbox.jail_status("worker")
    except TimeoutError as exc:
        stdout.write(f"worker jail: unknown ({exc})\n")
        return EXIT_FAILED
    stdout.write(f"worker jail on {platform.system()} {platform.machine()}:\n{status.describe()}\n")
    if status.full:
        stdout.write("verdict: full (the syscall filter is in force)\n")
        return EXIT_OK
    stdout.write(f"verdict: weak; the worker backend refuses to run: {status.refusal()}\n")
    return EXIT_FAILED
