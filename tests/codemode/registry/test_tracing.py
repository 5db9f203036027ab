"""OpenTelemetry spans of tool executions (``codemode.registry.tracing``), checked with the SDK's
in-memory exporter: one span per ``run_code`` call and per sub-call, nested under the caller's
span, GenAI attributes, error types, no content unless opted in, and nothing imported when the
API is absent."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import sandbox
from codemode import CodeMode, Registry, define_tool
from codemode.registry import tracing

REPO = Path(__file__).resolve().parents[3]
FAST = sandbox.Limits(wall_time=20, cpu_time=20)
SECRET = "SECRET-ARGUMENT-7f3a"
_EXPORTER = InMemorySpanExporter()
_PROVIDER = TracerProvider()
_PROVIDER.add_span_processor(SimpleSpanProcessor(_EXPORTER))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """The in-memory exporter, empty, with codemode's tracer drawing from its provider."""
    original = trace.get_tracer
    trace.get_tracer = lambda name, *a, **k: _PROVIDER.get_tracer(name, *a, **k)  # type: ignore[assignment]
    _EXPORTER.clear()
    try:
        yield _EXPORTER
    finally:
        trace.get_tracer = original  # type: ignore[assignment]
        tracing.capture_content(None)


def registry() -> Registry:
    reg = Registry(mode="code")

    async def echo(args: Any, ctx: Any) -> list[dict[str, str]]:
        return [{"type": "text", "text": str(args["x"])}]

    async def broken(args: Any, ctx: Any) -> Any:
        raise RuntimeError("down")

    reg.register(define_tool(name="echo", description="Echo x.", parameters={"x": {"type": "string"}},
                             execute=echo, is_concurrency_safe=True))
    reg.register(define_tool(name="broken", description="Always fails.", parameters={}, execute=broken))
    return reg


def call(code: str, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "name": "run_code", "arguments": {"code": code, "description": "Test"}}


def handle_under_agent_span(mode: CodeMode, code: str) -> Any:
    async def go() -> Any:
        with _PROVIDER.get_tracer("agent").start_as_current_span("agent turn"):
            return await mode.handle(call(code))

    return anyio.run(go)


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
def test_each_sub_call_is_a_child_of_its_run_code_span_under_the_callers(spans: InMemorySpanExporter,
                                                                         backend: str) -> None:
    mode = CodeMode(registry(), backend=backend, limits=FAST)
    try:
        outcome = handle_under_agent_span(mode, f"a = await tools.echo(x='{SECRET}')\nb = await tools.echo(x='2')\nreturn b")
    finally:
        mode.close()
    assert not outcome.is_error
    by_name: dict[str, list[Any]] = {}
    for span in spans.get_finished_spans():
        by_name.setdefault(span.name, []).append(span)
    (agent,) = by_name["agent turn"]
    (outer,) = by_name["execute_tool run_code"]
    subs = by_name["execute_tool echo"]
    assert outer.parent.span_id == agent.context.span_id
    assert [s.parent.span_id for s in subs] == [outer.context.span_id] * 2
    assert {s.context.trace_id for s in (agent, outer, *subs)} == {agent.context.trace_id}
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in subs) == ["c1:code:1", "c1:code:2"]
    sub = subs[0]
    assert sub.kind == trace.SpanKind.INTERNAL
    assert sub.attributes["gen_ai.operation.name"] == "execute_tool"
    assert sub.attributes["gen_ai.tool.name"] == "echo"
    assert sub.attributes["gen_ai.tool.type"] == "function"
    assert sub.attributes["gen_ai.tool.description"] == "Echo x."
    attrs = outer.attributes
    assert attrs["gen_ai.tool.name"] == "run_code" and attrs["gen_ai.tool.call.id"] == "c1"
    assert attrs["codemode.run.kind"] == "ok" and attrs["codemode.run.sub_calls"] == 2
    assert attrs["codemode.run.duration_ms"] > 0
    assert attrs["codemode.sdk.hash"] == outcome.run.sdk_hash
    assert attrs["codemode.jail"] == ("none" if backend == "inprocess" else outcome.run.result.jail)
    assert "error.type" not in attrs and outer.status.status_code == trace.StatusCode.UNSET
    # No content by default: neither the arguments nor the results are on any span.
    for span in (outer, *subs):
        assert "gen_ai.tool.call.arguments" not in span.attributes
        assert "gen_ai.tool.call.result" not in span.attributes
        assert SECRET not in repr(dict(span.attributes))


