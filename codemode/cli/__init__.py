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

Every command takes ``--mcp-config FILE`` (repeatable, ``{"mcpServers": ...}``),
``--mcp-timeout S``, ``--tool-cache DIR`` and ``--refresh-tools``: the servers' tools load as
``<server>__<tool>``, from cached tool lists when there are some, so a server starts only when a
program calls one of its tools (see docs/codemode.md and codemode/mcp/README.md).

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
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

import anyio

import sandbox

from ..registry.errors import CodemodeError
from ..registry.output import json_line, visible
from . import check, doctor, mcp, run, sdk, tools
from .exits import (
    ERROR_LINE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    INTERNAL_ERROR,
    INTERRUPTED,
    INTERRUPTED_LINE,
    UsageError,
    only_error,
)
from .mcp import add_mcp_parser
from .options import add_run_options, add_tool_options

__all__ = ["main", "script"]

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


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="codemode", description="Run Code Mode snippets against tools.")
    parser.add_argument("--version", action="version", version=f"codemode {_version()}")
    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error (default: one line)")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error (default: one line)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", help="what to do")

    def loading(p: argparse.ArgumentParser) -> None:
        add_tool_options(p, debug)

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

    doctor_parser = sub.add_parser("doctor", help="show which jail layers confine the worker backend on this host",
                                   parents=[debug])
    doctor_parser.add_argument("--json", action="store_true", help="print one JSON object (default: text)")

    check = sub.add_parser("check", help="check a snippet file without running it", parents=[debug])
    check.add_argument("file", help="the snippet: a file of Python (the body of an async function), or - for stdin")
    loading(check)

    add_mcp_parser(sub, loading)
    return parser


def _version() -> str:
    from .. import __version__

    return __version__


def _dispatch(args: argparse.Namespace, out: TextIO, err: TextIO, inp: TextIO) -> int:
    if args.command == "run":
        return anyio.run(run.command, args, out, err, inp)
    if args.command == "sdk":
        return sdk.command(args, out, err)
    if args.command == "tools":
        return tools.command(args, out, err)
    if args.command == "doctor":
        return doctor.command(out, as_json=args.json)
    if args.command == "mcp":
        return mcp.command(args, out, err)
    return check.command(args, out, err, inp)


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
        err.write(INTERRUPTED_LINE if code == EXIT_INTERRUPTED else ERROR_LINE.format(message=visible(message)))
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
        err.write(visible(f"{exc.parser.prog}: error: {exc.message}") + "\n")
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
