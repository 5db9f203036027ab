"""Registration, hot swap, reserved names, scoped views, exporters, plugins, mode and UI cards."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from codemode import (
    PluginLoadError,
    RegistrationError,
    Registry,
    ToolCall,
    define_tool,
    diff_card,
    generic_card,
    terminal_card,
)

pytestmark = pytest.mark.anyio


async def test_dispose_and_reregister_hot_swaps(make_echo) -> None:
    reg = Registry()

    async def v2(args, ctx):
        return {"path": "v2"}

    old = reg.register(make_echo())
    with pytest.raises(RegistrationError, match="'echo' is already registered; dispose its handle first"):
        reg.register(make_echo(execute=v2))
    old.dispose()
    assert reg.get("echo") is None
    new = reg.register(make_echo(execute=v2))
    old.dispose()  # a stale handle must not remove the new tool
    result = await reg.execute(ToolCall("c1", "echo", {"path": "/a"}))
    assert result.value == {"path": "v2"}
    with new:
        pass
    assert reg.visible() == []


def test_handle_as_context_manager(make_echo) -> None:
    reg = Registry()
    with reg.register(make_echo()) as handle:
        assert [d.name for d in reg.visible()] == ["echo"]
    assert handle.disposed and reg.visible() == []


def test_run_code_is_reserved(make_echo) -> None:
    reg = Registry()
    run_code = make_echo("run_code")
    with pytest.raises(RegistrationError, match="'run_code' is reserved for Code Mode"):
        reg.register(run_code)
    with pytest.raises(RegistrationError, match="'run_code' is reserved"):
        reg.scope("a").register(run_code)
    with pytest.raises(RegistrationError, match="only for reserved names"):
        reg.register_builtin(make_echo())
    handle = reg.register_builtin(run_code)
    assert reg.get("run_code") is run_code
    handle.dispose()
    assert reg.get("run_code") is None


def test_register_needs_a_definition() -> None:
    with pytest.raises(TypeError, match="register\\(\\) takes a ToolDefinition"):
        Registry().register(lambda: None)  # type: ignore[arg-type]


def test_scoped_visibility_and_shadowing(make_echo) -> None:
    reg = Registry()
    glob = {n: make_echo(n) for n in ("grep", "read", "write")}
    for d in glob.values():
        reg.register(d)
    scoped_grep = make_echo("grep", description="Reviewer's grep.")
    reviewer = reg.scope("reviewer", allow=["read", "grep"])
    reviewer.register(scoped_grep)
    reviewer.register(make_echo("note"))
    assert [d.name for d in reg.visible("reviewer")] == ["grep", "note", "read"]
    assert reg.get("grep", agent="reviewer") is scoped_grep
    assert reg.get("write", agent="reviewer") is None
    assert reg.get("note") is None  # scoped tools stay in their scope
    assert [d.name for d in reg.visible()] == ["grep", "read", "write"]
    assert [d.name for d in reg.visible("stranger")] == ["grep", "read", "write"]
    assert reg.get("grep") is glob["grep"]
    with pytest.raises(RegistrationError, match="agent 'reviewer' already has a scope"):
        reg.scope("reviewer")
    with pytest.raises(RegistrationError, match="'note' is already registered for agent 'reviewer'"):
        reviewer.register(make_echo("note"))
    reviewer.dispose()
    assert [d.name for d in reg.visible("reviewer")] == ["grep", "read", "write"]


def test_scope_without_allow_sees_all_globals_plus_its_own(make_echo) -> None:
    reg = Registry()
    reg.register(make_echo("a"))
    with reg.scope("x") as scope:
        handle = scope.register(make_echo("b"))
        assert [d.name for d in reg.visible("x")] == ["a", "b"]
        handle.dispose()
        assert [d.name for d in reg.visible("x")] == ["a"]


async def test_execute_respects_the_agent_view(make_echo) -> None:
    reg = Registry()
    reg.register(make_echo("write"))
    reg.scope("reader", allow=[])
    result = await reg.execute(ToolCall("c1", "write", {"path": "/a"}), agent="reader")
    assert result.text == "Unknown tool 'write'. Available tools: (none)."
    assert not (await reg.execute(ToolCall("c2", "write", {"path": "/a"}))).is_error


def test_visible_cache_follows_changes(make_echo) -> None:
    reg = Registry()
    first = reg.visible()
    reg.register(make_echo("a"))
    assert first == [] and [d.name for d in reg.visible()] == ["a"]
    reg.visible().clear()  # callers get a copy
    assert len(reg.visible()) == 1


def test_mode_is_stored_and_scopes_override_it() -> None:
    reg = Registry()
    assert reg.mode == "native" and reg.mode_for("x") == "native"
    reg.mode = "both"
    reg.scope("coder", mode="code")
    reg.scope("plain")
    assert (reg.mode_for("coder"), reg.mode_for("plain"), reg.mode_for(None)) == ("code", "both", "both")
    with pytest.raises(ValueError, match="mode must be one of native, code, both, got 'fast'"):
        reg.mode = "fast"  # type: ignore[assignment]
    with pytest.raises(ValueError):
        Registry(mode="x")  # type: ignore[arg-type]


def test_schemas_and_exporters(make_echo) -> None:
    reg = Registry()
    reg.register(make_echo())

    async def body(args, ctx):
        return []

    reg.register(define_tool(name="plain", description="No output.", execute=body))
    params = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Absolute path"}, "limit": {"type": "integer"}},
        "required": ["path"],
        "additionalProperties": False,
    }
    out = reg.schemas()
    assert out[0] == {
        "name": "echo",
        "description": "Echo the arguments back.",
        "parameters": params,
        "output_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}},
            "required": ["path"],
        },
    }
    assert out[1]["output_schema"] is None
    assert reg.schemas(format="openai")[0] == {
        "type": "function",
        "function": {"name": "echo", "description": "Echo the arguments back.", "parameters": params},
    }
    assert reg.schemas(format="anthropic")[0] == {
        "name": "echo",
        "description": "Echo the arguments back.",
        "input_schema": params,
    }
    mcp = reg.schemas(format="mcp")
    assert mcp[0]["inputSchema"] == params and "outputSchema" in mcp[0]
    assert "outputSchema" not in mcp[1]
    out[0]["parameters"]["type"] = "changed"  # exports are plain copies
    assert reg.schemas()[0]["parameters"]["type"] == "object"
    with pytest.raises(ValueError, match="format must be one of"):
        reg.schemas(format="xml")


PLUGIN = textwrap.dedent(
    '''
    from codemode import define_tool

    async def hello(args, ctx):
        return "hello " + args["who"]

    def apply(registry):
        registry.register(define_tool(
            name="hello",
            description="Greet.",
            parameters={"who": {"type": "string", "required": True}},
            output={"schema": {"type": "string"}},
            execute=hello,
        ))
    '''
)


async def test_plugin_from_file_path(tmp_path: Path) -> None:
    path = tmp_path / "greet.py"
    path.write_text(PLUGIN)
    reg = Registry()
    module = reg.load_plugin(str(path))
    assert callable(module.apply)
    result = await reg.execute(ToolCall("c1", "hello", {"who": "ann"}))
    assert result.text == "hello ann"


def test_plugin_from_module_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "greet_plugin_mod.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    reg.load_plugin("greet_plugin_mod")
    assert reg.get("hello") is not None


def test_plugin_errors(tmp_path: Path) -> None:
    reg = Registry()
    with pytest.raises(PluginLoadError, match="plugin file 'missing.py' does not exist"):
        reg.load_plugin("missing.py")
    with pytest.raises(PluginLoadError, match="plugin module 'no_such_module_xyz' cannot be imported"):
        reg.load_plugin("no_such_module_xyz")
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(PluginLoadError, match="has no apply\\(registry\\) function"):
        reg.load_plugin(str(empty))
    broken = tmp_path / "broken.py"
    broken.write_text("def apply(registry):\n    raise RuntimeError('nope')\n")
    with pytest.raises(PluginLoadError, match="failed in apply\\(\\): RuntimeError: nope"):
        reg.load_plugin(str(broken))
    syntax = tmp_path / "syntax.py"
    syntax.write_text("def (:\n")
    with pytest.raises(PluginLoadError, match="failed to import: SyntaxError"):
        reg.load_plugin(str(syntax))


def test_present_call_and_result(make_echo) -> None:
    reg = Registry()
    reg.register(
        make_echo(
            "sh",
            present_call=lambda args: terminal_card(args["path"]),
            present_result=lambda args, result: diff_card(args["path"], result.text),
        )
    )
    reg.register(make_echo("broken", present_call=lambda args: 1 / 0))
    call = ToolCall("c1", "sh", {"path": "ls"})
    assert reg.present_call(call) == {"kind": "terminal", "command": "ls", "output": None, "exit_code": None}
    from codemode import ToolResult

    result = ToolResult(({"type": "text", "text": "diff"},))
    assert reg.present_result(call, result) == {"kind": "diff", "path": "ls", "diff": "diff"}
    assert reg.present_call(ToolCall("c2", "broken", {})) == generic_card("broken")
    assert reg.present_result(ToolCall("c3", "nope", {}), result) == generic_card("nope", "diff")
