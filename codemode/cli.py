"""The ``codemode`` command: run a snippet file against tools, print the SDK, list tools, check.

    codemode run FILE|-  [--tools SPEC]... [--root DIR] [--allow-write] [--backend worker|inprocess]
                         [--timeout S] [--memory MIB] [--max-tool-calls N] [--max-parallel N]
                         [--no-preflight] [--trace] [--record calls.jsonl | --replay calls.jsonl]
                         [--json [--attachment-data]] [--raw]
    codemode sdk   [--tools SPEC]... [--root DIR] [--hash]
    codemode tools [--tools SPEC]... [--root DIR]
    codemode check FILE|- [--tools SPEC]... [--root DIR]
    codemode doctor
    codemode mcp serve [--tools SPEC]... [--root DIR] [--mcp-config FILE]... [--http HOST:PORT]
                       [--max-concurrent N] [--event-log FILE.jsonl] [--timeout S] [--memory MIB]
                       [--max-tool-calls N]
    codemode --version

Every command takes ``--mcp-config FILE`` (repeatable, ``{"mcpServers": ...}``) and
``--mcp-timeout S``: the servers' tools load as ``<server>__<tool>`` (see docs/mcp.md).

Exit codes: 0 success, 1 the run (or check) failed, 2 usage, input or configuration error,
130 interrupted. Every bad input is one ``codemode: error: ...`` line on stderr, never a
traceback (``--debug`` adds it), and ``run --json`` prints one JSON object on stdout whatever
happened. Without ``--tools``, the built-in workspace tools load, confined to ``--root``. The
snippet runs as a host ``run_code`` call in ``code`` mode, through the same pipeline a model's
call takes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio

import sandbox

from .agent import CodeMode
from .bridge import CodeRun, StopRun, SubCall, media_size, placeholder
from .calls import ExecutionToken, ToolCall, ToolResult
from .errors import CodemodeError
from .events import EventLog
from .frozen import FrozenDict, freeze, thaw
from .messages import ErrorKind
from .output import json_line, visible
from .pipeline import DispatchGate
from .registry import Registry
from .workspace import register_workspace

# codemode.mcp's options import without the mcp SDK; the SDK loads only with --mcp-config or mcp serve.

__all__ = ["main"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
#: What a shell reports for a process ended by SIGINT (128 + 2).
EXIT_INTERRUPTED = 130
PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 0.5
MIB = 1024 * 1024
#: --json shows each sub-call's arguments and content up to this many bytes of JSON each.
JSON_CALL_CAP = 4096

#: The kind of a failed run that stopped because a replayed run left its recording.
REPLAY_MISMATCH_KIND = "replay-mismatch"
REPLAY_MISMATCH = "replay mismatch at sub-call {n}: the recording has {expected}, the run made {got}"
REPLAY_EXHAUSTED = "replay mismatch at sub-call {n}: the recording has no more calls, the run made {got}"

ERROR_LINE = "codemode: error: {message}\n"
WARNING_LINE = "codemode: warning: {message}\n"
INTERRUPTED = "interrupted"
INTERRUPTED_LINE = "codemode: interrupted\n"
INTERNAL_ERROR = "internal error: {error} (this is a bug in codemode; --debug shows the traceback)"
EMPTY_SOURCE = "{name} is empty: there is no program to {verb}"
NOT_UTF8 = "cannot read {name}: it is not UTF-8 text (byte 0x{byte:02x} at offset {offset})"
MEMORY_NOT_ENFORCED = (
    "--memory is not enforced on the inprocess backend (it cannot cap memory inside this "
    "process); use --backend worker to enforce it"
)
MCP_TIMEOUT_UNUSED = "--mcp-timeout has no effect without --mcp-config"

#: Bounds of the numeric options: a value outside is a usage error naming the flag.
TIMEOUT_RANGE = (0.01, 86_400.0)
MEMORY_RANGE_MIB = (16, 1024 * 1024)
MAX_TOOL_CALLS_RANGE = (0, 1_000_000)
MAX_PARALLEL_RANGE = (1, 1_000)
#: The sandbox's lower bound for memory, in the unit of --memory.
MIN_MEMORY_MIB = MEMORY_RANGE_MIB[0]


class UsageError(Exception):
    """A bad option, file or plugin: exit code 2."""


class _ArgumentError(Exception):
    """argparse's complaint about the command line, with the parser (subcommand) it came from."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser
        self.message = message


