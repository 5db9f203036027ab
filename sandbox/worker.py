"""Code that runs in the worker processes: the template and the single-use workers it forks.

The template is started once per host runtime with an empty environment, no inherited
descriptors but its control socket, and its own session. It imports everything a run needs,
runs one warm-up snippet, freezes the garbage collector (so forked children share its pages),
then waits. For each spawn request it receives one end of a fresh socket pair, forks, writes the
child's pid into that socket (so the host learns the pid from trusted code, before any snippet
runs) and closes its copy.

Before anything else the template enters fresh namespaces (forking the init of the workers' PID
namespace) and compiles the syscall filter (`sandbox.jail`), then reports which jail layers are
in force in every pid frame it writes. The template stays in the host's PID namespace, so the
pid it reports is the one the host sees in /proc and signals.

A child puts itself in its own process group, closes every descriptor but its channel and
stdio (/dev/null), lowers its static rlimits (file size 0, open files, processes, core dumps),
chroots into an empty directory and takes a uid of its own where it can, drops its capabilities,
loads the syscall filter, and waits for one `run` message. Then it lowers its address-space and
CPU limits for this run, arms a wall-clock timer, builds the run, takes the host's compile of
the snippet from a `code` frame (a worker never compiles source), runs it, sends one `done`
frame and exits. It is never reused.

A session worker is the same child, confined the same way, whose first message is `session`
instead of `run`: it sets the session's hard limits and then serves one `run` after another with
the session's state (`sandbox.session`), each with its own soft limits and timers, until the host
kills it. The syscall filter stays loaded for its whole life. After each run, before its `done`
frame, it puts back what the run changed in the state all runs of the process share
(`crossing.SharedState.restore`), as the in-process backend does.
"""

from __future__ import annotations

import gc
import math
import os
import resource
import signal
import socket
import sys
import time
from collections.abc import Callable
from types import CodeType
from typing import Any

from .control import RunStopped, Verdict
from .execution import Execution, run_kit, syntax_result
from .guards import RunGuards
from .jail import (
    SyscallFilter,
    build_filter,
    can_chroot,
    die_with_parent,
    drop_capabilities,
    enter_namespaces,
    warm_libc,
)
from .jsonvalue import dumps
from .limits import Limits, cpu_time_message, memory_message, wall_time_message
from .policy import PolicyError, compile_snippet
from .protocol import (
    HEADER,
    BlockingChannel,
    ChannelClosed,
    encode,
    pack_code,
    parse_frame,
    unpack_code,
)
from .result import RunError, RunResult
from .scheduler import CallRequest
from .session import SessionRlimits, SessionState
from .shims import ShimSet

#: The channel's descriptor in a worker, right after stdio.
CHANNEL_FD = 3
#: Open-file limit inside a run: stdio and the channel are open, and no new descriptor (file,
#: socket, pipe) can be made at all.
RUN_NOFILE = CHANNEL_FD + 1
#: Workers that start as root switch to a uid of their own (this base plus their pid), so an
#: escape could not signal or trace the host or another worker.
UID_BASE = 2_000_000_000

#: Codecs, hash constructors and time zone data load lazily on first use; a confined worker
#: can no longer load anything, so the template loads them first.
_WARM_ENCODINGS = (
    "ascii", "latin-1", "utf-8", "utf-8-sig", "utf-16", "utf-32", "cp1252", "cp437",
    "iso8859-15", "idna", "unicode_escape", "raw_unicode_escape", "mac-roman",
)
#: After the wall-clock timer first fires, it fires again this often until the run ends.
TIMER_REPEAT = 0.05
#: Frames of worker code between `_run` and the snippet body, added to its recursion budget.
FRAME_MARGIN = 5
#: Recursion room for checking and encoding the result once the snippet has finished.
RESULT_DEPTH_ROOM = 500


