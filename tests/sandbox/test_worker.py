"""The worker backend: isolation between runs, cancellation, crashes, and a hostile channel."""

from __future__ import annotations

import os
import signal
import socket
import time

import anyio
import pytest
from sandbox_helpers import BINDINGS, run

import sandbox
from sandbox import Limits, RunController
from sandbox.limits import wall_time_message
from sandbox.protocol import encode
from sandbox.workers import WorkerRuntime, _HostChannel, _Session


def test_no_state_survives_a_run(backend: str) -> None:
    first = run("import random\nrandom.seed(7)\nx = 41\nreturn random.random()", backend)
    again = run("import random\nrandom.seed(7)\nreturn random.random()", backend)
    assert first.value == again.value
    result = run("return x", backend)
    assert result.error is not None and "NameError" in result.error.message


def test_concurrent_runs() -> None:
    results: list[object] = []

    async def main() -> None:
        async def one(i: int) -> None:
            r = await sandbox.run(f"return await tools.echo(x={i})", bindings=BINDINGS)
            results.append(r.value)

        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(one, i)

    anyio.run(main)
    assert sorted(results) == list(range(6))  # type: ignore[type-var]


def _children_of_template(runtime: WorkerRuntime) -> set[int]:
    return set(runtime.worker_pids())


def test_cancelling_the_caller_kills_the_worker() -> None:
    runtime = WorkerRuntime(pool_size=0)

    async def main() -> None:
        with anyio.move_on_after(0.5):
            await runtime.run("import asyncio\nawait asyncio.sleep(30)", bindings={}, limits=Limits())
        # The kill is a SIGKILL; wait (up to 10 s, never timed) for the kernel to reap it.
        for _ in range(1000):
            if not _children_of_template(runtime):
                break
            await anyio.sleep(0.01)

    try:
        anyio.run(main)
        assert _children_of_template(runtime) == set()
    finally:
        runtime.close()
    assert run("return 1", "worker").value == 1


def test_controller_cancel_reports_cancelled(backend: str) -> None:
    async def main() -> sandbox.RunResult:
        controller = RunController()

        async def later() -> None:
            await anyio.sleep(0.3)
            controller.cancel("user pressed stop")

        async with anyio.create_task_group() as tg:
            tg.start_soon(later)
            return await sandbox.run("import asyncio\nawait asyncio.sleep(30)", backend=backend, controller=controller)

    result = anyio.run(main)
    assert result.error == sandbox.RunError("cancelled", "the run was cancelled: user pressed stop")


def test_a_killed_worker_is_reported_as_crashed() -> None:
    runtime = WorkerRuntime(pool_size=1)
    running = anyio.Event()

    async def started() -> None:
        running.set()  # the worker is in the middle of its run: it waits for this answer

    killed: list[int] = []

    async def killer() -> None:
        await running.wait()
        for pid in runtime.worker_pids():  # the running worker, and any the pool holds
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    async def main() -> sandbox.RunResult:
        async with anyio.create_task_group() as tg:
            tg.start_soon(killer)
            return await runtime.run("import asyncio\nprint('x')\nawait tools.started()\nawait asyncio.sleep(20)",
                                     bindings={"started": started}, limits=Limits())

    try:
        result = anyio.run(main)
        assert result.error is not None and result.error.kind == "crashed", result
        assert "worker process died" in result.error.message
        _wait_gone(killed)
        after = anyio.run(lambda: runtime.run("return 2", bindings={}, limits=Limits()))
        assert after.value == 2
    finally:
        runtime.close()


def _wait_gone(pids: list[int], timeout: float = 30.0) -> None:
    """Until none of `pids` exists any more (a killed process is gone once it has exited)."""
    deadline = time.monotonic() + timeout
    while any(os.path.exists(f"/proc/{pid}") for pid in pids):
        assert time.monotonic() < deadline, f"killed workers still exist: {pids}"
        time.sleep(0.01)


def test_a_pooled_worker_that_died_while_waiting_costs_no_run() -> None:
    runtime = WorkerRuntime(pool_size=2)
    try:
        runtime.start()
        assert anyio.run(lambda: runtime.run("return 1", bindings={}, limits=Limits())).value == 1
        deadline = time.monotonic() + 30
        while len(runtime.worker_pids()) < 2:  # the pool is full again
            assert time.monotonic() < deadline
            time.sleep(0.01)
        idle = runtime.worker_pids()
        for pid in idle:
            os.kill(pid, signal.SIGKILL)
        _wait_gone(idle)
        results = [anyio.run(lambda: runtime.run("return 2", bindings={}, limits=Limits())) for _ in range(3)]
        assert [r.error for r in results] == [None, None, None]
        assert [r.value for r in results] == [2, 2, 2]
        assert not set(idle) & set(runtime.worker_pids())
    finally:
        runtime.close()