class _Parser(argparse.ArgumentParser):
    """Raises instead of exiting, so ``main`` reports a usage error like any other (its
    subparsers are of this class too, so the usage shown is the subcommand's)."""

    def error(self, message: str) -> Any:
        raise _ArgumentError(self, message)


def number_option(kind: type, lo: float, hi: float, unit: str = "") -> Callable[[str], Any]:
    """An argparse ``type``: a finite ``kind`` (int or float) from ``lo`` to ``hi``. argparse names
    the flag in the message (``argument --timeout: ...``)."""
    what = "a whole number" if kind is int else "a number"
    span = f"from {_plain(lo)} to {_plain(hi)}{' ' + unit if unit else ''}"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what} {span}, got {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"expected {what} {span}, got {text!r}")
        return value

    parse.__name__ = kind.__name__  # what argparse calls the type in its own messages
    return parse


def _plain(number: float) -> str:
    """``86400`` and ``0.01``, never ``8.64e+04``."""
    return str(int(number)) if number == int(number) else str(number)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="codemode", description="Run Code Mode snippets against tools.")
    parser.add_argument("--version", action="version", version=f"codemode {_version()}")
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error (default: one line)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (default: one line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="what to do")

    def loading(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tools", action="append", default=[], metavar="SPEC",
                       help="module path or .py file with apply(registry); repeatable (default: workspace tools)")
        p.add_argument("--root", default=".", metavar="DIR", help="workspace root (default: .)")
        p.add_argument("--allow-write", action="store_true", help="add write_file and edit_file (default: read-only)")
        for action in debug._actions:
            if action.dest == "debug" and not any("--debug" in a.option_strings for a in p._actions):
                p._add_action(action)
        from .mcp import add_mcp_config_option

        add_mcp_config_option(p)

    run = sub.add_parser("run", help="run a snippet file ('-' for stdin)", parents=[debug])
    run.add_argument("file", help="the snippet: a file of Python (the body of an async function), or - for stdin")
    run.add_argument("more", nargs="*", default=[], metavar="FILE",
                     help="with --session: more snippet files, run after the first in the same session")
    run.add_argument("--session", action="store_true",
                     help="run the files in order in one session: variables persist from file to file")
    loading(run)
    add_run_options(run)
    run.add_argument("--no-preflight", action="store_true", help="skip the pre-flight check (default: check first)")
    run.add_argument("--trace", action="store_true", help="print a tree of the sub-calls on stderr")
    group = run.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="FILE",
                       help="save every sub-call with its result (JSON lines; default: not saved)")
    group.add_argument("--replay", metavar="FILE",
                       help="answer sub-calls from a recording instead of running tools (default: run them)")
    run.add_argument("--json", action="store_true", help="print one JSON object (default: text)")
    run.add_argument("--attachment-data", action="store_true",
                     help="with --json, include each attachment's base64 data (default: type, MIME type and size only)")
    run.add_argument("--raw", action="store_true",
                     help="write the snippet's text as is; by default terminal control characters are shown as escapes")

    sdk = sub.add_parser("sdk", help="print the SDK text the model would see", parents=[debug])
    loading(sdk)
    sdk.add_argument("--hash", action="store_true", help="print only the SDK hash")

    tools = sub.add_parser("tools", help="list the loaded tools", parents=[debug])
    loading(tools)

    sub.add_parser("doctor", help="show which jail layers confine the worker backend on this host", parents=[debug])

    check = sub.add_parser("check", help="check a snippet file without running it", parents=[debug])
    check.add_argument("file", help="the snippet: a file of Python (the body of an async function), or - for stdin")
    loading(check)

    from .mcp import add_mcp_parser

    add_mcp_parser(sub, loading)
    return parser


def _version() -> str:
    from . import __version__

    return __version__


