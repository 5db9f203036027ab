"""`try`/`except*` and exception groups, as Python runs them: each handler gets the matching
subgroup, what no handler matches is raised again, and a run that ends with a group lists its
members in the error."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_helpers import run

CASES = {
    "split": ("""
out = []
try:
    raise ExceptionGroup("batch", [ValueError(1), KeyError("k"), ValueError(2)])
except* ValueError as e:
    out.append(["value", [x.args[0] for x in e.exceptions], e.message])
except* KeyError as e:
    out.append(["key", [x.args[0] for x in e.exceptions]])
return out
""", [["value", [1, 2], "batch"], ["key", ["k"]]]),
    "tuple-of-types": ("""
try:
    raise ExceptionGroup("g", [ValueError(1), TypeError(2)])
except* (ValueError, TypeError) as e:
    n = len(e.exceptions)
return n
""", 2),
    "naked-exception-is-wrapped": ("""
seen = []
try:
    raise ValueError("alone")
except* ValueError as e:
    seen.append([type(e).__name__, repr(e.exceptions[0])])
return seen
""", [["ExceptionGroup", "ValueError('alone')"]]),
    "else-finally": ("""
out = []
try:
    out.append("body")
except* ValueError:
    out.append("handler")
else:
    out.append("else")
finally:
    out.append("finally")
return out
""", ["body", "else", "finally"]),
    "nested-groups": ("""
try:
    raise ExceptionGroup("outer", [ExceptionGroup("inner", [ValueError(1)]), KeyError(2)])
except* ValueError as e:
    v = [type(x).__name__ for x in e.exceptions]
except* KeyError as e:
    k = len(e.exceptions)
return [v, k]
""", [["ExceptionGroup"], 1]),
    "subgroup-split-methods": ("""
g = ExceptionGroup("g", [ValueError(1), KeyError(2)])
match, rest = g.split(ValueError)
return [len(match.exceptions), len(rest.exceptions), len(g.subgroup(KeyError).exceptions)]
""", [1, 1, 1]),
    "own-group-derive": ("""
class Batch(ExceptionGroup):
    def derive(self, excs):
        return Batch(self.message + "!", excs)
try:
    raise Batch("b", [ValueError(1), KeyError(2)])
except* ValueError as e:
    first = [type(e).__name__, e.message]
except* KeyError as e:
    second = [type(e).__name__, e.message]
return [first, second]
""", [["Batch", "b!"], ["Batch", "b!!"]]),
    "taskgroup-failures": ("""
import asyncio
async def bad(n):
    raise ValueError(n)
caught = []
try:
    async with asyncio.TaskGroup() as tg:
        tg.create_task(bad(1))
        tg.create_task(tools.echo(x=1))
except* ValueError as eg:
    caught = [repr(e) for e in eg.exceptions]
return caught
""", ["ValueError(1)"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_except_star(name: str, backend: str) -> None:
    code, value = CASES[name]
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == value


def test_an_except_star_that_matches_nothing_raises_the_rest_again(backend: str) -> None:
    code = """
try:
    raise ExceptionGroup("batch", [ValueError(1), KeyError("missing")])
except* ValueError:
    print("handled the ValueError")
"""
    result = run(code, backend)
    assert result.logs == ["handled the ValueError"]
    assert result.error is not None and result.error.kind == "exception"
    lines = result.error.message.splitlines()
    assert lines[:2] == ["ExceptionGroup: batch (1 sub-exception)", "  [1] KeyError: 'missing'"]
    assert "    raise ExceptionGroup(\"batch\", [ValueError(1), KeyError(\"missing\")])" in lines


def test_an_except_star_that_matches_nothing_at_all_lets_the_group_through(backend: str) -> None:
    code = "try:\n    raise ExceptionGroup('g', [OSError('disk')])\nexcept* ValueError:\n    pass"
    result = run(code, backend)
    assert result.error is not None
    assert result.error.message.splitlines()[:2] == ["ExceptionGroup: g (1 sub-exception)", "  [1] OSError: disk"]


def test_a_large_group_lists_its_first_members_and_counts_the_rest(backend: str) -> None:
    result = run("raise ExceptionGroup('many', [ValueError(i) for i in range(8)])", backend)
    assert result.error is not None
    assert result.error.message.splitlines()[:7] == [
        "ExceptionGroup: many (8 sub-exceptions)",
        "  [1] ValueError: 0", "  [2] ValueError: 1", "  [3] ValueError: 2", "  [4] ValueError: 3",
        "  [5] ValueError: 4", "  [and 3 more]",
    ]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param("try:\n    raise ValueError(1)\nexcept* ExceptionGroup:\n    pass", "TypeError: catching ExceptionGroup with except* is not allowed. Use except instead.",
                     id="catch-group-type"),
        pytest.param("try:\n    raise ValueError(1)\nexcept* 5:\n    pass", "TypeError: catching classes that do not inherit from BaseException is not allowed",
                     id="not-an-exception-type"),
    ],
)
def test_except_star_mistakes_are_python_errors(code: str, message: str, backend: str) -> None:
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.splitlines()[0] == message


def test_return_inside_except_star_is_refused_as_python_refuses_it() -> None:
    result = run("try:\n    pass\nexcept* ValueError:\n    return 1")
    assert result.error is not None and result.error.kind == "syntax"
    assert "'break', 'continue' and 'return' cannot appear in an except* block" in result.error.message


def test_a_group_member_with_a_lying_message_cannot_break_the_report(backend: str) -> None:
    code = """
class Loud(Exception):
    def __str__(self):
        raise RuntimeError("no")
raise ExceptionGroup("g", [Loud()])
"""
    result: Any = run(code, backend)
    assert result.error.message.splitlines()[:2] == [
        "ExceptionGroup: g (1 sub-exception)", "  [1] Loud: <exception message could not be shown>"]
