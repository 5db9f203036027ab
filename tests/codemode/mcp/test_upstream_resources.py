"""Upstream MCP resources from a program: ``tools.read_resource(uri)`` and
``tools.list_resources()`` through the registry pipeline, bounded, over a real stdio server."""

from __future__ import annotations

import mcp_types
import pytest
from mcpkit import FAST, dynamic_entry, server_entry

import sdk_gen
from codemode import CodeMode, Registry, ToolCall, deny
from codemode.code_mode.discovery import budgeted_text
from codemode.mcp import McpProvider, parse_config
from codemode.mcp import messages as m
from codemode.mcp.resources import MAX_RESOURCE_TEXT, resource_blocks

pytestmark = pytest.mark.anyio
ERAS = {"2026": (), "2025": ("--legacy",)}
NOTE = m.RESOURCES_NOTE.format(read="read_resource", list="list_resources")

PROGRAM = """
note = await tools.read_resource(uri="memo://note")
logo = await tools.read_resource(uri="memo://logo.png")
data = await tools.read_resource(uri="memo://data.bin")
keyed = await tools.read_resource(uri="memo://notes/42")
listed = await tools.list_resources()
return {"note": note, "logo": logo, "data": data, "keyed": keyed,
        "uris": [r["uri"] for r in listed["resources"]],
        "templates": [t["uri_template"] for t in listed["templates"]]}
"""


def _config(servers: dict) -> dict:
    return parse_config({"mcpServers": servers})


@pytest.mark.parametrize("era", list(ERAS))
async def test_a_program_reads_text_and_blob_resources_through_the_pipeline(era: str) -> None:
    registry = Registry(mode="code")
    mode = CodeMode(registry, backend="inprocess")
    async with McpProvider(_config({"dyn": dynamic_entry("dyn", *ERAS[era])}), limits=FAST) as provider:
        await provider.register(registry)
        assert provider.resources.offering == ["dyn"]
        assert {"read_resource", "list_resources"} <= {d.name for d in registry.visible()}
        sdk = mode.sdk()
        assert NOTE in sdk.text.split("```")[0]  # one sentence, in the preamble
        assert sdk_gen.check(PROGRAM, sdk) == []  # pre-flight accepts the calls
        seen: list[str] = []
        registry.on_result(lambda result, ctx: seen.append(ctx.name))

        outcome = await mode.handle({"id": "r1", "name": "run_code", "arguments": {"code": PROGRAM, "description": "Read resources"}})
        assert not outcome.is_error, outcome.text
        value = outcome.run.result.value
        assert value["note"] == "remember the milk"  # text as text
        assert value["logo"] == "[image: image/png, 32 bytes]"  # media as a placeholder ...
        assert [a["mime_type"] for a in outcome.attachments] == ["image/png"]  # ... and attached
        assert value["data"] == "[resource: memo://data.bin]"
        assert value["keyed"] == "note 42"  # routed by the URI template
        assert value["uris"] == ["memo://note", "memo://logo.png", "memo://data.bin", "memo://big", "memo://gone"]
        assert value["templates"] == ["memo://notes/{key}"]
        # Each read was one pipeline execution, with its sub-call events.
        assert seen.count("read_resource") == 4 and seen.count("list_resources") == 1
        dispatched = [e["name"] for e in registry.events.read() if e["type"] == "tool/code-dispatch"]
        assert dispatched.count("read_resource") == 4


async def test_reads_are_bounded_and_failures_are_one_actionable_line() -> None:
    registry = Registry(mode="both")
    mode = CodeMode(registry, backend="inprocess")
    servers = {"dyn": dynamic_entry("dyn"), "two": dynamic_entry("two", "--no-resources")}
    async with McpProvider(_config(servers), limits=FAST) as provider:
        await provider.register(registry)
        big = await registry.execute(ToolCall("b", "read_resource", {"uri": "memo://big"}))
        assert not big.is_error
        assert len(big.content[0]["text"]) == MAX_RESOURCE_TEXT
        assert big.content[-1]["text"] == f"[resource text cut: {MAX_RESOURCE_TEXT} of {2 * 1024 * 1024} characters shown]"

        gone = await registry.execute(ToolCall("g", "read_resource", {"uri": "memo://gone"}))
        assert gone.is_error and gone.text == "MCP server 'dyn' refused read_resource('memo://gone'): the memo was shredded"
        bad = await registry.execute(ToolCall("x", "read_resource", {"uri": ""}))
        assert bad.meta["error"] == "invalid_arguments"  # refused before anything is sent upstream

        with registry.add_guard(lambda ctx: deny("no resources today") if ctx.name == "read_resource" else None):
            run = await mode.run('return await tools.read_resource(uri="memo://note")', description="Read a note")
        assert not run.ok and "Call to read_resource was denied: no resources today" in run.text

        # Native calls carry the real blocks; the MCP export carries honest annotations.
        logo = await registry.execute(ToolCall("l", "read_resource", {"uri": "memo://logo.png"}))
        assert logo.content[0]["type"] == "image" and logo.content[0]["mime_type"] == "image/png"
        exported = {e["name"]: mcp_types.Tool.model_validate(e) for e in registry.schemas(format="mcp")}
        hints = exported["read_resource"].annotations
        assert hints.read_only_hint and hints.open_world_hint and exported["list_resources"].output_schema


