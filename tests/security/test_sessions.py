"""Sessions under attack: nothing crosses between sessions or to the host, and the jail and the
host's checks hold for the whole life of a session worker."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path
from typing import Any

import anyio
import procfs
import pytest
from jailprobe import probe_runtime

import sandbox
from sandbox.sessions import CAUSE_BETWEEN_RUNS, CAUSE_COMPUTED, WorkerSession, reset_sentence

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024
FAST = sandbox.Limits(wall_time=10, cpu_time=10)
BACKENDS = ["worker", "inprocess"]


PLANT = (
    "import random, json\n"
    "planted = TOKEN\n"
    "class Holder:\n    value = TOKEN\n"
    "def tell():\n    return planted\n"
    "random.seed(TOKEN)\n"
    "first = random.random()\n"
    "return first"
)
LOOK = (
    "import random\n"
    "found = []\n"
    "for lookup in (lambda: planted, lambda: Holder.value, lambda: tell(), lambda: first):\n"
    "    try:\n        found.append(lookup())\n    except NameError:\n        pass\n"
    "return [found, random.random()]"
)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_state_planted_in_one_session_is_invisible_in_another_and_to_the_host(backend: str) -> None:
    token = "PLANTED-" + uuid.uuid4().hex
    a = sandbox.open_session(backend)
    b = sandbox.open_session(backend)
    try:
        planted = await a.run(PLANT.replace("TOKEN", repr(token)), limits=FAST)
        assert planted.ok, planted
        assert (await a.run("return tell()", limits=FAST)).value == token  # it is there in a
        looked = await b.run(LOOK, limits=FAST)
        assert looked.ok, looked
        found, other_random = looked.value
        assert found == []  # no name, class or function of a reaches b
        assert other_random != planted.value  # b's random is its own generator, not a's seeded one
        assert token not in repr(looked)
        one_shot = await sandbox.run(LOOK, backend=backend, limits=FAST)
        assert one_shot.ok and one_shot.value[0] == []
        # Nothing of the session lives in host modules: the token is in no sandbox module's globals.
        import sys

        for name, module in list(sys.modules.items()):
            if name.startswith("sandbox"):
                assert token not in repr(vars(module).values())[:10**6], name
    finally:
        a.close()
        b.close()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_state_is_gone_after_a_reset_and_a_restart(backend: str) -> None:
    token = "PLANTED-" + uuid.uuid4().hex
    s = sandbox.open_session(backend)
    try:
        await s.run(PLANT.replace("TOKEN", repr(token)), limits=FAST)
        stopped = await s.run("while True:\n    pass", limits=sandbox.Limits(wall_time=0.5, cpu_time=0.3))
        assert stopped.error is not None and stopped.error.kind == "timeout" and stopped.reset
        after = await s.run(LOOK, limits=FAST)
        assert after.ok and after.value[0] == [], after
        await s.run(PLANT.replace("TOKEN", repr(token)), limits=FAST)
        restarted = await s.run(LOOK, limits=FAST, restart=True)
        assert restarted.ok and restarted.value[0] == []
        assert token not in repr(restarted)
    finally:
        s.close()


async def test_a_session_worker_is_fully_jailed_on_its_nth_run() -> None:
    runtime = sandbox.WorkerRuntime(pool_size=1)
    s = sandbox.open_session(runtime, limits=sandbox.SessionLimits(memory=128 * MIB))
    assert isinstance(s, WorkerSession)
    seen: dict[str, Any] = {}
    try:
        pids = set()
        for n in range(5):
            assert (await s.run(f"x{n} = {n}", limits=FAST)).ok
            pids.add(s.pid)
        assert len(pids) == 1  # one worker for the whole session

        async def inspect() -> None:
            await anyio.sleep(0.5)  # the run below sleeps 3 s; the worker is inside it now
            pid = s.pid
            assert pid is not None
            seen["pid"] = pid
            seen["status"] = procfs.status(pid)
            seen["limits"] = procfs.limits(pid)
            seen["fds"] = sorted(int(fd) for fd in os.listdir(f"/proc/{pid}/fd"))
            seen["root"] = os.readlink(f"/proc/{pid}/root")
            seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()

        async with anyio.create_task_group() as tg:
            tg.start_soon(inspect)
            sixth = await s.run("import asyncio\nawait asyncio.sleep(3)\nreturn x4",
                                limits=sandbox.Limits(wall_time=10, cpu_time=2, memory=32 * MIB))
        assert sixth.ok and sixth.value == 4 and sixth.jail == "full"
        status = seen["status"]
        assert status["Seccomp"].strip() == "2" and status["NoNewPrivs"].strip() == "1", status
        assert all(int(status[c], 16) == 0 for c in ("CapInh", "CapPrm", "CapEff", "CapAmb")), status
        assert seen["fds"] == [0, 1, 2, 3] and seen["environ"] == b""
        lim = seen["limits"]
        assert lim["Max open files"] == ("4", "4") and lim["Max file size"] == ("0", "0")
        assert lim["Max processes"] == ("0", "0") and lim["Max core file size"] == ("0", "0")
        soft_as, hard_as = (int(v) for v in lim["Max address space"])
        # The run's soft limit is its start size plus its 32 MiB, inside the session's hard one.
        assert soft_as < hard_as and hard_as - soft_as >= 64 * MIB, lim
        soft_cpu, hard_cpu = (int(v) for v in lim["Max cpu time"])
        assert soft_cpu <= 3 and soft_cpu < hard_cpu, lim
        if os.geteuid() == 0:
            assert seen["root"] == runtime._template.jail  # type: ignore[union-attr]
            assert status["Uid"].split() == [str(2_000_000_000 + seen["pid"])] * 4
    finally:
        s.close()
        runtime.close()
    assert procfs.gone(seen["pid"])


async def test_session_memory_is_a_hard_cap_that_a_run_cannot_pass() -> None:
    s = sandbox.open_session("worker", limits=sandbox.SessionLimits(memory=48 * MIB))
    try:
        assert (await s.run("kept = 1", limits=FAST)).ok
        big = await s.run("data = bytearray(96 * 1024 * 1024)\nreturn len(data)",
                          limits=sandbox.Limits(memory=256 * MIB, wall_time=10, cpu_time=10))
        assert big.error is not None and big.error.kind == "memory", big
        assert big.reset == reset_sentence("the run ran out of memory")
        assert (await s.run("data = bytearray(8 * 1024 * 1024)\nreturn len(data)", limits=FAST)).ok
    finally:
        s.close()


async def test_a_session_runs_cpu_limit_counts_from_the_runs_own_start() -> None:
    s = sandbox.open_session("worker")
    try:
        for _ in range(3):  # CPU time used by earlier runs does not count against a later one
            assert (await s.run("t = 0\nfor i in range(300_000):\n    t += i", limits=sandbox.Limits(cpu_time=2))).ok
        spun = await s.run("while True:\n    pass", limits=sandbox.Limits(wall_time=20, cpu_time=0.5))
        assert spun.error is not None and spun.error.kind == "timeout"
        assert "CPU-time limit of 0.5 s" in spun.error.message  # accepted by the host's /proc check
        assert spun.reset is not None
    finally:
        s.close()


# A worker that escaped the Python layers, stood in for by unrestricted code in a real session
# worker (tests/security/jail_probe_worker.py): it changes what the worker does between runs.
SPEAK_BETWEEN_RUNS = """
import time, sandbox.protocol as protocol
original = protocol.BlockingChannel.receive
def receive(self, *args, **kwargs):
    protocol.BlockingChannel.receive = original
    time.sleep(0.3)  # after the host has read the result (sent at once, it is caught with it)
    os.write(3, b"\\x00\\x00\\x00\\x0e{\\"op\\":\\"done\\"}")
    return original(self, *args, **kwargs)
