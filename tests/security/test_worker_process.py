"""The worker process, inspected from the host through /proc while a snippet waits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio
import procfs
import pytest

import sandbox
from sandbox.sessions import CAUSE_COMPUTED, reset_sentence

pytestmark = pytest.mark.anyio

MIB = 1024 * 1024


async def test_running_worker_environment_descriptors_and_rlimits(secret):
    runtime = sandbox.WorkerRuntime(pool_size=1)
    runtime.start()
    seen: dict[str, object] = {}
    try:
        async def inspect() -> None:
            running: list[int] = []
            for _ in range(60):  # the run starts within a few hundred ms, later on a loaded machine
                await anyio.sleep(0.05)
                # The run's limits are set one after another: wait until the last of them is in.
                running = [
                    p for p in runtime.worker_pids()
                    if "unlimited" not in (procfs.limits(p)["Max address space"][0], procfs.limits(p)["Max cpu time"][0])
                ]
                if running:
                    break
            assert len(running) == 1, runtime.worker_pids()
            pid = running[0]
            seen["pid"] = pid
            seen["environ"] = Path(f"/proc/{pid}/environ").read_bytes()
            seen["fds"] = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
            seen["limits"] = procfs.limits(pid)
            seen["uids"] = Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split("\n")[0].split()
            seen["root"] = os.readlink(f"/proc/{pid}/root")
            seen["jail"] = runtime._template.jail
            seen["jail_entries"] = os.listdir(runtime._template.jail) if runtime._template.jail else None
            seen["template_environ"] = Path(f"/proc/{runtime._template.process.pid}/environ").read_bytes()
            seen["status"] = procfs.status(pid)
            seen["netns"] = os.readlink(f"/proc/{pid}/ns/net")
            seen["pidns"] = os.readlink(f"/proc/{pid}/ns/pid")

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
    status = seen["status"]
    # The syscall filter is loaded before the snippet runs, with no_new_privs; no capabilities.
    assert status["Seccomp"].strip() == "2" and status["NoNewPrivs"].strip() == "1", status
    assert all(int(status[c], 16) == 0 for c in ("CapInh", "CapPrm", "CapEff", "CapAmb")), status
    assert seen["netns"] != os.readlink("/proc/self/ns/net")  # a network namespace of its own
    # A PID namespace of its own: its pid there is not its pid here, and no host pid is in it.
    assert seen["pidns"] != os.readlink("/proc/self/ns/pid")
    host_pid, own_pid = (int(p) for p in status["NSpid"].split())
    assert host_pid == seen["pid"] and own_pid != host_pid
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
    # The worker is gone once the run is over: the host SIGKILLs it, and the kernel takes a
    # moment to finish it off on a loaded machine (waited for, up to 10 s; never timed).
    assert procfs.gone(seen["pid"]), Path(f"/proc/{seen['pid']}/stat").read_text()


async def test_worker_is_single_use(sb):
    pids = []
    for _ in range(3):
        # No pid is reachable from a snippet; a per-process object's identity stands in.
        result = await sb.run("import random\nreturn random.getrandbits(64)")
        assert result.ok
        pids.append(result.value)
    assert len(set(pids)) == 3


# -- the jail, tested syscall family by syscall family ------------------------------------------
# Each probe runs unrestricted Python (the real os, socket and ctypes) inside a real worker with
# every jail layer in place, as if the Python layers were already broken, once with a host that
# is root and once with a host that is not. Each test asserts the refusal and that the effect
# did not happen on the host. See tests/security/jailprobe.py.

from jailprobe import NOBODY, RootProbe, UnprivilegedProbe  # noqa: E402

EPERM = {"errno": "EPERM"}


@pytest.fixture(scope="module", params=["root", "unprivileged"])
def probe(request):
    if request.param == "root" and os.geteuid() != 0:
        pytest.skip("a root host needs the tests to run as root (CI does)")
    made = RootProbe() if request.param == "root" or os.geteuid() != 0 else UnprivilegedProbe()
    yield made
    made.close()


def _host_uid(probe) -> int:
    return NOBODY if probe.user == "unprivileged" and os.geteuid() == 0 else os.getuid()


def run_probe(probe, code: str) -> dict:
    out = probe.run(code)
    assert out["error"] is None, out
    assert out["jail"] == "full", out
    return out["value"]


@pytest.fixture
def arena(probe):
    """A directory any uid may reach and write to, holding a victim file: only the jail can stop
    a write there."""
    import shutil
    import tempfile

    area = Path(tempfile.mkdtemp(prefix="codemode-arena-", dir="/tmp"))
    area.chmod(0o777)
    victim = area / "victim.txt"
    victim.write_text("intact")
    victim.chmod(0o666)
    yield area
    shutil.rmtree(area)


def test_jail_reports_every_layer(probe):
    status = probe.status
    assert status.full
    assert {"seccomp", "network-namespace", "pid-namespace", "chroot", "rlimits"} <= set(status.active), status
    if probe.user == "root":
        assert "uid" in status.active
    else:
        assert "user-namespace" in status.active and "uid" in status.missing
    seen = run_probe(probe, "import socket as s\nresult = [os.uname().nodename, s.gethostname(), os.getcwd()]")
    assert seen == ["sandbox", "sandbox", "/"]  # the UTS namespace's own name; an empty root
    assert os.uname().nodename != "sandbox"  # the host's own name is unchanged


def test_a_call_through_another_abi_kills_the_worker(probe):
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the x32 ABI exists on x86_64 only")
    # getpid (39) with the x32 bit set: the filter cannot check it, so it kills the worker.
    out = probe.run("result = attempt(syscall_number, 0x40000000 + 39)")
    assert out["value"] is None and out["error"].startswith("crashed:"), out


CLOSE_STDIO = "for fd in (0, 1, 2):\n    os.close(fd)\n"


@pytest.mark.parametrize("close_first", [False, True], ids=["fds-open", "stdio-closed"])
def test_no_socket_of_any_family_and_no_connection_arrives(probe, close_first):
    import socket as host_socket

    listener = host_socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.3)
    abstract = host_socket.socket(host_socket.AF_UNIX)
    name = f"\0codemode-jail-{os.getpid()}-{close_first}"
    abstract.bind(name)
    abstract.listen()
    abstract.settimeout(0.3)
    port = listener.getsockname()[1]
    code = (CLOSE_STDIO if close_first else "") + f"""
