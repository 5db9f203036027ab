"""The worker process, inspected from the host through /proc while a snippet waits."""

from __future__ import annotations

import os
import re
from pathlib import Path

import anyio
import pytest

import sandbox

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


def _limits(pid: int) -> dict[str, tuple[str, str]]:
    out = {}
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]:
        m = re.match(r"(.+?)\s{2,}(\S+)\s+(\S+)", line)
        if m:
            out[m.group(1).strip()] = (m.group(2), m.group(3))
    return out


async def test_running_worker_environment_descriptors_and_rlimits(secret):
    runtime = sandbox.WorkerRuntime(pool_size=1)
    runtime.start()
    seen: dict[str, object] = {}
    try:
        async def inspect() -> None:
            running: list[int] = []
            for _ in range(60):  # the run starts within a few hundred ms, later on a loaded machine
                await anyio.sleep(0.05)
                running = [p for p in runtime.worker_pids() if _limits(p)["Max address space"][0] != "unlimited"]
                if running:
                    break
            assert len(running) == 1, runtime.worker_pids()
            pid = running[0]
            seen["pid"] = pid
            seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()
            seen["fds"] = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            seen["limits"] = _limits(pid)
            seen["uids"] = Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split("\n")[0].split()
            seen["root"] = os.readlink(f"/proc/{pid}/root")
            seen["jail"] = runtime._template.jail
            seen["jail_entries"] = os.listdir(runtime._template.jail) if runtime._template.jail else None
            seen["template_environ"] = Path(f"/proc/{runtime._template.process.pid}/environ").read_bytes()

        result = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(inspect)
            result = await sandbox.run(
                "import asyncio\nawait asyncio.sleep(4.0)\nreturn 'done'",
                limits=sandbox.Limits(wall_time=8, cpu_time=3, memory=64 * MIB),
                backend=runtime,
            )
        assert result is not None and result.ok and result.value == "done", result
    finally:
        runtime.close()

    assert seen["environ"] == b"", seen["environ"]
    assert seen["template_environ"] == b""
    assert secret.token.encode() not in seen["environ"]
    fds = seen["fds"]
    assert set(fds) >= {0, 1, 2}
    assert all(fds[i] == "/dev/null" for i in (0, 1, 2)), fds
    others = {fd: target for fd, target in fds.items() if fd > 2}
    assert list(others) == [3] and others[3].startswith("socket:"), fds
    lim = seen["limits"]
    assert lim["Max file size"] == ("0", "0")
    # stdio and the channel are descriptors 0-3: no new descriptor (file, socket) can be made.
    assert lim["Max open files"] == ("4", "4")
    if os.geteuid() == 0:
        # Root-started workers run chrooted in an empty directory, under a uid of their own.
        assert seen["root"] == seen["jail"] and seen["jail_entries"] == []
        assert not Path(str(seen["jail"])).exists()  # removed with the runtime
        expected_uid = str(2_000_000_000 + seen["pid"])
        assert seen["uids"] == [expected_uid] * 4, seen["uids"]
    assert lim["Max processes"] == ("0", "0")
    assert lim["Max core file size"] == ("0", "0")
    soft_as = int(lim["Max address space"][0])
    assert 64 * MIB < soft_as < 64 * MIB + 2048 * MIB
    assert lim["Max cpu time"][0] != "unlimited" and int(lim["Max cpu time"][0]) <= 10
    # The worker is gone once the run is over.
    assert not Path(f"/proc/{seen['pid']}").exists() or "Z" in Path(f"/proc/{seen['pid']}/stat").read_text().split(")")[-1][:3]


async def test_worker_is_single_use(sb):
    pids = []
    for _ in range(3):
        # No pid is reachable from a snippet; a per-process object's identity stands in.
        result = await sb.run("import random\nreturn random.getrandbits(64)")
        assert result.ok
        pids.append(result.value)
    assert len(set(pids)) == 3


def test_confinement_makes_an_escape_harmless(tmp_path):
    """Suppose code got past the policy and guards with the real `os`: the worker's own
    confinement (no new descriptors, no processes, an empty root and a uid of its own when
    started as root) still stops it from reading files, opening sockets, forking or
    signalling the host."""
    import json
    import socket
    import tempfile

    from sandbox.worker import CHANNEL_FD, _confine

    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    jail = tempfile.mkdtemp(prefix="codemode-jail-test-") if os.geteuid() == 0 else ""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the "escaped" worker
        try:
            os.dup2(write_end, CHANNEL_FD)
            os.closerange(CHANNEL_FD + 1, 1 << 16)
            host = os.getppid()
            _confine(jail)
            report = {}
            for name, attempt in [
                ("read", lambda: open(str(secret)).read()),
                ("write", lambda: open("/tmp/escaped.txt", "w").write("x")),
                ("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
                ("fork", lambda: os.fork()),
                ("signal-host", lambda: os.kill(host, 0)),
            ]:
                try:
                    outcome = attempt()
                    report[name] = f"SUCCEEDED {outcome!r}"
                    if name == "fork" and outcome == 0:
                        os._exit(0)
                except OSError as exc:
                    report[name] = type(exc).__name__
            os.write(CHANNEL_FD, json.dumps(report).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    data = b""
    while chunk := os.read(read_end, 4096):
        data += chunk
    os.close(read_end)
    os.waitpid(pid, 0)
    if jail:
        os.rmdir(jail)
    report = json.loads(data)
    assert not any(v.startswith("SUCCEEDED") for k, v in report.items() if k != "signal-host"), report
    assert "top secret" not in data.decode()
    assert not Path("/tmp/escaped.txt").exists()
    if os.geteuid() == 0:
        # Only a host running as root can give workers a uid of their own; then even signals fail.
        assert report["signal-host"] == "PermissionError", report
