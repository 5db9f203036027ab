"""Runtime guards, tested apart from the policy and the backends."""

from __future__ import annotations

import collections
import datetime
import json

import pytest

from sandbox.guards import (
    RunGuards,
    SafeType,
    guarded_getattr,
    guarded_hasattr,
    safe_format,
    safe_format_map,
)
from sandbox.shims import ModuleShim


def test_getattr_refuses_private_and_frame_names() -> None:
    for name in ("__class__", "_x", "gi_frame", "f_globals", "tb_frame", "cr_await"):
        with pytest.raises(AttributeError):
            guarded_getattr(1, name)
        assert guarded_hasattr(1, name) is False
    assert guarded_getattr(1, "real") == 1
    assert guarded_getattr(1, "nope", "default") == "default"
    assert guarded_getattr(int, "__name__") == "int"


def test_getattr_swaps_in_a_safe_format() -> None:
    bound = guarded_getattr("{0}-{0}", "format")
    assert bound(1) == "1-1"
    assert guarded_getattr(str, "format")("{}", 2) == "2"
    with pytest.raises(AttributeError, match="__class__"):
        guarded_getattr("{0.__class__}", "format")(1)


def test_safe_format_blocks_traversal_but_allows_items_and_specs() -> None:
    with pytest.raises(AttributeError, match='attribute "__init__" is not accessible'):
        safe_format("{0.__init__.__globals__}", object())
    assert safe_format("{0[a]:>4}|{0[b]!r}", {"a": 1, "b": "x"}) == "   1|'x'"
    assert safe_format_map("{k.real}", {"k": 3}) == "3"


def test_write_guard() -> None:
    guards = RunGuards()
    owned = guards.class_factory("Mine", (), {})
    assert guards.write(owned) is owned
    assert guards.write(owned()) is not None
    assert guards.write({}) == {} and guards.write([]) == []
    for target, fragment in [
        (collections.Counter, "cannot modify class 'Counter'"),
        (json.dumps, "cannot modify attributes of a 'function' object"),
        (ModuleShim("json", {}), "cannot modify <module 'json' (sandbox)>"),
        (datetime.date(2020, 1, 1), "cannot modify attributes of a 'date' object"),
    ]:
        with pytest.raises(TypeError) as info:
            guards.write(target)
        assert str(info.value).startswith(fragment)
    # Immutable builtins have nothing to change: CPython refuses the write with its own error.
    for immutable in (3, "s", (1,), None, 1.5, frozenset()):
        with pytest.raises(AttributeError, match="has no attribute 'foo'"):
            guards.write(immutable).foo = 1


def test_setattr_and_delattr_check_names_and_targets() -> None:
    guards = RunGuards()
    cls = guards.class_factory("C", (), {})
    obj = cls()
    guards.setattr(obj, "x", 1)
    assert obj.x == 1
    guards.delattr(obj, "x")
    with pytest.raises(AttributeError):
        guards.setattr(obj, "__name__", "y")  # readable, but never writable
    with pytest.raises(TypeError):
        guards.setattr(collections.Counter, "most_common", None)
    assert collections.Counter.most_common.__name__ == "most_common"


def test_class_factory_refuses_metaclasses_and_finds_the_right_one() -> None:
    import enum

    guards = RunGuards()
    with pytest.raises(TypeError, match="defining metaclasses is not allowed"):
        guards.class_factory("Meta", (type,), {})
    with pytest.raises(TypeError, match="class bases must be classes"):
        guards.class_factory("X", (1,), {})
    ns = guards.class_factory.__prepare__("Color", (enum.Enum,))
    ns["RED"] = 1
    color = guards.class_factory("Color", (enum.Enum,), ns)
    assert color.RED.value == 1


def test_safe_type() -> None:
    assert SafeType(1) is int
    assert isinstance(int, SafeType) and not isinstance(1, SafeType)
    # The base has no class factory: only a run's own `type` builds classes.
    with pytest.raises(TypeError, match="type\\(\\) with three arguments is not available here"):
        SafeType("X", (), {})
    guards = RunGuards()
    made = guards.safe_type("X", (), {"a": 1})
    assert made.a == 1 and guards.owns_class(made) and made.__module__ == "__snippet__"
    assert guards.safe_type(int) is guards.safe_type and SafeType in guards.safe_type.__mro__
    with pytest.raises(TypeError, match="type\\(\\) takes 1 or 3 arguments"):
        guards.safe_type("X", ())