S = socket
families = {{
    "inet": (S.AF_INET, S.SOCK_STREAM), "inet6": (S.AF_INET6, S.SOCK_STREAM),
    "udp": (S.AF_INET, S.SOCK_DGRAM), "unix": (S.AF_UNIX, S.SOCK_STREAM),
    "unix-dgram": (S.AF_UNIX, S.SOCK_DGRAM), "netlink": (S.AF_NETLINK, S.SOCK_RAW),
    "packet": (S.AF_PACKET, S.SOCK_RAW),
}}
result = {{k: attempt(S.socket, *v) for k, v in families.items()}}
result["socketpair"] = attempt(S.socketpair)
result["connect-tcp"] = attempt(S.create_connection, ("127.0.0.1", {port}), 1)
result["connect-abstract"] = attempt(lambda: S.socket(S.AF_UNIX).connect({name!r}))
"""
    try:
        report = run_probe(probe, code)
        assert report == dict.fromkeys(report, EPERM) and len(report) == 10, report
        for server in (listener, abstract):
            with pytest.raises(TimeoutError):
                server.accept()  # nothing ever connected
    finally:
        listener.close()
        abstract.close()


def test_the_channel_socket_reaches_nothing_else(probe):
    import socket as host_socket

    abstract = host_socket.socket(host_socket.AF_UNIX, host_socket.SOCK_DGRAM)
    name = f"\0codemode-jail-chan-{os.getpid()}"
    abstract.bind(name)
    abstract.settimeout(0.3)
    code = f"""
