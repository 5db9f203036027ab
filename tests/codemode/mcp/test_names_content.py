"""Namespaced names and content-block mapping, both ways."""

from __future__ import annotations

import re

import mcp_types as types

from codemode.mcp import from_mcp_content, namespace_names, namespaced_name, to_mcp_content

PROVIDER_RULE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # OpenAI and Anthropic tool names


def test_names_are_identifiers_and_keep_the_server() -> None:
    cases = {
        ("github", "create_issue"): "github__create_issue",
        ("my-server", "read-file.v2"): "my_server__read_file_v2",
        ("café", "naïve"): "cafe__naive",
        ("2fa", "class"): "s2fa__class",
        ("a__b", "__c__"): "a_b__c",
        ("---", "..."): "server__tool",
    }
    for pair, expected in cases.items():
        name = namespaced_name(*pair)
        assert name == expected
        assert name.isidentifier() and PROVIDER_RULE.match(name)


def test_long_names_are_cut_with_a_stable_hash() -> None:
    one = namespaced_name("s", "x" * 100)
    two = namespaced_name("s", "x" * 101)
    assert len(one) == 64 and one.isidentifier() and one != two
    assert one == namespaced_name("s", "x" * 100)


def test_clashes_get_suffixes_in_sorted_order_and_avoid_taken_names() -> None:
    names = namespace_names([("a", "read_file"), ("a", "read-file"), ("b", "x")], taken=["b__x"])
    assert names == {("a", "read-file"): "a__read_file", ("a", "read_file"): "a__read_file_2", ("b", "x"): "b__x_2"}
    assert names == namespace_names(reversed([("a", "read_file"), ("a", "read-file"), ("b", "x")]), taken=["b__x"])


def test_mcp_blocks_become_registry_blocks() -> None:
    blocks = from_mcp_content(
        [
            types.TextContent(type="text", text="hi"),
            types.ImageContent(type="image", data="aGk=", mime_type="image/png"),
            types.AudioContent(type="audio", data="aGk=", mime_type="audio/wav"),
            types.EmbeddedResource(type="resource", resource=types.TextResourceContents(uri="memo://a", text="t")),
            types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(uri="memo://b", blob="aGk=", mime_type="x/y")),
            types.ResourceLink(type="resource_link", uri="file:///r.csv", name="r.csv"),
        ]
    )
    assert blocks == [
        {"type": "text", "text": "hi"},
        {"type": "image", "mime_type": "image/png", "data": "aGk="},
        {"type": "audio", "mime_type": "audio/wav", "data": "aGk="},
        {"type": "resource", "uri": "memo://a", "text": "t"},
        {"type": "resource", "uri": "memo://b", "mime_type": "x/y", "blob": "aGk="},
        {"type": "resource", "uri": "file:///r.csv", "name": "r.csv"},
    ]
    back = to_mcp_content(blocks)
    assert [b.type for b in back] == ["text", "image", "audio", "resource", "resource", "resource_link"]
    assert from_mcp_content(back) == blocks