def test_a_dead_template_is_restarted() -> None:
    runtime = WorkerRuntime(pool_size=0)
    try:
        assert anyio.run(lambda: runtime.run("return 1", bindings={}, limits=Limits())).value == 1
        template = runtime._template
        assert template is not None
        os.killpg(template.process.pid, signal.SIGKILL)
        template.process.wait()
        assert anyio.run(lambda: runtime.run("return 2", bindings={}, limits=Limits())).value == 2
    finally:
        runtime.close()


# -- the channel, driven by a scripted fake worker --------------------------------------------

async def _serve(frames: list[bytes], bindings: dict[str, object] | None = None,
                 limits: Limits | None = None) -> sandbox.RunResult:
    host_end, fake_worker = socket.socketpair()
    called: list[object] = []

    async def record(**kwargs: object) -> str:
        called.append(kwargs)
        return "ok"

    stream = _HostChannel(host_end)
    session = _Session(stream, bindings if bindings is not None else {"record": record}, limits or Limits())
    for frame in frames:
        fake_worker.sendall(frame)
    fake_worker.shutdown(socket.SHUT_WR)
    async with anyio.create_task_group() as tg:
        result = await session.serve(tg)
        tg.cancel_scope.cancel()
    stream.close()
    fake_worker.close()
    return result


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("frames", "kind", "fragment"),
    [
        ([b"\x00\x00\x00\x05{nope"], "crashed", "malformed frame"),
        ([encode('{"op":"call","id":1,"name":"rm","a":[[],{}]}')], "crashed", "malformed call"),
        ([encode('{"op":"call","id":"1","name":"record","a":[[],{}]}')], "crashed", "malformed call"),
        ([encode('{"op":"call","id":1,"name":[],"a":[[],{}]}')], "crashed", "malformed call"),
        ([encode('{"op":"shell"}')], "crashed", "unknown frame 'shell'"),
        ([encode('{"op":"done","result":{"value":1,"logs":[3],"error":null}}')], "crashed", "logs must be a list of strings"),
        ([encode('{"op":"done","result":{"value":1,"logs":[],"error":{"kind":"pwned","message":""}}}')], "crashed", "malformed error"),
        ([encode('{"op":"done","result":{"value":NaN,"logs":[],"error":null}}')], "crashed", "NaN is not JSON"),
        ([b"\xff\xff\xff\xff"], "crashed", "exceeds"),
        ([], "crashed", "worker process died"),
    ],
    ids=["not-json", "unknown-binding", "bad-id", "unhashable-name", "unknown-op", "bad-logs", "bad-kind", "nan", "oversize", "eof"],
)
async def test_hostile_frames_end_the_run(frames: list[bytes], kind: str, fragment: str) -> None:
    result = await _serve(frames)
    assert result.error is not None and result.error.kind == kind
    assert fragment in result.error.message


@pytest.mark.anyio
async def test_the_host_counts_calls_too() -> None:
    frames = [encode(f'{{"op":"call","id":{i},"name":"record","a":[[],{{}}]}}') for i in range(3)]
    result = await _serve(frames, limits=Limits(max_calls=2))
    assert result.error is not None and result.error.kind == "call-limit"


@pytest.mark.anyio
async def test_cancel_frames_cancel_only_calls_in_flight() -> None:
    # A cancel for a call queued in the same read starts nothing; cancels naming no call in
    # flight (junk, unknown, answered already) change nothing and end nothing.
    started: list[object] = []

    async def record(**kwargs: object) -> str:
        started.append(kwargs)
        return "ok"

    frames = [
        encode('{"op":"call","id":1,"name":"record","a":[[],{"n":1}],"last":true}'),
        encode('{"op":"cancel","id":1}'),
        encode('{"op":"cancel","id":"1"}'),
        encode('{"op":"cancel","id":[1]}'),
        encode('{"op":"cancel","id":99}'),
        encode('{"op":"cancel"}'),
        encode('{"op":"done","result":{"value":2,"logs":[],"error":null}}'),
    ]
    result = await _serve(frames, bindings={"record": record})
    assert result == sandbox.RunResult(value=2, logs=[])
    assert started == []


