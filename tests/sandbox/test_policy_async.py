"""Policy: async syntax is allowed with the same checks as its synchronous twin."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

from sandbox.limits import Limits
from sandbox.policy import PolicyError, compile_snippet


@pytest.mark.parametrize(
    "code",
    [
        "x = await tools.echo(x=1)\nreturn x",
        "async def f(n):\n    return await tools.echo(x=n)\nreturn await f(2)",
        "async def gen():\n    for i in range(3):\n        yield i\nout = []\nasync for v in gen():\n    out.append(v)\nreturn out",
        "class CM:\n    async def __aenter__(self):\n        return 1\n",
        "class CM:\n    async def __reduce_ex__(self, p):\n        return 1\n",
    ],
    ids=["top-level-await", "async-def", "async-for", "async-dunder", "async-pickling-dunder-refused"],
)
def test_async_constructs(code: str) -> None:
    if "__reduce_ex__" in code:
        with pytest.raises(PolicyError, match='name "__reduce_ex__" is not allowed'):
            compile_snippet(code, Limits())
    else:
        compile_snippet(code, Limits())


def test_async_def_names_are_checked() -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet("async def _hidden_():\n    pass", Limits())
    assert str(info.value) == 'line 1: name "_hidden_" is not allowed: names that start and end with "_" are reserved'


def test_async_with_runs() -> None:
    code = (
        "class Box:\n"
        "    def __enter__(self):\n        return 5\n"
        "    def __exit__(self, *a):\n        return False\n"
        "with Box() as b:\n    v = b\nreturn v"
    )
    assert run(code).value == 5


def test_top_level_return_and_no_return() -> None:
    assert run("return 7").value == 7
    result = run("x = 1")
    assert result.ok and result.value is None


def test_yield_at_top_level_is_refused() -> None:
    with pytest.raises(PolicyError, match="line 1: yield is only allowed inside a def"):
        compile_snippet("yield 1", Limits())
