"""A process's state as the host sees it in /proc, for tests that watch workers from outside."""

from __future__ import annotations

import re
import time
from pathlib import Path


def state(pid: int) -> str:
    """The one-letter state of /proc/<pid>/stat (R, S, D, T, t, Z, X, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def gone(pid: int, patience: float = 10.0) -> bool:
    """Whether the process is gone (or a zombie) within `patience` seconds: a SIGKILLed worker
    takes a moment to be reaped on a loaded machine. A readiness wait, never a timing check."""
    for _ in range(int(patience / 0.01)):
        try:
            if state(pid) in "ZX":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.01)
    return False


def status(pid: int) -> dict[str, str]:
    """/proc/<pid>/status as a dict (`Seccomp`, `NoNewPrivs`, `CapEff`, `Uid`, ...)."""
    text = Path(f"/proc/{pid}/status").read_text()
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def limits(pid: int) -> dict[str, tuple[str, str]]:
    """/proc/<pid>/limits: name -> (soft, hard)."""
    out = {}
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]:
        m = re.match(r"(.+?)\s{2,}(\S+)\s+(\S+)", line)
        if m:
            out[m.group(1).strip()] = (m.group(2), m.group(3))
    return out
