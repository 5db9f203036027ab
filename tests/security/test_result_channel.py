"""The result channel: the host decides why a run ended, and believes neither the snippet nor
the worker about it.

Two attackers. A scripted hostile worker writes forged frames of the right shape to a real host
`_Session` over a socket pair: a worker that lies ends as `crashed` with the host's own message
and none of its output, output past `max_output` is cut by the host, which writes the truncation
marker itself, and `syntax` stands only when the host's own compile refuses the snippet. A
snippet with the Python layers broken ("god mode": the real `object.__setattr__` and the
`RunStopped` class handed to it by a test-only builtin) catches the run's stop and rewrites,
re-raises, subclasses or swallows it, on both backends and in sessions: the verdict is the
host's, with the host's text.

Each case asserts what the run reports (kind and exact message) and that the forged content is
absent from the result.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

import anyio
import pytest

import sandbox
from sandbox.limits import Limits, wall_time_message
from sandbox.output import TRUNCATION_MARKER, flood_message
from sandbox.policy import TOO_DEEP_TO_CHECK
from sandbox.protocol import encode
from sandbox.result import MAX_ERROR_MESSAGE
from sandbox.scheduler import call_limit_message
from sandbox.workers import _HostChannel, _Session

pytestmark = pytest.mark.anyio

FORGED = "FORGED-3f9c"
KIB = 1024


def lie(kind: str) -> str:
    return f"the worker broke the protocol: it reported '{kind}', which the host did not see happen"


def done(*, value: Any = None, logs: list[str] | None = None, error: tuple[str, str] | None = None,
         **extra: Any) -> bytes:
    result: dict[str, Any] = {"value": value, "logs": logs if logs is not None else [], **extra}
    result["error"] = None if error is None else {"kind": error[0], "message": error[1]}
    return encode({"op": "done", "result": result})


def call(call_id: int, *, last: bool = True, args: Any = None, name: str = "record") -> bytes:
    frame: dict[str, Any] = {"op": "call", "id": call_id, "name": name, "a": args if args is not None else [[], {}]}
    if last:
        frame["last"] = True
    return encode(frame)


class FakeWorker:
    """Drives a real `_Session` with scripted frames; `calls` records what the binding ran."""

    def __init__(self, limits: Limits | None = None, *, controller: sandbox.RunController | None = None,
                 pid: int | None = None, source: str | None = None) -> None:
        self.limits = limits or Limits(wall_time=5, cpu_time=5)
        self.source = source
        self.controller = controller
        self.pid = pid
        self.calls: list[dict[str, Any]] = []

    async def record(self, **kwargs: Any) -> str:
        self.calls.append(kwargs)
        return "ok"

    async def serve(self, frames: list[bytes], *, delay: float = 0.0) -> sandbox.RunResult:
        host_end, worker_end = socket.socketpair()
        stream = _HostChannel(host_end)
        session = _Session(stream, {"record": self.record}, self.limits, self.controller,
                           source_lines=10, source=self.source)
        if self.pid is not None:
            session.begin(self.pid, os.getppid())
        try:
            async with anyio.create_task_group() as tg:

                async def write() -> None:
                    if delay:
                        await anyio.sleep(delay)
                    for frame in frames:
                        await anyio.to_thread.run_sync(worker_end.sendall, frame)
                    worker_end.shutdown(socket.SHUT_WR)

                tg.start_soon(write)
                result = await session.serve(tg)
                tg.cancel_scope.cancel()
        finally:
            stream.close()
            worker_end.close()
        return result


def assert_absent(result: sandbox.RunResult, *tokens: str) -> None:
    blob = json.dumps(result.to_json())
    for token in tokens:
        assert token not in blob, blob[:300]


# -- error kinds ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["timeout", "memory", "cancelled", "call-limit", "output-limit", "syntax"])
async def test_a_kind_the_host_did_not_see_ends_as_crashed(kind: str) -> None:
    result = await FakeWorker(source="return 1").serve([done(logs=[FORGED], error=(kind, FORGED))])
    assert result == sandbox.RunResult(error=sandbox.RunError("crashed", lie(kind)))
    assert_absent(result, FORGED)


async def test_a_timeout_claimed_after_a_tenth_of_a_second_is_a_lie() -> None:
    result = await FakeWorker(Limits(wall_time=5, cpu_time=5)).serve(
        [done(logs=[FORGED], error=("timeout", wall_time_message(5)))], delay=0.1
    )
    assert result.error == sandbox.RunError("crashed", lie("timeout"))
    assert_absent(result, FORGED)


async def test_a_cpu_timeout_needs_the_cpu_time_in_proc() -> None:
    # The "worker" is this test process: /proc shows it used far less than 2 s of CPU meanwhile.
    worker = FakeWorker(Limits(wall_time=5, cpu_time=2), pid=os.getpid())
    result = await worker.serve([done(logs=[FORGED], error=("timeout", FORGED))])
    assert result.error == sandbox.RunError("crashed", lie("timeout"))
    assert_absent(result, FORGED)


async def test_a_memory_claim_needs_an_address_space_limit_in_force() -> None:
    # This test process has no address-space limit, so no allocation of it can have hit one.
    worker = FakeWorker(Limits(memory=64 * 1024 * 1024), pid=os.getpid())
    result = await worker.serve([done(logs=[FORGED], error=("memory", FORGED))])
    assert result.error == sandbox.RunError("crashed", lie("memory"))
    assert_absent(result, FORGED)


async def test_a_timeout_the_host_saw_gets_the_hosts_message() -> None:
    result = await FakeWorker(Limits(wall_time=0.05)).serve(
        [done(logs=["printed"], error=("timeout", FORGED))], delay=0.1
    )
    assert result == sandbox.RunResult(logs=["printed"], error=sandbox.RunError("timeout", wall_time_message(0.05)))
    assert_absent(result, FORGED)


async def test_cancelled_is_the_hosts_own_cancel() -> None:
    controller = sandbox.RunController()
    controller.cancel("the user pressed stop")
    result = await FakeWorker(controller=controller).serve([done(logs=[FORGED], error=("cancelled", FORGED))])
    assert result == sandbox.RunResult(error=sandbox.RunError("cancelled", "the run was cancelled: the user pressed stop"))
    assert_absent(result, FORGED)


async def test_call_limit_is_only_the_hosts_count() -> None:
    worker = FakeWorker(Limits(max_calls=2))
    result = await worker.serve([call(1), call(2), done(logs=[FORGED], error=("call-limit", FORGED))])
    assert result.error == sandbox.RunError("crashed", lie("call-limit"))
    assert len(worker.calls) == 2
    assert_absent(result, FORGED)


async def test_a_batch_past_max_calls_runs_no_call_at_all() -> None:
    worker = FakeWorker(Limits(max_calls=2))
    result = await worker.serve([call(1, last=False), call(2, last=False), call(3)])
    assert result == sandbox.RunResult(error=sandbox.RunError("call-limit", call_limit_message(2)))
    assert worker.calls == []


async def test_output_limit_needs_full_output_and_a_flood() -> None:
    limits = Limits(max_output=100)
    full = ["x" * 100]
    flood = await FakeWorker(limits).serve([done(logs=full, dropped=400, error=("output-limit", FORGED))])
    assert flood == sandbox.RunResult(
        logs=full + [TRUNCATION_MARKER.format(dropped=400)],
        error=sandbox.RunError("output-limit", flood_message(100)),
    )
    short = await FakeWorker(limits).serve([done(logs=full, dropped=10, error=("output-limit", FORGED))])
    assert short.error == sandbox.RunError("crashed", lie("output-limit"))
    assert_absent(flood, FORGED)
    assert_absent(short, FORGED)


async def test_a_snippet_fault_keeps_the_workers_account() -> None:
    message = "ValueError: bad row\nTraceback (most recent call last):\n  line 1, in <snippet>"
    result = await FakeWorker().serve([done(logs=["a"], error=("exception", message))])
    assert result == sandbox.RunResult(logs=["a"], error=sandbox.RunError("exception", message))


# -- bounds on what the host reads -------------------------------------------------------------

async def test_output_past_max_output_is_cut_by_the_host_with_its_marker() -> None:
    limit = 64 * KIB
    lines = ["y" * 1000] * 1400 + ["TAIL-" + FORGED]  # about 1.4 MB, no marker
    text = "\n".join(lines)
    result = await FakeWorker(Limits(max_output=limit)).serve([done(value=1, logs=lines)])
    assert result.ok and result.value == 1
    kept = result.logs[:-1]
    assert len("\n".join(kept).encode()) == limit
    assert result.logs[-1] == TRUNCATION_MARKER.format(dropped=len(text) - limit)
    assert_absent(result, FORGED)


async def test_too_many_log_lines_are_cut_like_any_output() -> None:
    lines = [""] * 200_000 + [FORGED]
    result = await FakeWorker(Limits(max_output=1000)).serve([done(logs=lines)])
    assert result.ok
    assert result.logs == [""] * 1001 + [TRUNCATION_MARKER.format(dropped=200_000 - 1000 + len(FORGED))]
    assert_absent(result, FORGED)


async def test_the_host_splits_lines_itself() -> None:
    result = await FakeWorker().serve([done(logs=["a\nb", "c"])])
    assert result.logs == ["a", "b", "c"]


async def test_a_dropped_count_without_full_output_is_a_lie() -> None:
    result = await FakeWorker(Limits(max_output=1000)).serve([done(logs=[FORGED], dropped=5)])
    assert result.error == sandbox.RunError(
        "crashed", "the worker broke the protocol: it reported dropped output while its output was not full"
    )
    assert_absent(result, FORGED)


async def test_an_oversized_error_message_is_refused() -> None:
    message = FORGED + "m" * MAX_ERROR_MESSAGE
    result = await FakeWorker().serve([done(error=("exception", message))])
    assert result.error == sandbox.RunError(
        "crashed", f"the worker broke the protocol: an error message longer than {MAX_ERROR_MESSAGE} characters"
    )
    assert_absent(result, FORGED)


async def test_a_value_larger_than_max_result_is_refused() -> None:
    result = await FakeWorker(Limits(max_result=1000)).serve([done(value=[FORGED, "v" * 2000])])
    assert result.error == sandbox.RunError(
        "crashed", "the worker broke the protocol: a value larger than max_result (1000 bytes)"
    )
    assert_absent(result, FORGED)


async def test_a_value_nested_past_the_json_depth_is_refused() -> None:
    value: Any = FORGED
    for _ in range(150):
        value = [value]
    result = await FakeWorker().serve([done(value=value)])
    assert result.error == sandbox.RunError("crashed", "the worker broke the protocol: the value is not lossless JSON")
    assert_absent(result, FORGED)


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (done(value=FORGED, error=("exception", "x")), "a failed run has no value"),
        (done(logs=[FORGED], extra_field=1), "the result has fields the host does not know"),
        (done(logs=[FORGED], dropped=-1), "malformed count of dropped output"),
        (done(logs=[FORGED], dropped=True), "malformed count of dropped output"),
        (done(logs=[FORGED], unawaited=[[1, "rm"]]), "malformed list of calls never awaited"),
        (done(logs=[FORGED], unawaited=[[1, "record"]] * 6), "malformed list of calls never awaited"),
        (done(logs=[FORGED], unawaited=[[99, "record"]]), "malformed list of calls never awaited"),
        (done(logs=[FORGED], unawaited=[], more_unawaited=3), "malformed list of calls never awaited"),
        (encode({"op": "done", "result": {"value": None, "logs": [],
                                          "error": {"kind": "exception", "message": "x", "x": FORGED}}}), "malformed error"),
    ],
    ids=["value-with-error", "unknown-field", "negative-dropped", "bool-dropped", "unknown-name",
         "too-many-warnings", "line-past-source", "count-without-list", "error-extra-key"],
)
async def test_malformed_result_fields_end_as_crashed(frame: bytes, reason: str) -> None:
    result = await FakeWorker().serve([frame])
    assert result == sandbox.RunResult(error=sandbox.RunError("crashed", f"the worker broke the protocol: {reason}"))
    assert_absent(result, FORGED)


async def test_warnings_about_unawaited_calls_are_the_hosts_text() -> None:
    result = await FakeWorker().serve(
        [done(logs=["out"], unawaited=[[2, "record"]] * 5, more_unawaited=7)]
    )
    warning = "[warning] line 2: tools.record(...) was never awaited, so it did not run"
    assert result.logs == ["out"] + [warning] * 5 + ["[warning] 7 more calls were never awaited"]


async def test_call_arguments_past_max_call_bytes_never_reach_the_binding() -> None:
    worker = FakeWorker(Limits(max_call_bytes=1000))
    result = await worker.serve([call(1, args=[[], {"x": FORGED + "z" * 2000}])])
    assert result.error == sandbox.RunError(
        "crashed", "the worker broke the protocol: call arguments exceed max_call_bytes"
    )
    assert worker.calls == []
    assert_absent(result, FORGED)


async def test_the_host_holds_no_more_call_arguments_than_the_workers_memory() -> None:
    # A batch never marked last is held, parsed, until it ends: `[]` items are 3 bytes of a
    # frame and a 56-byte list each on the host. An honest worker keeps each call's arguments
    # until it is answered, so it never has more out than its memory holds.
    mib = 1024 * KIB
    worker = FakeWorker(Limits(wall_time=5, cpu_time=5, memory=16 * mib, max_call_bytes=9 * mib))
    frames = [call(i, args=[["x" * (9 * mib - 100)], {}], last=False) for i in (1, 2)]
    result = await worker.serve(frames + [call(3, last=True)])
    assert result.error == sandbox.RunError(
        "crashed", "the worker broke the protocol: more call arguments outstanding than the worker's memory limit"
    )
    assert worker.calls == []


@pytest.mark.parametrize("last", [False, 1, "yes"], ids=["false", "int", "str"])
async def test_a_malformed_last_flag_is_refused(last: object) -> None:
    worker = FakeWorker()
    frame = encode({"op": "call", "id": 1, "name": "record", "a": [[], {}], "last": last})
    result = await worker.serve([frame])
    assert result.error == sandbox.RunError("crashed", "the worker broke the protocol: malformed call")
    assert worker.calls == []


async def test_lone_surrogate_escapes_in_frames_are_escaped_again() -> None:
    # JSON text may spell a lone surrogate as an escape; no string the host reads may hold one.
    raw = b'{"op":"done","result":{"value":"v\\udc80","logs":["p\\ud800"],"error":null}}'
    frame = len(raw).to_bytes(4, "big") + raw
    worker = FakeWorker()
    call_frame = b'{"op":"call","id":1,"name":"record","a":[[],{"k\\udfff":"\\udc80"}],"last":true}'
    result = await worker.serve([len(call_frame).to_bytes(4, "big") + call_frame, frame])
    assert result == sandbox.RunResult(value="v\\udc80", logs=["p\\ud800"])
    assert worker.calls == [{"k\\udfff": "\\udc80"}]
    json.dumps(result.to_json(), ensure_ascii=False).encode("utf-8")  # encodes: no surrogate left


# -- non-finite numbers ------------------------------------------------------------------------

def raw_frame(text: str) -> bytes:
    data = text.encode()
    return len(data).to_bytes(4, "big") + data


OVERFLOWING = ["1e999", "-1e999", "1" * 400 + ".0", "1E+400"]


@pytest.mark.parametrize("number", OVERFLOWING, ids=["1e999", "minus", "400-digits", "upper-e"])
async def test_an_overflowing_number_in_call_arguments_never_reaches_the_binding(number: str) -> None:
    worker = FakeWorker()
    frame = raw_frame('{"op":"call","id":1,"name":"record","a":[[],{"x":' + number + ',"tag":"' + FORGED + '"}],"last":true}')
    result = await worker.serve([frame])
    assert result == sandbox.RunResult(error=sandbox.RunError(
        "crashed", "the worker broke the protocol: malformed frame: a number that is not finite"))
    assert worker.calls == []  # no inf reached the binding
    assert_absent(result, FORGED)


@pytest.mark.parametrize("number", OVERFLOWING, ids=["1e999", "minus", "400-digits", "upper-e"])
async def test_an_overflowing_number_in_a_result_is_refused(number: str) -> None:
    frame = raw_frame('{"op":"done","result":{"value":[' + number + ',"' + FORGED + '"],"logs":[],"error":null}}')
    result = await FakeWorker().serve([frame])
    assert result == sandbox.RunResult(error=sandbox.RunError(
        "crashed", "the worker broke the protocol: malformed frame: a number that is not finite"))
    assert_absent(result, FORGED)


async def test_finite_numbers_still_cross() -> None:
    worker = FakeWorker()
    call_frame = raw_frame('{"op":"call","id":1,"name":"record","a":[[],{"x":1.5e300,"y":-0.0}],"last":true}')
    result = await worker.serve([call_frame, raw_frame('{"op":"done","result":{"value":1e-320,"logs":[],"error":null}}')])
    assert result == sandbox.RunResult(value=1e-320)
    assert worker.calls == [{"x": 1.5e300, "y": -0.0}]


# -- syntax is the host's own compile ------------------------------------------------------------

async def test_syntax_the_host_sees_gets_the_hosts_message() -> None:
    result = await FakeWorker(source="x = = 1").serve([done(error=("syntax", FORGED))])
    assert result.error is not None and result.error.kind == "syntax"
    assert result.error.message.startswith("line 1: invalid syntax")
    assert_absent(result, FORGED)


async def test_a_refusal_by_the_policy_is_the_hosts_text() -> None:
    result = await FakeWorker(source="x = 1\nexec('1')").serve([done(error=("syntax", FORGED))])
    assert result.error == sandbox.RunError("syntax", "line 2: exec() is not available")
    assert_absent(result, FORGED)


async def test_a_too_deep_sentence_for_a_snippet_the_host_compiled_is_a_lie() -> None:
    # The host compiles every snippet itself and sends the worker the code: no worker compiles,
    # so no worker can find a snippet the host took too deep to compile.
    result = await FakeWorker(source="return 1").serve([done(error=("syntax", TOO_DEEP_TO_CHECK))])
    assert result.error == sandbox.RunError("crashed", lie("syntax"))


async def test_syntax_without_the_source_is_a_lie() -> None:
    result = await FakeWorker().serve([done(error=("syntax", FORGED))])
    assert result.error == sandbox.RunError("crashed", lie("syntax"))


# -- the stop exception is the host's ---------------------------------------------------------

#: A test-only seam standing in for a broken Python layer: every run's builtins get the real
#: `object.__setattr__`, the `RunStopped` class and a way to make one. Run in the worker template (its prelude) and,
#: for the in-process backend, patched into this process.
GOD_MODE = (
    "import sandbox.execution as _e\n"
    "from sandbox.control import RunStopped as _Stop\n"
    "_build = _e.build_builtins\n"
    "def _god(*a, extra=None, **k):\n"
    "    return _build(*a, extra={**(extra or {}), 'real_setattr': object.__setattr__, 'Stop': _Stop,\n"
    "        'make_stop': lambda text: _Stop.__new__(_Stop, text)}, **k)\n"
    "_e.build_builtins = _god\n"
)
RAN = "RAN-ON-HOST"
TIMEOUT = wall_time_message(1)
#: Lying text: a `str` subclass whose methods print (a host that used them would show RAN).
LYING = f"""
class Lying(str):
    def __len__(self):
        print({RAN!r})
        return 0
    def __str__(self):
        print({RAN!r})
        return {FORGED!r}
    def __format__(self, spec):
        print({RAN!r})
        return {FORGED!r}
    def encode(self, *a, **k):
        print({RAN!r})
        return b''