protocol.BlockingChannel.receive = receive
result = "armed"
"""
SPIN_BETWEEN_RUNS = """
import time, sandbox.protocol as protocol
original = protocol.BlockingChannel.receive
def receive(self, *args, **kwargs):
    protocol.BlockingChannel.receive = original
    end = time.process_time() + 0.5
    while time.process_time() < end:
        pass
    return original(self, *args, **kwargs)
protocol.BlockingChannel.receive = receive
result = "armed"
"""
JAIL_PROBE = """
result = {
    "socket": attempt(socket.socket, socket.AF_INET, socket.SOCK_STREAM),
    "open": attempt(os.open, "/etc/hostname", os.O_RDONLY),
    "fork": attempt(os.fork),
    "pid": os.getpid(),
}
"""


def cpu_and_state(pid: int) -> tuple[float, str]:
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), fields[0]


async def once_stopped(pid: int) -> tuple[float, str]:
    """The CPU time and state of a session worker once the stop sent after its run has landed
    (the kernel takes a moment on a loaded machine; waited for up to 10 s, never timed)."""
    for _ in range(1000):
        cpu, state = cpu_and_state(pid)
        if state == "T":
            break
        await anyio.sleep(0.01)
    return cpu, state


@pytest.mark.parametrize("attack", [SPEAK_BETWEEN_RUNS, SPIN_BETWEEN_RUNS], ids=["speaks", "computes"])
async def test_a_worker_that_would_act_between_runs_is_stopped_meanwhile(attack: str) -> None:
    runtime = probe_runtime()
    s = sandbox.open_session(runtime)
    assert isinstance(s, WorkerSession)
    try:
        armed = await s.run(attack, limits=FAST)
        assert armed.ok and armed.value == "armed", armed
        first = s.pid
        assert first is not None and s._worker is not None
        cpu, state = await once_stopped(first)
        await anyio.sleep(1.0)  # the attack would happen now, while the session is idle
        assert state == "T" and cpu_and_state(first) == (cpu, "T")  # stopped: no CPU, no byte
        with pytest.raises(BlockingIOError):
            s._worker.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        nxt = await s.run(JAIL_PROBE, limits=FAST)
        if attack is SPEAK_BETWEEN_RUNS:
            # Resumed, it speaks first: its frame is read as this run's result and refused.
            assert nxt.error is not None and nxt.error.kind == "crashed", nxt
            assert nxt.error.message.startswith("the worker broke the protocol")
            assert nxt.reset == reset_sentence("the run's worker process failed") and s.pid is None
            third = await s.run(JAIL_PROBE, limits=FAST)
            assert third.ok and s.pid not in (None, first), third  # a fresh worker
        else:
            # Resumed, it burns its CPU inside the next run, which that run's limits bound.
            assert nxt.ok and s.pid == first, nxt
    finally:
        s.close()
        runtime.close()


@pytest.mark.parametrize(("attack", "cause"), [(SPEAK_BETWEEN_RUNS, CAUSE_BETWEEN_RUNS), (SPIN_BETWEEN_RUNS, CAUSE_COMPUTED)],
                         ids=["speaks", "computes"])
async def test_a_worker_not_idle_between_runs_is_reset(attack: str, cause: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer under the stop: were the worker not stopped, a byte on its channel or CPU time
    used since its result resets the session with one sentence, and a fresh worker runs."""

    def no_stop(self: WorkerSession, worker: object) -> bool:
        return True  # "sent", but never sent

    monkeypatch.setattr(WorkerSession, "_pause", no_stop)
    runtime = probe_runtime()
    s = sandbox.open_session(runtime)
    try:
        armed = await s.run(attack, limits=FAST)
        assert armed.ok and armed.value == "armed", armed
        first = s.pid
        await anyio.sleep(1.0)  # the attack happens while the session is idle
        nxt = await s.run(JAIL_PROBE, limits=FAST)
        assert nxt.reset == reset_sentence(cause), nxt
        assert nxt.ok and s.pid != first  # a fresh worker ran it; the fake frame was never read
        assert nxt.value["pid"] != first
    finally:
        s.close()
        runtime.close()


