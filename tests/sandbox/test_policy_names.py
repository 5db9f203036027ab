"""Policy: names, imports and builtins refused at compile time."""

from __future__ import annotations

import pytest

from sandbox.limits import Limits
from sandbox.policy import PolicyError, compile_snippet


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("_x_ = 1", 'line 1: name "_x_" is not allowed: names that start and end with "_" are reserved'),
        ("__builtins__", 'line 1: name "__builtins__" is not allowed: names that start and end with "_" are reserved'),
        ("eval('1')", "line 1: eval() is not available"),
        ("exec('1')", "line 1: exec() is not available"),
        ("compile('1', 'f', 'exec')", "line 1: compile() is not available"),
        ("from os import *", "line 1: 'from ... import *' is not supported"),
        ("import _os", 'line 1: module "_os" is not allowed: names starting with "_" are private'),
        ("class A(metaclass=M):\n    pass", "line 1: metaclass= is not allowed in a class definition"),
        ("def printed():\n    pass", 'line 1: name "printed" is reserved'),
    ],
    ids=["private", "builtins", "eval", "exec", "compile", "star-import", "import-as-private",
         "metaclass", "reserved"],
)
def test_refused(code: str, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet(code, Limits())
    assert str(info.value) == message


def test_the_snippets_own_private_names_compile() -> None:
    compile_snippet("_x = 1\ndef _f(_a, *_r, **_k):\n    return _a\nclass _C:\n    pass\nimport json as _j", Limits())


def test_syntax_error_points_at_the_line() -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet("x = 1\nif x\n    pass", Limits())
    text = str(info.value)
    assert text.startswith("line 2: invalid syntax")
    assert "if x" in text


def test_nonlocal_and_global_work() -> None:
    compile_snippet(
        "def outer():\n    n = 0\n    def inner():\n        nonlocal n\n        n += 1\n    inner()\n    return n",
        Limits(),
    )


def test_source_size_and_tree_limits_are_checked_before_compiling() -> None:
    with pytest.raises(PolicyError, match="the snippet is 19 bytes; the limit is 10 bytes"):
        compile_snippet("x = 123456789012345", Limits(max_source=10))
    with pytest.raises(PolicyError, match="more than 50 syntax nodes"):
        compile_snippet("x = [" + ", ".join(["1"] * 60) + "]", Limits(max_ast_nodes=50))
    with pytest.raises(PolicyError, match="nests deeper than 10 levels"):
        compile_snippet("x = " + "[" * 12 + "]" * 12, Limits(max_ast_depth=10))