_WARM_UP_CODE = (
        "import json, re, datetime, collections, math, itertools, functools, statistics\n"
        "import asyncio, random, string, textwrap, decimal, fractions, heapq, bisect, operator\n"
        "import copy, base64, hashlib, uuid, difflib, unicodedata, dataclasses, enum, typing, time\n"
        "time.strptime('2020', '%Y')\n"
        "x = [i * 2 for i in range(10)]\n"
        "print(json.dumps({'a': x}), re.findall(r'\\d+', 'a1b22'), f'{x[0]}', '{0}'.format(1))\n"
    "return sorted(collections.Counter('abca').items())\n"
)


#: What each child runs while idle: the host compiles every run's snippet, so a child warms the
#: path a run takes (unpacking the host's code, building the run, running it), not the compiler.
_CHILD_WARM_UP_CODE = "x = [i for i in range(3)]\nprint(f'{x}')\nreturn {'a': x}"


def _warm_up(code: str = _WARM_UP_CODE, compiled: CodeType | None = None) -> tuple[RunResult, Execution]:
    """Import and exercise everything once, so a run pays for none of it (the template, before
    it forks)."""
    execution = Execution(code, [], Limits(), compiled=compiled)
    execution.start()
    execution.scheduler.run_ready()
    return execution.result(), execution


def _child_request() -> bytes:
    """A run request as the host sends one, for the children's warm-up (made once, in the
    template)."""
    return encode({"op": "run", "code": _CHILD_WARM_UP_CODE, "limits": Limits().to_json(), "names": [],
                   "namespace": "tools", "docs": None,
                   "compiled": pack_code(compile_snippet(_CHILD_WARM_UP_CODE, Limits()))})


def _warm_child(request: bytes) -> None:
    """A child's warm-up while idle: the whole path of a run, minus its limits. After a fork the
    first touch of every shared page is a copy-on-write fault, and the first call of anything
    is cold (about 3 ms in all on a VM, 0.2 ms of it parsing the request and setting the first
    signal handler): better paid before the run starts than during it."""
    message = parse_frame(request[HEADER.size:])
    Limits.from_json(message["limits"])
    for signum in (signal.SIGALRM, signal.SIGXCPU, signal.SIGPROF):
        signal.signal(signum, signal.signal(signum, _no_signal))  # set, then put back
    resource.setrlimit(resource.RLIMIT_AS, resource.getrlimit(resource.RLIMIT_AS))  # unchanged
    resource.getrusage(resource.RUSAGE_SELF)
    signal.setitimer(signal.ITIMER_REAL, 0)
    _encode_done(*_warm_up(message["code"], unpack_code(message["compiled"])))


def _no_signal(signum: int, frame: Any) -> None:
    """A handler set only to warm `signal.signal` up; never left in place."""


def _warm_lazy_loads() -> None:
    import _strptime  # noqa: F401 - time.strptime imports it lazily
    import datetime
    import hashlib

    for name in sorted(hashlib.algorithms_guaranteed):
        hashlib.new(name, b"x")
    for encoding in _WARM_ENCODINGS:
        "x".encode(encoding).decode(encoding)
    time.localtime()
    datetime.datetime.now().astimezone()
    from . import prelude
    from .shims import zoneinfo as zoneinfo_shim

    prelude.preload()  # nor read the preludes' sources

    zoneinfo_shim.preload()  # a confined worker cannot open the zone files


class _Jail:
    """What the template set up once, and what each child applies to itself."""

    def __init__(self, directory: str, disabled: frozenset[str]) -> None:
        active, missing = enter_namespaces(disabled)
        self.filter: SyscallFilter | None = None
        if "seccomp" in disabled:
            missing["seccomp"] = "switched off by the host"
        else:
            self.filter, reason = build_filter()
            if self.filter is not None:
                reason = _probe_filter(self.filter)
            if reason is None:
                active.insert(0, "seccomp")
            else:
                self.filter = None
                missing["seccomp"] = reason
        self.directory = directory if directory and can_chroot(active) and "chroot" not in disabled else ""
        if self.directory:
            active.append("chroot")
        else:
            missing["chroot"] = "needs root or a user namespace" if directory else "switched off by the host"
        self.switch_uid = os.geteuid() == 0 and "user-namespace" not in active
        if self.switch_uid:
            active.append("uid")
        else:
            missing["uid"] = "needs a host running as root"
        active.append("rlimits")
        self.report = {"active": active, "missing": missing}
        #: The pid frame's jail part, encoded once: the template's loop between forks stays
        #: short (after each fork every page it writes is a copy-on-write fault).
        self.report_json = dumps(self.report)
        #: The children's warm-up run request, made once here (`_child_request`).
        self.warm_up = b""


