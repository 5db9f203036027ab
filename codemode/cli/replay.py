"""``--record`` and ``--replay``: a run's sub-calls as JSON lines, and answering them back.

A replayed run takes the same pipeline path up to the executor: only the tool bodies are
replaced by the recording, so a changed snippet stops at the first call that differs.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import sandbox

from ..code_mode.bridge import StopRun, SubCall
from ..registry.calls import ExecutionToken, ToolCall, ToolResult
from ..registry.frozen import FrozenDict, freeze, thaw
from ..registry.messages import ErrorKind
from ..registry.output import json_line
from ..registry.pipeline import DispatchGate
from .exits import UsageError

__all__ = ["REPLAY_MISMATCH_KIND", "ReplayExecutor", "write_recording"]

#: The kind of a failed run that stopped because a replayed run left its recording.
REPLAY_MISMATCH_KIND = "replay-mismatch"
REPLAY_MISMATCH = "replay mismatch at sub-call {n}: the recording has {expected}, the run made {got}"
REPLAY_EXHAUSTED = "replay mismatch at sub-call {n}: the recording has no more calls, the run made {got}"


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


def write_recording(fh: TextIO, calls: Sequence[SubCall], runs: Sequence[int] | None = None) -> None:
    """One line per sub-call into ``fh`` (closed after); with ``runs`` (a session's), each line
    names its run (1, 2, ...)."""
    with fh:
        for i, call in enumerate(calls):
            # A tool's lone surrogate becomes a JSON escape, which replays as the same text.
            fh.write(sandbox.escape_surrogates(json_line(_record_line(call, runs[i] if runs else None))) + "\n")


class ReplayExecutor:
    """Answers sub-calls from a recording, in submission order; the first call that differs in
    name or arguments stops the run (kind ``replay-mismatch``) with a message naming both."""

    def __init__(self, records: list[Mapping[str, Any]]) -> None:
        self.records = [r for r in records if r.get("status") in ("ok", "error")]
        self.used = 0

    @classmethod
    def load(cls, path: str) -> ReplayExecutor:
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
            records = [json.loads(line) for line in lines if line.strip()]
        except OSError as exc:
            raise UsageError(f"cannot read recording {path}: {exc.strerror or type(exc).__name__}") from exc
        except (ValueError, RecursionError) as exc:  # ValueError: bad JSON or UTF-8
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
            raise StopRun(REPLAY_EXHAUSTED.format(n=n, got=got), kind=REPLAY_MISMATCH_KIND)
        record = self.records[self.used]
        expected = f"{record['name']}({json.dumps(record['arguments'], sort_keys=True)})"
        if expected != got:
            raise StopRun(REPLAY_MISMATCH.format(n=n, expected=expected, got=got), kind=REPLAY_MISMATCH_KIND)
        self.used += 1
        async with gate.slot():
            pass
        meta: dict[str, Any] = {"call_id": call.call_id}
        if record["is_error"]:
            meta["error"] = ErrorKind.TOOL_ERROR.value
        return ToolResult(freeze(record["content"]), freeze(record.get("value")), bool(record["is_error"]), FrozenDict(meta))
