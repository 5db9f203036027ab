"""The jail: what confines a worker below the Python layers, designed as if they were broken.

A worker that holds the real `os`, `socket` and `ctypes` can still only compute and talk over its
one channel. Three independent layers make that so, each set up by trusted code before any
snippet instruction runs:

- **A seccomp-bpf allowlist** (`build_filter`), compiled once by libseccomp (through the
  `pyseccomp` binding) in the template and loaded by each worker after its last import and before
  it reads a run request, with `no_new_privs`. Only memory management, reads and writes on
  descriptors that are already open, polling, clocks, signals for the worker's own timers,
  `getrandom`, `prlimit` on itself (to lower its limits), and exit are allowed; every other call
  (socket, open, exec, fork, kill, ptrace, setrlimit, mount, bpf, ...) fails with `EPERM`. A call made through another architecture's ABI (x32, i386 on x86_64)
  kills the worker.
  The clocks are allowed for the static clock ids only (an argument filter): a negative id names
  another process's CPU clock, which would list the host's live pids and their CPU time.
- **Namespaces** (`enter_namespaces`), made once in the template, so no run pays for them: a
  fresh network namespace (only a loopback that is down), plus IPC, UTS, mount and PID
  namespaces. In the PID namespace a worker sees no host pid at all: the template forks a
  placeholder init (`_hold_pid_namespace`) as its pid 1, and every worker it forks after that
  lives in it; the template itself stays in the host's, so the pids it reports (`fork`'s return
  value) are the host's own, which the host reads /proc with and signals. When the template dies
  its init dies too, and the kernel kills every worker in the namespace. A host that is not root
  gets all of them inside a user namespace, when the kernel allows one.
- **rlimits, a chroot into an empty directory and a uid of the worker's own** (`sandbox.worker`).
  The chroot needs root or a user namespace; the uid switch needs root.

`JailStatus` says which layers a host's workers get. The filter is required: without it the worker
backend refuses to run unless the host accepted weaker confinement (`allow_weak_jail=True`), and
then every result says `jail="weak"`.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

#: Every layer, in the order `JailStatus.layers` lists them.
LAYERS = (
    "seccomp",
    "user-namespace",
    "network-namespace",
    "ipc-namespace",
    "uts-namespace",
    "mount-namespace",
    "pid-namespace",
    "chroot",
    "uid",
    "rlimits",
)
#: Architectures whose syscall names the allowlist below was written and tested for.
FULL_JAIL_MACHINES = ("x86_64", "aarch64")

_CLONE_NEWNS = 0x00020000
_CLONE_NEWPID = 0x20000000
_CLONE_NEWUTS = 0x04000000
_CLONE_NEWIPC = 0x08000000
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_NAMESPACES = (
    ("network-namespace", _CLONE_NEWNET),
    ("ipc-namespace", _CLONE_NEWIPC),
    ("uts-namespace", _CLONE_NEWUTS),
    ("mount-namespace", _CLONE_NEWNS),
)
#: The namespaces made inside the user namespace (or as root), the PID namespace last.
_NAMESPACE_LAYERS = (*(name for name, _ in _NAMESPACES), "pid-namespace")
_MS_REC = 0x4000
_MS_PRIVATE = 0x40000
_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_LINUX_CAPABILITY_VERSION_3 = 0x20080522

#: Calls a running worker needs, and nothing else. Each is harmless with no way to make a new
#: descriptor: there is no open, socket, pipe, dup or accept here, so reads and writes only reach
#: the channel and /dev/null.
ALLOWED_SYSCALLS = (
    # memory
    "brk", "munmap", "mremap", "madvise",
    # the channel and stdio (already open)
    "read", "write", "readv", "writev", "lseek", "fstat", "close",
    # waiting for the host
    "select", "pselect6", "poll", "ppoll",
    # clocks and sleeping (clock_gettime, clock_getres, clock_nanosleep: see STATIC_CLOCKS)
    "gettimeofday", "time", "nanosleep",
    # the worker's own timers and signal handlers
    "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "setitimer", "getitimer",
    "alarm",
    # facts about itself
    "getpid", "gettid", "getuid", "geteuid", "getgid", "getegid", "getrusage", "uname",
    "getcwd", "sched_yield",
    # randomness, leaving
    "getrandom", "exit", "exit_group",
)
#: futex operations a single-threaded worker's libc may use (with the private and clock bits
#: masked off). The priority-inheritance and requeue operations name another task by id, which
#: would tell a worker which host processes exist.
_FUTEX_OPS = (0, 1, 9, 10)  # WAIT, WAKE, WAIT_BITSET, WAKE_BITSET
_FUTEX_FLAGS = 0x80 | 0x100  # FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME
#: Clock ids a worker may read, ask the resolution of, or sleep on: the static ones (realtime,
#: monotonic, its own process and thread CPU time, raw, coarse, boottime, alarm, TAI). A negative
#: id encodes another process's or thread's CPU clock by pid.
STATIC_CLOCKS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11)
_CLOCK_CALLS = ("clock_gettime", "clock_getres", "clock_nanosleep")


class JailError(RuntimeError):
    """The worker jail cannot be set up on this host and weaker confinement was not accepted."""


@dataclass(frozen=True, slots=True)
class JailStatus:
    """Which jail layers confine this host's workers, and why the others are missing.

    active: the layers in force, in `LAYERS` order.
    missing: layer -> one sentence on why it is not in force.
    """

    active: tuple[str, ...] = ()
    missing: dict[str, str] = field(default_factory=dict)

    @property
    def full(self) -> bool:
        """True when the syscall filter is in force: the layer the worker backend requires."""
        return "seccomp" in self.active

    def describe(self) -> str:
        """One line per layer, for `codemode doctor` and logs."""
        lines = []
        for layer in LAYERS:
            if layer in self.active:
                lines.append(f"  {layer:<18} on")
            elif layer in self.missing:
                lines.append(f"  {layer:<18} off: {self.missing[layer]}")
        return "\n".join(lines)

    def refusal(self) -> str:
        """The sentence a host sees when the worker backend refuses to run."""
        why = self.missing.get("seccomp", "it is not available")
        return (
            f"the worker jail cannot be set up on this host: the seccomp syscall filter is missing "
            f"({why}); install libseccomp2, or accept weaker confinement explicitly "
            f"(WorkerRuntime(allow_weak_jail=True), or --allow-weak-jail on the CLI)"
        )

    def to_json(self) -> dict[str, Any]:
        return {"active": list(self.active), "missing": dict(self.missing)}

    @classmethod
    def from_json(cls, data: Any) -> JailStatus:
        """Parse the template's report; anything malformed counts as no layer at all."""
        if not isinstance(data, dict):
            return cls(missing={"seccomp": "the template sent no jail report"})
        active = data.get("active")
        missing = data.get("missing")
        if not isinstance(active, list) or not isinstance(missing, dict):
            return cls(missing={"seccomp": "the template sent a malformed jail report"})
        return cls(
            active=tuple(layer for layer in LAYERS if layer in active),
            missing={str(k): str(v) for k, v in missing.items() if k in LAYERS},
        )