def _probe_filter(syscall_filter: SyscallFilter) -> str | None:
    """Load the filter in a throw-away child and check that it denies a socket: None when it
    works, else why not. A kernel without seccomp, or a container whose own filter forbids
    stacking another one, is found here, once, instead of in every run."""
    pid = os.fork()
    if pid == 0:
        code = 2
        try:
            syscall_filter.load()
            code = 3
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except PermissionError:
            code = 0
        except BaseException:
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 0:
        return None
    if code == 2:
        return "the kernel refused to load a seccomp filter"
    return f"the filter did not deny a test call (worker exit {code})"


def template_main(ctrl_fd: int, jail: str = "", disabled: str = "") -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    confinement = _Jail(jail, frozenset(filter(None, disabled.split(","))))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    warm_libc()
    _warm_lazy_loads()
    _warm_up()
    confinement.warm_up = _child_request()
    _warm_child(confinement.warm_up)
    gc.collect()
    gc.freeze()
    ctrl = socket.socket(fileno=ctrl_fd)
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(ctrl, 64, 16)
        except InterruptedError:
            continue
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        for fd in fds:
            _spawn(fd, ctrl_fd, confinement)


def _spawn(fd: int, ctrl_fd: int, jail: _Jail) -> None:
    try:
        pid = os.fork()
    except OSError:
        _try_write(fd, encode({"op": "spawn-failed"}))
        os.close(fd)
        return
    if pid == 0:
        try:
            _child_main(fd, ctrl_fd, jail)
        finally:
            os._exit(1)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it, or is gone
    _try_write(fd, encode(f'{{"op":"pid","pid":{pid},"jail":{jail.report_json}}}'))
    os.close(fd)


def _try_write(fd: int, data: bytes) -> None:
    try:
        os.write(fd, data)
    except OSError:
        pass


def _child_main(fd: int, ctrl_fd: int, jail: _Jail) -> None:
    os.setpgid(0, 0)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.close(ctrl_fd)
    os.closerange(3, fd)
    os.closerange(fd + 1, 1 << 16)
    if fd != CHANNEL_FD:
        os.dup2(fd, CHANNEL_FD)
        os.close(fd)
    channel = BlockingChannel(socket.socket(fileno=CHANNEL_FD))
    baseline = _address_space()
    _warm_child(jail.warm_up)
    _confine(jail.directory, jail.switch_uid, jail.filter)
    kit = run_kit()  # this process's one run's guards and shims, made before the run arrives
    try:
        message = channel.receive(spin=False)
    except (ChannelClosed, OSError):
        os._exit(0)
    if message is not None and message.get("op") == "session":
        _session_main(message, channel, baseline)
    if message is None or message.get("op") != "run":
        os._exit(0)
    try:
        channel.send(_done_frame(message, channel, baseline, kit=kit))
    except (OSError, ValueError):
        os._exit(1)
    _linger(channel)


