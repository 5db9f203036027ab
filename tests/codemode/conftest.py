"""Shared tools for the codemode tests: a small ``read_file``-style tool and a fresh registry."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

# The bridge tests share tools through ``bridgekit`` (pytest runs with --import-mode=importlib).
sys.path.insert(0, str(Path(__file__).parent))

from codemode import Registry, define_tool


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def echo_body(args: Any, ctx: Any) -> Any:
    return {"path": args["path"], "limit": args.get("limit")}


def build_echo(name: str = "echo", **overrides: Any):
    options: dict[str, Any] = {
        "name": name,
        "description": "Echo the arguments back.",
        "parameters": {
            "path": {"type": "string", "required": True, "description": "Absolute path"},
            "limit": {"type": "integer"},
        },
        "output": {
            "schema": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
                "required": ["path"],
            }
        },
        "execute": echo_body,
    }
    options.update(overrides)
    return define_tool(**options)


@pytest.fixture
def make_echo():
    """``make_echo(name="echo", **define_tool_overrides)`` builds the shared echo tool."""
    return build_echo


@pytest.fixture
def registry() -> Registry:
    reg = Registry()
    reg.register(build_echo())
    return reg


@pytest.fixture(autouse=True)
def tool_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own MCP tool-list cache (never the user's), also in the processes it starts."""
    directory = tmp_path / "tool-cache"
    monkeypatch.setenv("CODEMODE_TOOL_CACHE", str(directory))
    return directory