# -- namespaces (template) ---------------------------------------------------------------------


@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library, opened once per process: the template resolves the functions its children
    call (`warm_libc`), so a child's confinement does no `dlsym` and builds no ctypes objects."""
    return ctypes.CDLL(None, use_errno=True)


def warm_libc() -> None:
    """Resolve, in the template, every libc function a child calls to confine itself."""
    libc = _libc()
    for name in ("prctl", "capset"):
        getattr(libc, name)


def _unshare(libc: ctypes.CDLL, flags: int) -> str | None:
    """None on success, else the reason."""
    if libc.unshare(ctypes.c_int(flags)) == 0:
        return None
    return os.strerror(ctypes.get_errno())


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(disabled: frozenset[str] = frozenset()) -> tuple[list[str], dict[str, str]]:
    """Move the calling process (the template) into fresh namespaces; returns (active, missing).

    As root: network, IPC, UTS, mount and PID namespaces. As another user: the same inside a new
    user namespace that maps the caller's uid to 0, which also makes the workers' chroot possible.
    The PID namespace is for the caller's children: its init is forked here, before anything
    else, and every child forked later (the workers) lives in it.
    A namespace the kernel refuses is reported, never fatal: the syscall filter alone already
    denies every call they guard against."""
    active: list[str] = []
    missing: dict[str, str] = {}
    if not sys.platform.startswith("linux"):
        for name in ("user-namespace", *_NAMESPACE_LAYERS):
            missing[name] = f"namespaces are a Linux feature; this is {sys.platform}"
        return active, missing
    libc = _libc()
    if os.geteuid() != 0:
        if "user-namespace" in disabled:
            reason: str | None = "switched off by the host"
        else:
            uid, gid = os.getuid(), os.getgid()
            reason = _unshare(libc, _CLONE_NEWUSER)
            if reason is None:
                try:
                    _write("/proc/self/setgroups", "deny")
                    _write("/proc/self/uid_map", f"0 {uid} 1")
                    _write("/proc/self/gid_map", f"0 {gid} 1")
                except OSError as exc:
                    reason = f"mapping the uid failed: {exc.strerror}"
        if reason is None:
            active.append("user-namespace")
        else:
            missing["user-namespace"] = f"the kernel refused an unprivileged user namespace ({reason})"
            for name in _NAMESPACE_LAYERS:
                missing[name] = "needs root or a user namespace"
            return active, missing
    for name, flag in _NAMESPACES:
        reason = "switched off by the host" if name in disabled else _unshare(libc, flag)
        if reason is None:
            active.append(name)
        else:
            missing[name] = f"unshare failed ({reason})"
    if "mount-namespace" in active:
        # Nothing mounted in here may propagate back to the host's namespace.
        libc.mount(None, b"/", None, ctypes.c_ulong(_MS_REC | _MS_PRIVATE), None)
    if "uts-namespace" in active:
        name = b"sandbox"
        libc.sethostname(name, ctypes.c_size_t(len(name)))
    reason = "switched off by the host" if "pid-namespace" in disabled else _unshare(libc, _CLONE_NEWPID)
    if reason is None:
        _hold_pid_namespace(libc)
        active.append("pid-namespace")
    else:
        missing["pid-namespace"] = f"unshare failed ({reason})"
    return active, missing


