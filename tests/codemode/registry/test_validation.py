"""Schema checks: every violation kind with its path, and the fast path never says yes wrongly."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from codemode.registry.frozen import freeze
from codemode.registry.validation import compile_validator

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 0},
        "mode": {"enum": ["r", "w"]},
        "tags": {"type": "array", "items": {"type": "string"}},
        "opts": {
            "type": "object",
            "properties": {"deep": {"type": "boolean"}},
            "required": ["deep"],
            "additionalProperties": False,
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


def messages(value: Any) -> list[str]:
    return [str(v) for v in compile_validator(SCHEMA).violations(freeze(value))]


def test_valid_value_has_no_violations() -> None:
    assert compile_validator(SCHEMA).compiled
    assert messages({"path": "/a", "limit": 0, "mode": "r", "tags": ["x"], "opts": {"deep": True}}) == []


def test_every_violation_kind_is_listed_with_its_path() -> None:
    assert messages(
        {"limit": -1, "mode": "x", "tags": ["a", 2], "opts": {"extra": 1}, "zz": None}
    ) == [
        "$: 'path' is a required property",
        "$: Additional properties are not allowed ('zz' was unexpected)",
        "$.limit: -1 is less than the minimum of 0",
        "$.mode: 'x' is not one of ['r', 'w']",
        "$.opts: 'deep' is a required property",
        "$.opts: Additional properties are not allowed ('extra' was unexpected)",
        "$.tags[1]: 2 is not of type 'string'",
    ]


def test_wrong_types() -> None:
    assert messages({"path": 3, "limit": "ten", "tags": "a", "opts": []}) == [
        "$.limit: 'ten' is not of type 'integer'",
        "$.opts: [] is not of type 'object'",
        "$.path: 3 is not of type 'string'",
        "$.tags: 'a' is not of type 'array'",
    ]


def test_integral_floats_are_integers_and_bools_are_not() -> None:
    v = compile_validator({"type": "integer"})
    assert v.violations(3.0) == []
    assert [str(x) for x in v.violations(True)] == ["$: True is not of type 'integer'"]


def test_long_messages_are_shortened() -> None:
    (violation,) = compile_validator({"type": "integer"}).violations("x" * 1000)
    assert len(violation.message) == 200 and violation.message.endswith("…")


# --- the fast path is sound: when it says valid, jsonschema agrees ---------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(-3, 3, allow_nan=False), st.sampled_from(["", "a", "bb"])
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3)),
    max_leaves=8,
)
types = st.sampled_from(["string", "integer", "number", "boolean", "null", "object", "array"])


def schemas() -> st.SearchStrategy[Any]:
    leaf = st.one_of(
        st.builds(lambda t: {"type": t}, types),
        st.builds(lambda ts: {"type": ts}, st.lists(types, min_size=1, max_size=3, unique=True)),
        st.builds(lambda e: {"enum": e}, st.lists(scalars, min_size=1, max_size=3)),
        st.builds(lambda c: {"const": c}, scalars),
        st.builds(lambda n: {"minimum": n, "maxLength": 1, "maxItems": 1}, st.integers(-2, 2)),
        st.builds(lambda n: {"exclusiveMaximum": n, "minLength": 1, "minItems": 1}, st.integers(-2, 2)),
        st.builds(lambda u: {"uniqueItems": u}, st.booleans()),
        st.just({}),
    )

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.builds(
                lambda props, req, extra: {
                    "type": "object",
                    "properties": props,
                    "required": req,
                    "additionalProperties": extra,
                },
                st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2),
                st.lists(st.sampled_from(["a", "b", "c"]), unique=True, max_size=2),
                st.one_of(st.booleans(), inner),
            ),
            st.builds(lambda items: {"type": "array", "items": items}, inner),
            st.builds(lambda subs: {"anyOf": subs}, st.lists(inner, min_size=1, max_size=2)),
            st.builds(lambda req: {"required": req}, st.lists(st.sampled_from(["a", "b"]), max_size=2)),
            st.builds(lambda extra: {"additionalProperties": extra}, st.one_of(st.booleans(), inner)),
        )

    return st.recursive(leaf, extend, max_leaves=6)


@settings(max_examples=400, deadline=None)
@given(schemas(), values)
def test_fast_path_never_accepts_what_jsonschema_rejects(schema: Any, value: Any) -> None:
    validator = compile_validator(schema)
    assert validator.compiled
    fast_ok = validator._fast(value)  # type: ignore[misc]
    if fast_ok:
        assert Draft202012Validator(schema).is_valid(value), (schema, value)
    assert (validator.violations(freeze(value)) == []) == Draft202012Validator(schema).is_valid(value)


# --- bounded work: the model controls every argument --------------------------------------------

@settings(max_examples=300, deadline=None)
@given(st.lists(values, max_size=6))
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    schema = {"type": "array", "uniqueItems": True}
    assert (compile_validator(schema).violations(freeze(items)) == []) == Draft202012Validator(schema).is_valid(items)


def test_unique_items_never_compares_every_pair(monkeypatch: Any) -> None:
    # jsonschema's own check compares every pair when the items do not sort (20,000 strings
    # and one 0 took 21 s of host CPU on the event loop); ours keys each item once.
    import jsonschema._utils

    def compared(*args: Any) -> bool:
        raise AssertionError("items were compared pairwise")

    monkeypatch.setattr(jsonschema._utils, "equal", compared)
    validator = compile_validator({"type": "array", "items": {"type": ["string", "integer"]}, "uniqueItems": True})
    items = [0] + [f"l{i}" for i in range(2000)]
    assert validator.violations(freeze(items)) == []
    assert [v.message.endswith("has non-unique elements") for v in validator.violations(freeze([*items, "l5"]))] == [True]


def test_violations_are_listed_up_to_a_bound() -> None:
    from codemode.registry.validation import MAX_VIOLATIONS, MORE_VIOLATIONS

    found = compile_validator(SCHEMA).violations(freeze({"path": "p", "tags": [0] * 100_000}))
    assert len(found) == MAX_VIOLATIONS + 1
    assert all(v.message == "0 is not of type 'string'" for v in found[:-1])
    assert (found[-1].path, found[-1].message) == ("$", MORE_VIOLATIONS)


def test_a_failing_any_of_builds_no_error_per_item(monkeypatch: Any) -> None:
    # jsonschema's `anyOf` keeps every error of every branch: an optional array of half a
    # million wrong items built 1.5 GB of error objects before the violations were cut.
    import jsonschema.exceptions

    made = [0]
    init = jsonschema.exceptions.ValidationError.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        made[0] += 1
        init(self, *args, **kwargs)

    monkeypatch.setattr(jsonschema.exceptions.ValidationError, "__init__", counted)
    schema = {"type": "object", "properties": {"tags": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                                                                  {"type": "null"}]}}}
    found = compile_validator(schema).violations(freeze({"tags": [0] * 10_000}))
    assert [v.path for v in found] == ["$.tags"] and found[0].message.endswith("is not valid under any of the given schemas")
    assert made[0] < 10
    one_of = compile_validator({"oneOf": [{"type": "integer"}, {"type": "number"}]})
    assert [v.message for v in one_of.violations(3)] == ["3 is valid under more than one of the given schemas"]
    assert one_of.violations(3.5) == []