def _registry(args: argparse.Namespace, log: EventLog | None = None) -> Registry:
    registry = Registry(mode="code", log=log)
    try:
        if args.tools:
            for spec in args.tools:
                registry.load_plugin(spec)
        else:
            register_workspace(registry, args.root, allow_write=args.allow_write)
    except (CodemodeError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    return registry


def _source(file: str, stdin: TextIO, verb: str) -> tuple[str, str]:
    """The snippet's name and text: strict UTF-8 and not blank, else a ``UsageError``."""
    if file == "-":
        name = "<stdin>"
        buffer = getattr(stdin, "buffer", None)
        data: bytes | str = buffer.read() if buffer is not None else stdin.read()
    else:
        name = file
        try:
            data = Path(file).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from exc
    if isinstance(data, str):  # a text stream: a lone surrogate is an undecodable byte it kept
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise UsageError(f"cannot read {name}: it is not UTF-8 text (undecodable byte at offset {exc.start})") from None
    try:
        code = data.decode("utf-8-sig")  # an editor's byte-order mark is not an error
    except UnicodeDecodeError as exc:
        raise UsageError(NOT_UTF8.format(name=name, byte=exc.object[exc.start], offset=exc.start)) from None
    if not code.strip():
        raise UsageError(EMPTY_SOURCE.format(name=name, verb=verb))
    return name, code


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The backend and limit options of every command that runs snippets (run, mcp serve)."""
    limits = sandbox.DEFAULT_LIMITS
    p.add_argument("--backend", choices=("worker", "inprocess"), default="worker",
                   help="where snippets run: a jailed worker process, or this process for trusted code (default: worker)")
    p.add_argument("--allow-weak-jail", action="store_true",
                   help="run on the worker backend even where its syscall filter cannot be "
                        "installed (see `codemode doctor`); results then say jail=weak")
    p.add_argument("--timeout", type=number_option(float, *TIMEOUT_RANGE, "seconds"), metavar="S",
                   help=f"wall and CPU time per run in seconds (default {limits.wall_time:g})")
    p.add_argument("--memory", type=number_option(int, *MEMORY_RANGE_MIB, "MiB"), metavar="MIB",
                   help=f"memory per run in MiB, worker backend only (default {limits.memory // MIB})")
    p.add_argument("--max-tool-calls", type=number_option(int, *MAX_TOOL_CALLS_RANGE), metavar="N",
                   help=f"sub-calls per run (default {limits.max_calls})")
    p.add_argument("--max-parallel", type=number_option(int, *MAX_PARALLEL_RANGE), default=10, metavar="N",
                   help="concurrent concurrency-safe sub-calls per run (default 10)")


def backend_from_args(args: argparse.Namespace) -> sandbox.BackendName | sandbox.Runtime:
    """The backend named by --backend, with --allow-weak-jail applied to the worker backend."""
    if args.backend == "worker" and getattr(args, "allow_weak_jail", False):
        return sandbox.WorkerRuntime(allow_weak_jail=True)
    return args.backend


def require_jail(backend: sandbox.BackendName | sandbox.Runtime) -> None:
    """Refuse up front, as a usage error, when the worker backend cannot jail its workers here
    and weaker confinement was not accepted: before any tool or MCP server is loaded."""
    runtime = sandbox.get_runtime(backend)
    if isinstance(runtime, sandbox.WorkerRuntime):
        try:
            status = runtime.jail_status()
        except TimeoutError as exc:
            raise sandbox.JailError(str(exc)) from exc
        if not status.full and not runtime.allow_weak_jail:
            raise sandbox.JailError(status.refusal())


def warn_unenforced(args: argparse.Namespace, stderr: TextIO) -> None:
    """One warning line per option given that has no effect with the other options chosen."""
    if getattr(args, "memory", None) is not None and args.backend == "inprocess":
        stderr.write(WARNING_LINE.format(message=MEMORY_NOT_ENFORCED))
    if getattr(args, "mcp_timeout", None) is not None and not getattr(args, "mcp_config", None):
        stderr.write(WARNING_LINE.format(message=MCP_TIMEOUT_UNUSED))


def open_output(path: str, flag: str, mode: str = "w") -> TextIO:
    """Open an output file named by ``flag`` before anything runs; ``UsageError`` if it cannot be
    written, so a run's work is never lost to a bad path at the end."""
    try:
        if Path(path).is_dir():
            raise IsADirectoryError(21, "Is a directory")
        return open(path, mode, encoding="utf-8")  # the caller closes it
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from exc


def _doctor(stdout: TextIO) -> int:
    """Exit 0 when the worker backend gets its full jail here, 1 when it would refuse to run."""
    import platform

    try:
        status = sandbox.jail_status("worker")
    except TimeoutError as exc:
        stdout.write(f"worker jail: unknown ({exc})\n")
        return EXIT_FAILED
    stdout.write(f"worker jail on {platform.system()} {platform.machine()}:\n{status.describe()}\n")
    if status.full:
        stdout.write("verdict: full (the syscall filter is in force)\n")
        return EXIT_OK
    stdout.write(f"verdict: weak; the worker backend refuses to run: {status.refusal()}\n")
    return EXIT_FAILED


def limits_from_args(args: argparse.Namespace) -> sandbox.Limits:
    """The sandbox limits that --timeout, --memory and --max-tool-calls ask for (UsageError if bad)."""
    changes: dict[str, Any] = {}
    if args.timeout is not None:
        changes["wall_time"] = args.timeout
        changes["cpu_time"] = args.timeout
    if args.memory is not None:
        if args.memory < MIN_MEMORY_MIB:
            raise UsageError(f"--memory must be at least {MIN_MEMORY_MIB} MiB, got {args.memory}")
        changes["memory"] = args.memory * MIB
    if args.max_tool_calls is not None:
        changes["max_calls"] = args.max_tool_calls
    try:
        return sandbox.DEFAULT_LIMITS.replace(**changes)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from exc


# --- record / replay ---------------------------------------------------------------------------


def _record_line(call: SubCall, run: int | None = None) -> dict[str, Any]:
    return {
        **({"run": run} if run is not None else {}),
        "id": call.call_id,
        "n": call.number,
        "name": call.name,
        "arguments": call.arguments,
        "status": call.status,
        "is_error": call.is_error,
        "content": call.content,
        "value": call.value,
        "duration_ms": round(call.duration_ms, 3),
    }


def _write_recording(fh: TextIO, calls: Sequence[SubCall], runs: Sequence[int] | None = None) -> None:
    """One line per sub-call into ``fh`` (closed after); with ``runs`` (a session's), each line
    names its run (1, 2, ...)."""
    with fh:
        for i, call in enumerate(calls):
            # A tool's lone surrogate becomes a JSON escape, which replays as the same text.
            fh.write(sandbox.escape_surrogates(json_line(_record_line(call, runs[i] if runs else None))) + "\n")


class ReplayExecutor:
    """Answers sub-calls from a recording, in submission order; the first call that differs in
    name or arguments stops the run (kind ``replay-mismatch``) with a message naming both."""

    def __init__(self, records: list[Mapping[str, Any]]) -> None:
        self.records = [r for r in records if r.get("status") in ("ok", "error")]
        self.used = 0

    @classmethod
    def load(cls, path: str) -> ReplayExecutor:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines if line.strip()]
        except OSError as exc:
            raise UsageError(f"cannot read recording {path}: {exc.strerror or type(exc).__name__}") from exc
        except (ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
            raise UsageError(f"cannot read recording {path}: {type(exc).__name__}") from exc
        for number, record in enumerate(records, 1):
            if not (
                isinstance(record, dict)
                and isinstance(record.get("name"), str)
                and isinstance(record.get("arguments"), dict)
                and isinstance(record.get("is_error"), bool)
                and isinstance(record.get("content"), list)
            ):
                raise UsageError(
                    f"cannot read recording {path}: record {number} is not a recorded sub-call "
                    "(an object with name, arguments, is_error and content)"
                )
        return cls(records)

    async def __call__(self, call: ToolCall, parent: ExecutionToken, gate: DispatchGate) -> ToolResult:
        n = call.call_id.rsplit(":", 1)[-1]
        got = f"{call.name}({json.dumps(thaw(call.arguments), sort_keys=True)})"
        if self.used >= len(self.records):
            raise StopRun(REPLAY_EXHAUSTED.format(n=n, got=got), kind=REPLAY_MISMATCH_KIND)
        record = self.records[self.used]
        expected = f"{record['name']}({json.dumps(record['arguments'], sort_keys=True)})"
        if expected != got:
            raise StopRun(REPLAY_MISMATCH.format(n=n, expected=expected, got=got), kind=REPLAY_MISMATCH_KIND)
        self.used += 1
        async with gate.slot():
            pass
        meta: dict[str, Any] = {"call_id": call.call_id}
        if record["is_error"]:
            meta["error"] = ErrorKind.TOOL_ERROR.value
        return ToolResult(freeze(record["content"]), freeze(record.get("value")), bool(record["is_error"]), FrozenDict(meta))


# --- output ------------------------------------------------------------------------------------


def _trace(report: CodeRun, out: TextIO, show: Any = visible) -> None:
    status = "ok" if report.ok else f"failed ({report.result.error.kind})"  # type: ignore[union-attr]
    out.write(f"run_code {report.call_id} {report.duration_ms:.1f} ms {status}\n")
    calls = report.calls
    for i, call in enumerate(calls):
        branch = "└─" if i == len(calls) - 1 else "├─"
        args = json.dumps(call.arguments, ensure_ascii=False)
        if len(args) > 60:
            args = args[:57] + "..."
        line = f"{branch} {call.number} {call.name}({args}) {call.duration_ms:.1f} ms {call.status}"
        if call.is_error:
            text = " ".join(b.get("text", "") for b in call.content if b.get("type") == "text")
            first = text.splitlines()[0] if text else ""
            line += f": {first[:100]}"
        out.write(sandbox.escape_surrogates(show(line)) + "\n")


def _attachment(block: Mapping[str, Any], with_data: bool) -> dict[str, Any]:
    """An attachment as ``--json`` shows it: its type, MIME type and decoded size."""
    shown: dict[str, Any] = {
        "type": block.get("type"),
        "mime_type": block.get("mime_type"),
        "bytes": media_size(block),
    }
    if with_data:
        shown["data"] = block.get("data")
    return shown


class _Progress:
    """A one-line sub-call counter on a terminal's stderr, for runs longer than a second."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.done = 0
        self.shown = False

    def count(self, call: SubCall) -> None:
        self.done += 1

    async def show(self, started: float) -> None:
        await anyio.sleep(PROGRESS_AFTER)
        while True:
            self.out.write(f"\r[codemode] running {time.monotonic() - started:.1f} s, {self.done} sub-calls started")
            self.out.flush()
            self.shown = True
            await anyio.sleep(PROGRESS_EVERY)

    def clear(self) -> None:
        if self.shown:
            self.out.write("\r\033[K")
            self.out.flush()


def _located(name: str, message: str) -> str:
    """Prefix a message with the file name."""
    return f"{name}: {message}"


def _failure_line(name: str, error: sandbox.RunError) -> str:
    """What ``run`` (and ``check``, for a refused snippet) prints for a failed run."""
    return _located(name, f"Error: code run failed ({error.kind}): {error.message}")


async def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    if getattr(args, "more", None) and not args.session:
        raise UsageError("more than one file needs --session (they then run in one session, in order)")
    if getattr(args, "session", False):
        from .cli_session import run_session

        return await run_session(args, stdout, stderr, stdin)
    # Everything that can be wrong with the command line is found before any tool or server
    # starts: the snippet, the limits, the output file, the recording, the jail.
    name, code = _source(args.file, stdin, "run")
    limits = limits_from_args(args)
    record = open_output(args.record, "--record") if args.record else None
    try:
        executor = ReplayExecutor.load(args.replay) if args.replay else None
        backend = backend_from_args(args)
        require_jail(backend)
        warn_unenforced(args, stderr)
        registry = _registry(args)
        if not args.mcp_config:  # the MCP SDK is slow to import: load it only when asked for
            return await _run_loaded(args, registry, name, code, limits, backend, executor, record, stdout, stderr)
        async with _mcp_tools(args, registry, stderr):
            return await _run_loaded(args, registry, name, code, limits, backend, executor, record, stdout, stderr)
    finally:
        if record is not None and not record.closed:
            record.close()


async def _run_loaded(
    args: argparse.Namespace, registry: Registry, name: str, code: str, limits: sandbox.Limits,
    backend: sandbox.BackendName | sandbox.Runtime, executor: ReplayExecutor | None,
    record: TextIO | None, stdout: TextIO, stderr: TextIO,
) -> int:
    try:
        mode = CodeMode(
            registry,
            limits=limits,
            max_parallel_sub_calls=args.max_parallel,
            backend=backend,
            preflight=not args.no_preflight,
            executor=executor,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    progress = _Progress(stderr) if stderr.isatty() and not args.json else None
    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        if progress is not None:
            tg.start_soon(progress.show, started)
        report = await mode.run(
            code,
            description=f"Run {Path(name).name}",
            call_id="cli",
            on_dispatch=progress.count if progress is not None else None,
        )
        tg.cancel_scope.cancel()
    if progress is not None:
        progress.clear()
    if record is not None:
        try:
            _write_recording(record, report.calls)
        except OSError as exc:
            raise UsageError(f"--record: cannot write {args.record}: {exc.strerror or exc}") from exc
    return _print_report(args, report, name, stdout, stderr)


def _print_report(args: argparse.Namespace, report: CodeRun, name: str, stdout: TextIO, stderr: TextIO) -> int:
    """Print one run as ``codemode run`` does (text, or one ``--json`` line); its exit code."""
    show = (lambda text: text) if args.raw else visible  # the snippet wrote this text
    if args.trace:
        _trace(report, stderr, show)
    result = report.result
    if args.json:
        payload = {
            "ok": report.ok,
            "result": result.value if report.ok else None,
            "logs": list(result.logs),
            "error": None if result.error is None else {"kind": result.error.kind, "message": result.error.message},
            "calls": [c.to_json(cap=JSON_CALL_CAP) for c in report.calls],
            "attachments": [_attachment(b, args.attachment_data) for b in report.attachments],
            "sdk_hash": report.sdk_hash,
            "jail": result.jail,
        }
        stdout.write(json_line(payload) + "\n")
        return EXIT_OK if report.ok else EXIT_FAILED
    if report.ok:
        stdout.write(show(report.text) + "\n")
    else:
        for line in result.logs:
            stdout.write(show(line) + "\n")
        error = result.error
        assert error is not None
        stderr.write(show(_failure_line(name, error)) + "\n")
    for block in report.attachments:
        stdout.write(f"[attachment] {placeholder(block)}\n")
    return EXIT_OK if report.ok else EXIT_FAILED


def _mcp_tools(args: argparse.Namespace, registry: Registry, stderr: TextIO) -> Any:
    """The ``--mcp-config`` tools for an ``async with`` block (a progress line on a terminal)."""
    from .mcp.cli import mcp_tools, upstream_limits  # loads the SDK

    limits = upstream_limits(args.mcp_timeout)
    progress = stderr if stderr.isatty() else None
    return mcp_tools(registry, args.mcp_config, limits=limits, stderr=stderr, progress=progress)


def _with_mcp(args: argparse.Namespace, registry: Registry, fn: Any, stderr: TextIO) -> Any:
    warn_unenforced(args, stderr)
    if not args.mcp_config:
        return fn()

    async def go() -> Any:
        async with _mcp_tools(args, registry, stderr):
            return fn()

    return anyio.run(go)


def _sdk(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    registry = _registry(args)

    def show() -> int:
        sdk = CodeMode(registry, backend="inprocess").sdk()
        stdout.write((sdk.sdk_hash if args.hash else sdk.text) + "\n")
        return EXIT_OK

    return _with_mcp(args, registry, show, stderr)


def _tools(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    registry = _registry(args)

    def show() -> int:
        for definition in registry.visible():
            first = definition.description.strip().splitlines()[0] if definition.description.strip() else ""
            safe = " [concurrency-safe]" if definition.concurrency_safe is True else ""
            stdout.write(f"{definition.name}: {first}{safe}\n")
        return EXIT_OK

    return _with_mcp(args, registry, show, stderr)


def _check(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    """Pre-flight, then the sandbox's own compile policy (nothing runs): the verdict ``run``
    would reach before running, with its message."""
    import sdk_gen

    name, code = _source(args.file, stdin, "check")
    registry = _registry(args)
    sdk = _with_mcp(args, registry, lambda: CodeMode(registry, backend="inprocess").sdk(), stderr)
    limits = sandbox.DEFAULT_LIMITS
    # As in a run: pre-flight only for a snippet the sandbox would not refuse for its size.
    diagnostics = sdk_gen.check(code, sdk) if len(code) <= limits.max_source else []
    for d in diagnostics:
        stdout.write(sandbox.escape_surrogates(f"{name}:{d.line}:{d.col}: {d.code}: {d.message}") + "\n")
    if diagnostics:
        return EXIT_FAILED
    refusal = sandbox.check(code, limits=limits)
    if refusal is not None:
        stderr.write(visible(_failure_line(name, refusal)) + "\n")
        return EXIT_FAILED
    stdout.write(f"{name}: ok\n")
    return EXIT_OK


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO, inp: TextIO) -> int:
    if args.command == "run":
        return anyio.run(_run, args, out, err, inp)
    if args.command == "sdk":
        return _sdk(args, out, err)
    if args.command == "tools":
        return _tools(args, out, err)
    if args.command == "doctor":
        return _doctor(out)
    if args.command == "mcp":
        from .mcp.cli import mcp_serve_main
        from .mcp.options import server_event_log

        if args.event_log:
            open_output(args.event_log, "--event-log", "a").close()
        warn_unenforced(args, err)
        return mcp_serve_main(args, registry=_registry(args, server_event_log(args.event_log)), stderr=err)
    return _check(args, out, err, inp)


def only_error(error: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups (else the group)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


def _message(exc: BaseException) -> str:
    text = str(exc)
    return text if text else type(exc).__name__


def _usage_parser(parser: argparse.ArgumentParser, args: argparse.Namespace | None) -> argparse.ArgumentParser:
    """The parser of the subcommand that was called (for its usage line)."""
    if args is None or not getattr(args, "command", None):
        return parser
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    chosen = sub.choices[args.command]
    inner = getattr(args, "mcp_command", None)
    if inner:
        nested = next(a for a in chosen._actions if isinstance(a, argparse._SubParsersAction))
        chosen = nested.choices[inner]
    return chosen


@contextlib.contextmanager
def _streams(out: TextIO, err: TextIO) -> Iterator[None]:
    """argparse writes help and version to ``sys.stdout``: send them to ``main``'s streams."""
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        yield


def main(
    argv: Sequence[str] | None = None,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Entry point of the ``codemode`` script; returns the exit code (the script exits with it)."""
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    inp = stdin if stdin is not None else sys.stdin
    argv = list(sys.argv[1:] if argv is None else argv)
    wants_json = "run" in argv and "--json" in argv
    debug = "--debug" in argv

    def fail(code: int, kind: str, message: str) -> int:
        if debug and sys.exc_info()[0] is not None:
            err.write(traceback.format_exc())
        err.write(INTERRUPTED_LINE if code == EXIT_INTERRUPTED else ERROR_LINE.format(message=message))
        if wants_json:
            out.write(json_line(_json_failure(kind, message)) + "\n")
        return code

    parser = _parser()
    args: argparse.Namespace | None = None
    try:
        with _streams(out, err):
            try:
                args, extra = parser.parse_known_args(argv)
            except SystemExit as exc:  # --help, --version
                return int(exc.code or 0) if exc.code in (0, None) else EXIT_USAGE
            if extra:
                _usage_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
            if args.command is None or (args.command == "mcp" and not args.mcp_command):
                _usage_parser(parser, args if args.command else None).print_help(err)
                return EXIT_USAGE
        return _dispatch(args, out, err, inp)
    except _ArgumentError as exc:
        err.write(exc.parser.format_usage())
        if wants_json:
            out.write(json_line(_json_failure("usage", f"{exc.parser.prog}: {exc.message}")) + "\n")
        err.write(f"{exc.parser.prog}: error: {exc.message}\n")
        return EXIT_USAGE
    except (UsageError, CodemodeError, sandbox.JailError) as exc:  # CodemodeError: a bad --mcp-config file
        return fail(EXIT_USAGE, "usage", _message(exc))
    except KeyboardInterrupt:
        return fail(EXIT_INTERRUPTED, INTERRUPTED, INTERRUPTED)
    except BrokenPipeError:  # the reader went away (`codemode tools | head -1`): nothing to say
        _silence(out)
        return EXIT_FAILED
    except BaseExceptionGroup as group:  # raised inside a task group: Ctrl-C, a usage error
        only = only_error(group)
        if isinstance(only, KeyboardInterrupt):
            return fail(EXIT_INTERRUPTED, INTERRUPTED, INTERRUPTED)
        if isinstance(only, (UsageError, CodemodeError, sandbox.JailError)):
            return fail(EXIT_USAGE, "usage", _message(only))
        return fail(EXIT_FAILED, "internal", INTERNAL_ERROR.format(error=f"{type(only).__name__}: {only}"))
    except Exception as exc:
        return fail(EXIT_FAILED, "internal", INTERNAL_ERROR.format(error=f"{type(exc).__name__}: {exc}"))


def _silence(stream: TextIO) -> None:
    """Point a real stdout whose reader is gone at /dev/null, so exiting does not fail flushing it."""
    import os

    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _json_failure(kind: str, message: str) -> dict[str, Any]:
    """The ``--json`` object when nothing ran: the usual keys, with the error."""
    return {
        "ok": False,
        "result": None,
        "logs": [],
        "error": {"kind": kind, "message": message},
        "calls": [],
        "attachments": [],
        "sdk_hash": None,
        "jail": None,
    }


def script() -> None:
    """The ``codemode`` script and ``python -m codemode``: exit with ``main()``'s code."""
    raise SystemExit(main())


if __name__ == "__main__":
    script()