def _session_main(first: dict[str, Any], channel: BlockingChannel, baseline: int) -> None:
    """A session worker: set the session's hard limits, then serve `run` requests one after
    another with one `SessionState`, until the host closes the channel or kills the process.

    The host checks each run as it checks a single-use worker's (CPU time from its own start,
    the address-space limit in force, the output), and requires silence between runs: nothing is
    sent but one `done` frame per `run`, and an idle worker uses no CPU."""
    try:
        rlimits = SessionRlimits(baseline, int(first["memory"]), float(first["lifetime"]))
    except (KeyError, TypeError, ValueError, OSError):
        os._exit(1)
    state = SessionState()
    while True:
        try:
            message = channel.receive(spin=False)
        except (ChannelClosed, OSError):
            os._exit(0)
        if message is None or message.get("op") != "run":
            os._exit(0)
        try:
            frame = _done_frame(message, channel, baseline, (state, rlimits))
            signal.signal(signal.SIGPROF, signal.SIG_IGN)
            state.leave()
            # Put back what the run changed in shared functions and objects (only a Python-layer
            # break can), before `done`: the next run cannot start earlier, the CPU time counts
            # in this run (not as idle time), and no timer of the run is left to cut it short.
            state.shims.restore_shared()
            channel.send(frame)
        except BaseException:  # the host sees the channel close and resets the session
            os._exit(1)


def _done_frame(message: dict[str, Any], channel: BlockingChannel, baseline: int,
                session: tuple[SessionState, SessionRlimits] | None = None,
                kit: tuple[RunGuards, ShimSet] | None = None) -> bytes:
    """Run the snippet and encode its `done` frame; nothing of the run outlives this call
    (but the session's state, in a session worker)."""
    result, execution = _run(message, channel, baseline, session, kit)
    signal.setitimer(signal.ITIMER_REAL, 0)
    if session is not None:
        signal.setitimer(signal.ITIMER_PROF, 0)
    return _encode_done(result, execution)


def _encode_done(result: RunResult, execution: Execution | None) -> bytes:
    return encode('{"op":"done","result":' + dumps(_report(result, execution)) + "}")


def _report(result: RunResult, execution: Execution | None) -> dict[str, Any]:
    """The `done` payload. The worker sends what the snippet printed and the calls it never
    awaited, not finished log lines: the host cuts the output to `max_output` and writes the
    truncation marker and the warnings itself."""
    printed: list[str] = []
    dropped = more = 0
    unawaited: list[tuple[int | None, str]] = []
    pending = 0
    if execution is not None:
        printed, dropped = execution.output.printed_lines(), execution.output.dropped
        unawaited, more = execution.unawaited()
        pending = execution.scheduler.pending_note
    error = result.error
    return {
        "value": result.value,
        "logs": printed,
        "dropped": dropped,
        "unawaited": [list(item) for item in unawaited],
        "more_unawaited": more,
        "pending": pending,
        "error": None if error is None else {"kind": error.kind, "message": error.message},
    }


def _linger(channel: BlockingChannel) -> None:
    """Wait, idle, until the host kills this process or closes the channel: the host reads
    this process's CPU time and limits from /proc to check the result first. The run's memory
    is freed first, so a run that ended at the memory limit can still wait."""
    gc.collect()
    channel.sock.setblocking(True)
    while True:
        try:
            if not channel.sock.recv(4096):  # late replies are dropped; b"" is the host closing
                break
        except MemoryError:
            gc.collect()
        except BaseException:
            break
    os._exit(0)


def _confine(directory: str, switch_uid: bool, syscall_filter: SyscallFilter | None) -> None:
    """The jail's layers that a child applies to itself while idle, after its last import and
    before it reads the run request: no new file descriptors, no files written, no child
    processes, no core dumps; an empty root directory where the template can chroot; a uid of
    its own when started as root, so no host process can be signalled; no capabilities left;
    death with the template (so a worker stopped between session runs cannot outlive it); and,
    last, the syscall filter (loading it costs ~0.1 ms, paid here rather than in the run)."""
    pid = _host_pid()
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (RUN_NOFILE, RUN_NOFILE))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if directory:
        os.chroot(directory)
        os.chdir("/")
    if switch_uid:
        uid = UID_BASE + pid
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    drop_capabilities()
    die_with_parent()
    if syscall_filter is not None:
        syscall_filter.load()


def _host_pid() -> int:
    """This process's pid as the host sees it (in a PID namespace `getpid()` is the namespace's
    own number): /proc is the host's, so `/proc/self` names the host's pid. Read before the
    chroot."""
    try:
        return int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return os.getpid()


