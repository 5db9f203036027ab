"""Run unrestricted Python inside a real, fully confined worker, as root or as an unprivileged user.

`RootProbe` uses this process's own `WorkerRuntime`. `UnprivilegedProbe` starts
`jail_probe_driver.py` as uid/gid 65534 (nobody) and talks to it over JSON lines; it is the host
that is not root. CI runs as root, so the unprivileged host is made by dropping the uid with
`setpriv`, in a private mount namespace where the directories the interpreter lives under are
made traversable (a 0700 /root holding pyenv, say) without changing anything on the real host.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import sandbox

HERE = Path(__file__).resolve().parent
PRELUDE = f"import sys; sys.path.insert(0, {str(HERE)!r}); import jail_probe_worker"
NOBODY = 65534
LIMITS = sandbox.Limits(wall_time=20, cpu_time=20)


def probe_runtime(**kwargs: Any) -> sandbox.WorkerRuntime:
    return sandbox.WorkerRuntime(pool_size=1, _template_prelude=PRELUDE, **kwargs)


class RootProbe:
    """Probe runs from this (root) process."""

    user = "root"

    def __init__(self) -> None:
        self.runtime = probe_runtime()
        self.status = self.runtime.jail_status()

    def run(self, code: str) -> dict[str, Any]:
        import anyio

        async def go() -> sandbox.RunResult:
            return await self.runtime.run(code, bindings={}, limits=LIMITS)

        result = anyio.run(go)
        return {"value": result.value, "error": None if result.ok else str(result.error),
                "jail": result.jail}

    def close(self) -> None:
        self.runtime.close()


def _untraversable(paths: list[str]) -> dict[str, set[str]]:
    """Directories that `nobody` cannot search, with the children below them that it needs."""
    blocked: dict[str, set[str]] = {}
    for path in paths:
        parts = Path(path).parts
        for depth in range(1, len(parts)):
            ancestor = str(Path(*parts[:depth]))
            mode = os.stat(ancestor).st_mode
            if not mode & stat.S_IXOTH:
                blocked.setdefault(ancestor, set()).add(parts[depth])
    return blocked


def _setup_script(command: list[str]) -> str:
    needed = {
        sys.executable, os.path.realpath(sys.executable), sys.prefix, sys.base_prefix,
        sys.exec_prefix, str(Path(sandbox.__file__).resolve().parent.parent), str(HERE),
    }
    lines = ["set -e"]
    for ancestor, children in sorted(_untraversable(sorted(needed)).items(), key=lambda kv: len(kv[0])):
        a = shlex.quote(ancestor)
        lines.append("S=$(mktemp -d)")
        for child in sorted(children):
            c = shlex.quote(child)
            lines.append(f"mkdir -p \"$S\"/{c} && mount --bind {a}/{c} \"$S\"/{c}")
        lines.append(f"mount -t tmpfs -o mode=0755 tmpfs {a}")
        for child in sorted(children):
            c = shlex.quote(child)
            lines.append(f"mkdir -p {a}/{c} && mount --bind \"$S\"/{c} {a}/{c}")
    lines.append(
        f"exec setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups --inh-caps=-all -- "
        + " ".join(shlex.quote(part) for part in command)
    )
    return "\n".join(lines)


class UnprivilegedProbe:
    """Probe runs from a host process that is not root (needs this test process to be root)."""

    user = "unprivileged"

    def __init__(self) -> None:
        command = [sys.executable, "-I", str(HERE / "jail_probe_driver.py")]
        script = _setup_script(command)
        self.process = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp"}, cwd="/", text=True,
        )
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line:
            raise RuntimeError("the unprivileged probe driver did not start: "
                               + (self.process.stderr.read() if self.process.stderr else ""))
        hello = json.loads(line)
        assert hello["uid"] == NOBODY, hello
        self.pid = hello["pid"]
        self.status = sandbox.JailStatus.from_json(hello["jail"])

    def run(self, code: str) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps({"code": code}) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the unprivileged probe driver died: "
                               + (self.process.stderr.read() if self.process.stderr else ""))
        return json.loads(line)

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
