"""``codemode run --session A.py B.py ...``: snippet files run in order in one session.

Each file is one ``run_code`` call in the same session, so what one file defines the next can
use; each prints as a single ``codemode run`` does (``--json``: one line per file). ``--record``
writes every sub-call of every run in order, each line with its ``run`` (1, 2, ...), and
``--replay`` answers the runs' sub-calls from such a recording in the same order, so a session
replays as it ran. The exit code is 1 when any run failed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

import sandbox

from ..code_mode.agent import CodeMode
from ..code_mode.bridge import CodeRun
from ..registry.registry import Registry
from . import options
from .exits import EXIT_FAILED, EXIT_OK, UsageError
from .live import LivePrinter, StatusLine, is_terminal
from .mcp import config_tools
from .options import (
    limits_from_args,
    open_output,
    read_source,
    registry_from_args,
    require_jail,
)
from .replay import ReplayExecutor, write_recording
from .report import print_report, show_text

__all__ = ["run_session"]

SESSION_KEY = "cli"


async def run_session(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    sources = [read_source(file, stdin, "run") for file in [args.file, *args.more]]
    limits_from_args(args)  # a bad limit is a usage error before any tool loads
    # The recording, the replay and the jail are checked before any tool or server starts.
    record = open_output(args.record, "--record") if args.record else None
    try:
        executor = ReplayExecutor.load(args.replay) if args.replay else None
        backend = options.backend_from_args(args)
        require_jail(backend)
        registry = registry_from_args(args)
        if not args.mcp_config:
            return await _run_all(args, registry, sources, executor, backend, record, stdout, stderr)
        async with config_tools(args, registry, stderr):
            return await _run_all(args, registry, sources, executor, backend, record, stdout, stderr)
    finally:
        if record is not None and not record.closed:
            record.close()


async def _run_all(args: argparse.Namespace, registry: Registry, sources: list[tuple[str, str]],
                   executor: ReplayExecutor | None, backend: sandbox.BackendName | sandbox.Runtime,
                   record: TextIO | None, stdout: TextIO, stderr: TextIO) -> int:
    try:
        mode = CodeMode(registry, limits=limits_from_args(args), max_parallel_sub_calls=args.max_parallel,
                        backend=backend, preflight=not args.no_preflight, executor=executor, sessions=True)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    reports: list[CodeRun] = []
    code = EXIT_OK
    try:
        session = mode.session(SESSION_KEY)
        for number, (name, source) in enumerate(sources, 1):
            # As for one file: on a terminal each run's prints appear as they happen.
            live = LivePrinter(stdout, StatusLine(stderr), show_text(args)) \
                if is_terminal(stdout) and not args.json else None
            report = await session.run(source, description=f"Run {Path(name).name}", call_id=f"cli-{number}",
                                       on_output=live.feed if live is not None else None)
            reports.append(report)
            shown = live.shown(report.result.logs) if live is not None else 0
            if print_report(args, report, name, stdout, stderr, shown=shown) != EXIT_OK:
                code = EXIT_FAILED
    finally:
        mode.close()
    if record is not None:
        calls = [call for report in reports for call in report.calls]
        runs = [number for number, report in enumerate(reports, 1) for _ in report.calls]
        try:
            write_recording(record, calls, runs)
        except OSError as exc:
            raise UsageError(f"--record: cannot write {args.record}: {exc.strerror or exc}") from exc
    return code
