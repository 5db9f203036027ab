"""Tools and helpers shared by the bridge and CLI tests (imported as ``from bridgekit import ...``)."""

from __future__ import annotations

import base64
from typing import Any

import anyio

from codemode import CodeMode, Registry, define_tool

PNG = base64.b64encode(b"\x89PNG" + b"\x00" * 96).decode()


async def _grep(args: Any, ctx: Any) -> Any:
    return {"matches": [{"path": "a.py", "line": 1, "text": args["pattern"]}]}


async def _note(args: Any, ctx: Any) -> Any:
    return [{"type": "text", "text": f"note {args['text']}"}, {"type": "image", "mime_type": "image/png", "data": PNG}]


async def _fail(args: Any, ctx: Any) -> Any:
    raise ValueError("disk on fire")


def grep_tool(**overrides: Any):
    options: dict[str, Any] = {
        "name": "grep",
        "description": "Search files.",
        "parameters": {"pattern": {"type": "string", "required": True}, "limit": {"type": "integer"}},
        "output": {"schema": {"type": "object"}},
        "execute": _grep,
        "is_concurrency_safe": True,
    }
    options.update(overrides)
    return define_tool(**options)


def sleeper(name: str, log: list[tuple[str, str, float]], *, safe: bool = True, delay: float = 0.02):
    """A tool that records start/end times and sleeps ``delay`` (or ``args['delay']``)."""

    async def body(args: Any, ctx: Any) -> Any:
        log.append(("start", args["tag"], anyio.current_time()))
        await anyio.sleep(args.get("delay", delay))
        log.append(("end", args["tag"], anyio.current_time()))
        return args["tag"]

    return define_tool(
        name=name,
        description="Sleep a little.",
        parameters={"tag": {"type": "string", "required": True}, "delay": {"type": "number"}},
        output={"schema": {"type": "string"}},
        execute=body,
        is_concurrency_safe=safe,
    )


def make_mode(*tools: Any, mode: str = "code", **options: Any) -> CodeMode:
    registry = Registry(mode=mode)  # type: ignore[arg-type]
    for t in tools or (grep_tool(),):
        registry.register(t)
    options.setdefault("backend", "inprocess")
    return CodeMode(registry, **options)


def events(mode: CodeMode, kind: str) -> list[Any]:
    return [e for e in mode.registry.events.read() if e["type"] == kind]


NOTE = define_tool(
    name="note",
    description="A note with a picture.",
    parameters={"text": {"type": "string", "required": True}},
    execute=_note,
)
FAIL = define_tool(name="fail", description="Always fails.", parameters={}, execute=_fail)


def cli(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    """Run the ``codemode`` command in-process: exit code, stdout, stderr."""
    import io

    from codemode.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err, stdin=io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()
