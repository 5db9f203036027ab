"""OpenTelemetry traces of tool executions, where users already look.

With the OpenTelemetry API installed (``pip install 'codemode[otel]'``; the ``mcp`` SDK brings
the API too), every tool execution the pipeline runs is a span named ``execute_tool {name}``,
following OpenTelemetry's GenAI semantic conventions for tool execution: ``run_code`` is one
span and each sub-call of its program a child span, and both nest under whatever span is
current when the call starts, so a pydantic-ai, Agents SDK or LangChain trace shows every
sub-call of a program without extra code. Nothing is exported unless the host configured an
OpenTelemetry SDK; with the API absent nothing changes and nothing is imported.

Attributes: ``gen_ai.operation.name`` (``execute_tool``), ``gen_ai.tool.name``,
``gen_ai.tool.call.id``, ``gen_ai.tool.type`` (``function``), ``gen_ai.tool.description``,
``error.type`` (the result's error kind) and an error status on a failed call; on ``run_code``
also ``codemode.run.kind`` (``ok`` or the run's error kind), ``codemode.run.duration_ms``,
``codemode.run.sub_calls``, ``codemode.sdk.hash`` and ``codemode.jail`` (``full``, ``weak`` or
``none``). Arguments and results are content the model controls and may be secret: they are
recorded (``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``) only when the host opts
in, with ``capture_content(True)`` or ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``.
"""

from __future__ import annotations

import json
import os
from typing import Any

__all__ = ["CONTENT_ENV", "annotate_run", "capture_content", "finish", "start"]

#: The environment switch OpenTelemetry's GenAI instrumentations use for content capture.
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
TRACER_NAME = "codemode"
#: Characters of arguments or result text a span keeps when content capture is on.
CONTENT_CAP = 8192

_UNSET: Any = object()
_api: Any = _UNSET
_capture: bool | None = None


def _otel() -> Any:
    """``(trace, context)`` of the OpenTelemetry API, or None when it is not installed."""
    global _api
    if _api is _UNSET:
        try:
            from opentelemetry import context, trace
        except ImportError:
            _api = None
        else:
            _api = (trace, context)
    return _api


def capture_content(on: bool | None) -> None:
    """Record tool arguments and results on spans (``True``), never (``False``), or as
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says (``None``, the default)."""
    global _capture
    _capture = on


def _capturing() -> bool:
    if _capture is not None:
        return _capture
    return os.environ.get(CONTENT_ENV, "").strip().lower() in ("1", "true", "yes")


def _text(value: Any) -> str:
    try:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= CONTENT_CAP else text[:CONTENT_CAP] + "…"


def start(call_id: str, name: str, description: str | None, arguments: Any) -> Any:
    """Open the span of one tool execution and make it current; a handle for ``finish``, or
    None when the API is absent. Call ``finish`` in the same task."""
    api = _otel()
    if api is None:
        return None
    trace, context = api
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }
    if description:
        attributes["gen_ai.tool.description"] = description
    if _capturing():
        attributes["gen_ai.tool.call.arguments"] = _text(_plain(arguments))
    span = trace.get_tracer(TRACER_NAME).start_span(
        f"execute_tool {name}", kind=trace.SpanKind.INTERNAL, attributes=attributes
    )
    token = context.attach(trace.set_span_in_context(span))
    return span, token


def finish(handle: Any, result: Any) -> None:
    """Close the span ``start`` opened with the call's ``ToolResult``."""
    if handle is None:
        return
    span, token = handle
    trace, context = _otel()
    try:
        if result.is_error:
            kind = str(result.meta.get("error") or "error")
            span.set_attribute("error.type", kind)
            span.set_status(trace.Status(trace.StatusCode.ERROR, kind))
        if _capturing():
            span.set_attribute("gen_ai.tool.call.result", _text(result.text))
    finally:
        span.end()
        context.detach(token)


def annotate_run(run: Any) -> None:
    """Put a finished run's kind, duration, sub-call count, SDK hash and jail level on the
    current span (the ``run_code`` span while its body runs)."""
    api = _otel()
    if api is None:
        return
    trace, _ = api
    span = trace.get_current_span()
    if not span.is_recording():
        return
    error = run.result.error
    span.set_attributes({
        "codemode.run.kind": "ok" if error is None else str(error.kind),
        "codemode.run.duration_ms": round(run.duration_ms, 3),
        "codemode.run.sub_calls": len(run.calls),
        "codemode.sdk.hash": run.sdk_hash,
        "codemode.jail": str(getattr(run.result, "jail", None) or "none"),
    })


def _plain(value: Any) -> Any:
    from .frozen import thaw

    try:
        return thaw(value)
    except Exception:
        return value
