"""How ``codemode run`` prints a run: its text (or one ``--json`` line), ``--trace``'s tree.

Text the snippet wrote is shown with terminal control characters escaped unless ``--raw``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from typing import Any, TextIO

import sandbox

from ..code_mode.bridge import CodeRun
from ..registry.content import media_size, placeholder
from ..registry.output import json_line, visible
from .exits import EXIT_FAILED, EXIT_OK, failure_line

__all__ = ["JSON_CALL_CAP", "print_report", "show_text"]

#: --json shows each sub-call's arguments and content up to this many bytes of JSON each.
JSON_CALL_CAP = 4096


def show_text(args: argparse.Namespace) -> Callable[[str], str]:
    """How text the snippet wrote is shown: controls made visible, unless ``--raw``."""
    return (lambda text: text) if args.raw else visible


def print_report(args: argparse.Namespace, report: CodeRun, name: str, stdout: TextIO, stderr: TextIO,
                 *, shown: int = 0) -> int:
    """Print one run as ``codemode run`` does (text, or one ``--json`` line); its exit code.

    ``shown``: how many of the run's first log lines the terminal already showed live; the text
    printed here starts after them."""
    show = show_text(args)
    if args.trace:
        _trace(report, stderr, show)
    result = report.result
    if args.json:
        payload = {
            "ok": report.ok,
            "result": result.value if report.ok else None,
            "logs": list(result.logs),
            "error": None if result.error is None else {"kind": result.error.kind, "message": result.error.message},
            "calls": [c.to_json(cap=JSON_CALL_CAP) for c in report.calls],
            "attachments": [_attachment(b, args.attachment_data) for b in report.attachments],
            "sdk_hash": report.sdk_hash,
            "jail": result.jail,
        }
        stdout.write(json_line(payload) + "\n")
        return EXIT_OK if report.ok else EXIT_FAILED
    if report.ok:
        rest = report.text.split("\n")[shown:] if shown else [report.text]
        if rest:
            stdout.write(show("\n".join(rest)) + "\n")
    else:
        for line in result.logs[shown:]:
            stdout.write(show(line) + "\n")
        error = result.error
        assert error is not None
        stderr.write(show(failure_line(name, error)) + "\n")
    for block in report.attachments:
        stdout.write(show(f"[attachment] {placeholder(block)}") + "\n")  # a tool chose the type
    return EXIT_OK if report.ok else EXIT_FAILED


def _trace(report: CodeRun, out: TextIO, show: Any = visible) -> None:
    status = "ok" if report.ok else f"failed ({report.result.error.kind})"  # type: ignore[union-attr]
    out.write(f"run_code {report.call_id} {report.duration_ms:.1f} ms {status}\n")
    calls = report.calls
    for i, call in enumerate(calls):
        branch = "└─" if i == len(calls) - 1 else "├─"
        args = json.dumps(call.arguments, ensure_ascii=False)
        if len(args) > 60:
            args = args[:57] + "..."
        line = f"{branch} {call.number} {call.name}({args}) {call.duration_ms:.1f} ms {call.status}"
        if call.is_error:
            text = " ".join(b.get("text", "") for b in call.content if b.get("type") == "text")
            first = text.splitlines()[0] if text else ""
            line += f": {first[:100]}"
        out.write(sandbox.escape_surrogates(show(line)) + "\n")


def _attachment(block: Mapping[str, Any], with_data: bool) -> dict[str, Any]:
    """An attachment as ``--json`` shows it: its type, MIME type and decoded size."""
    shown: dict[str, Any] = {
        "type": block.get("type"),
        "mime_type": block.get("mime_type"),
        "bytes": media_size(block),
    }
    if with_data:
        shown["data"] = block.get("data")
    return shown
