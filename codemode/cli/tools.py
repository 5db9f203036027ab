"""``codemode tools``: one line per loaded tool, its name and the first line of its description."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..registry.output import visible
from .exits import EXIT_OK
from .mcp import with_config_tools
from .options import registry_from_args

__all__ = ["command"]

def command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    registry = registry_from_args(args)

    def show() -> int:
        for definition in registry.visible():
            first = definition.description.strip().splitlines()[0] if definition.description.strip() else ""
            safe = " [concurrency-safe]" if definition.concurrency_safe is True else ""
            stdout.write(visible(f"{definition.name}: {first}{safe}") + "\n")  # names and text may come from upstream
        return EXIT_OK

    return with_config_tools(args, registry, show, stderr)