def _address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _apply_rlimits(limits: Limits, baseline: int) -> None:
    """The run's memory (on top of the warm baseline) and CPU-time limits."""
    address_space = baseline + limits.memory
    resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + limits.cpu_time)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


def _code_frame(channel: BlockingChannel) -> Callable[[], CodeType]:
    """What `Execution` calls for the host's compile that follows the run request. No code
    (`null`) means the host refused the snippet: the run ends as `syntax` before it touches
    the session's state (the host reports its own text)."""

    def receive() -> CodeType:
        frame = channel.receive()
        if frame is None or frame.get("op") != "code":
            raise ChannelClosed("the host sent no code for the run")
        if frame["compiled"] is None:
            raise PolicyError([])
        return unpack_code(frame["compiled"])

    return receive


def _depth() -> int:
    frame: Any = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _run(message: dict[str, Any], channel: BlockingChannel, baseline: int,
         session: tuple[SessionState, SessionRlimits] | None = None,
         kit: tuple[RunGuards, ShimSet] | None = None) -> tuple[RunResult, Execution | None]:
    """The run's result, and its `Execution` (None when none was built)."""
    holder: list[Execution] = []
    result = _run_into(message, channel, baseline, holder, session, kit)
    return result, holder[0] if holder else None


def _run_into(message: dict[str, Any], channel: BlockingChannel, baseline: int,
              holder: list[Execution], session: tuple[SessionState, SessionRlimits] | None = None,
              kit: tuple[RunGuards, ShimSet] | None = None) -> RunResult:
    try:
        limits = Limits.from_json(message["limits"])
        code = message["code"]
        names = list(message["names"])
        namespace = message.get("namespace", "tools")
        docs = message.get("docs")
        # The host's compile of `code`: in the request, or (`true`) in a `code` frame the host
        # sends while this worker builds the run; a request without one is compiled here.
        packed = message.get("compiled")
        compiled: Any = None
        if packed is True:
            compiled = _code_frame(channel)
        elif packed is not None:
            compiled = unpack_code(packed)
    except (KeyError, TypeError, ValueError, EOFError) as exc:
        return RunResult(error=RunError("crashed", f"bad run request: {exc}"))

    # The host's account of this run: the timers below and every limit inside the run record
    # into it; what a caught `RunStopped` says is never read.
    verdict = Verdict()

    def on_alarm(signum: int, frame: Any) -> None:
        raise verdict.stop("timeout", wall_time_message(limits.wall_time))

    def on_cpu(signum: int, frame: Any) -> None:
        raise verdict.stop("timeout", cpu_time_message(limits.cpu_time))

    execution: Execution | None = None
    try:
        if session is None:
            _apply_rlimits(limits, baseline)
        else:
            signal.signal(signal.SIGPROF, on_cpu)
            session[1].apply(limits, message.get("base"))
        sys.setrecursionlimit(_depth() + limits.max_recursion + FRAME_MARGIN)
        signal.signal(signal.SIGALRM, on_alarm)
        signal.signal(signal.SIGXCPU, on_cpu)
        signal.setitimer(signal.ITIMER_REAL, limits.wall_time, TIMER_REPEAT)
        try:
            extra: dict[str, Any] = {"kit": kit} if session is None else {"state": session[0]}
            execution = Execution(code, names, limits, namespace=namespace, docs=docs, verdict=verdict,
                                  compiled=compiled, **extra)
        except PolicyError as exc:
            return syntax_result(exc)
        holder.append(execution)
        if message.get("live") is True:
            execution.output.sink = _live_sink(channel)
        result = _drive(execution, channel)
    except RunStopped as stopped:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if verdict.error is not None:
            error = verdict.error
        elif execution is not None:  # not the host's: the snippet raised it (a subclass, a kept one)
            error = execution.describe_exception(stopped)
        else:
            error = RunError("crashed", "the worker failed: RunStopped")
        result = execution.failure(error) if execution else RunResult(error=error)
    except MemoryError:
        signal.setitimer(signal.ITIMER_REAL, 0)
        gc.collect()
        error = RunError("memory", memory_message(limits.memory))
        return execution.failure(error) if execution else RunResult(error=error)
    except ChannelClosed:
        os._exit(0)
    except BaseException as exc:  # a fault in worker code: report it, never hang
        signal.setitimer(signal.ITIMER_REAL, 0)
        error = RunError("crashed", f"the worker failed: {type(exc).__name__}")
        return execution.failure(error) if execution else RunResult(error=error)
    if result.error is not None and result.error.kind == "call-limit" and execution is not None:
        # The host believes no call-limit it did not count: show it the calls.
        _send_calls(channel, execution.scheduler.take_outbox())
    return result


