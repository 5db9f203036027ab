"""Hypothesis properties 1-7 of issue 4, over generated JSON Schemas and instances.

The schema strategy is our own (recursive, with a recursive `$ref`, unions, enums, consts,
tuples, maps, odd names and constraints); `instances` draws values valid under such a schema,
and every drawn value is confirmed with `jsonschema` before it is used.
"""

from __future__ import annotations

import ast
import inspect
import json
import keyword
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError
from sdkgen_helpers import code_of, load_module

from sdk_gen import ToolSpec, check, clear_cache, generate, map_names
from sdk_gen.schema import py_literal

NAMES = st.sampled_from(
    ["a", "b", "name", "path", "2fa", "class", "self", "x-y", "ünï", "__p", "kwargs", "None", "a b", "Any"]
) | st.text(min_size=1, max_size=4)
NODE = {
    "type": "object",
    "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/Node"}},
    "required": ["v"],
    "additionalProperties": False,
}
SCALARS = st.one_of(st.text(max_size=4), st.integers(-50, 50), st.booleans(), st.none())

LEAVES = st.one_of(
    st.sampled_from(
        [
            {"type": "string"},
            {"type": "integer"},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "null"},
            {"type": "string", "minLength": 1, "maxLength": 9, "description": "Some text."},
            {"type": "integer", "minimum": 0, "maximum": 99},
            {"type": ["string", "null"]},
            {"$ref": "#/$defs/Node"},
        ]
    ),
    st.lists(SCALARS, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)).map(lambda v: {"enum": v}),
    SCALARS.map(lambda v: {"const": v}),
)


def _objects(children):
    def build(props: dict, data) -> dict:
        required = [k for k in props if data.draw(st.booleans())]
        return {"type": "object", "properties": props, "required": required, "additionalProperties": False}

    return st.builds(
        lambda props, flags: {
            "type": "object",
            "properties": props,
            "required": [k for k, f in zip(props, flags, strict=False) if f],
            "additionalProperties": False,
        },
        st.dictionaries(NAMES, children, min_size=1, max_size=4),
        st.lists(st.booleans(), min_size=4, max_size=4),
    )


def _extend(children):
    return st.one_of(
        children.map(lambda c: {"type": "array", "items": c}),
        _objects(children),
        st.lists(children, min_size=2, max_size=3).map(lambda cs: {"anyOf": cs}),
        st.lists(children, min_size=1, max_size=3).map(
            lambda cs: {"type": "array", "prefixItems": cs, "items": False, "minItems": len(cs)}
        ),
        children.map(lambda c: {"type": "object", "additionalProperties": c}),
    )


SCHEMAS = st.recursive(LEAVES, _extend, max_leaves=8)
PARAMS = _objects(SCHEMAS).map(lambda s: {**s, "$defs": {"Node": NODE}})


def tool_specs(min_size: int = 1, max_size: int = 4):
    return st.lists(
        st.tuples(st.text(min_size=1, max_size=6), st.text(max_size=20), PARAMS, st.none() | SCHEMAS),
        min_size=min_size,
        max_size=max_size,
        unique_by=lambda t: t[0],
    ).map(lambda ts: [ToolSpec(n, d, p, o) for n, d, p, o in ts])


