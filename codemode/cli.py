"""The ``codemode`` command: run a snippet file against tools, print the SDK, list tools, check.

    codemode run FILE|-  [--tools SPEC]... [--root DIR] [--allow-write] [--backend worker|inprocess]
                         [--timeout S] [--memory MIB] [--max-tool-calls N] [--max-parallel N]
                         [--no-preflight] [--trace] [--record calls.jsonl | --replay calls.jsonl]
                         [--json] [--raw]
    codemode sdk   [--tools SPEC]... [--root DIR] [--hash]
    codemode tools [--tools SPEC]... [--root DIR]
    codemode check FILE|- [--tools SPEC]... [--root DIR]
    codemode mcp serve [--tools SPEC]... [--root DIR] [--mcp-config FILE]... [--http HOST:PORT]
                       [--max-concurrent N] [--event-log FILE.jsonl] [--timeout S] [--memory MIB]
                       [--max-tool-calls N]

Every command takes ``--mcp-config FILE`` (repeatable, ``{"mcpServers": ...}``) and
``--mcp-timeout S``: the servers' tools load as ``<server>__<tool>`` (see docs/mcp.md).

Exit codes: 0 success, 1 the run (or check) failed, 2 usage or configuration error. Without
``--tools``, the built-in workspace tools load, confined to ``--root``. The snippet runs as a
host ``run_code`` call in ``code`` mode, through the same pipeline a model's call takes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import anyio

import sandbox

from .agent import CodeMode
from .bridge import CodeRun, StopRun, SubCall
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
PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 0.5
MIB = 1024 * 1024
#: --json shows each sub-call's arguments and content up to this many bytes of JSON each.
JSON_CALL_CAP = 4096

REPLAY_MISMATCH = "replay mismatch at sub-call {n}: the recording has {expected}, the run made {got}"
REPLAY_EXHAUSTED = "replay mismatch at sub-call {n}: the recording has no more calls, the run made {got}"


class UsageError(Exception):
    """A bad option, file or plugin: exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="codemode", description="Run Code Mode snippets against tools.")
    sub = parser.add_subparsers(dest="command", required=True)

    def loading(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tools", action="append", default=[], metavar="SPEC",
                       help="module path or .py file with apply(registry); repeatable (default: workspace tools)")
        p.add_argument("--root", default=".", metavar="DIR", help="workspace root (default: .)")
        p.add_argument("--allow-write", action="store_true", help="add write_file and edit_file")
        from .mcp import add_mcp_config_option

        add_mcp_config_option(p)

    run = sub.add_parser("run", help="run a snippet file ('-' for stdin)")
    run.add_argument("file")
    run.add_argument("more", nargs="*", metavar="FILE",
                     help="with --session: more snippet files, run after the first in the same session")
    run.add_argument("--session", action="store_true",
                     help="run the files in order in one session: variables persist from file to file")
    loading(run)
    add_run_options(run)
    run.add_argument("--no-preflight", action="store_true", help="skip the pre-flight check")
    run.add_argument("--trace", action="store_true", help="print a tree of the sub-calls on stderr")
    group = run.add_mutually_exclusive_group()
    group.add_argument("--record", metavar="FILE", help="save every sub-call with its result (JSON lines)")
    group.add_argument("--replay", metavar="FILE", help="answer sub-calls from a recording")
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--raw", action="store_true",
                     help="write the snippet's text as is; by default terminal control characters are shown as escapes")

    sdk = sub.add_parser("sdk", help="print the SDK text the model would see")
    loading(sdk)
    sdk.add_argument("--hash", action="store_true", help="print only the SDK hash")

    tools = sub.add_parser("tools", help="list the loaded tools")
    loading(tools)

    sub.add_parser("doctor", help="show which jail layers confine the worker backend on this host")

    check = sub.add_parser("check", help="run only the pre-flight check on a snippet file")
    check.add_argument("file")
    loading(check)

    from .mcp import add_mcp_parser

    add_mcp_parser(sub, loading)
    return parser


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


