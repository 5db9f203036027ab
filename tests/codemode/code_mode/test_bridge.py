"""The run_code bridge on the in-process backend: calls, values, errors, events, rendering."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bridgekit import FAIL, NOTE, events, grep_tool, make_mode

import sandbox
from codemode import (
    EVENT_CODE_DISPATCH,
    EVENT_CODE_DISPATCH_START,
    EVENT_TOOL_CALL,
    RUN_CODE,
    ToolCall,
    define_tool,
    derive_messages,
    render_run,
)

pytestmark = pytest.mark.anyio


async def run(mode: Any, code: str, call_id: str = "c1", **kw: Any):
    return await mode.handle({"id": call_id, "name": RUN_CODE, "arguments": {"code": code, "description": "Test the bridge"}}, **kw)


async def test_keyword_dict_and_wire_forms_reach_the_tool() -> None:
    mode = make_mode()
    out = await run(mode, """
a = await tools.grep(pattern="x")
b = await tools.grep({"pattern": "y"})
c = await tools["grep"](pattern="z")
return [a["matches"][0]["text"], b["matches"][0]["text"], c["matches"][0]["text"]]
""")
    assert not out.is_error
    assert json.loads(out.text) == ["x", "y", "z"]


async def test_non_identifier_wire_name_binds_method_and_wire_key() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        return {"name": ctx.name, "path": args["path"]}

    tool = define_tool(name="fs_read", description="Read.", parameters={"path": {"type": "string", "required": True}},
                       output={"schema": {"type": "object"}}, execute=body)
    mode = make_mode(tool)
    # Registry names are identifiers; the sanitised method and the wire name are the same key here,
    # so prove the dual binding through the SDK map used by the bridge.
    sdk = mode.sdk()
    assert sdk.method_names == {"fs_read": "fs_read"}
    out = await run(mode, 'return (await tools["fs_read"](path="p"))["name"]')
    assert out.text == "fs_read"


async def test_none_for_an_optional_argument_means_not_sent() -> None:
    seen: list[Any] = []

    async def body(args: Any, ctx: Any) -> Any:
        seen.append(dict(args))
        return {}

    tool = grep_tool(execute=body)
    mode = make_mode(tool)
    out = await run(mode, 'await tools.grep(pattern="x", limit=None)\nawait tools.grep({"pattern": "y", "limit": None})')
    assert not out.is_error, out.text
    assert seen == [{"pattern": "x"}, {"pattern": "y"}]


async def test_bad_arguments_raise_in_the_snippet_and_use_no_call_id() -> None:
    mode = make_mode(preflight=False)
    out = await run(mode, """
msgs = []
for bad in ({"pattern": 3}, {"nope": 1}):
    try:
        await tools.grep(bad)
    except ToolCallError as e:
        msgs.append(e.message)
try:
    await tools.grep({"pattern": "a"}, limit=1)
except ToolCallError as e:
    msgs.append(e.message)
try:
    await tools.grep("a", "b")
except ToolCallError as e:
    msgs.append(e.message)
r = await tools.grep(pattern="ok")
return msgs
""")
    msgs = json.loads(out.text)
    assert msgs[0] == "Invalid arguments for grep:\n- $.pattern: 3 is not of type 'string'\nFix them and call grep again."
    assert "'nope' was unexpected" in msgs[1] and "$: 'pattern' is a required property" in msgs[1]
    assert msgs[2] == "pass the arguments either as keywords or as one dict, not both"
    assert msgs[3] == "takes keyword arguments or one dict of arguments, got 2 positional argument(s)"
    starts = events(mode, EVENT_CODE_DISPATCH_START)
    assert [e["call_id"] for e in starts] == ["c1:code:1"]


async def test_non_json_argument_is_refused_inside_the_sandbox() -> None:
    mode = make_mode(preflight=False)
    out = await run(mode, 'await tools.grep(pattern={1, 2})')
    assert out.is_error
    assert out.text.startswith("Error: code run failed (exception): ")
    assert "not JSON" in out.text
    assert events(mode, EVENT_CODE_DISPATCH_START) == []


async def test_unknown_tool_is_an_attribute_error_with_did_you_mean() -> None:
    mode = make_mode(preflight=False)
    out = await run(mode, "await tools.gerp(pattern='x')")
    assert out.text.startswith("Error: code run failed (exception): ")
    assert "AttributeError" in out.text and "did you mean 'grep'?" in out.text


async def test_preflight_diagnostics_fail_the_run_and_nothing_runs() -> None:
    mode = make_mode()
    out = await run(mode, "print('hi')\nawait tools.gerp(pattern='x')\nawait tools.grep(patern='y')")
    assert out.is_error
    assert out.result.meta["error"] == "run_failed"
    assert out.text == (
        "Error: code run failed (preflight): nothing ran; fix these and run again:\n"
        "line 2, col 7: unknown tool 'gerp'; did you mean 'grep'?\n"
        "line 3, col 7: missing required argument 'pattern' for tool 'grep'\n"
        "line 3, col 18: unknown argument 'patern' for tool 'grep'; did you mean 'pattern'?"
    )
    assert out.run is not None and out.run.result.logs == []
    assert events(mode, EVENT_CODE_DISPATCH_START) == []


async def test_tool_without_output_schema_gives_text_with_placeholders_and_attaches_images() -> None:
    mode = make_mode(NOTE)
    out = await run(mode, 'return await tools.note(text="hi")')
    assert out.text == "note hi\n[image: image/png, 100 bytes]"
    assert [b["type"] for b in out.attachments] == ["image"]
    assert [b["type"] for b in out.result.content] == ["text", "image"]


async def test_failed_sub_call_raises_tool_call_error_with_tool_name_and_message() -> None:
    mode = make_mode(FAIL, NOTE)
    out = await run(mode, """