def instances(schema: Any, root: dict, depth: int = 0) -> st.SearchStrategy:
    """Values valid under a schema from SCHEMAS (refs resolve against `root`)."""
    if "$ref" in schema:
        nxt = instances(NODE, root, depth + 1) if depth < 3 else st.nothing()
        return st.fixed_dictionaries({"v": st.integers(-9, 9)}, optional={"next": nxt})
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([instances(s, root, depth + 1) for s in schema["anyOf"]])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([instances({**schema, "type": k}, root, depth) for k in kind])
    if kind == "string":
        return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength", 6))
    if kind == "integer":
        return st.integers(schema.get("minimum", -(10**6)), schema.get("maximum", 10**6))
    if kind == "number":
        return st.integers(-5, 5) | st.floats(-1e6, 1e6, allow_nan=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if "prefixItems" in schema:
            return st.tuples(*[instances(s, root, depth + 1) for s in schema["prefixItems"]]).map(list)
        return st.lists(instances(schema["items"], root, depth + 1), max_size=2)
    if "properties" in schema:
        props = schema["properties"]
        req = {k: instances(props[k], root, depth + 1) for k in schema["required"]}
        opt = {k: instances(v, root, depth + 1) for k, v in props.items() if k not in req}
        return st.fixed_dictionaries(req, optional=opt)
    return st.dictionaries(st.text(max_size=3), instances(schema["additionalProperties"], root, depth + 1), max_size=2)


def _valid(schema: dict, value: Any) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def _bind_and_validate(module, sdk, spec: ToolSpec, instance: dict) -> None:
    """Raise (TypeError or ValidationError) unless the generated method accepts `instance`."""
    method = getattr(module.Tools, sdk.wire_names[spec.name])
    sig = inspect.signature(method)
    params = list(sig.parameters.values())[1:]
    if params and params[0].kind is inspect.Parameter.POSITIONAL_ONLY:
        sig.bind(None, instance)
        TypeAdapter(params[0].annotation).validate_json(json.dumps(instance), strict=True)
        return
    bound = sig.bind(None, **instance)
    for name, value in list(bound.arguments.items())[1:]:
        TypeAdapter(sig.parameters[name].annotation).validate_json(json.dumps(value), strict=True)


# 1 -----------------------------------------------------------------------------------------------
@given(tool_specs())
def test_text_parses_and_executes(specs):
    sdk = generate(specs, budget=None)
    module = load_module(code_of(sdk))
    for method in sdk.names():
        assert inspect.iscoroutinefunction(getattr(module.Tools, method))
        ast.parse(sdk.describe(method))


# 2 -----------------------------------------------------------------------------------------------
@given(tool_specs(2, 5), st.randoms())
def test_order_does_not_matter(specs, rnd):
    shuffled = specs[:]
    rnd.shuffle(shuffled)
    assert generate(shuffled, budget=None).text == generate(specs, budget=None).text


# 3 -----------------------------------------------------------------------------------------------
@given(st.lists(st.text(max_size=8), max_size=30), st.randoms())
def test_names_are_injective_and_reversible(names, rnd):
    mapping = map_names(names)
    assert set(mapping) == set(names)
    assert len(set(mapping.values())) == len(mapping)
    for method in mapping.values():
        assert method.isascii() and method.isidentifier() and not keyword.iskeyword(method)
        assert method not in {"describe", "list"} and not method.startswith("__")
    reverse = {m: w for w, m in mapping.items()}
    assert all(reverse[mapping[w]] == w for w in names)
    shuffled = names[:]
    rnd.shuffle(shuffled)
    assert map_names(shuffled) == mapping


# 4 -----------------------------------------------------------------------------------------------
@given(PARAMS, st.data())
def test_valid_instances_are_accepted(params, data):
    spec = ToolSpec("t", "", params)
    sdk = generate([spec], budget=None)
    module = load_module(code_of(sdk), for_pydantic=True)
    instance = data.draw(instances(params, params))
    assume(_valid(params, instance))
    _bind_and_validate(module, sdk, spec, instance)


# 5 -----------------------------------------------------------------------------------------------
_WRONG = ["s", 12345, 1.5, True, None, [[1]], {"zz": [1]}]


def _kinds(schema: Any, root: dict) -> set[str]:
    """JSON types a SCHEMAS schema admits (integer enums also admit booleans: pydantic quirk)."""
    if "$ref" in schema:
        return {"object"}
    if "const" in schema or "enum" in schema:
        values = [schema["const"]] if "const" in schema else schema["enum"]
        kinds = {_kind(v) for v in values}
        return kinds | ({"boolean"} if "integer" in kinds else set())
    if "anyOf" in schema:
        return set().union(*(_kinds(s, root) for s in schema["anyOf"]))
    kind = schema["type"]
    kinds = set(kind) if isinstance(kind, list) else {kind}
    return kinds | ({"integer"} if "number" in kinds else set())


def _kind(v: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(v), "null"
    )


@given(PARAMS, st.data())
def test_broken_instances_are_rejected(params, data):
    spec = ToolSpec("t", "", params)
    sdk = generate([spec], budget=None)
    assume("Any" not in sdk.describe("t").replace("-> Any:", "") and "t" in sdk.exact_tools)
    required = params["required"]
    assume(required)
    module = load_module(code_of(sdk), for_pydantic=True)
    instance = data.draw(instances(params, params))
    assume(_valid(params, instance))
    key = data.draw(st.sampled_from(required))
    if data.draw(st.booleans()):
        broken = {k: v for k, v in instance.items() if k != key}
    else:
        allowed = _kinds(params["properties"][key], params)
        wrong = [w for w in _WRONG if _kind(w) not in allowed]
        assume(wrong)
        broken = {**instance, key: data.draw(st.sampled_from(wrong))}
    assert not _valid(params, broken)
    with pytest.raises((TypeError, ValidationError)):
        _bind_and_validate(module, sdk, spec, broken)


# 6 -----------------------------------------------------------------------------------------------
KEYWORDS = ["type", "properties", "items", "$ref", "enum", "anyOf", "oneOf", "allOf", "required", "const",
            "additionalProperties", "prefixItems", "$defs", "default", "description", "nullable"]  # fmt: skip
GARBAGE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)
    | st.sampled_from(["object", "array", "string", "#", "#/$defs/a", "#/properties"]),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.sampled_from(KEYWORDS) | st.text(max_size=3), c, max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(GARBAGE, GARBAGE, st.text(max_size=10) | st.integers())
