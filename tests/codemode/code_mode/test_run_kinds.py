"""Error kinds of a Code Mode run mean one thing each, and tool errors carry no host paths."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bridgekit import PNG, grep_tool, make_mode

import sandbox
from codemode import RUN_CODE, StopRun, ToolResult, define_tool
from codemode.code_mode.messages import EMPTY_PROGRAM

pytestmark = pytest.mark.anyio


async def handle(mode: Any, code: Any) -> Any:
    return await mode.handle({"id": "c1", "name": RUN_CODE, "arguments": {"code": code, "description": "Test the kinds"}})


@pytest.mark.parametrize("code", ["", "   \n\t\n"], ids=["empty", "blank"])
async def test_an_empty_program_is_a_syntax_error_that_says_so(code: str) -> None:
    mode = make_mode(grep_tool())
    out = await handle(mode, code)
    assert out.is_error and out.result.meta["error"] == "run_failed"
    assert out.text == f"Error: code run failed (syntax): {EMPTY_PROGRAM}"
    assert out.run is not None and out.run.calls == ()


async def test_a_denied_run_code_is_refused_not_cancelled() -> None:
    mode = make_mode(grep_tool(), mode="native")
    run = await mode.run("return 1")
    assert run.result.error is not None and run.result.error.kind == "refused"
    assert run.result.error.message == "Call to run_code was denied: run_code is not available in native mode; call the tools directly"


async def test_run_code_that_breaks_is_crashed_not_cancelled() -> None:
    mode = make_mode(grep_tool(), backend="worker")
    # A limit the worker protocol cannot carry (the CLI refuses it as a usage error first).
    run = await mode.run("return 1", limits=sandbox.DEFAULT_LIMITS.replace(wall_time=float("nan")))
    assert run.result.error is not None and run.result.error.kind == "crashed"
    assert run.result.error.message.startswith("run_code failed: ValueError: ")


async def test_a_stop_run_keeps_its_own_kind_and_reason() -> None:
    async def stop(call: Any, parent: Any, gate: Any) -> ToolResult:
        raise StopRun("the script is over", kind="replay-mismatch")

    run = await make_mode(grep_tool(), executor=stop).run('await tools.grep(pattern="x")')
    assert run.result.error == sandbox.RunError("replay-mismatch", "the script is over")  # type: ignore[arg-type]
    (call,) = run.calls
    assert (call.status, call.content) == ("error", [{"type": "text", "text": "the script is over"}])


async def test_a_plain_stop_run_is_cancelled() -> None:
    async def stop(call: Any, parent: Any, gate: Any) -> ToolResult:
        raise StopRun("enough")

    run = await make_mode(grep_tool(), executor=stop).run('await tools.grep(pattern="x")')
    assert run.result.error is not None and run.result.error.kind == "cancelled"
    assert "enough" in run.result.error.message


async def test_an_executor_that_raises_fails_the_sub_call_not_the_run() -> None:
    async def broken(call: Any, parent: Any, gate: Any) -> ToolResult:
        raise RuntimeError("executor bug")

    mode = make_mode(grep_tool(), executor=broken)
    run = await mode.run('try:\n    await tools.grep(pattern="x")\nexcept ToolCallError as e:\n    return "caught"')
    assert run.ok and run.result.value == "caught"
    (call,) = run.calls
    assert (call.status, call.is_error) == ("error", True)
    assert [dict(b) for b in call.content] == [{"type": "text", "text": "grep failed: RuntimeError"}]
    ends = [e for e in mode.registry.events.read() if e["type"] == "tool/code-dispatch"]
    assert [e["status"] for e in ends] == ["error"]  # exactly one dispatch event, and not "cancelled"


# --- host paths in tool errors ---------------------------------------------------------------------


def _raiser(exc: BaseException) -> Any:
    async def body(args: Any, ctx: Any) -> Any:
        raise exc

    return define_tool(name="leaky", description="Fails.", parameters={}, execute=body)


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (RuntimeError("cannot open /home/alice/.ssh/id_rsa for the key"), "leaky failed: RuntimeError: cannot open <path> for the key"),
        (ValueError("config '/etc/codemode/secret.toml' is broken"), "leaky failed: ValueError: config '<path>' is broken"),
        (FileNotFoundError(2, "No such file or directory", "/srv/data/customers.csv"), "leaky failed: FileNotFoundError: No such file or directory"),
        (PermissionError(13, "Permission denied", "/root/x", "/root/y"), "leaky failed: PermissionError: Permission denied"),
        (ValueError(r"cannot read C:\Users\alice\notes.txt"), "leaky failed: ValueError: cannot read <path>"),
        (ValueError("disk on fire"), "leaky failed: ValueError: disk on fire"),
        (ValueError("see https://example.com/docs/a and a/b, 3/4"), "leaky failed: ValueError: see https://example.com/docs/a and a/b, 3/4"),
        (RuntimeError("cwd:/home/alice/work failed"), "leaky failed: RuntimeError: cwd:<path> failed"),
        (RuntimeError("bad file:///home/alice/notes.txt"), "leaky failed: RuntimeError: bad file://<path>"),
        (RuntimeError("cannot open //fileserver/alice/x.xlsx"), "leaky failed: RuntimeError: cannot open <path>"),
        (RuntimeError(r"cannot open \\fileserver\alice\x.xlsx"), "leaky failed: RuntimeError: cannot open <path>"),
        (RuntimeError("cannot open /home/alice smith/x.toml now"), "leaky failed: RuntimeError: cannot open <path> now"),
    ],
    ids=["posix-path", "quoted-path", "oserror-filename", "oserror-two-filenames", "windows-path", "no-path", "url-and-relative",
         "after-a-colon", "file-url", "posix-share", "windows-share", "with-a-space"],
)
async def test_a_tool_that_raises_shows_no_host_path(exc: BaseException, text: str) -> None:
    mode = make_mode(_raiser(exc))
    run = await mode.run("await tools.leaky()")
    assert run.result.error is not None and run.result.error.kind == "exception"
    # The snippet's ToolCallError names the tool once; the call's record keeps the whole text.
    assert f"ToolCallError: leaky: {text.removeprefix('leaky failed: ')}\n" in run.result.error.message
    (call,) = run.calls
    assert [dict(b) for b in call.content] == [{"type": "text", "text": text}]
    for secret in ("alice", "/etc/codemode", "customers", "/root"):
        assert secret not in run.text and secret not in json.dumps([dict(b) for b in call.content])


async def test_a_workspace_error_keeps_the_path_the_model_gave(tmp_path: Any) -> None:
    from codemode import CodeMode, Registry, register_workspace

    registry = Registry(mode="code")
    register_workspace(registry, tmp_path)
    run = await CodeMode(registry, backend="inprocess").run('await tools.read_file(path="/etc/passwd")')
    assert run.calls[0].content[0]["text"] == "read_file failed: WorkspaceError: path '/etc/passwd' is outside the workspace root"


# --- the program never sees media bytes ----------------------------------------------------------------


async def test_media_in_a_structured_result_reaches_the_program_as_a_placeholder() -> None:
    async def body(args: Any, ctx: Any) -> Any:
        return {"shot": {"type": "image", "data": PNG, "mimeType": "image/png"}, "list": [{"type": "audio", "data": PNG, "mime_type": "audio/wav"}]}

    tool = define_tool(name="snap", description="Snap.", parameters={}, output={"schema": {"type": "object"}}, execute=body)
    run = await make_mode(tool).run("r = await tools.snap()\nreturn r")
    assert run.ok
    assert run.result.value == {
        "shot": {"type": "image", "data": "[image: image/png, 100 bytes]", "mimeType": "image/png"},
        "list": [{"type": "audio", "data": "[audio: audio/wav, 100 bytes]", "mime_type": "audio/wav"}],
    }
    assert PNG not in run.text
