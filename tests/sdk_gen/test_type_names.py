"""SDK class names: shared result structures get one neutral name, union members are named by
what tells them apart, and no class name carries a numbered suffix."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from sdkgen_helpers import code_of, load_module

from sdk_gen import ToolSpec, generate

REFERENCE = Path(__file__).parents[1] / "codemode" / "fixtures" / "reference_servers.json"
_CLASS = re.compile(r"^(?:class (\w+)\(|(\w+) = TypedDict\()", re.M)
_RETURNS = re.compile(r"async def (\w+)\(.*\) -> (.+?):(?: \.\.\.)?$", re.M)


def _reference_specs() -> list[ToolSpec]:
    data = json.loads(REFERENCE.read_text(encoding="utf-8"))
    return [
        ToolSpec(f"{server}__{t['name']}", t.get("description", ""), t["inputSchema"], t.get("outputSchema"))
        for server, tools in data["servers"].items()
        for t in tools
    ]


def _classes(text: str) -> list[str]:
    return [a or b for a, b in _CLASS.findall(text)]


def _returns(text: str) -> dict[str, str]:
    return dict(_RETURNS.findall(text))


def test_the_reference_servers_sdk_has_no_numbered_or_misleading_names() -> None:
    sdk = generate(_reference_specs())
    classes = _classes(sdk.text)
    assert classes and not [c for c in classes if c[-1].isdigit()]
    returns = _returns(sdk.text)
    # The 13 filesystem tools that answer {"content": str} share one class named for that.
    shared = [m for m, r in returns.items() if r == "ContentResult"]
    assert len(shared) == 13 and all(m.startswith("fs__") for m in shared)
    assert not any(r.startswith("FsCreateDirectory") for m, r in returns.items() if m != "fs__create_directory")
    # read_graph, open_nodes and search_nodes return the graph: no tool's own name on it.
    assert returns["memory__read_graph"] == returns["memory__open_nodes"] == "EntitiesRelationsResult"
    assert "ContentItem2" not in sdk.text
    assert "content: list[ImageOrAudioContentItem | ResourceContentItem]" in sdk.text
    load_module(code_of(sdk))  # still valid Python


def test_the_reference_sdk_is_byte_stable_in_any_order() -> None:
    specs = _reference_specs()
    first = generate(specs).text
    shuffled = list(specs)
    random.Random(7).shuffle(shuffled)
    from sdk_gen.sdk import clear_cache

    clear_cache()
    assert generate(shuffled).text == first


def _obj(**props: object) -> dict[str, object]:
    return {"type": "object", "properties": props, "required": sorted(props)}


def test_a_structure_of_one_tool_keeps_the_tools_name() -> None:
    sdk = generate([ToolSpec("a__one", "", _obj(), _obj(content={"type": "string"}))])
    assert _returns(sdk.text) == {"a__one": "AOneResult"}


def test_a_shared_structure_is_named_by_the_server_when_its_fields_cannot_name_it() -> None:
    wide = _obj(a={"type": "string"}, b={"type": "string"}, c={"type": "integer"})
    other = _obj(x={"type": "string"})
    sdk = generate([ToolSpec("srv__get", "", _obj(), wide), ToolSpec("srv__put", "", _obj(), wide),
                    ToolSpec("srv__other", "", _obj(), other)])
    returns = _returns(sdk.text)
    assert returns == {"srv__get": "SrvResult", "srv__other": "SrvOtherResult", "srv__put": "SrvResult"}


def test_tools_of_different_servers_with_no_name_for_the_structure_keep_their_own() -> None:
    wide = _obj(a={"type": "string"}, b={"type": "string"}, c={"type": "integer"})
    sdk = generate([ToolSpec("one__get", "", _obj(), wide), ToolSpec("two__get", "", _obj(), wide)])
    assert _returns(sdk.text) == {"one__get": "OneGetResult", "two__get": "TwoGetResult"}


def test_a_titled_structure_keeps_its_title() -> None:
    titled = dict(_obj(when={"type": "string"}), title="Moment")
    sdk = generate([ToolSpec("t__a", "", _obj(), titled), ToolSpec("t__b", "", _obj(), titled)])
    assert _returns(sdk.text) == {"t__a": "Moment", "t__b": "Moment"}


def test_union_members_are_named_by_a_discriminator_or_their_own_field() -> None:
    tagged = {"type": "array", "items": {"anyOf": [
        _obj(type={"const": "text"}, text={"type": "string"}),
        _obj(type={"enum": ["image", "audio"]}, data={"type": "string"}),
    ]}}
    untagged = {"oneOf": [_obj(uri={"type": "string"}), _obj(path={"type": "string"}, size={"type": "integer"})]}
    out = _obj(blocks=tagged, where=untagged)
    text = generate([ToolSpec("read", "", _obj(), out)]).text
    assert "blocks: list[TextBlocksItem | ImageOrAudioBlocksItem]" in text
    assert "where: WhereWithUri | WhereWithPath" in text
    assert not [c for c in _classes(text) if c[-1].isdigit()]


def test_colliding_hints_are_qualified_not_numbered() -> None:
    # Two different `item` structures inside one tool, and tuples of objects.
    out = _obj(
        left=_obj(item=_obj(a={"type": "string"})),
        right=_obj(item=_obj(b={"type": "integer"})),
        pair={"type": "array", "prefixItems": [_obj(x={"type": "string"}), _obj(y={"type": "string"})],
              "items": False, "minItems": 2},
    )
    sdk = generate([ToolSpec("pick", "", _obj(), out)])
    text = sdk.text
    classes = _classes(text)
    assert "Item" in classes and "RightItem" in classes
    assert "pair: tuple[PairFirstItem, PairSecondItem]" in text
    assert not [c for c in classes if c[-1].isdigit()]
    load_module(code_of(sdk))