def _hold_pid_namespace(libc: ctypes.CDLL) -> None:
    """Fork the PID namespace's init: the first child after `unshare(CLONE_NEWPID)` is its pid 1,
    and the namespace lives as long as it does. It does nothing but wait (reaping what it
    inherits) and dies with the template: the parent-death signal, and the template's process
    group, which it stays in. Raises OSError if it cannot be forked: the namespace would then
    take the first worker as its init, so the template must not go on."""
    pid = os.fork()
    if pid:
        return
    try:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        os.closerange(0, 1 << 16)
        while True:
            signal.pause()
    finally:
        os._exit(0)


def can_chroot(active: list[str]) -> bool:
    return os.geteuid() == 0 or "user-namespace" in active


# -- the syscall filter --------------------------------------------------------------------------


class SyscallFilter:
    """A compiled allowlist, ready to be loaded by a forked worker with two `prctl` calls.

    The template compiles it once (libseccomp generates and optimises the BPF program); loading it
    in a worker costs microseconds and needs no allocation."""

    def __init__(self, program: bytes) -> None:
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._prog = _SockFprog(len(program) // 8, ctypes.addressof(self._buffer))
        self._libc = _libc()

    def load(self) -> None:
        """Confine the calling process for good. Raises OSError if the kernel refuses."""
        libc = self._libc
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._prog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def build_filter() -> tuple[SyscallFilter | None, str | None]:
    """Compile the allowlist; (filter, None) or (None, why it cannot be had on this host)."""
    if not sys.platform.startswith("linux"):
        return None, f"seccomp is a Linux feature; this is {sys.platform}"
    machine = platform.machine()
    if machine not in FULL_JAIL_MACHINES:
        return None, f"the allowlist is written for {' and '.join(FULL_JAIL_MACHINES)}, not {machine}"
    try:
        import pyseccomp as seccomp
    except (ImportError, RuntimeError, OSError) as exc:
        return None, f"the libseccomp binding could not be loaded: {exc}"
    try:
        program = _compile(seccomp)
    except (OSError, RuntimeError, ValueError) as exc:
        return None, f"libseccomp could not compile the filter: {exc}"
    return SyscallFilter(program), None


def _compile(seccomp: Any) -> bytes:
    import fcntl
    import termios

    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(errno.EPERM))
    f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)
    try:  # a binary search over syscall numbers instead of a linear scan (libseccomp >= 2.5)
        f.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
    except (OSError, RuntimeError, ValueError):
        pass
    for name in ALLOWED_SYSCALLS:
        try:
            f.add_rule(seccomp.ALLOW, name)
        except (OSError, RuntimeError, ValueError):
            continue  # not a call on this architecture (aarch64 has no select, poll, time, alarm)
    # Clocks by static id only; the kernel reads the id as a 32-bit int, so only those bits count.
    for name in _CLOCK_CALLS:
        for clock in STATIC_CLOCKS:
            f.add_rule(seccomp.ALLOW, name, seccomp.Arg(0, seccomp.MASKED_EQ, 0xFFFFFFFF, clock))
    # No executable memory: shellcode in an escaped worker has nowhere to run from.
    no_exec = seccomp.Arg(2, seccomp.MASKED_EQ, 0x4, 0)  # PROT_EXEC
    f.add_rule(seccomp.ALLOW, "mmap", no_exec)
    f.add_rule(seccomp.ALLOW, "mprotect", no_exec)
    # Socket timeouts switch blocking mode; isatty asks for terminal attributes. Nothing else.
    for request in (termios.FIONBIO, termios.TCGETS):
        f.add_rule(seccomp.ALLOW, "ioctl", seccomp.Arg(1, seccomp.EQ, request))
    for command in (fcntl.F_GETFD, fcntl.F_GETFL):
        f.add_rule(seccomp.ALLOW, "fcntl", seccomp.Arg(1, seccomp.EQ, command))
    # The run's memory and CPU limits are lowered after the filter is in: prlimit on the worker
    # itself only. Raising a hard limit needs CAP_SYS_RESOURCE, which no worker has.
    f.add_rule(seccomp.ALLOW, "prlimit64", seccomp.Arg(0, seccomp.EQ, 0))
    # The channel carries plain data: no out-of-band bytes (MSG_OOB on unix sockets is a known
    # kernel attack surface).
    no_oob = seccomp.Arg(3, seccomp.MASKED_EQ, 0x1, 0)
    f.add_rule(seccomp.ALLOW, "sendto", no_oob)
    f.add_rule(seccomp.ALLOW, "recvfrom", no_oob)
    # Only about itself: another pid's affinity would tell which host processes exist.
    f.add_rule(seccomp.ALLOW, "sched_getaffinity", seccomp.Arg(0, seccomp.EQ, 0))
    for op in _FUTEX_OPS:
        f.add_rule(seccomp.ALLOW, "futex", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF & ~_FUTEX_FLAGS, op))
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(write_end, "wb", closefd=False) as out:
            f.export_bpf(out)
        os.close(write_end)
        write_end = -1
        chunks = []
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)
    program = b"".join(chunks)
    if not program or len(program) % 8:
        raise ValueError(f"libseccomp exported {len(program)} bytes of BPF")
    return program


def die_with_parent() -> None:
    """Have the kernel kill the calling worker when the template that forked it dies: a session
    worker stopped between runs would never see its channel close. Set after the uid switch
    (changing credentials clears it) and before the filter (which denies `prctl`)."""
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


#: `capset`'s argument types, made once: making an array type in each worker cost ~0.3 ms and
#: ~50 copy-on-write faults of its confinement.
_CapHeader = ctypes.c_uint32 * 2
_CapData = ctypes.c_uint32 * 6


def drop_capabilities() -> None:
    """Give up every capability (a worker that is uid 0 inside a user namespace has them all
    there). Raises OSError if the kernel refuses."""
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = _CapData()
    if _libc().capset(header, data) != 0:  # glibc's wrapper: the right syscall on every machine
        raise OSError(ctypes.get_errno(), "capset failed")
