"""``codemode run FILE``: one snippet as a host ``run_code`` call, printed as text or one JSON line.

With ``--session`` and more files, ``codemode.cli.session`` runs them in one session instead.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path
from typing import TextIO

import anyio

import sandbox

from ..code_mode.agent import CodeMode
from ..code_mode.bridge import SubCall
from ..registry.registry import Registry
from . import options
from .exits import UsageError
from .live import LivePrinter, StatusLine, is_terminal
from .mcp import config_tools
from .options import (
    limits_from_args,
    open_output,
    read_source,
    registry_from_args,
    require_jail,
    warn_unenforced,
)
from .replay import ReplayExecutor, write_recording
from .report import print_report, show_text

__all__ = ["command"]

PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 0.5


async def command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    if getattr(args, "more", None) and not args.session:
        raise UsageError("more than one file needs --session (they then run in one session, in order)")
    if getattr(args, "session", False):
        from .session import run_session

        return await run_session(args, stdout, stderr, stdin)
    # Everything that can be wrong with the command line is found before any tool or server
    # starts: the snippet, the limits, the output file, the recording, the jail.
    name, code = read_source(args.file, stdin, "run")
    limits = limits_from_args(args)
    record = open_output(args.record, "--record") if args.record else None
    try:
        executor = ReplayExecutor.load(args.replay) if args.replay else None
        backend = options.backend_from_args(args)
        require_jail(backend)
        warn_unenforced(args, stderr)
        registry = registry_from_args(args)
        status = StatusLine(stderr if not args.json else io.StringIO())  # --json: no live output at all
        loaded = (args, registry, name, code, limits, backend, executor, record, stdout, stderr, status)
        if not args.mcp_config:  # the MCP SDK is slow to import: load it only when asked for
            return await _run_loaded(*loaded)
        async with config_tools(args, registry, stderr, status):
            return await _run_loaded(*loaded)
    finally:
        if record is not None and not record.closed:
            record.close()


async def _run_loaded(
    args: argparse.Namespace, registry: Registry, name: str, code: str, limits: sandbox.Limits,
    backend: sandbox.BackendName | sandbox.Runtime, executor: ReplayExecutor | None,
    record: TextIO | None, stdout: TextIO, stderr: TextIO, status: StatusLine,
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
    progress = _Progress(status) if status.enabled else None
    # On a terminal the program's prints appear as they happen; pipes and --json get them at the end.
    live = LivePrinter(stdout, status, show_text(args)) if is_terminal(stdout) and not args.json else None
    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        if progress is not None:
            tg.start_soon(progress.show, started)
        report = await mode.run(
            code,
            description=f"Run {Path(name).name}",
            call_id="cli",
            on_dispatch=progress.count if progress is not None else None,
            on_output=live.feed if live is not None else None,
        )
        tg.cancel_scope.cancel()
    status.clear()
    if record is not None:
        try:
            write_recording(record, report.calls)
        except OSError as exc:
            raise UsageError(f"--record: cannot write {args.record}: {exc.strerror or exc}") from exc
    shown = live.shown(report.result.logs) if live is not None else 0
    return print_report(args, report, name, stdout, stderr, shown=shown)


class _Progress:
    """A one-line sub-call counter on a terminal's stderr, for runs longer than a second."""

    def __init__(self, status: StatusLine) -> None:
        self.status = status
        self.done = 0

    def count(self, call: SubCall) -> None:
        self.done += 1

    async def show(self, started: float) -> None:
        await anyio.sleep(PROGRESS_AFTER)
        while True:
            self.status.show(f"[codemode] running {time.monotonic() - started:.1f} s, {self.done} sub-calls started")
            await anyio.sleep(PROGRESS_EVERY)
