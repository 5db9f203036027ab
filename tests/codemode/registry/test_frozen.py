"""freeze/thaw: one immutable copy that JSON tools still accept."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from codemode import FrozenDict, FrozenList, NotJSONError, freeze, thaw


def test_freeze_copies_deeply_and_blocks_mutation() -> None:
    raw = {"a": [1, {"b": "c"}], "d": None}
    frozen = freeze(raw)
    raw["a"][1]["b"] = "changed"
    assert frozen == {"a": (1, {"b": "c"}), "d": None}
    assert isinstance(frozen, dict) and isinstance(frozen["a"], FrozenList)
    for mutate in (
        lambda: frozen.__setitem__("x", 1),
        lambda: frozen.pop("a"),
        lambda: frozen.update(x=1),
        lambda: frozen["a"][1].clear(),
    ):
        with pytest.raises(TypeError, match="immutable"):
            mutate()


def test_frozen_values_stay_json_and_copyable() -> None:
    frozen = freeze({"a": [1, 2.5, True], "b": {"c": "d"}})
    assert json.loads(json.dumps(frozen)) == thaw(frozen)
    assert copy.deepcopy(frozen) is frozen
    assert pickle.loads(pickle.dumps(frozen)) == frozen
    assert freeze(frozen) is frozen


def test_thaw_gives_plain_mutable_values() -> None:
    plain = thaw(freeze({"a": [1, {"b": []}]}))
    assert type(plain) is dict and type(plain["a"]) is list and type(plain["a"][1]) is dict
    plain["a"].append(2)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({1: "a"}, "non-string key at $[1] is not JSON"),
        ({"a": {1, 2}}, "set at $.a is not JSON"),
        ([b"x"], "bytes at $[0] is not JSON"),
        ({"a": [float("nan")]}, "float nan at $.a[0] is not JSON"),
        (object(), "object at $ is not JSON"),
    ],
)
def test_non_json_is_refused_with_its_path(value: object, message: str) -> None:
    with pytest.raises(NotJSONError) as info:
        freeze(value)
    assert str(info.value) == message


def test_frozen_dict_is_hashable() -> None:
    assert hash(freeze({"a": 1})) == hash(FrozenDict(a=1))