#: The timers that raise a stop: held off while a frame is half written, so a stop can never
#: cut one (the host would then read garbage instead of the run's end).
_STOP_SIGNALS = frozenset({signal.SIGALRM, signal.SIGPROF, signal.SIGXCPU})


def _live_sink(channel: BlockingChannel) -> Callable[[str], None]:
    """Send each piece of printed text to the host as it is printed (the host asked: `live`)."""

    def send(text: str) -> None:
        frame = encode('{"op":"out","text":' + dumps(text) + "}")
        signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            channel.send(frame)
        except OSError:
            pass  # the host is gone; the run ends at its next wait
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)

    return send


def _send_calls(channel: BlockingChannel, batch: list[tuple[int, CallRequest]],
                abandoned: tuple[int, ...] | list[int] = (), *, alone: bool = False) -> None:
    """One batch of call frames, its last one marked (the host starts a batch's calls only once
    it has seen the whole batch), then a `cancel` frame for each call the snippet abandoned.
    `alone` tells the host that nothing can run here until this one call answers, so it may
    answer inline without reading the channel meanwhile (nothing can send a `cancel`)."""
    if not batch and not abandoned:
        return
    last = batch[-1][0] if batch else -1
    end = ',"last":true,"alone":true}' if alone else ',"last":true}'
    channel.send(
        b"".join(
            encode(
                f'{{"op":"call","id":{cid},"name":{dumps(req._name)},"a":{req._payload}'
                + (end if cid == last else "}")
            )
            for cid, req in batch
        )
        + b"".join(encode(f'{{"op":"cancel","id":{cid}}}') for cid in abandoned)
    )


def _drive(execution: Execution, channel: BlockingChannel) -> RunResult:
    try:
        return _drive_tasks(execution, channel)
    finally:
        # A session worker lives on: no coroutine of this run may be left to resume later.
        with execution.run_context():
            execution.scheduler.close(reraise=False)


def _drive_tasks(execution: Execution, channel: BlockingChannel) -> RunResult:
    sched = execution.scheduler
    execution.start()
    while True:
        execution.step()
        if sched.main_done:
            with execution.run_context():
                sched.close()  # tasks left pending, while the alarm still bounds their `finally`
            signal.setitimer(signal.ITIMER_REAL, 0)
            # Checking the value recurses once per nesting level: give the host code its room back.
            sys.setrecursionlimit(_depth() + RESULT_DEPTH_ROOM)
            return execution.result()
        batch = sched.take_outbox()
        abandoned = sched.take_abandoned()
        deadline = sched.next_deadline()
        _send_calls(channel, batch, abandoned, alone=(
            len(batch) == 1 and not abandoned and not sched.ready and deadline is None
            and len(sched.waiting) == 1))
        if sched.ready:
            continue
        if not sched.waiting and deadline is None:
            raise execution.verdict.stop("exception", "the snippet awaits something that can never finish")
        timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
        frame = channel.receive(timeout)
        while frame is not None:
            if frame.get("op") == "reply":
                sched.resolve(frame["id"], frame["ok"], frame["value"] if frame["ok"] else frame["error"])
            frame = channel.pending() if channel.buffer else None
        sched.fire_timers()
