"""SDK text: pinned output, corpus sanity, compact mode, describe, and hostile schemas."""

from __future__ import annotations

import ast
import hashlib
import random

import pytest
from sdkgen_helpers import code_of, load_corpus, load_module

from sdk_gen import DEFAULT_BUDGET, SDK, ToolSpec, generate

GREP = ToolSpec(
    "grep",
    "Search files for a regular expression.",
    {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regex to find.", "minLength": 1},
            "limit": {"type": "integer", "minimum": 1, "default": 100},
            "mode": {"enum": ["fast", "full"]},
        },
        "required": ["pattern"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}, "line": {"type": "integer"}},
                    "required": ["path", "line"],
                },
            }
        },
        "required": ["matches"],
    },
)
READ = ToolSpec(
    "fs.read-file",
    "Read a text file.",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "2fa": {"type": "string", "description": "Code."}},
        "required": ["path"],
    },
)

PINNED = '''\
Write Python 3.11: the body of an async function (top-level `await` and `return` work).
Await every call, `await tools.name(arg=value)`; run independent calls with `await asyncio.gather(...)`.
Omit an optional argument (or pass None) for its default; arguments may also go in one dict: `await tools.name({"arg": value})`.
A failed call raises `ToolCallError` (`.tool_name`, `.message`).
Only prints and the return value (a final bare expression) come back to you: keep them short.
Allowed imports: json, re.

```python
from typing import Any, Literal, NotRequired, Protocol, TypedDict

class ToolCallError(Exception):
    tool_name: str
    message: str

FsReadFileArgs = TypedDict('FsReadFileArgs', {'path': str, '2fa': NotRequired[str]})

class MatchesItem(TypedDict):
    path: str
    line: int

class GrepResult(TypedDict):
    matches: list[MatchesItem]

class Tools(Protocol):
    async def fs_read_file(self, args: FsReadFileArgs, /) -> Any:
        """Read a text file.
        Takes one dict: some argument names are not Python names.
        '2fa': Code."""

    async def grep(self, *, pattern: str, limit: int = 100, mode: Literal['fast', 'full'] | None = None) -> GrepResult:
        """Search files for a regular expression.
        pattern: Regex to find. (min length 1)
        limit: (>= 1)"""

tools: Tools
```
'''


def test_tiny_sdk_is_pinned_byte_for_byte():
    sdk = generate([GREP, READ], allowed_imports=["re", "json", "re"])
    assert sdk.text == PINNED
    assert sdk.sdk_hash == hashlib.sha256(PINNED.encode()).hexdigest()
    assert not sdk.compact
    assert sdk.method_names == {"fs_read_file": "fs.read-file", "grep": "grep"}
    assert sdk.wire_names == {"fs.read-file": "fs_read_file", "grep": "grep"}
    assert sdk.names() == ["fs_read_file", "grep"]


def test_describe_accepts_wire_and_method_names():
    sdk = generate([GREP, READ])
    text = sdk.describe("fs.read-file")
    assert text == sdk.describe("fs_read_file")
    assert text.startswith("FsReadFileArgs = TypedDict(")
    assert "async def fs_read_file(args: FsReadFileArgs, /) -> Any:" in text
    assert sdk.describe("grep").startswith("class MatchesItem(TypedDict):")


def test_describe_unknown_name_suggests():
    sdk = generate([GREP, READ])
    with pytest.raises(KeyError, match="unknown tool 'gerp'; did you mean 'grep'\\?"):
        sdk.describe("gerp")


def test_corpus_text_executes_and_is_order_free():
    corpus = load_corpus()
    assert len(corpus) >= 30
    sdk = generate(corpus, budget=None)
    module = load_module(code_of(sdk))
    assert all(hasattr(module.Tools, m) for m in sdk.names())
    shuffled = corpus[:]
    random.Random(4).shuffle(shuffled)
    assert generate(shuffled, budget=None).text == sdk.text
    for name in sdk.names():
        ast.parse(sdk.describe(name))


def test_corpus_is_mostly_exact():
    sdk = generate(load_corpus(), budget=None)
    assert len(sdk.exact_tools) >= len(sdk.method_names) * 3 // 4