def test_generation_is_total(params, output, description):
    sdk = generate([ToolSpec("t", description, params, output)], budget=None)  # type: ignore[arg-type]
    load_module(code_of(sdk))


def _wide(n: int) -> ToolSpec:
    props = {f"p{i}": {"type": "object", "properties": {"q": {"enum": ["a", "b"]}, "r": {"type": "array", "items": {"type": "integer"}}}}
             for i in range(n)}  # fmt: skip
    return ToolSpec(f"w{n}", "wide", {"type": "object", "properties": props})


def test_generation_of_wide_schemas_is_complete():
    """Every one of many properties reaches the SDK (how the time grows with width is measured
    in benchmarks/bench_sdk_gen.py, never asserted here)."""
    for n in (50, 400):
        clear_cache()
        text = generate([_wide(n)], budget=None).text
        assert all(f"p{i}:" in text for i in range(n)), n


# 7 -----------------------------------------------------------------------------------------------
@given(PARAMS, st.data())
def test_check_accepts_valid_calls_and_flags_unknown_names(params, data):
    spec = ToolSpec("t-1", "", params)
    sdk = generate([spec], budget=None)
    method = sdk.wire_names["t-1"]
    instance = data.draw(instances(params, params))
    assume(_valid(params, instance))
    dict_form = "{" + ", ".join(f"{k!r}: {py_literal(v)}" for k, v in instance.items()) + "}"
    snippets = [f"r = await tools.{method}({dict_form})", f"r = await tools['t-1']({dict_form})"]
    if all(k.isidentifier() and k.isascii() and not keyword.iskeyword(k) for k in instance):
        kwargs = ", ".join(f"{k}={py_literal(v)}" for k, v in instance.items())
        snippets.append(f"r = await tools.{method}({kwargs})")
        snippets.append(f"r = await asyncio.gather(tools.{method}({kwargs}))")
    for snippet in snippets:
        assert check(snippet, sdk) == [], snippet
    unknown = data.draw(st.sampled_from(["zz_unknown", method + "x"]))
    codes = [d.code for d in check(f"await tools.{unknown}({dict_form})", sdk)]
    assert codes == ["unknown-tool"]
    codes = [d.code for d in check(f"await tools.{method}({dict_form[:-1]}{', ' if instance else ''}'zz_kw': 1}})", sdk)]
    assert "unknown-argument" in codes

