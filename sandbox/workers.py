"""The worker backend, host side: a template process, a pool of warm workers, one run each.

`WorkerRuntime` starts the template lazily (see `sandbox.worker`), keeps `pool_size` forked
workers waiting, and for each run takes one, sends it the run request, then (while the worker
wakes up and builds the run) compiles the snippet under the policy and sends the code object,
serves its host calls, and kills its process group when the run ends, whatever the reason. The
host never blocks on a worker: a spawn request is one `sendmsg` to the template, and everything
else is awaited.

Nothing here is bound to an event loop between runs, so one runtime can serve runs from
successive `anyio.run` calls. Cancelling the task that awaits `run()` kills the worker. A worker
whose snippet abandons a call (cancels the task awaiting it) sends `cancel` with the call's id,
and the host cancels that binding call (`sandbox.host.CallScope`); a `cancel` naming no call in
flight does nothing.

The host believes nothing a worker says without checking it (`_Session`): every frame is
bounded in size and shape, the host cuts the output to `max_output` and writes the truncation
marker and warnings itself, and an error kind is accepted only when it fits what the host saw:
`timeout` needs the wall clock or the worker's CPU time (read from /proc before the kill) past
the limit, `call-limit` is only the host's own count, `cancelled` the host's own cancel, and
`memory` an address-space limit within the run's budget in force in the worker (the host
cannot see an allocation fail; SECURITY.md says what that leaves), and `syntax` the host's own
compile of the snippet failing, with the host's own text. Anything else ends the run
as `crashed`, with the host's own message and none of the worker's output.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from .control import RunController, cancel_on, interruption
from .execution import syntax_result
from .host import Bindings, CallScope, escaped_inputs, invoke
from .jail import JailError, JailStatus
from .jsonvalue import NotJSONError, dumps, to_json_value
from .limits import Limits, cpu_time_message, memory_message, wall_time_message
from .output import MAX_AWAIT_WARNINGS, cut, flood_message, is_flooding, render_logs
from .policy import PolicyError, compile_snippet
from .protocol import (
    HEADER,
    BlockingChannel,
    ChannelClosed,
    ProtocolError,
    encode,
    pack_code,
    parse_frame,
)
from .result import ERROR_KINDS, MAX_ERROR_MESSAGE, JailLevel, RunError, RunResult
from .scheduler import MAX_TASKS, call_limit_message

#: Extra wall time the host allows before killing a worker whose own timer did not end it
#: (a long C call such as catastrophic regex backtracking cannot be interrupted from inside).
KILL_GRACE = 0.5
#: Largest pid frame the template writes (a pid and the jail report), with room to spare.
MAX_PID_FRAME = 1 << 12
#: How long a run waits for a worker to be forked before giving up.
SPAWN_TIMEOUT = 10.0
#: Slack for the JSON envelope around a frame's payload.
FRAME_SLACK = 64 * 1024
#: Bytes of a call frame around its arguments (`{"op":"call","id":N,"name":...,"a":...}`).
CALL_ENVELOPE = 64
#: An honest worker's kept output is within this many bytes of `max_output` once it drops any:
#: up to 3 bytes of a character cut at the cap, and the final newline.
FULL_OUTPUT_SLACK = 4
#: Clock slack when checking a reported timeout: /proc counts CPU time in 10 ms ticks.
WALL_SLACK = 0.005
CPU_SLACK = 0.05
#: A worker's CPU timer counts tick-sampled time, /proc the scheduler's own: on a loaded machine
#: the timer fires when /proc shows 10% less (measured: 0.45 s for a 0.5 s limit, load 12).
CPU_SLACK_RATIO = 0.2
#: Largest count (dropped bytes, calls never awaited, call id) a worker may report.
MAX_COUNT = 1 << 53
_RESULT_FIELDS = frozenset({"value", "logs", "dropped", "unawaited", "more_unawaited", "pending", "error"})

_BOOT = (
    "import sys; sys.path.insert(0, sys.argv[2]); "
    "exec(sys.argv[5]); "
    "from sandbox.worker import template_main; "
    "template_main(int(sys.argv[1]), sys.argv[3], sys.argv[4])"
)

CRASHED_MESSAGE = (
    "the worker process died before finishing (killed by a resource limit or crashed); "
    "its output is lost"
)


class _HostChannel:
    """The host end of a worker channel: a non-blocking socket driven by readiness waits.

    It tries the socket first and waits only when it would block, so an answer to a waiting
    worker costs one event-loop wake-up, not the two or three of a general-purpose stream."""

    __slots__ = ("sock",)

    def __init__(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self.sock = sock

    async def receive(self) -> bytes:
        """Some bytes; b"" when the worker is gone."""
        while True:
            try:
                return self.sock.recv(1 << 16)
            except BlockingIOError:
                await anyio.wait_readable(self.sock)
            except OSError:
                return b""

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            try:
                view = view[self.sock.send(view):]
            except BlockingIOError:
                await anyio.wait_writable(self.sock)

    def close(self) -> None:
        self.sock.close()


class _Template:
    """The template process and the host end of its control socket."""

    def __init__(self, disabled: frozenset[str] = frozenset(), prelude: str = "") -> None:
        host_end, template_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        root = str(Path(__file__).resolve().parent.parent)
        # An empty directory that workers chroot into (as root, or inside a user namespace);
        # removed with the template.
        self.jail = tempfile.mkdtemp(prefix="codemode-jail-")
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, str(template_end.fileno()), root, self.jail,
             ",".join(sorted(disabled)), prelude],
            pass_fds=(template_end.fileno(),),
            env={},
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        template_end.close()
        self.ctrl = host_end

    def spawn(self, worker_end: socket.socket) -> None:
        socket.send_fds(self.ctrl, [b"S"], [worker_end.fileno()])

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self.ctrl.close()
        finally:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            if self.jail:
                try:
                    os.rmdir(self.jail)
                except OSError:
                    pass


class _Worker:
    """One forked worker: the host end of its channel, the pid of the template that forked it
    and, once read, its own pid and the jail layers the template gave it."""

    __slots__ = ("sock", "pid", "parent", "jail", "read")

    def __init__(self, sock: socket.socket, parent: int | None = None) -> None:
        self.sock = sock
        self.pid: int | None = None
        self.parent = parent
        self.jail: JailStatus | None = None
        #: Bytes of the template's pid frame read so far.
        self.read = bytearray()

    def read_pid(self) -> None:
        """Take the template's pid frame if it has arrived, without waiting (a warm worker's is
        there long before its run)."""
        if self.pid is not None:
            return
        try:
            self.read += self.sock.recv(1 << 12, socket.MSG_DONTWAIT)
        except OSError:  # BlockingIOError included: not yet
            return
        if len(self.read) >= 4:
            (size,) = HEADER.unpack_from(self.read)
            if size <= MAX_PID_FRAME and len(self.read) >= 4 + size:
                try:
                    frame = parse_frame(bytes(self.read[4 : 4 + size]))
                except ProtocolError:
                    return  # the run reads it again and ends as crashed
                del self.read[: 4 + size]
                self.pid, self.jail = _pid_frame(frame)

    def gone(self) -> bool:
        """Whether the worker died while it waited in the pool (its channel is at its end)."""
        if self.pid is None or self.read:
            return False  # not known yet: the run finds out
        try:
            return self.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def kill(self) -> None:
        if self.pid is not None and self.pid > 1:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


class WorkerRuntime:
    """Runs each snippet in a fresh, jailed, resource-limited worker process (the default backend).

    pool_size: workers kept forked and waiting.
    allow_weak_jail: run even when the syscall filter cannot be installed on this host; every
        result then says `jail="weak"`. Off by default: without the filter, `run` raises
        `JailError` naming what is missing.
    """

    name = "worker"

    def __init__(self, *, pool_size: int = 2, allow_weak_jail: bool = False,
                 _disabled_layers: frozenset[str] = frozenset(), _template_prelude: str = "") -> None:
        if pool_size < 0:
            raise ValueError(f"pool_size must be >= 0, got {pool_size}")
        self.pool_size = pool_size
        self.allow_weak_jail = allow_weak_jail
        # Test seams: layers the template must not set up (to exercise hosts that lack them),
        # and host-written code the template runs before it starts (to stand in for an escape).
        self._disabled = frozenset(_disabled_layers)
        self._prelude = _template_prelude
        self._lock = threading.Lock()
        self._template: _Template | None = None
        self._warm: deque[_Worker] = deque()
        #: Workers that sessions hold (`sandbox.sessions`), killed with the runtime.
        self._session_workers: set[_Worker] = set()
        self._closed = False
        atexit.register(self.close)

    # -- pool --------------------------------------------------------------------------------
    def _spawn_locked(self) -> _Worker:
        if self._template is None or not self._template.alive:
            if self._template is not None:
                self._template.close()
            self._template = _Template(self._disabled, self._prelude)
        host_end, worker_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._template.spawn(worker_end)
        except OSError:
            self._template.close()
            self._template = _Template(self._disabled, self._prelude)
            self._template.spawn(worker_end)
        finally:
            worker_end.close()
        return _Worker(host_end, self._template.process.pid)

    def start(self) -> None:
        """Start the template and fill the pool now instead of on the first run."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this WorkerRuntime is closed")
            while len(self._warm) < self.pool_size:
                self._warm.append(self._spawn_locked())

    def _acquire(self) -> _Worker:
        """A warm worker, or a new one; a pooled worker that died while it waited (an OOM kill,
        a stray signal) is dropped, so it never costs a run."""
        with self._lock:
            if self._closed:
                raise RuntimeError("this WorkerRuntime is closed")
            while self._warm:
                worker = self._warm.popleft()
                worker.read_pid()
                if not worker.gone():
                    return worker
                worker.sock.close()
            return self._spawn_locked()

    def _replenish(self) -> None:
        """Top the pool up (while a run's worker runs, or after it), and read the pid frames of
        pooled workers that have arrived meanwhile, so the next run does not."""
        with self._lock:
            if self._closed:
                return
            for waiting in self._warm:
                waiting.read_pid()
            try:
                while len(self._warm) < self.pool_size:
                    self._warm.append(self._spawn_locked())
            except OSError:
                pass  # the next run spawns on demand and reports a failure there

    def jail_status(self, timeout: float = SPAWN_TIMEOUT) -> JailStatus:
        """Which jail layers this runtime's workers get on this host (starts the template if
        needed, and blocks until it has reported). Raises TimeoutError if it never does."""
        worker = self._acquire()
        try:
            if worker.jail is None:
                # Only the template's pid frame comes before a run request: nothing is left
                # buffered for the run's own reader.
                channel = BlockingChannel(worker.sock)
                channel.buffer += worker.read  # what `read_pid` took of the frame already
                worker.read.clear()
                try:
                    frame = channel.receive(timeout)
                except (OSError, ProtocolError, ChannelClosed) as exc:
                    raise TimeoutError("the worker template did not report its jail") from exc
                worker.pid, worker.jail = _pid_frame(frame)
                if worker.jail is None:
                    raise TimeoutError("the worker template did not report its jail")
            return worker.jail
        finally:
            with self._lock:
                if not self._closed and worker.pid is not None:
                    self._warm.appendleft(worker)
                    worker = None  # type: ignore[assignment]
            if worker is not None:
                worker.kill()
                worker.sock.close()

    def worker_pids(self) -> list[int]:
        """Pids of this runtime's live worker processes, idle or running (for tests and
        monitoring): the children of its template, read from /proc."""
        template = self._template
        if template is None:
            return []
        pids = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[1]) == template.process.pid and not _is_namespace_init(entry):
                pids.append(int(entry))
        return sorted(pids)

    def close(self) -> None:
        """Kill the template and every idle worker. Safe to call twice."""
        with self._lock:
            self._closed = True
            while self._warm:
                self._warm.popleft().sock.close()
            while self._session_workers:
                self._session_workers.pop().kill()
            if self._template is not None:
                self._template.close()
                self._template = None

    async def __aenter__(self) -> WorkerRuntime:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    async def _ready(self, worker: _Worker, reader: _Session) -> RunResult | None:
        """Learn `worker`'s pid and jail (reading on from what the pool took of its pid frame)
        and check the jail: None when it may run a snippet, a `crashed` result when no worker
        could be started; raises `JailError` for a weak jail this runtime does not accept."""
        if worker.pid is None:
            reader.buffer += worker.read
            worker.read.clear()
            with anyio.move_on_after(SPAWN_TIMEOUT):
                worker.pid, worker.jail = _pid_frame(await reader._frame())
        if worker.pid is None or worker.jail is None:
            return RunResult(error=RunError("crashed", "no worker process could be started"))
        if not worker.jail.full and not self.allow_weak_jail:
            raise JailError(worker.jail.refusal())
        return None

    # -- one run -----------------------------------------------------------------------------
    async def run(
        self,
        code: str,
        *,
        bindings: Bindings,
        limits: Limits,
        namespace: str = "tools",
        docs: Mapping[str, str] | None = None,
        controller: RunController | None = None,
    ) -> RunResult:
        code, bindings, docs = escaped_inputs(code, bindings, docs)
        worker = self._acquire()
        stream = _HostChannel(worker.sock)
        replenished = False
        jail: JailLevel | None = None
        try:
            session = _Session(stream, bindings, limits, controller, namespace=namespace,
                               source_lines=code.count("\n") + 1, source=code)

            async def after_request() -> RunResult | None:
                # The run request went first, so the worker wakes up and builds the run while
                # the host reads its pid, checks its jail, compiles, reads /proc and tops up
                # the pool. No code is sent before the jail is checked: until then the worker
                # can run nothing.
                nonlocal replenished, jail
                failed = await self._ready(worker, session)
                if failed is not None:
                    return failed
                assert worker.pid is not None and worker.jail is not None
                jail = "full" if worker.jail.full else "weak"
                session.begin(worker.pid, worker.parent)
                try:
                    compiled = pack_code(compile_snippet(code, limits))
                except PolicyError as exc:
                    return syntax_result(exc)
                await stream.send(encode({"op": "code", "compiled": compiled}))
                replenished = True
                self._replenish()
                return None

            result = await self._run(session, stream, code, bindings, limits, namespace, docs,
                                     controller, {"compiled": True}, after_request)
            return result if jail is None else replace(result, jail=jail)
        finally:
            worker.kill()
            stream.close()
            if not replenished:
                self._replenish()

    async def _run(self, session: _Session, stream: _HostChannel, code: str,
                   bindings: Bindings, limits: Limits, namespace: str,
                   docs: Mapping[str, str] | None, controller: RunController | None,
                   extra: Mapping[str, Any] | None = None,
                   after_request: Callable[[], Awaitable[RunResult | None]] | None = None) -> RunResult:
        """Send the run request, then (`after_request`) what follows it, which may end the run
        with a result of its own; then serve the worker until its result."""
        request = {
            "op": "run",
            "code": code,
            "limits": limits.to_json(),
            "names": list(bindings),
            "namespace": namespace,
            "docs": dict(docs) if docs is not None else None,
            **(extra or {}),
        }
        if controller is not None and controller.on_output is not None:
            request["live"] = True  # the worker then sends each print as an `out` frame
        try:
            # The host's wall clock for the run starts before the worker's can (it starts its
            # timer on reading the request): a timeout it reports is then never early here.
            session.started = time.monotonic()
            await stream.send(encode(request))
            if after_request is not None:
                early = await after_request()
                if early is not None:
                    return early
        except OSError:
            return RunResult(error=RunError("crashed", CRASHED_MESSAGE))
        result: RunResult | None = None
        with anyio.move_on_after(limits.wall_time + KILL_GRACE) as deadline:
            async with anyio.create_task_group() as tg:
                cancel_on(controller, tg)
                result = await session.serve(tg)
                if controller is not None or session.tasks:
                    tg.cancel_scope.cancel()  # costs loop turns: only when a task is there to stop
        if result is not None:
            return result
        return RunResult(error=interruption(
            controller, deadline.cancelled_caught,
            wall_time_message(limits.wall_time) + "; its output is lost", CRASHED_MESSAGE,
        ))


