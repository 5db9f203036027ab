"""Policy: `match` works, and class patterns cannot read private attributes."""

from __future__ import annotations

import pytest
from sandbox_helpers import run

from sandbox.limits import Limits
from sandbox.policy import PolicyError, compile_snippet


def test_match_patterns() -> None:
    code = (
        "def kind(v):\n"
        "    match v:\n"
        "        case {'type': 'point', 'x': x, **rest}:\n            return ['point', x, rest]\n"
        "        case [first, *others]:\n            return ['seq', first, len(others)]\n"
        "        case str() | bytes():\n            return 'text'\n"
        "        case None:\n            return 'none'\n"
        "        case _:\n            return 'other'\n"
        "return [kind({'type': 'point', 'x': 1, 'y': 2}), kind([1, 2, 3]), kind('s'), kind(None), kind(3.5)]"
    )
    assert run(code).value == [["point", 1, {"y": 2}], ["seq", 1, 2], "text", "none", "other"]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("match x:\n    case int(__class__=c):\n        pass",
         'line 2: attribute "__class__" is not allowed in a class pattern'),
        ("match x:\n    case [*_rest_]:\n        pass",
         'line 2: name "_rest_" is not allowed: names that start and end with "_" are reserved'),
        ("match x:\n    case {**_r_}:\n        pass",
         'line 2: name "_r_" is not allowed: names that start and end with "_" are reserved'),
        ("match x:\n    case [_y_]:\n        pass",
         'line 2: name "_y_" is not allowed: names that start and end with "_" are reserved'),
    ],
    ids=["class-pattern-dunder", "star-private", "mapping-rest-private", "capture-private"],
)
def test_match_names_are_checked(code: str, message: str) -> None:
    with pytest.raises(PolicyError) as info:
        compile_snippet(code, Limits())
    assert str(info.value) == message


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
def test_match_in_a_class_body_and_self_matching_classes_with_keywords(backend: str) -> None:
    code = (
        "import fractions\n"
        "class P:\n    __match_args__ = ('a',)\n    a = 4\n"
        "class K:\n"
        "    match fractions.Fraction(1, 2):\n        case fractions.Fraction(numerator=n):\n            got = n\n"
        "    match P():\n        case P(v):\n            pos = v\n"
        "    match 5:\n        case int(x, real=r):\n            both = [x, r]\n"
        "match 'ab':\n    case str(s):\n        text = s\n"
        "return [K.got, K.pos, K.both, text]"
    )
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == [1, 4, [5, 5], "ab"]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
def test_subclasses_of_self_matching_builtins_match_themselves(backend: str) -> None:
    # As in CPython: `case MyInt(x)` binds the subject (the type flag is inherited), unless the
    # subclass names its own `__match_args__`; `bool` matches as the `int` it is.
    code = (
        "class MyInt(int):\n    pass\n"
        "class Named(str):\n    __match_args__ = ('upper',)\n"
        "class Tag(tuple):\n    pass\n"
        "out = []\n"
        "match MyInt(3):\n    case MyInt(x, real=r):\n        out.append([int(x), type(x).__name__, r])\n"
        "match Named('ab'):\n    case Named(u):\n        out.append(u())\n"
        "match Tag((1, 2)):\n    case Tag(t):\n        out.append(list(t))\n"
        "match True:\n    case bool(b):\n        out.append(b)\n"
        "return out"
    )
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == [[3, "MyInt", 3], "AB", [1, 2], True]