ch = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, fileno=3)
result = {{
    "connect": attempt(syscall, "connect", 3, 0, 0), "bind": attempt(syscall, "bind", 3, 0, 0),
    "listen": attempt(syscall, "listen", 3, 1), "accept": attempt(syscall, "accept4", 3, 0, 0, 0),
    "sendto-elsewhere": attempt(ch.sendto, b"escaped", {name!r}),
    "sendmsg": attempt(ch.sendmsg, [b"escaped"]), "dup": attempt(os.dup, 3),
    "send-oob": attempt(ch.send, b"!", socket.MSG_OOB),
    "recv-oob": attempt(ch.recv, 1, socket.MSG_OOB | socket.MSG_DONTWAIT),
    "dup2": attempt(os.dup2, 3, 9), "shutdown": attempt(ch.shutdown, socket.SHUT_RDWR),
}}
ch.detach()
"""
    try:
        report = run_probe(probe, code)  # the channel still carried the result back
        sendto = report.pop("sendto-elsewhere")
        assert sendto in ({"errno": "EISCONN"}, EPERM), sendto
        assert report == dict.fromkeys(report, EPERM), report
        with pytest.raises(TimeoutError):
            abstract.recv(100)
    finally:
        abstract.close()


def test_no_file_is_opened_made_changed_or_listed(probe, arena, secret):
    victim = arena / "victim.txt"
    target = arena / "made"
    code = f"""
v, t, a = {str(victim)!r}, {str(target)!r}, {str(arena)!r}
result = {{
    "open-read": attempt(lambda: open({str(secret.path)!r}).read()),
    "open-write": attempt(lambda: open(t, "w")),
    "openat": attempt(lambda: os.open(t, os.O_CREAT | os.O_WRONLY)),
    "creat": attempt(syscall, "creat", 0, 0o644),
    "link": attempt(os.link, v, t), "symlink": attempt(os.symlink, v, t),
    "rename": attempt(os.rename, v, t), "unlink": attempt(os.unlink, v),
    "mkdir": attempt(os.mkdir, t), "rmdir": attempt(os.rmdir, a),
    "chmod": attempt(os.chmod, v, 0o777), "chown": attempt(os.chown, v, 0, 0),
    "truncate": attempt(os.truncate, v, 0), "listdir": attempt(os.listdir, a),
    "listdir-root": attempt(os.listdir, "/"), "scandir": attempt(lambda: list(os.scandir("/"))),
    "stat": attempt(os.stat, v), "chdir": attempt(os.chdir, a),
    "fstatat-empty-path-flag": attempt(syscall, "newfstatat", -100, path(v), buf(), 0x1000),
    "statx": attempt(syscall, "statx", -100, path(v), 0, 0xfff, buf()),
    "readlink": attempt(os.readlink, "/proc/self/exe"),
}}
"""
    report = run_probe(probe, code)
    assert report == dict.fromkeys(report, EPERM) and len(report) == 21, report
    assert secret.token not in json.dumps(report)
    assert victim.read_text() == "intact" and (victim.stat().st_mode & 0o777) == 0o666
    assert sorted(p.name for p in arena.iterdir()) == ["victim.txt"]


def test_no_program_runs_and_no_process_is_made(probe, arena):
    marker = arena / "ran"
    code = f"""
m = {str(marker)!r}
def fork_then_exec():
    pid = os.fork()
    if pid == 0:
        os.execv("/usr/bin/touch", ["touch", m])
    return pid
result = {{
    "execve": attempt(os.execv, "/usr/bin/touch", ["touch", m]),
    "execveat": attempt(syscall, "execveat", -100, 0, 0, 0, 0),
    "fork": attempt(fork_then_exec), "vfork": attempt(syscall, "vfork"),
    "clone": attempt(syscall, "clone", 17, 0, 0, 0, 0), "clone3": attempt(syscall, "clone3", 0, 0),
    "posix_spawn": attempt(os.posix_spawn, "/usr/bin/touch", ["touch", m], {{}}),
}}
import threading
result["thread"] = attempt(lambda: threading.Thread(target=lambda: None).start())
"""
    report = run_probe(probe, code)
    thread = report.pop("thread")
    assert thread["raised"] == "RuntimeError", thread  # "can't start new thread": clone denied
    assert report == dict.fromkeys(report, EPERM), report
    assert not marker.exists()


@pytest.fixture
def target(probe):
    """A process of the host's own uid, for the probe to try to signal, trace and read."""
    import subprocess

    command = ["sleep", "60"]
    if _host_uid(probe) != os.getuid():
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
    process = subprocess.Popen(command)
    for _ in range(200):  # until `sleep` itself is running (setpriv execs it)
        if Path(f"/proc/{process.pid}/cmdline").read_bytes().startswith(b"sleep"):
            break
        import time

        time.sleep(0.01)
    yield process
    process.kill()
    process.wait()