async def test_with_two_resource_servers_an_unknown_uri_is_refused_naming_list_resources() -> None:
    registry = Registry()
    servers = {"dyn": dynamic_entry("dyn"), "two": dynamic_entry("two")}
    async with McpProvider(_config(servers), limits=FAST) as provider:
        await provider.register(registry)
        assert provider.resources.offering == ["dyn", "two"]
        unknown = await registry.execute(ToolCall("u", "read_resource", {"uri": "zzz://nothing"}))
        assert unknown.is_error
        assert unknown.text == ("No MCP server offers resource 'zzz://nothing'; `await tools.list_resources()` "
                                "lists the URIs there are.")
        listed = (await registry.execute(ToolCall("l", "list_resources", {}))).value
        assert {r["server"] for r in listed["resources"]} == {"dyn", "two"}
        assert provider.resources.owner("memo://note") == "dyn"  # the first server by name


async def test_without_upstream_resources_there_are_no_resource_tools_and_no_note() -> None:
    registry = Registry(mode="code")
    mode = CodeMode(registry, backend="inprocess")
    async with McpProvider(_config({"up": server_entry()}), limits=FAST) as provider:
        await provider.register(registry)
        assert provider.resources.offering == []
        assert registry.get("read_resource") is None and registry.get("list_resources") is None
        assert "resources" not in mode.sdk().text.split("```")[0]
        diagnostics = sdk_gen.check('return await tools.read_resource(uri="memo://note")', mode.sdk())
        assert [d.code for d in diagnostics] == ["unknown-tool"]


async def test_the_note_survives_the_2kb_discovery_text_and_a_taken_name_gets_a_suffix() -> None:
    from codemode import define_tool

    async def mine(args, ctx):
        return "mine"

    registry = Registry(mode="code")
    registry.register(define_tool(name="read_resource", description="The host's own tool.", execute=mine))
    mode = CodeMode(registry, backend="inprocess")
    async with McpProvider(_config({"dyn": dynamic_entry("dyn", "--no-resources"), "res": dynamic_entry("res")}),
                           limits=FAST) as provider:
        await provider.register(registry)
        assert registry.get("read_resource").description == "The host's own tool."
        assert registry.get("read_resource_2") is not None
        note = m.RESOURCES_NOTE.format(read="read_resource_2", list="list_resources")
        compact = budgeted_text(mode.sdk(), lead="Lead.", mode="compact")
        assert note in compact and len(compact) <= 2048
        run = await mode.run('return await tools.read_resource_2(uri="memo://note")', description="Read a note")
        assert run.ok and run.text == "remember the milk"


def test_resource_blocks_bound_parts_and_blobs() -> None:
    from codemode.mcp.resources import MAX_RESOURCE_BLOB, MAX_RESOURCE_PARTS

    many = [mcp_types.TextResourceContents(uri=f"memo://{i}", text="a") for i in range(MAX_RESOURCE_PARTS + 3)]
    blocks = resource_blocks(many)
    assert len(blocks) == MAX_RESOURCE_PARTS + 1 and blocks[-1]["text"] == "[3 more parts of this resource not shown]"
    huge = "A" * (MAX_RESOURCE_BLOB // 3 * 4 + 8)
    (only,) = resource_blocks([mcp_types.BlobResourceContents(uri="memo://huge", mime_type="image/png", blob=huge)])
    assert only["type"] == "text" and only["text"].startswith("[resource: memo://huge, image/png, ")
    assert f"over the {MAX_RESOURCE_BLOB}-byte limit, not passed on]" in only["text"]