try:
    await tools.fail()
except ToolCallError as e:
    print(e.tool_name, "|", e.message)
await tools.fail()
""")
    assert out.is_error
    assert out.text.startswith("Error: code run failed (exception): ")
    # The tool is named once: by ToolCallError, not again by the message.
    assert "ToolCallError: fail: ValueError: disk on fire\n" in out.text and "fail failed" not in out.text
    assert out.text.endswith("Captured output:\nfail | ValueError: disk on fire")
    assert out.attachments == ()


async def test_model_reads_logs_then_value_and_the_no_output_marker() -> None:
    mode = make_mode()
    assert (await run(mode, 'print("a")\nreturn "raw"')).text == "a\nraw"
    assert (await run(mode, 'return {"k": [1]}')).text == '{\n  "k": [\n    1\n  ]\n}'
    assert (await run(mode, "x = 1")).text == "(run_code completed with no output)"


def test_render_run_shapes() -> None:
    err = sandbox.RunResult(logs=["l1"], error=sandbox.RunError("timeout", "too slow"))
    assert render_run(err) == "Error: code run failed (timeout): too slow\nCaptured output:\nl1"
    assert render_run(sandbox.RunResult(error=sandbox.RunError("syntax", "bad"))) == "Error: code run failed (syntax): bad"


async def test_sub_call_ids_lineage_and_events() -> None:
    mode = make_mode()
    scope = mode.registry.scope("alice")
    out = await run(mode, 'await tools.grep(pattern="a")\nawait tools.grep(pattern="b")', call_id="outer", agent="alice")
    assert not out.is_error
    calls = [e for e in events(mode, EVENT_TOOL_CALL) if e["parent_call_id"] == "outer"]
    assert [(e["call_id"], e["agent"], e["root_call_id"]) for e in calls] == [
        ("outer:code:1", "alice", "outer"),
        ("outer:code:2", "alice", "outer"),
    ]
    done = events(mode, EVENT_CODE_DISPATCH)
    assert [(e["call_id"], e["name"], e["is_error"], e["status"]) for e in done] == [
        ("outer:code:1", "grep", False, "ok"),
        ("outer:code:2", "grep", False, "ok"),
    ]
    assert done[0]["arguments"] == {"pattern": "a"} and done[0]["duration_ms"] >= 0
    assert done[0]["content"][0]["type"] == "text"
    history = derive_messages(mode.registry.events)
    assert [m["role"] for m in history] == ["assistant", "tool"]
    assert history[1]["tool_call_id"] == "outer"
    scope.dispose()


async def test_pipeline_hooks_apply_to_sub_calls() -> None:
    from codemode import block, deny

    mode = make_mode()
    mode.registry.add_guard(lambda ctx: deny("not today") if ctx.arguments.get("pattern") == "secret" else None)
    mode.registry.on_post_execute(lambda ctx, r: block("redacted") if ctx.arguments.get("pattern") == "pii" else None)
    out = await run(mode, """
out = []
for p in ("secret", "pii", "fine"):
    try:
        out.append((await tools.grep(pattern=p))["matches"][0]["text"])
    except ToolCallError as e:
        out.append(e.message)