def test_no_process_is_signalled_traced_or_read(probe, target):
    import signal

    pid = target.pid
    assert procfs.state(pid) not in "Tt"
    code = f"""
import signal
pid = {pid}
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
a = ctypes.addressof(iov)
result = {{
    "kill": attempt(os.kill, pid, signal.SIGTERM), "kill-group": attempt(os.killpg, pid, signal.SIGTERM),
    "kill-all": attempt(os.kill, -1, 0), "tkill": attempt(syscall, "tkill", pid, signal.SIGTERM),
    "tgkill": attempt(syscall, "tgkill", pid, pid, signal.SIGTERM),
    "ptrace-attach": attempt(syscall, "ptrace", 16, pid, 0, 0),
    "ptrace-seize": attempt(syscall, "ptrace", 0x4206, pid, 0, 0),
    "process_vm_readv": attempt(syscall, "process_vm_readv", pid, a, 1, a, 1, 0),
    "process_vm_writev": attempt(syscall, "process_vm_writev", pid, a, 1, a, 1, 0),
    "pidfd_open": attempt(syscall, "pidfd_open", pid, 0),
    "pidfd_send_signal": attempt(syscall, "pidfd_send_signal", 0, signal.SIGTERM, 0, 0),
    "pidfd_getfd": attempt(syscall, "pidfd_getfd", 0, 0, 0),
    "sched_getaffinity-other": attempt(os.sched_getaffinity, pid),
    "futex-lock-pi": attempt(syscall, "futex", ctypes.addressof(buf), 6, 0, 0, 0, 0),
    "futex-requeue": attempt(syscall, "futex", ctypes.addressof(buf), 3, 1, 0, 0, 0),
}}
result["own-affinity"] = len(os.sched_getaffinity(0)) > 0
"""
    report = run_probe(probe, code)
    assert report.pop("own-affinity") is True
    assert report == dict.fromkeys(report, EPERM) and len(report) == 15, report
    assert target.poll() is None and procfs.state(pid) not in "TtZX"  # alive, neither stopped nor traced
    assert "TracerPid:\t0" in Path(f"/proc/{pid}/status").read_text()
    del signal


