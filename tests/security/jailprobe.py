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


class Recorder:
    """The probe's one binding, `record`: it keeps the repr of every argument it receives, so a
    test can tell what (if anything) reached host code."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    async def record(self, *args: Any, **kwargs: Any) -> str:
        self.calls.append(repr((args, kwargs)))
        return "recorded"


async def probe_once(runtime: sandbox.WorkerRuntime, code: str) -> dict[str, Any]:
    recorder = Recorder()
    result = await runtime.run(code, bindings={"record": recorder.record}, limits=LIMITS)
    return {"value": result.value, "error": None if result.ok else str(result.error),
            "jail": result.jail, "calls": recorder.calls}


def _cpu_and_state(pid: int) -> tuple[float, str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0]


async def probe_session(runtime: sandbox.WorkerRuntime, first: str, second: str, idle: float) -> dict[str, Any]:
    """Two runs of one session with `idle` seconds between them; the worker's CPU time over the
    idle time (read from /proc by this host) and its state meanwhile."""
    import anyio

    session = sandbox.open_session(runtime)
    try:
        one = await session.run(first, limits=LIMITS)
        pid = session.pid  # type: ignore[attr-defined]
        assert pid is not None, one
        for _ in range(1000):  # until the stop sent after the run has landed (up to 10 s)
            cpu_before, state = _cpu_and_state(pid)
            if state == "T":
                break
            await anyio.sleep(0.01)
        await anyio.sleep(idle)
        cpu_after, _ = _cpu_and_state(pid)
        two = await session.run(second, limits=LIMITS)
        return {
            "first": {"value": one.value, "error": None if one.ok else str(one.error)},
            "second": {"value": two.value, "error": None if two.ok else str(two.error), "reset": two.reset,
                       "same_worker": session.pid == pid},  # type: ignore[attr-defined]
            "idle_cpu": cpu_after - cpu_before,
            "idle_state": state,
        }
    finally:
        session.close()


class RootProbe:
    """Probe runs from this (root) process."""

    user = "root"

    def __init__(self) -> None:
        self.runtime = probe_runtime()
        self.status = self.runtime.jail_status()

    def run(self, code: str) -> dict[str, Any]:
        import anyio

        return anyio.run(probe_once, self.runtime, code)

    def session(self, first: str, second: str, idle: float) -> dict[str, Any]:
        import anyio

        return anyio.run(probe_session, self.runtime, first, second, idle)

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
        return self._ask({"code": code})

    def session(self, first: str, second: str, idle: float) -> dict[str, Any]:
        return self._ask({"session": [first, second, idle]})

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(request) + "\n")
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