"""
CATCH = """
import time
print('before')
try:
    time.sleep(100)
except BaseException as e:
    caught = e
"""


@pytest.fixture(params=["worker", "inprocess"])
def god_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Any:
    if request.param == "worker":
        runtime = sandbox.WorkerRuntime(pool_size=0, _template_prelude=GOD_MODE)
        yield runtime
        runtime.close()
    else:
        import sandbox.execution as execution
        from sandbox.control import RunStopped

        build = execution.build_builtins

        def god(*args: Any, extra: dict[str, Any] | None = None, **kwargs: Any) -> Any:
            return build(*args, extra={**(extra or {}), "real_setattr": object.__setattr__, "Stop": RunStopped,
                                           "make_stop": lambda text: RunStopped.__new__(RunStopped, text)},
                         **kwargs)

        monkeypatch.setattr(execution, "build_builtins", god)
        yield "inprocess"


async def god_run(backend: Any, code: str) -> sandbox.RunResult:
    return await sandbox.run(code, backend=backend, limits=Limits(wall_time=1, cpu_time=5))


def assert_timeout(result: sandbox.RunResult) -> None:
    assert result.error == sandbox.RunError("timeout", TIMEOUT), result
    assert result.logs[:1] == ["before"], result.logs
    assert_absent(result, FORGED, RAN)
    json.dumps(result.to_json())  # the host's output never fails on it


REWRITES = {
    "kind-and-message": "real_setattr(caught, 'kind', 'exception')\nreal_setattr(caught, 'message', FORGED)",
    "set-message": "real_setattr(caught, 'kind', 'cancelled')\nreal_setattr(caught, 'message', {FORGED})",
    "str-subclass-message": "real_setattr(caught, 'kind', 'syntax')\nreal_setattr(caught, 'message', Lying(FORGED))",
    "args": "real_setattr(caught, 'args', (Lying(FORGED),))",
    "to_error": "real_setattr(caught, 'to_error', lambda: FORGED)",
}


@pytest.mark.parametrize("rewrite", list(REWRITES.values()), ids=list(REWRITES))
async def test_a_rewritten_stop_keeps_the_hosts_verdict(god_backend: Any, rewrite: str) -> None:
    code = LYING + CATCH + f"FORGED = {FORGED!r}\n" + rewrite + "\nraise caught"
    assert_timeout(await god_run(god_backend, code))


ENDINGS = {
    "re-raised-bare": CATCH.replace("    caught = e", "    raise"),
    "re-raised-by-name": CATCH + "raise caught",
    "another-exception": CATCH + f"raise ValueError({FORGED!r})",
    "returned-a-value": CATCH + f"return {FORGED!r}",
    "lying-exception": LYING + CATCH + f"class E(Exception):\n    def __str__(self):\n        return Lying({FORGED!r})\nraise E()",
}


@pytest.mark.parametrize("ending", list(ENDINGS.values()), ids=list(ENDINGS))
async def test_whatever_follows_a_caught_stop_the_verdict_stands(god_backend: Any, ending: str) -> None:
    assert_timeout(await god_run(god_backend, ending))


async def test_a_subclass_of_the_stop_is_the_snippets_exception(god_backend: Any) -> None:
    code = (
        "print('before')\n"
        "class Fake(Stop):\n"
        "    def __init__(self, *args):\n"
        "        pass\n"
        "    kind = 'cancelled'\n"
        "    message = 'the run was cancelled: by the host'\n"
        "    def to_error(self):\n"
        "        return None\n"
        "raise Fake()"
    )
    result = await god_run(god_backend, code)
    assert result.error is not None and result.error.kind == "exception", result
    assert result.error.message.splitlines()[0] == "Fake"
    assert "by the host" not in result.error.message.splitlines()[0]


async def test_a_stop_made_by_the_snippet_is_its_own_exception(god_backend: Any) -> None:
    code = f"print('before')\nraise make_stop({FORGED!r})"
    result = await god_run(god_backend, code)
    assert result.error is not None and result.error.kind == "exception", result
    assert result.error.message.splitlines()[0] == f"RunStopped: {FORGED}"  # its own text, its own kind


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_an_exception_text_that_lies_is_copied_as_plain_text(backend: str) -> None:
    code = LYING + f"class E(Exception):\n    def __str__(self):\n        return Lying({FORGED!r} + ' text')\nraise E()"
    result = await sandbox.run(code, backend=backend)  # type: ignore[arg-type]
    assert result.error is not None and result.error.kind == "exception", result
    assert result.error.message.splitlines()[0] == f"E: {FORGED} text"
    assert type(result.error.message) is str
    assert_absent(result, RAN)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_an_exception_text_that_is_not_text_is_not_shown(backend: str) -> None:
    code = "class E(Exception):\n    def __str__(self):\n        return {'a', 'b'}\nraise E()"
    result = await sandbox.run(code, backend=backend)  # type: ignore[arg-type]
    assert result.error is not None and result.error.kind == "exception", result
    assert result.error.message.splitlines()[0] == "E: <exception message could not be shown>"
    json.dumps(result.to_json())


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_a_stop_kept_in_a_session_does_not_outlive_its_run(backend: str) -> None:
    async with sandbox.open_session(backend) as session:  # type: ignore[arg-type]
        first = await session.run(CATCH + "return 1", limits=Limits(wall_time=1, cpu_time=5))
        assert first.error == sandbox.RunError("timeout", TIMEOUT), first
        assert first.reset is not None  # the stop reset the session: nothing kept it
        second = await session.run("raise caught")
        assert second.error is not None and second.error.kind == "exception", second
        assert second.error.message.startswith("NameError: name 'caught' is not defined")


async def test_a_print_kept_past_its_run_stops_no_other_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each limit records into its own run's verdict, never into whichever run is current: a
    review kept one run's `print` alive in a host cache (as a key's `__hash__`), flooded it from
    the next run, and that run ended as `output-limit` although it printed nothing. Here a
    test-only builtin keeps the object past its run, as that cache did."""
    import sandbox.execution as execution

    kept: list[Any] = []
    build = execution.build_builtins

    def keeping(*args: Any, extra: dict[str, Any] | None = None, **kwargs: Any) -> Any:
        return build(*args, extra={**(extra or {}), "keep": kept.append, "kept": lambda: kept[0]}, **kwargs)

    monkeypatch.setattr(execution, "build_builtins", keeping)
    limits = Limits(wall_time=5, cpu_time=5, max_output=KIB)
    first = await sandbox.run("keep(print)\nprint('first')\nreturn 1", backend="inprocess", limits=limits)
    assert first.ok and first.logs == ["first"], first
    flood = "stale = kept()\nfor _ in range(100):\n    stale('y' * 1000)\nprint('second')\nreturn 2"
    second = await sandbox.run(flood, backend="inprocess", limits=limits)
    assert second.ok and second.value == 2 and second.logs == ["second"], second
    kept[0]("x" * 100_000)  # host code calling it: no stop, nothing written
    async with sandbox.open_session("inprocess") as session:
        assert (await session.run("state = 1\nreturn state", limits=limits)).value == 1
        assert (await sandbox.run(flood, backend="inprocess", limits=limits)).ok
        after = await session.run("return state", limits=limits)
        assert after.ok and after.value == 1 and after.reset is None, after


# -- live output frames: a view, never believed, bounded by the host -------------------------------


async def test_live_output_frames_are_bounded_and_checked_by_the_host() -> None:
    seen: list[str] = []
    worker = FakeWorker(Limits(wall_time=5, cpu_time=5, max_output=8),
                        controller=sandbox.RunController(on_output=seen.append))
    frames = [
        encode({"op": "out", "text": "12345"}),
        encode({"op": "out", "text": {"not": "text"}}),  # not a string: not shown
        encode({"op": "out", "text": "6789" + FORGED}),  # past max_output: cut by the host
        encode({"op": "out", "text": FORGED}),
        done(logs=["12345678"]),
    ]
    result = await worker.serve(frames)
    assert "".join(seen) == "12345678"
    assert result.ok and result.logs == ["12345678"]  # the logs come from the done frame, as always


async def test_live_output_frames_nobody_asked_for_are_ignored() -> None:
    worker = FakeWorker()
    result = await worker.serve([encode({"op": "out", "text": FORGED}), done(logs=["real"])])
    assert result.ok and result.logs == ["real"] and FORGED not in repr(result)