def test_no_limit_is_raised_and_no_privilege_gained(probe):
    code = """
import resource
uid = os.getuid()
result = {
    "setrlimit-up": attempt(resource.setrlimit, resource.RLIMIT_NOFILE, (64, 64)),
    "setrlimit-as": attempt(resource.setrlimit, resource.RLIMIT_AS, (-1, -1)),
    "prlimit-other": attempt(syscall, "prlimit64", 1, 7, 0, 0),
    "setuid": attempt(os.setuid, 0), "setgid": attempt(os.setgid, 0),
    "setresuid": attempt(os.setresuid, 0, 0, 0), "setgroups": attempt(os.setgroups, [0]),
    "setfsuid": attempt(syscall, "setfsuid", 0), "capset": attempt(syscall, "capset", 0, 0),
    "mount": attempt(syscall, "mount", 0, 0, 0, 0, 0), "umount2": attempt(syscall, "umount2", 0, 0),
    "unshare": attempt(syscall, "unshare", 0x10000000), "setns": attempt(syscall, "setns", 3, 0),
    "chroot": attempt(os.chroot, "/"), "pivot_root": attempt(syscall, "pivot_root", 0, 0),
    "keyctl": attempt(syscall, "keyctl", 0, 0, 0, 0, 0), "add_key": attempt(syscall, "add_key", 0, 0, 0, 0, 0),
    "bpf": attempt(syscall, "bpf", 0, 0, 0), "perf_event_open": attempt(syscall, "perf_event_open", 0, 0, -1, -1, 0),
    "io_uring_setup": attempt(syscall, "io_uring_setup", 1, 0),
    "userfaultfd": attempt(syscall, "userfaultfd", 0), "personality": attempt(syscall, "personality", 0x0040000),
    "seccomp": attempt(syscall, "seccomp", 1, 0, 0), "prctl": attempt(syscall, "prctl", 38, 1, 0, 0, 0),
    "memfd_create": attempt(os.memfd_create, "x"), "pipe": attempt(os.pipe),
    "shmget": attempt(syscall, "shmget", 0, 4096, 0o1666), "msgget": attempt(syscall, "msgget", 0, 0o1666),
    "semget": attempt(syscall, "semget", 0, 1, 0o1666), "mq_open": attempt(syscall, "mq_open", path("q"), 0o100, 0o666, 0),
    "mmap-exec": attempt(syscall, "mmap", 0, 4096, 7, 0x22, -1, 0),
    "mprotect-exec": attempt(syscall, "mprotect", ctypes.addressof(ctypes.c_char.from_buffer(bytearray(8192))) & ~4095, 4096, 7),
}
result["uid-unchanged"] = os.getuid() == uid
try:
    big = bytearray(1024 * 1024 * 1024)
    result["allocation"] = "allocated 1 GiB past the limit"
except MemoryError:
    result["allocation"] = "MemoryError"
"""
    report = run_probe(probe, code)
    assert report.pop("uid-unchanged") is True
    assert report.pop("allocation") == "MemoryError"  # RLIMIT_AS still holds
    # The filter lets a worker lower its own limits (prlimit on pid 0 only); raising one is the
    # kernel's EPERM, since no worker holds CAP_SYS_RESOURCE. resource.setrlimit turns that
    # EPERM into this ValueError.
    for name in ("setrlimit-up", "setrlimit-as"):
        assert report.pop(name) == {"raised": "ValueError", "message": "not allowed to raise maximum limit"}
    assert report == dict.fromkeys(report, EPERM) and len(report) == 30, report


def test_without_the_filter_the_runtime_refuses_to_run(tmp_path):
    runtime = sandbox.WorkerRuntime(pool_size=0, _disabled_layers=frozenset({"seccomp"}))
    calls = []

    async def mark() -> None:
        calls.append(1)

    try:
        status = runtime.jail_status()
        assert not status.full and status.missing["seccomp"] == "switched off by the host"
        with pytest.raises(sandbox.JailError, match=r"seccomp syscall filter is missing .*allow_weak_jail=True"):
            anyio.run(lambda: runtime.run("await tools.mark()", bindings={"mark": mark},
                                          limits=sandbox.Limits()))
        assert calls == []  # the snippet never ran
    finally:
        runtime.close()


def test_weak_jail_is_opt_in_recorded_and_still_namespaced():
    """With the filter off (accepted explicitly), every result says so, and the network
    namespace alone still keeps a socket from reaching the host: the layers are independent."""
    import socket as host_socket

    from jailprobe import probe_runtime

    if os.geteuid() != 0:
        pytest.skip("namespaces without a user namespace need a root host")
    listener = host_socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    runtime = probe_runtime(allow_weak_jail=True, _disabled_layers=frozenset({"seccomp"}))
    # Closing stdio frees descriptor slots under RLIMIT_NOFILE, so a socket can be made.
    code = CLOSE_STDIO + f"""
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
result = {{"socket": "made", "connect": attempt(s.connect, ("127.0.0.1", {port}))}}
"""
    try:
        result = anyio.run(lambda: runtime.run(code, bindings={}, limits=sandbox.Limits()))
        assert result.jail == "weak", result
        assert result.value == {"socket": "made", "connect": {"errno": "ENETUNREACH"}}, result
        with pytest.raises(TimeoutError):
            listener.accept()
    finally:
        listener.close()
        runtime.close()