async def test_the_filter_still_denies_on_a_session_workers_nth_run() -> None:
    runtime = probe_runtime()
    s = sandbox.open_session(runtime)
    try:
        results = [await s.run(JAIL_PROBE, limits=FAST) for _ in range(4)]
        assert all(r.ok for r in results), results
        assert len({r.value["pid"] for r in results}) == 1  # the same worker, four runs
        last = results[-1].value
        assert last["socket"] == {"errno": "EPERM"} and last["open"] == {"errno": "EPERM"}
        assert last["fork"] == {"errno": "EPERM"}
    finally:
        s.close()
        runtime.close()


SEND_MORE_WITH_RESULT = """
import sandbox.protocol as protocol
original = protocol.BlockingChannel.send
def send(self, data):
    protocol.BlockingChannel.send = original
    original(self, data + b"\\x00\\x00\\x00\\x0e{\\"op\\":\\"done\\"}")
protocol.BlockingChannel.send = send
result = "armed"
"""


async def test_a_worker_that_sends_more_than_its_result_is_reset() -> None:
    runtime = probe_runtime()
    s = sandbox.open_session(runtime)
    try:
        first = await s.run(SEND_MORE_WITH_RESULT, limits=FAST)
        assert first.error is not None and first.error.kind == "crashed", first
        assert first.error.message == "the worker broke the protocol: it sent more after its result"
        assert first.value is None and first.reset == reset_sentence("the run's worker process failed")
        assert s.pid is None
    finally:
        s.close()
        runtime.close()


@pytest.mark.parametrize("layers", [frozenset(), frozenset({"pid-namespace"})], ids=["pid-namespace", "without-it"])
async def test_a_stopped_session_worker_dies_with_its_template(layers: frozenset[str]) -> None:
    """A session worker stopped between runs never sees its channel close; it still cannot
    outlive the template: the PID namespace's init dies with the template and takes every
    worker with it, and without the namespace each worker has the template's death signal. The
    worker here has escaped and ignores the SIGHUP an orphaned, stopped process group gets."""
    import signal

    runtime = probe_runtime(_disabled_layers=layers)
    s = sandbox.open_session(runtime)
    try:
        armed = await s.run("import signal\nsignal.signal(signal.SIGHUP, signal.SIG_IGN)\nresult = 1", limits=FAST)
        assert armed.ok, armed
        pid = s.pid
        assert pid is not None and runtime._template is not None
        assert ("pid-namespace" in runtime.jail_status().active) == (not layers)
        await once_stopped(pid)
        os.kill(runtime._template.process.pid, signal.SIGKILL)  # the template alone, not its group
        assert procfs.gone(pid), Path(f"/proc/{pid}/stat").read_text()
    finally:
        s.close()
        runtime.close()