def _source(file: str, stdin: TextIO) -> tuple[str, str]:
    if file == "-":
        return "<stdin>", stdin.read()
    try:
        return file, Path(file).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {file}: {exc.strerror or exc}") from exc


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The backend and limit options of every command that runs snippets (run, mcp serve)."""
    p.add_argument("--backend", choices=("worker", "inprocess"), default="worker")
    p.add_argument("--allow-weak-jail", action="store_true",
                   help="run on the worker backend even where its syscall filter cannot be "
                        "installed (see `codemode doctor`); results then say jail=weak")
    p.add_argument("--timeout", type=float, metavar="S", help="wall-time limit per run in seconds")
    p.add_argument("--memory", type=int, metavar="MIB", help="memory limit per run in MiB")
    p.add_argument("--max-tool-calls", type=int, metavar="N", help="sub-calls per run")
    p.add_argument("--max-parallel", type=int, default=10, metavar="N",
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


#: The sandbox's lower bound for memory, in the unit of --memory.
MIN_MEMORY_MIB = 16


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


def _write_recording(path: str, calls: Sequence[SubCall], runs: Sequence[int] | None = None) -> None:
    """One line per sub-call; with ``runs`` (a session's), each line names its run (1, 2, ...)."""
    with open(path, "w", encoding="utf-8") as fh:
        for i, call in enumerate(calls):
            # A tool's lone surrogate becomes a JSON escape, which replays as the same text.
            fh.write(sandbox.escape_surrogates(json_line(_record_line(call, runs[i] if runs else None))) + "\n")


class ReplayExecutor:
    """Answers sub-calls from a recording, in submission order; the first call that differs in
    name or arguments stops the run with a message naming both."""

    def __init__(self, records: list[Mapping[str, Any]]) -> None:
        self.records = [r for r in records if r.get("status") in ("ok", "error")]
        self.used = 0

    @classmethod
    def load(cls, path: str) -> ReplayExecutor:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
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
            raise StopRun(REPLAY_EXHAUSTED.format(n=n, got=got))
        record = self.records[self.used]
        expected = f"{record['name']}({json.dumps(record['arguments'], sort_keys=True)})"
        if expected != got:
            raise StopRun(REPLAY_MISMATCH.format(n=n, expected=expected, got=got))
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


async def _run(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    if getattr(args, "more", None) and not args.session:
        raise UsageError("more than one file needs --session (they then run in one session, in order)")
    if getattr(args, "session", False):
        from .cli_session import run_session

        return await run_session(args, stdout, stderr, stdin)
    name, code = _source(args.file, stdin)
    limits = limits_from_args(args)
    registry = _registry(args)
    if not args.mcp_config:  # the MCP SDK is slow to import: load it only when asked for
        return await _run_loaded(args, registry, name, code, limits, stdout, stderr)
    async with _mcp_tools(args, registry, stderr):
        return await _run_loaded(args, registry, name, code, limits, stdout, stderr)


async def _run_loaded(
    args: argparse.Namespace, registry: Registry, name: str, code: str, limits: sandbox.Limits,
    stdout: TextIO, stderr: TextIO,
) -> int:
    executor = ReplayExecutor.load(args.replay) if args.replay else None
    backend = backend_from_args(args)
    require_jail(backend)
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
    if args.record:
        _write_recording(args.record, report.calls)
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
            "sdk_hash": report.sdk_hash,
            "jail": result.jail,
        }
        stdout.write(json_line(payload) + "\n")
    elif report.ok:
        stdout.write(show(report.text) + "\n")
    else:
        for line in result.logs:
            stdout.write(show(line) + "\n")
        error = result.error
        assert error is not None
        stderr.write(show(_located(name, f"Error: code run failed ({error.kind}): {error.message}")) + "\n")
    return EXIT_OK if report.ok else EXIT_FAILED


def _mcp_tools(args: argparse.Namespace, registry: Registry, stderr: TextIO) -> Any:
    """The ``--mcp-config`` tools for an ``async with`` block."""
    from .mcp.cli import mcp_tools, upstream_limits  # loads the SDK

    limits = upstream_limits(args.mcp_timeout)
    return mcp_tools(registry, args.mcp_config, limits=limits, stderr=stderr)


def _with_mcp(args: argparse.Namespace, registry: Registry, fn: Any, stderr: TextIO) -> Any:
    if not args.mcp_config:
        return fn()
    from .mcp.cli import with_mcp_tools

    return with_mcp_tools(args, registry, fn, stderr=stderr)


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
    import sdk_gen

    name, code = _source(args.file, stdin)
    registry = _registry(args)
    sdk = _with_mcp(args, registry, lambda: CodeMode(registry, backend="inprocess").sdk(), stderr)
    diagnostics = sdk_gen.check(code, sdk)
    for d in diagnostics:
        stdout.write(sandbox.escape_surrogates(f"{name}:{d.line}:{d.col}: {d.code}: {d.message}") + "\n")
    if not diagnostics:
        stdout.write(f"{name}: ok\n")
    return EXIT_FAILED if diagnostics else EXIT_OK


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
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else EXIT_USAGE
    try:
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

            return mcp_serve_main(args, registry=_registry(args, server_event_log(args.event_log)), stderr=err)
        return _check(args, out, err, inp)
    except (UsageError, CodemodeError, sandbox.JailError) as exc:  # CodemodeError: a bad --mcp-config file
        err.write(f"codemode: error: {exc}\n")
        return EXIT_USAGE


def script() -> None:
    """``python -m codemode.cli``: exit with ``main()``'s code."""
    raise SystemExit(main())


if __name__ == "__main__":
    script()