def test_without_the_chroot_the_filter_alone_hides_every_path(arena):
    """A host that cannot chroot (not root, no user namespace) still shows a worker no path:
    no open, stat, statx or fstatat-with-a-path reaches the file system."""
    from jailprobe import probe_runtime

    victim = str(arena / "victim.txt")
    runtime = probe_runtime(_disabled_layers=frozenset({"chroot"}))
    code = f"""
v = {victim!r}
result = [attempt(os.stat, v), attempt(open, v), attempt(os.listdir, "/"),
          attempt(syscall, "newfstatat", -100, path(v), buf(), 0x1000),
          attempt(syscall, "statx", -100, path(v), 0, 0xfff, buf())]
"""
    try:
        result = anyio.run(lambda: runtime.run(code, bindings={}, limits=sandbox.Limits()))
        assert "chroot" in runtime.jail_status().missing
        assert result.jail == "full" and result.value == [EPERM] * 5, result
    finally:
        runtime.close()


def test_without_the_network_namespace_the_filter_alone_denies_sockets():
    from jailprobe import probe_runtime

    runtime = probe_runtime(_disabled_layers=frozenset({"network-namespace"}))
    try:
        result = anyio.run(lambda: runtime.run(
            "result = attempt(socket.socket, socket.AF_INET, socket.SOCK_STREAM)",
            bindings={}, limits=sandbox.Limits()))
        assert result.jail == "full" and result.value == EPERM, result
        assert "network-namespace" in runtime.jail_status().missing
    finally:
        runtime.close()


async def test_snippets_run_normally_under_the_jail(sb):
    """The allowlist is enough for ordinary work: clocks, randomness, big allocations, timers,
    host calls, recursion, exceptions and a real memory-limit hit."""
    code = """
import asyncio, datetime, decimal, hashlib, json, random, re, time, uuid
x = [i * i for i in range(200_000)]
s = 'x' * 20_000_000
await asyncio.sleep(0.01)
out = [len(x), len(s), len(str(uuid.uuid4())), random.random() < 1, time.process_time() >= 0,
       datetime.datetime.now().year > 2000, str(decimal.Decimal(1) / 4),
       hashlib.sha256(b'a').hexdigest()[:8], re.findall(r'\\d', 'a1b2'), json.dumps({'a': 1})]
try:
    raise ValueError('boom')
except ValueError as e:
    out.append(str(e))
return out
"""
    result = await sb.run(code)
    assert result.ok and result.jail == "full", result
    assert result.value == [200_000, 20_000_000, 36, True, True, True, "0.25", "ca978112",
                            ["1", "2"], '{"a": 1}', "boom"]
    bomb = await sb.run("return 'y' * (10**9)")
    assert bomb.error is not None and bomb.error.kind == "memory", bomb


# -- the jail's leaks of pids, numbers and idle CPU -----------------------------------------------

CLOCKS = """
import time
pid = {pid}
def cpu_clock(p, thread=False):  # the kernel's MAKE_PROCESS_CPUCLOCK / MAKE_THREAD_CPUCLOCK (SCHED)
    return (~p << 3) | 2 | (4 if thread else 0)
own = os.getpid()
def getcpuclockid(p):  # glibc's, which asks clock_getres about the id it makes
    clock = ctypes.c_int()
    err = ctypes.CDLL(None).clock_getcpuclockid(p, ctypes.byref(clock))
    if err:
        raise OSError(err, os.strerror(err))
    return clock.value
result = {{
    "getcpuclockid": attempt(getcpuclockid, pid),
    "gettime": attempt(syscall, "clock_gettime", cpu_clock(pid), buf(16)),
    "getres": attempt(syscall, "clock_getres", cpu_clock(pid), buf(16)),
    "nanosleep": attempt(syscall, "clock_nanosleep", cpu_clock(pid), 0, buf(16), 0),
    "thread-clock": attempt(syscall, "clock_gettime", cpu_clock(pid, True), buf(16)),
    "prof-clock": attempt(syscall, "clock_gettime", (~pid << 3) | 0, buf(16)),
    "high-bits": attempt(syscall, "clock_gettime", (1 << 32) | (cpu_clock(pid) & 0xFFFFFFFF), buf(16)),
    "namespace-init": attempt(syscall, "clock_gettime", cpu_clock(1), buf(16)),
    "itself-by-pid": attempt(syscall, "clock_gettime", cpu_clock(own), buf(16)),
}}
names = ("CLOCK_REALTIME", "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID", "CLOCK_THREAD_CPUTIME_ID",
         "CLOCK_MONOTONIC_RAW", "CLOCK_BOOTTIME")
result["static"] = [attempt(syscall, "clock_gettime", getattr(time, n), buf(16)) for n in names]
result["resolution"] = attempt(syscall, "clock_getres", time.CLOCK_MONOTONIC, buf(16))
result["sleep"] = attempt(time.sleep, 0.001)
result["own-cpu"] = time.process_time() > 0 and time.thread_time() > 0
result["pid"] = own
"""