class _Session:
    """The host's half of one run's conversation with its worker. Every frame is hostile input,
    even when its shape is right (see the module docstring)."""

    def __init__(self, stream: _HostChannel, bindings: Bindings, limits: Limits,
                 controller: RunController | None = None, *, namespace: str = "tools",
                 source_lines: int | None = None, source: str | None = None,
                 in_session: bool = False) -> None:
        self.stream = stream
        #: The snippet as sent, compiled again on the host when the worker reports `syntax`.
        self.source = source
        self.in_session = in_session
        self.controller = controller
        self.buffer = bytearray()
        self.bindings = bindings
        self.limits = limits
        self.namespace = namespace
        self.source_lines = source_lines
        self.calls = 0
        self.in_flight = 0
        #: `_answer` tasks started in the serve's task group and not yet finished.
        self.tasks = 0
        self.live_bytes = 0
        #: The cancel scope of each call in flight by id, for the worker's `cancel` frames.
        self.scopes: dict[int, CallScope] = {}
        self.max_frame = (
            max(limits.max_call_bytes, limits.max_result + 8 * limits.max_output + 6 * MAX_ERROR_MESSAGE)
            + FRAME_SLACK
        )
        self.frame_size = 0
        #: Bytes of the call frames queued or in flight: what the host holds of them, parsed.
        self.held = 0
        self.send_lock = anyio.Lock()
        self.pid: int | None = None
        self.parent: int | None = None
        self.started = time.monotonic()
        self.cpu_at_start: float | None = None
        self.size_at_start: int | None = None

    def begin(self, pid: int, parent: int | None, fields: list[str] | None = None) -> None:
        """Note the worker and the CPU time it had used before its snippet could run: with
        `started` (set as the request is sent), the evidence a reported timeout is checked
        against."""
        self.pid, self.parent = pid, parent
        if fields is None:
            fields = _proc_fields(pid, parent)
        self.cpu_at_start = None if fields is None else _cpu_of(fields)
        self.size_at_start = None if fields is None else int(fields[_VSIZE])

    async def _frame(self) -> dict[str, Any] | None:
        """The next frame, or None when the worker is gone. One receive usually brings a whole
        frame (often several), so this costs one event-loop wake-up per message, not two."""
        while True:
            frame = self._buffered()
            if frame is not None:
                return frame
            chunk = await self.stream.receive()
            if not chunk:
                return None
            self.buffer += chunk

    def _buffered(self) -> dict[str, Any] | None:
        buf = self.buffer
        if len(buf) < 4:
            return None
        (size,) = HEADER.unpack_from(buf)
        if size > self.max_frame:
            raise ProtocolError(f"frame of {size} bytes exceeds {self.max_frame}")
        if len(buf) < 4 + size:
            return None
        data = bytes(buf[4 : 4 + size])
        del buf[: 4 + size]
        self.frame_size = size
        return parse_frame(data)


    async def serve(self, tg: anyio.abc.TaskGroup) -> RunResult:
        """Answer the worker's calls until it reports its result. Everything the worker sends
        is hostile input: any fault in handling it ends the run as `crashed`, never raises."""
        try:
            return await self._serve(tg)
        except ProtocolError as exc:
            return RunResult(error=RunError("crashed", f"the worker broke the protocol: {exc}"))
        except Exception as exc:
            return RunResult(error=RunError("crashed", f"the worker broke the protocol ({type(exc).__name__})"))

    async def _serve(self, tg: anyio.abc.TaskGroup) -> RunResult:
        batch: list[dict[str, Any]] = []
        while True:
            frame = await self._frame()
            if frame is None:
                return RunResult(error=RunError("crashed", CRASHED_MESSAGE))
            if self.controller is not None and self.controller.cancelled:
                return RunResult(error=interruption(self.controller, False, "", ""))
            op = frame["op"]
            if op == "call":
                problem = self._check_call(frame)
                if problem:
                    return RunResult(error=RunError(*problem))
                # An honest worker keeps every call's arguments until it is answered, so it
                # cannot have more out at once than its memory holds; parsed, the host holds
                # several times as much.
                frame["_bytes"] = self.frame_size
                self.held += self.frame_size
                if self.held > self.limits.memory:
                    raise ProtocolError("more call arguments outstanding than the worker's memory limit")
                batch.append(frame)
                if frame.get("last") is not True:
                    continue  # a batch starts whole or not at all (past max_calls: not at all)
                if len(batch) == 1 and self.in_flight == 0 and frame.get("alone") is True:
                    # A batch of one call, nothing else outstanding, and the worker says nothing
                    # can run until it answers (so no `cancel` can come): give it inline, with no
                    # task to start. A worker that lies only delays its own cancel.
                    self.in_flight += 1
                    batch.clear()
                    await self._answer(frame, None)
                    continue
                for queued in batch:
                    # Counted when queued, not when started, so a batch's last call can never
                    # overtake the earlier ones: calls start in the order the snippet made them.
                    self.in_flight += 1
                    scope = self.scopes[queued["id"]] = CallScope()
                    self.tasks += 1
                    tg.start_soon(self._answered, queued, scope)
                batch.clear()
            elif op == "cancel":
                # The snippet abandoned a call (it cancelled the task awaiting it): cancel it
                # here too. An id that is not in flight (answered already, never made) is no-op.
                call_id = frame.get("id")
                scope = self.scopes.get(call_id) if type(call_id) is int else None
                if scope is not None:
                    scope.abandon()
            elif op == "done":
                return self._checked_result(frame.get("result"))
            elif op == "out":
                self._live(frame.get("text"))
            else:
                return RunResult(error=RunError("crashed", f"the worker sent an unknown frame '{op}'"))

    def _live(self, text: Any) -> None:
        """A live print: passed on only when the host asked for it, as plain text, and never more
        than `max_output` bytes in all (the worker's own cap is not believed)."""
        if self.controller is None or self.controller.on_output is None or type(text) is not str:
            return
        room = self.limits.max_output - self.live_bytes
        if room <= 0:
            return
        kept = cut(text, room)
        self.live_bytes += len(kept.encode("utf-8", "replace"))
        if kept:
            self.controller.output(kept)

    def _check_call(self, frame: dict[str, Any]) -> tuple[str, str] | None:
        self.calls += 1
        if self.calls > self.limits.max_calls:
            return ("call-limit", call_limit_message(self.limits.max_calls))
        a = frame.get("a")
        name = frame.get("name")
        call_id = frame.get("id")
        if (
            type(call_id) is not int
            or not 0 <= call_id < MAX_COUNT
            or type(name) is not str
            or name not in self.bindings
            or frame.get("last", True) is not True
            or not isinstance(a, list)
            or len(a) != 2
            or not isinstance(a[0], list)
            or not isinstance(a[1], dict)
        ):
            return ("crashed", "the worker broke the protocol: malformed call")
        # The frame carries the arguments' JSON verbatim: bound them without re-encoding.
        if self.frame_size > self.limits.max_call_bytes + CALL_ENVELOPE + 6 * len(name.encode("utf-8")):
            return ("crashed", "the worker broke the protocol: call arguments exceed max_call_bytes")
        return None

    async def _answered(self, frame: dict[str, Any], scope: CallScope) -> None:
        try:
            await self._answer(frame, scope)
        finally:
            self.tasks -= 1

    async def _answer(self, frame: dict[str, Any], scope: CallScope | None) -> None:
        args, kwargs = frame["a"]
        try:
            outcome = await invoke(self.bindings, frame["name"], args, kwargs, scope)
        finally:
            self.in_flight -= 1
            self.held -= frame["_bytes"]
            if scope is not None and self.scopes.get(frame["id"]) is scope:
                del self.scopes[frame["id"]]
        if outcome is None:
            return  # abandoned: the worker has stopped waiting for it
        ok, value = outcome
        body = {"op": "reply", "id": frame["id"], "ok": ok}
        body["value" if ok else "error"] = value
        data = encode(dumps(body))
        async with self.send_lock:
            try:
                await self.stream.send(data)
            except OSError:
                pass  # the worker is gone; the reader reports it

    # -- the result ---------------------------------------------------------------------------
    def _checked_result(self, data: Any) -> RunResult:
        """A worker's `done` payload, validated as hostile input; `ProtocolError` if it lies."""
        if not isinstance(data, dict):
            raise ProtocolError("result is not an object")
        if not data.keys() <= _RESULT_FIELDS:
            raise ProtocolError("the result has fields the host does not know")
        logs = data.get("logs")
        if not isinstance(logs, list) or not all(type(line) is str for line in logs):
            raise ProtocolError("logs must be a list of strings")
        dropped = data.get("dropped", 0)
        if not _is_count(dropped):
            raise ProtocolError("malformed count of dropped output")
        printed, cut_bytes, full = self._bounded_output(logs)
        if dropped and not full:
            raise ProtocolError("it reported dropped output while its output was not full")
        unawaited, more = self._checked_unawaited(data.get("unawaited", []), data.get("more_unawaited", 0))
        pending = data.get("pending", 0)
        if not _is_count(pending) or pending > MAX_TASKS:
            raise ProtocolError("malformed count of pending tasks")
        error = data.get("error")
        value = data.get("value")
        if error is not None:
            if (
                not isinstance(error, dict)
                or error.keys() != {"kind", "message"}
                or error["kind"] not in ERROR_KINDS
                or type(error["message"]) is not str
            ):
                raise ProtocolError("malformed error")
            if len(error["message"]) > MAX_ERROR_MESSAGE:
                raise ProtocolError(f"an error message longer than {MAX_ERROR_MESSAGE} characters")
            if value is not None:
                raise ProtocolError("a failed run has no value")
            checked = self._verified(error["kind"], error["message"], full, dropped)
            logs = render_logs(printed, dropped + cut_bytes, unawaited, more, self.namespace, pending)
            return RunResult(value=None, logs=logs, error=checked)
        try:
            plain = to_json_value(value, "$")
        except (NotJSONError, RecursionError):
            raise ProtocolError("the value is not lossless JSON") from None
        if plain is not None and len(dumps(plain).encode("utf-8")) > self.limits.max_result:
            raise ProtocolError(f"a value larger than max_result ({self.limits.max_result} bytes)")
        logs = render_logs(printed, dropped + cut_bytes, unawaited, more, self.namespace, pending)
        return RunResult(value=plain, logs=logs)

    def _bounded_output(self, logs: list[str]) -> tuple[list[str], int, bool]:
        """The printed lines, cut to `max_output` bytes by the host itself: (lines, bytes cut,
        whether the worker's output reached the cap)."""
        if not logs:
            return [], 0, self.limits.max_output <= FULL_OUTPUT_SLACK
        limit = self.limits.max_output
        text = "\n".join(logs)
        size = len(text.encode("utf-8"))  # parse_frame escaped any surrogate
        full = size >= limit - FULL_OUTPUT_SLACK
        if size <= limit:
            return text.split("\n"), 0, full
        kept = cut(text, limit)
        return (kept.split("\n") if kept else []), size - len(kept.encode("utf-8")), full

    def _checked_unawaited(self, unawaited: Any, more: Any) -> tuple[list[tuple[int | None, str]], int]:
        if not isinstance(unawaited, list) or len(unawaited) > MAX_AWAIT_WARNINGS or not _is_count(more):
            raise ProtocolError("malformed list of calls never awaited")
        if more and len(unawaited) < MAX_AWAIT_WARNINGS:
            raise ProtocolError("malformed list of calls never awaited")
        checked: list[tuple[int | None, str]] = []
        for item in unawaited:
            if not isinstance(item, list) or len(item) != 2:
                raise ProtocolError("malformed list of calls never awaited")
            line, name = item
            if line is not None and not (
                type(line) is int and 0 < line <= (self.source_lines or MAX_COUNT)
            ):
                raise ProtocolError("malformed list of calls never awaited")
            if type(name) is not str or name not in self.bindings:
                raise ProtocolError("malformed list of calls never awaited")
            checked.append((line, name))
        return checked, more

    def _verified(self, kind: str, message: str, full: bool, dropped: int) -> RunError:
        """The worker's error if its kind fits what the host saw, with the host's own message
        for the kinds the host can check; `ProtocolError` otherwise."""
        limits = self.limits
        if kind == "timeout":
            seen = []
            if time.monotonic() - self.started >= limits.wall_time - WALL_SLACK:
                seen.append(wall_time_message(limits.wall_time))
            cpu = self._cpu_used()
            if cpu is not None and cpu >= limits.cpu_time * (1 - CPU_SLACK_RATIO) - CPU_SLACK:
                seen.append(cpu_time_message(limits.cpu_time))
            if seen:
                return RunError("timeout", message if message in seen else seen[0])
        elif kind == "memory":
            if self.pid is not None and _address_space_capped(self.pid, self.parent, limits.memory):
                return RunError("memory", memory_message(limits.memory))
        elif kind == "call-limit":
            pass  # only ever the host's own verdict: an honest worker shows the host the call
            # that trips the limit, and the host ends the run on counting it
        elif kind == "cancelled":
            if self.controller is not None and self.controller.cancelled:
                return interruption(self.controller, False, "", "")
        elif kind == "output-limit":
            if full and is_flooding(limits.max_output, dropped):
                return RunError("output-limit", flood_message(limits.max_output))
        elif kind == "syntax":
            text = self._host_syntax(message)
            if text is not None:
                return RunError("syntax", text)
        else:  # exception, invalid-result, crashed: the snippet's own account
            return RunError(kind, message)  # type: ignore[arg-type]
        raise ProtocolError(f"it reported '{kind}', which the host did not see happen")

    def _host_syntax(self, claimed: str) -> str | None:
        """The host's own refusal of the snippet; None when the host finds nothing wrong. The
        host compiled the snippet it sent, so a worker never compiles one: its claim of
        `syntax` stands only as the host's text."""
        if self.source is None:
            return None
        try:
            compile_snippet(self.source, self.limits, session=self.in_session)
        except PolicyError as exc:
            return str(exc)
        except Exception:
            return None
        return None


    def _cpu_used(self) -> float | None:
        """CPU seconds the worker has used since its run started, read from /proc."""
        if self.pid is None or self.cpu_at_start is None:
            return None
        now = _cpu_seconds(self.pid, self.parent)
        return None if now is None else now - self.cpu_at_start


