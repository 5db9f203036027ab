"""``codemode check FILE``: the verdict ``run`` would reach before running anything."""

from __future__ import annotations

import argparse
from typing import TextIO

import sandbox

from ..code_mode.agent import CodeMode
from ..registry.output import visible
from .exits import EXIT_FAILED, EXIT_OK, failure_line
from .mcp import with_config_tools
from .options import read_source, registry_from_args

__all__ = ["command"]

def command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO, stdin: TextIO) -> int:
    """Pre-flight, then the sandbox's own compile policy (nothing runs): the verdict ``run``
    would reach before running, with its message."""
    import sdk_gen

    name, code = read_source(args.file, stdin, "check")
    registry = registry_from_args(args)
    sdk = with_config_tools(args, registry, lambda: CodeMode(registry, backend="inprocess").sdk(), stderr)
    limits = sandbox.DEFAULT_LIMITS
    # As in a run: pre-flight only for a snippet the sandbox would not refuse for its size.
    diagnostics = sdk_gen.check(code, sdk) if len(code) <= limits.max_source else []
    for d in diagnostics:
        stdout.write(visible(f"{name}:{d.line}:{d.col}: {d.code}: {d.message}") + "\n")  # names tools
    if diagnostics:
        return EXIT_FAILED
    refusal = sandbox.check(code, limits=limits)
    if refusal is not None:
        stderr.write(visible(failure_line(name, refusal)) + "\n")
        return EXIT_FAILED
    stdout.write(f"{name}: ok\n")
    return EXIT_OK