def test_no_clock_of_another_process_is_read(probe, target):
    """A negative clock id names another process's CPU clock by pid (which would list the host's
    live pids and their CPU time): only the static clock ids are allowed, and in the PID
    namespace the worker cannot even name a host pid."""
    report = run_probe(probe, CLOCKS.format(pid=target.pid))
    assert report.pop("static") == [{"ok": "0"}] * 6  # its own clocks still work
    assert report.pop("resolution") == {"ok": "0"}
    assert report.pop("sleep") == {"ok": "None"} and report.pop("own-cpu") is True
    pid = report.pop("pid")
    assert report == dict.fromkeys(report, EPERM) and len(report) == 9, report
    assert "pid-namespace" in probe.status.active
    assert pid != target.pid and 1 < pid < 10_000, pid  # a pid of the namespace's own numbering


FORGED_FRAME = """
frame = b'{{"op":"{op}","id":1,"name":"record","a":[[],{{"x":{number}}}],"last":true}}'
if "{op}" == "done":
    frame = b'{{"op":"done","result":{{"value":[{number}],"logs":[],"error":null}}}}'
os.write(3, len(frame).to_bytes(4, "big") + frame)
result = "sent"
"""
NOT_FINITE = "crashed: the worker broke the protocol: malformed frame: a number that is not finite"


@pytest.mark.parametrize("op", ["call", "done"])
def test_no_overflowing_number_reaches_a_binding_or_a_result(probe, op):
    out = probe.run(FORGED_FRAME.format(op=op, number="1e999"))
    assert out["error"] == NOT_FINITE and out["value"] is None, out
    assert out["calls"] == []  # no inf reached the binding
    control = probe.run(FORGED_FRAME.format(op=op, number="1.5"))  # the same frame, finite
    assert control["error"] is None, control
    if op == "call":
        assert control["calls"] == ["((), {'x': 1.5})"] and control["value"] == "sent", control
    else:
        assert control["value"] == [1.5] and control["calls"] == [], control


COMPUTE_AFTER_DONE = """
import time, sandbox.protocol as protocol
original = protocol.BlockingChannel.receive
def receive(self, *args, **kwargs):
    protocol.BlockingChannel.receive = original
    end = time.process_time() + 1.5  # CPU seconds, burnt as soon as the result is sent
    while time.process_time() < end:
        pass
    return original(self, *args, **kwargs)
protocol.BlockingChannel.receive = receive
result = "armed"
"""


def test_a_session_worker_computes_nothing_between_runs(probe):
    """An escaped session worker that sets out to compute once it has sent its result is
    stopped between runs: this host reads no CPU time used while the session is idle."""
    out = probe.session(COMPUTE_AFTER_DONE, "result = 'second'", 1.0)
    assert out["first"] == {"value": "armed", "error": None}, out
    assert out["idle_state"] == "T", out  # stopped (SIGSTOP) while idle
    assert out["idle_cpu"] <= 0.02, out  # /proc counts in 10 ms ticks
    second = out["second"]
    # Resumed for the next run (its burn then counts against that run), or reset if the
    # moment before the stop already looked like computing; either way the run works.
    assert second["error"] is None and second["value"] == "second", out
    assert second["reset"] in (None, reset_sentence(CAUSE_COMPUTED)), out
