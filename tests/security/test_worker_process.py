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
            await anyio.sleep(0.4)
            running = [p for p in runtime.worker_pids() if _limits(p)["Max address space"][0] != "unlimited"]
            assert len(running) == 1, runtime.worker_pids()
            pid = running[0]
            seen["pid"] = pid
            seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()
            seen["fds"] = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            seen["limits"] = _limits(pid)
            seen["template_environ"] = Path(f"/proc/{runtime._template.process.pid}/environ").read_bytes()

        result = None
        async with anyio.create_task_group() as tg:
            tg.start_soon(inspect)
            result = await sandbox.run(
                "import asyncio\nawait asyncio.sleep(1.0)\nreturn 'done'",
                limits=sandbox.Limits(wall_time=5, cpu_time=3, memory=64 * MIB),
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
    assert len(others) == 1 and next(iter(others.values())).startswith("socket:"), fds
    lim = seen["limits"]
    assert lim["Max file size"] == ("0", "0")
    assert lim["Max open files"] == ("8", "8")
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