def test_failures_carry_their_error_type(spans: InMemorySpanExporter) -> None:
    mode = CodeMode(registry(), backend="inprocess", limits=FAST)
    try:
        handle_under_agent_span(mode, "try:\n    await tools.broken()\nexcept Exception:\n    pass\nraise ValueError('x')")
    finally:
        mode.close()
    finished = {s.name: s for s in spans.get_finished_spans()}
    sub, outer = finished["execute_tool broken"], finished["execute_tool run_code"]
    assert sub.attributes["error.type"] == "tool_error" and sub.status.status_code == trace.StatusCode.ERROR
    assert outer.attributes["error.type"] == "run_failed" and outer.status.status_code == trace.StatusCode.ERROR
    assert outer.attributes["codemode.run.kind"] == "exception"


def test_a_direct_call_refused_by_the_mode_is_a_span_with_its_error(spans: InMemorySpanExporter) -> None:
    mode = CodeMode(registry(), backend="inprocess", limits=FAST)
    try:
        outcome = anyio.run(mode.handle, {"id": "d1", "name": "echo", "arguments": {"x": "1"}})
    finally:
        mode.close()
    assert outcome.is_error
    (span,) = spans.get_finished_spans()
    assert span.name == "execute_tool echo" and span.attributes["error.type"] == "denied"
    assert span.parent is None  # no current span: a root of its own


def test_content_is_recorded_only_when_the_host_opts_in(spans: InMemorySpanExporter,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    mode = CodeMode(registry(), backend="inprocess", limits=FAST)
    try:
        tracing.capture_content(True)
        handle_under_agent_span(mode, f"return await tools.echo(x='{SECRET}')")
        recorded = {s.name: s for s in spans.get_finished_spans()}["execute_tool echo"]
        assert SECRET in recorded.attributes["gen_ai.tool.call.arguments"]
        assert recorded.attributes["gen_ai.tool.call.result"] == SECRET
        spans.clear()
        tracing.capture_content(None)  # the environment decides
        monkeypatch.setenv(tracing.CONTENT_ENV, "true")
        handle_under_agent_span(mode, f"return await tools.echo(x='{SECRET}')")
        assert SECRET in {s.name: s for s in spans.get_finished_spans()}["execute_tool echo"].attributes[
            "gen_ai.tool.call.arguments"]
        spans.clear()
        monkeypatch.setenv(tracing.CONTENT_ENV, "false")
        handle_under_agent_span(mode, f"return await tools.echo(x='{SECRET}')")
        assert all(SECRET not in repr(dict(s.attributes)) for s in spans.get_finished_spans())
    finally:
        mode.close()


ABSENT = """
import sys
sys.modules["opentelemetry"] = None  # as if the API were not installed
import anyio
from codemode import CodeMode, Registry, define_tool

async def echo(args, ctx):
    return [{"type": "text", "text": args["x"]}]

reg = Registry(mode="code")
reg.register(define_tool(name="echo", description="Echo.", parameters={"x": {"type": "string"}}, execute=echo))
mode = CodeMode(reg, backend="inprocess")
out = anyio.run(mode.handle, {"id": "c", "name": "run_code",
                              "arguments": {"code": "return await tools.echo(x='ok')", "description": "d"}})
print(out.text, out.is_error)
print(sorted(m for m, v in sys.modules.items() if m.startswith("opentelemetry") and v is not None))
"""


def test_without_the_api_nothing_changes_and_nothing_is_imported() -> None:
    done = subprocess.run([sys.executable, "-c", ABSENT], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["ok False", "[]"]


NOT_IMPORTED = """
import sys, anyio
from codemode import CodeMode, Registry
mode = CodeMode(Registry(mode="code"), backend="inprocess")
print(anyio.run(mode.handle, {"id": "c", "name": "run_code", "arguments": {"code": "return 1", "description": "d"}}).text)
print("opentelemetry.sdk" in sys.modules)
"""


def test_the_api_alone_exports_nothing_and_loads_no_sdk() -> None:
    done = subprocess.run([sys.executable, "-c", NOT_IMPORTED], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["1", "False"]