return out
""")
    assert json.loads(out.text) == ["Call to grep was denied: not today", "Result of grep was blocked: redacted", "fine"]


async def test_tools_visible_to_the_agent_are_a_snapshot_without_run_code() -> None:
    mode = make_mode(grep_tool(), NOTE)
    mode.registry.scope("bob", allow=["grep"])
    out = await run(mode, "return tools.list()", agent="bob")
    assert json.loads(out.text) == ["grep", "search"]  # the tools, plus the search helper
    out = await run(mode, 'return tools.describe("grep")', agent="bob")
    assert "async def grep(" in out.text
    out = await run(mode, "await tools.run_code(code='1', description='x')", agent="bob")
    assert out.is_error and "unknown tool 'run_code'" in out.text


async def test_run_code_arguments_are_checked_and_limits_cannot_come_from_the_model() -> None:
    mode = make_mode()
    empty = await mode.handle(ToolCall("c", RUN_CODE, {"code": "x = 1", "description": "  "}))
    assert empty.is_error and empty.result.meta["error"] == "invalid_arguments"
    sneaky = await mode.handle(ToolCall("d", RUN_CODE, {"code": "x = 1", "description": "ok go", "limits": {"wall_time": 999}}))
    assert sneaky.is_error and "'limits' was unexpected" in sneaky.text
    card = mode.registry.present_call(ToolCall("e", RUN_CODE, {"code": "print(1)", "description": "Print one"}))
    assert card == {"kind": "generic", "title": "Print one", "body": "print(1)"}


async def test_host_limit_override_applies_to_one_call() -> None:
    mode = make_mode(limits=sandbox.Limits(max_calls=1))
    code = 'await tools.grep(pattern="a")\nawait tools.grep(pattern="b")'
    limited = await run(mode, code)
    assert limited.is_error and "(call-limit)" in limited.text
    relaxed = await run(mode, code, limits=sandbox.Limits(max_calls=5))
    assert not relaxed.is_error


async def test_modes_control_what_the_model_sees_and_may_call() -> None:
    code_mode = make_mode(mode="code")
    assert [t["function"]["name"] for t in code_mode.model_tools()] == ["run_code"]
    assert "async def grep(" in code_mode.system_prompt()
    direct = await code_mode.handle(ToolCall("d", "grep", {"pattern": "x"}))
    assert direct.text == "Call to grep was denied: in code mode grep is called from a run_code program: `await tools.grep(...)`"

    both = make_mode(mode="both")
    assert sorted(t["name"] for t in both.model_tools(format="anthropic")) == ["grep", "run_code"]
    assert not (await both.handle(ToolCall("d", "grep", {"pattern": "x"}))).is_error

    native = make_mode(mode="native")
    assert [t["name"] for t in native.model_tools(format="mcp")] == ["grep"]
    assert native.system_prompt() == ""
    refused = await run(native, "x = 1")
    assert refused.text == "Call to run_code was denied: run_code is not available in native mode; call the tools directly"

    native.registry.scope("coder", mode="code")
    assert [t["function"]["name"] for t in native.model_tools("coder")] == ["run_code"]
    assert not (await run(native, "x = 1", agent="coder")).is_error


async def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="max_parallel_sub_calls must be an int >= 1, got 0"):
        make_mode(max_parallel_sub_calls=0)
    with pytest.raises(TypeError, match="limits must be a sandbox.Limits"):
        make_mode(limits={"wall_time": 1})
    mode = make_mode()
    with pytest.raises(ValueError, match="format must be one of"):
        mode.model_tools(format="xml")
    mode.close()
    assert mode.registry.get(RUN_CODE) is None


async def test_a_run_keeps_its_sub_call_records_within_a_budget(tmp_path: Any, monkeypatch: Any) -> None:
    """Past RUN_RECORD_BYTES, a record keeps a marker, in the CodeRun and in the events alike;
    the snippet still gets every full value."""
    from codemode import CodeMode, Registry, register_workspace
    from codemode.code_mode import bridge as bridge_module

    (tmp_path / "big.txt").write_text(("q" * 99 + "\n") * 2000)
    monkeypatch.setattr(bridge_module, "RUN_RECORD_BYTES", 450_000)
    registry = Registry(mode="code")
    register_workspace(registry, tmp_path)
    mode = CodeMode(registry, backend="inprocess")
    code = "n = 0\nfor _ in range(3):\n    n += len((await tools.read_file(path='big.txt', limit=2000))['content'])\nreturn n"
    report = await mode.run(code)
    assert report.ok and report.result.value == 3 * 199_999
    first, *rest = report.calls
    assert len(first.value["content"]) == 199_999
    for record in rest:
        assert record.value is None and record.status == "ok"
        assert record.content[0]["text"].startswith("[result not kept in the run's records: about ")
    dispatched = [e for e in registry.events.read() if e["type"] == "tool/code-dispatch"]
    assert "q" * 99 in json.dumps(dispatched[0], default=list)
    assert "q" * 99 not in json.dumps(dispatched[1:], default=list)


async def test_a_tool_without_an_output_schema_is_typed_and_received_as_str() -> None:
    mode = make_mode(NOTE)
    sdk = mode.sdk()
    assert "async def note(*, text: str) -> str:" in sdk.describe("note")
    assert "-> Any" not in sdk.text.split("class Tools")[1]
    out = await run(mode, """
r = await tools.note(text="hi")
return [isinstance(r, str), r]
""")
    assert not out.is_error, out.text
    assert json.loads(out.text) == [True, "note hi\n[image: image/png, 100 bytes]"]
