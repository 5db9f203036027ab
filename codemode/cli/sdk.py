"""``codemode sdk``: the SDK text the model would see for the loaded tools (``--hash``: its hash)."""

from __future__ import annotations

import argparse
from typing import TextIO

from ..code_mode.agent import CodeMode
from .exits import EXIT_OK
from .mcp import with_config_tools
from .options import registry_from_args

__all__ = ["command"]

def command(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    registry = registry_from_args(args)

    def show() -> int:
        sdk = CodeMode(registry, backend="inprocess").sdk()
        stdout.write((sdk.sdk_hash if args.hash else sdk.text) + "\n")
        return EXIT_OK

    return with_config_tools(args, registry, show, stderr)
