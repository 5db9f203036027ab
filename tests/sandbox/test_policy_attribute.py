"""Policy: attribute access. Exact messages, with the snippet's line numbers."""

from __future__ import annotations

import pytest

from sandbox.limits import Limits
from sandbox.policy import PolicyError, compile_snippet


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("x = ().__reduce_ex__", 'line 1: attribute "__reduce_ex__" is not allowed: names starting with "_" are private'),
        ("\n\ny = f.__globals__", 'line 3: attribute "__globals__" is not allowed: names starting with "_" are private'),
        ("g = (i for i in []).gi_frame", 'line 1: attribute "gi_frame" is not allowed: it exposes interpreter internals'),
        ("c = coro.cr_frame", 'line 1: attribute "cr_frame" is not allowed: it exposes interpreter internals'),
        ("t = tb.tb_frame", 'line 1: attribute "tb_frame" is not allowed: it exposes interpreter internals'),
        ("a = ag.ag_frame", 'line 1: attribute "ag_frame" is not allowed: it exposes interpreter internals'),
        ("f = fr.f_back", 'line 1: attribute "f_back" is not allowed: it exposes interpreter internals'),
        ("obj.__dict__ = 1", 'line 1: attribute "__dict__" is not allowed: names starting with "_" are private'),
        ("obj.__init__ = 1", 'line 1: attribute "__init__" is not allowed: names starting with "_" are private'),
    ],
    ids=["dunder", "private-line-3", "gi_frame", "cr_frame", "tb_frame", "ag_frame", "f_back",
         "dict-store", "init-store"],
)
def test_refused_attributes(code: str, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet(code, Limits())
    assert str(info.value) == message


def test_every_problem_is_listed() -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet("a = x.__globals__\nb = y.gi_code\nc = _z_", Limits())
    assert [p.line for p in info.value.problems] == [1, 2, 3]


def test_private_and_introspection_reads_go_through_the_runtime_guard() -> None:
    code = compile_snippet("a = self._x\nb = x.__class__\nc = x.__eq__", Limits())
    names = code.co_consts[0].co_names
    assert "_getattr_" in names and "_x" not in names and "__class__" not in names


def test_init_read_is_allowed_for_super() -> None:
    compile_snippet(
        "class E(Exception):\n    def __init__(self, m):\n        super().__init__(m)\n", Limits()
    )


def test_plain_attributes_compile_to_native_access() -> None:
    code = compile_snippet("x = d.get('a')\ny = s.format(1)", Limits())
    names = code.co_consts[0].co_names
    assert "_getattr_" in names  # format goes through the runtime guard
    assert "get" in names  # .get is a native attribute load
