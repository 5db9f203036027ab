"""The options commands share, and what they turn into: tools, limits, a backend, input, output.

Everything that can be wrong with a command line is found here, before any tool or server
starts: a bad value is a ``UsageError`` (exit 2) naming the flag.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import sandbox

from ..mcp.config import DEFAULT_UPSTREAM_LIMITS
from ..registry.errors import CodemodeError
from ..registry.events import EventLog
from ..registry.registry import Registry
from ..workspace import register_workspace
from .exits import WARNING_LINE, UsageError

__all__ = [
    "add_mcp_config_option",
    "add_run_options",
    "add_tool_options",
    "backend_from_args",
    "limits_from_args",
    "number_option",
    "open_output",
    "read_source",
    "registry_from_args",
    "require_jail",
    "warn_unenforced",
]

MIB = 1024 * 1024
EMPTY_SOURCE = "{name} is empty: there is no program to {verb}"
NOT_UTF8 = "cannot read {name}: it is not UTF-8 text (byte 0x{byte:02x} at offset {offset})"
MEMORY_NOT_ENFORCED = (
    "--memory is not enforced on the inprocess backend (it cannot cap memory inside this "
    "process); use --backend worker to enforce it"
)
MCP_OPTION_UNUSED = "{flag} has no effect without --mcp-config"
#: Bounds of the numeric options: a value outside is a usage error naming the flag.
TIMEOUT_RANGE = (0.01, 86_400.0)
MEMORY_RANGE_MIB = (16, 1024 * 1024)
MAX_TOOL_CALLS_RANGE = (0, 1_000_000)
MAX_PARALLEL_RANGE = (1, 1_000)
#: The sandbox's lower bound for memory, in the unit of --memory.
MIN_MEMORY_MIB = MEMORY_RANGE_MIB[0]
#: Bounds of --mcp-timeout (seconds).
MCP_TIMEOUT_RANGE = (0.001, 86_400.0)


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


def add_tool_options(p: argparse.ArgumentParser, debug: argparse.ArgumentParser | None = None) -> None:
    """``--tools``, ``--root``, ``--allow-write`` and ``--mcp-config`` on a command that loads tools;
    ``debug`` (a parent parser) lends its ``--debug`` when ``p`` has none."""
    p.add_argument("--tools", action="append", default=[], metavar="SPEC",
                   help="module path or .py file with apply(registry); repeatable (default: workspace tools)")
    p.add_argument("--root", default=".", metavar="DIR", help="workspace root (default: .)")
    p.add_argument("--allow-write", action="store_true", help="add write_file and edit_file (default: read-only)")
    for action in debug._actions if debug is not None else ():
        if action.dest == "debug" and not any("--debug" in a.option_strings for a in p._actions):
            p._add_action(action)
    add_mcp_config_option(p)


def registry_from_args(args: argparse.Namespace, log: EventLog | None = None) -> Registry:
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


def read_source(file: str, stdin: TextIO, verb: str) -> tuple[str, str]:
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
    if not getattr(args, "mcp_config", None):
        for flag, given in (("--mcp-timeout", getattr(args, "mcp_timeout", None) is not None),
                            ("--tool-cache", getattr(args, "tool_cache", None) is not None),
                            ("--refresh-tools", getattr(args, "refresh_tools", False))):
            if given:
                stderr.write(WARNING_LINE.format(message=MCP_OPTION_UNUSED.format(flag=flag)))


def open_output(path: str, flag: str, mode: str = "w") -> TextIO:
    """Open an output file named by ``flag`` before anything runs; ``UsageError`` if it cannot be
    written, so a run's work is never lost to a bad path at the end."""
    try:
        if Path(path).is_dir():
            raise IsADirectoryError(21, "Is a directory")
        return open(path, mode, encoding="utf-8")  # the caller closes it
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from exc


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


def add_mcp_config_option(parser: argparse.ArgumentParser) -> None:
    """``--mcp-config FILE`` (repeatable), ``--mcp-timeout S``, ``--tool-cache DIR`` and
    ``--refresh-tools`` on a subcommand."""
    parser.add_argument("--mcp-config", action="append", default=[], metavar="FILE",
                        help='an MCP client configuration ({"mcpServers": ...}); its servers\' tools load as '
                             "<server>__<tool>; repeatable (default: none)")
    parser.add_argument("--mcp-timeout", type=number_option(float, *MCP_TIMEOUT_RANGE, "seconds"), metavar="S",
                        help=f"seconds per upstream MCP tool call (default {DEFAULT_UPSTREAM_LIMITS.call_timeout:g})")
    parser.add_argument("--tool-cache", metavar="DIR",
                        help="where MCP servers' tool lists are cached, so a server starts only when a program "
                             "calls its tools (default $CODEMODE_TOOL_CACHE, else ~/.cache/codemode/mcp-tools)")
    parser.add_argument("--refresh-tools", action="store_true",
                        help="start every MCP server to list its tools again, and rewrite their cached lists")