def test_compact_index_over_budget():
    corpus = load_corpus()
    full = generate(corpus, budget=None)
    small = generate(corpus, budget=len(full.text) - 1)
    assert small.compact and not full.compact
    assert len(small.text) < len(full.text) / 2
    assert "- read_file: Read the complete contents of a file as text." in small.text
    assert 'tools.describe("name")' in small.text
    assert small.describe("read_file") == full.describe("read_file")
    assert DEFAULT_BUDGET > len(full.text) // 2


def test_tool_notes_join_the_instructions_once_while_their_tool_is_there():
    from dataclasses import replace

    plain = generate([GREP])
    noted = replace(GREP, note="Grep takes Python regular expressions.")
    other = ToolSpec("find", "Find files.", {"type": "object", "properties": {}}, note=" Grep takes Python regular expressions. ")
    sdk = generate([noted, other])
    preamble = sdk.text.split("```")[0]
    assert preamble.count("Grep takes Python regular expressions.") == 1
    assert preamble.rstrip().endswith("Grep takes Python regular expressions.")
    assert sdk.notes == ("Grep takes Python regular expressions.",)
    assert sdk.sdk_hash != generate([GREP, replace(other, note="")]).sdk_hash
    assert generate([GREP]).text == plain.text and plain.notes == ()  # no note, no change
    compact = generate([noted, other], budget=0)
    assert compact.compact and "Grep takes Python regular expressions." in compact.text.split("- find")[0]


def test_namespace_and_options_are_validated():
    with pytest.raises(ValueError, match="namespace"):
        generate([], namespace="not valid")
    with pytest.raises(ValueError, match="duplicate tool names: 'grep'"):
        generate([GREP, GREP])
    with pytest.raises(ValueError, match="allowed_imports"):
        generate([], allowed_imports=["os; rm"])
    with pytest.raises(TypeError, match="ToolSpec"):
        generate([{"name": "x"}])  # type: ignore[list-item]


def _code(params, output=None) -> tuple[SDK, str]:
    sdk = generate([ToolSpec("t", "d", params, output)], budget=None)
    source = code_of(sdk)
    load_module(source)
    return sdk, source


def _deep(n: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(n):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


@pytest.mark.parametrize(
    "params",
    [
        True,
        False,
        None,
        42,
        "object",
        [],
        {"type": "object", "properties": {"x": False, "y": True, "z": {}}},
        {"type": "object", "properties": {"x": {"type": "wat"}, "y": {"type": ["string", 3]}}},
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}, "y": {"$ref": "http://e/x"}}},
        {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
        {"$defs": {"A": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "array", "items": {"$ref": "#/$defs/A"}}]}},
         "type": "object", "properties": {"x": {"$ref": "#/$defs/A"}}},
        {"type": "object", "properties": {"x": {"enum": list(range(5000))}}},
        {"type": "object", "properties": {"x": {"enum": [1.5, [1], {"a": 1}, None]}}},
        {"type": "object", "properties": {"x": _deep(200)}},
        {"type": "object", "properties": {"\x00\ud800\u2028": {"type": "string", "description": '"""\\\x00'}}},
        {"type": "object", "properties": {"x": {"type": "string", "description": 'ends with "'}}},
        {"type": "object", "properties": {"x": {"type": "integer", "default": float("nan")}}},
        {"type": "object", "properties": {"self": {"type": "string"}, "kwargs": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "string"}},
        {"type": "object", "properties": {str(i): {"type": "string"} for i in range(300)}},
        {"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}}},
        {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"properties": {"b": {"type": "integer"}}}]},
    ],
)  # fmt: skip
def test_hostile_schemas_degrade_and_never_raise(params):
    _code(params, params)


def test_python_level_cycles_degrade():
    schema: dict = {"type": "object", "properties": {}}
    schema["properties"]["self_loop"] = schema
    _code(schema)


def test_recursive_refs_become_named_classes():
    params = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "required": ["value"],
            }
        },
    }  # fmt: skip
    sdk, source = _code(params)
    assert "class Node(TypedDict):\n    value: int\n    children: NotRequired['list[Node]']" in source
    assert "t" in sdk.exact_tools