@pytest.mark.anyio
async def test_a_valid_done_frame_is_accepted() -> None:
    result = await _serve([encode('{"op":"done","result":{"value":[1],"logs":["a"],"error":null}}')])
    assert result == sandbox.RunResult(value=[1], logs=["a"])


def test_gathered_calls_start_in_submission_order(backend: str) -> None:
    started: list[int] = []

    async def record(i: int) -> int:
        started.append(i)  # before the first await: the order calls were started in
        await anyio.sleep(0.01)
        return i

    code = "import asyncio\nreturn await asyncio.gather(*(tools.record(i=i) for i in range(6)))"
    result = run(code, backend, bindings={"record": record})
    assert result.value == list(range(6))
    assert started == list(range(6))


def test_a_binding_that_cancels_the_run_ends_it_even_if_the_snippet_catches(backend: str) -> None:
    async def main() -> sandbox.RunResult:
        controller = RunController()

        async def refuse() -> None:
            controller.cancel("replay mismatch")
            raise sandbox.BindingError("replay mismatch")

        code = "try:\n    await tools.refuse()\nexcept ToolCallError:\n    print('caught')\nreturn 'kept going'"
        return await sandbox.run(code, bindings={"refuse": refuse}, backend=backend, controller=controller)

    result = anyio.run(main)
    assert result.error == sandbox.RunError("cancelled", "the run was cancelled: replay mismatch")
    assert result.value is None


#: Runs in the worker template: any compile in a worker process (not the template's own
#: warm-up) fails the run, so a run that succeeds ran the host's compile.
_NO_COMPILE_IN_WORKERS = (
    "import os, sandbox.execution as _e\n"
    "_template, _compile = os.getpid(), _e.compile_snippet\n"
    "def _refuse(*a, **k):\n"
    "    if os.getpid() != _template:\n"
    "        raise RuntimeError('a worker compiled a snippet')\n"
    "    return _compile(*a, **k)\n"
    "_e.compile_snippet = _refuse\n"
)


def test_workers_run_the_hosts_compile_and_never_compile_themselves() -> None:
    runtime = WorkerRuntime(pool_size=1, _template_prelude=_NO_COMPILE_IN_WORKERS)

    async def main() -> list[sandbox.RunResult]:
        fresh = await runtime.run("def f(x):\n    return x * 2\nreturn f(21)", bindings={}, limits=Limits())
        refused = await runtime.run("return (1 +", bindings={}, limits=Limits())
        session = sandbox.open_session(runtime)
        try:
            kept = [await session.run("n = 20", limits=Limits()), await session.run("return n + 2", limits=Limits())]
        finally:
            session.close()
        return [fresh, refused, *kept]

    try:
        fresh, refused, set_n, read_n = anyio.run(main)
        assert (fresh.error, fresh.value) == (None, 42)
        assert refused.error is not None and refused.error.kind == "syntax"
        assert refused.error.message.startswith("line 1: invalid syntax")
        assert (set_n.error, read_n.error, read_n.value) == (None, None, 22)
    finally:
        runtime.close()


#: Runs in the worker template: every pid frame is written 0.3 s late, so a run's request (sent
#: first) reaches its worker, which starts its wall clock, long before the host reads the pid.
_LATE_PID_FRAMES = (
    "import time, sandbox.worker as _w\n"
    "_write = _w._try_write\n"
    "def _late(fd, data):\n"
    "    if b'\"op\":\"pid\"' in data:\n"
    "        time.sleep(0.3)\n"
    "    _write(fd, data)\n"
    "_w._try_write = _late\n"
)


def test_a_timeout_is_believed_however_late_the_host_learns_the_pid() -> None:
    """The host's wall clock for a run starts as it sends the request, before the worker's can:
    a worker that times out on its own clock is never early on the host's."""
    runtime = WorkerRuntime(pool_size=0, _template_prelude=_LATE_PID_FRAMES)
    try:
        result = anyio.run(lambda: runtime.run("while True:\n    pass", bindings={},
                                               limits=Limits(wall_time=1.0, cpu_time=30)))
        assert result.error is not None and result.error.kind == "timeout", result
        assert result.error.message == wall_time_message(1.0), result.error
    finally:
        runtime.close()