def _is_namespace_init(pid: str) -> bool:
    """Whether `pid` is pid 1 of its own PID namespace: the template's placeholder init, which
    holds the workers' namespace open and is no worker."""
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next((line for line in f if line.startswith("NSpid:")), "")
    except OSError:
        return False
    ids = line.split()[1:]
    return len(ids) > 1 and ids[-1] == "1"


def _is_count(value: Any) -> bool:
    return type(value) is int and 0 <= value < MAX_COUNT


def _proc_fields(pid: int, parent: int | None) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, if `pid` is alive and a child of
    `parent` (so a reused pid never lends its numbers to a run)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        fields = stat[stat.rindex(")") + 2 :].split()
        if parent is not None and int(fields[1]) != parent:
            return None
        return fields
    except (OSError, ValueError, IndexError):
        return None


#: /proc/<pid>/stat fields after the command name: user and system CPU ticks, address space.
_UTIME, _STIME, _VSIZE = 11, 12, 20
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_of(fields: list[str]) -> float:
    return (int(fields[_UTIME]) + int(fields[_STIME])) / _CLOCK_TICKS


def _cpu_seconds(pid: int, parent: int | None) -> float | None:
    fields = _proc_fields(pid, parent)
    return None if fields is None else _cpu_of(fields)


def _address_space_capped(pid: int, parent: int | None, memory: int) -> bool:
    """Whether the worker runs under an address-space limit no higher than its peak size plus
    the run's memory budget (the worker sets its baseline plus `memory`)."""
    if _proc_fields(pid, parent) is None:
        return False
    try:
        with open(f"/proc/{pid}/limits") as f:
            limit_line = next(line for line in f if line.startswith("Max address space"))
        with open(f"/proc/{pid}/status") as f:
            peak_line = next(line for line in f if line.startswith("VmPeak:"))
        soft = limit_line.split()[3]
        peak = int(peak_line.split()[1]) * 1024
    except (OSError, StopIteration, IndexError, ValueError):
        return False
    return soft.isdigit() and int(soft) <= peak + memory


def _pid_frame(frame: dict[str, Any] | None) -> tuple[int | None, JailStatus | None]:
    """The template's first frame on a worker channel: the child's pid and the jail report.
    The template writes it before the child runs any snippet, so it is trusted, but still
    checked for shape."""
    if frame is None or frame.get("op") != "pid":
        return None, None
    pid = frame.get("pid")
    if type(pid) is not int or pid <= 1:
        return None, None
    return pid, JailStatus.from_json(frame.get("jail"))
