"""One value judge at every crossing (`sandbox.crossing.judge`), on both backends.

The judge decides by what a read returns, never by the name asked for: FORBIDDEN values
(modules, frames, code, tracebacks, metaclasses, a type's `__new__`, ABC `register`) never
cross; WRAPPED values cross as their checked stand-in (`str.format`, `type.mro`, the caching
`strptime`/`sub`/`subn`, `throw`, the raw methods of the sandbox's own classes); everything else
crosses as it is. One case per crossing kind: a computed read of a public name, a read the
policy routes through `_getattr_`, a private read of the snippet's own attribute, a `str.format`
field, a class read of a sandbox class, `super`, and a one-object transform a shim offers
(`functools.cache(cls)` copies the class dictionary into the wrapper).
"""

from __future__ import annotations

import abc
import types
from typing import Any

import pytest

from sandbox import crossing

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

FAKE = "class Fake:\n    _entered = False\n    _when = None\n    _task = None\n    _expired = False\nfake = Fake()\n"

# (snippet, the JSON it returns): each is the judge's stand-in or refusal at one crossing kind.
HARMLESS = [
    pytest.param("return repr(getattr('x{}', 'format'))", "<built-in method format of str object>",
                 id="computed-public-name-wrapped"),
    pytest.param("import typing\nreturn getattr(typing.Annotated[str, 0], 'format')('{0}', 1)", "1",
                 id="computed-through-forwarder-wrapped"),
    pytest.param("return [c.__name__ for c in getattr(int, 'mro')()]", ["int", "object"],
                 id="computed-mro-wrapped"),
    pytest.param("class C:\n    f = str.format\nreturn C.f('{0}{1}', 1, 2)", "12",
                 id="class-body-holds-the-checked-format"),
    pytest.param("return '{0.format}'.format('s').startswith('<built-in method format')", True,
                 id="format-field-wrapped"),
    pytest.param("import pathlib\nreturn repr(pathlib.PurePath.joinpath)", "<function PurePath.joinpath>",
                 id="sandbox-class-read-wrapped"),
    pytest.param("import re\nreturn repr(getattr(re.compile('a'), 'sub'))", "<built-in method sub>",
                 id="caching-method-wrapped"),
]

REFUSED = [
    pytest.param("import typing\nreturn getattr(typing, 'sys')", "has no attribute", id="shim-has-no-module"),
    pytest.param("def g():\n    yield 1\nreturn getattr(g(), 'gi_frame')", "not accessible", id="computed-frame"),
    pytest.param("def g():\n    yield 1\nreturn '{0.gi_frame}'.format(g())", "not accessible", id="format-field-frame"),
    pytest.param("import enum\nclass E(enum.Enum):\n    A = 1\nreturn E._new_member_", "not accessible",
                 id="private-read-judged-by-value"),
    pytest.param("import typing\nreturn getattr(typing.Mapping, 'register')", "ABC registration",
                 id="computed-register-refused"),
    pytest.param("import enum\nreturn getattr(type(enum.Enum), 'x')", "",
                 id="metaclass-never-crosses"),
    pytest.param(FAKE + "import asyncio, functools\n"
                 "w = functools.cache(type(asyncio.timeout(1)))\nawait w.__aenter__(fake)\nreturn fake._task",
                 # the prelude's cache names its wrapper with the snippet's rights: no class dict
                 "'functools._lru_cache_wrapper' object has no attribute '__aenter__'",
                 id="functools-cache-copies-no-raw-method"),
    # A public name in source is read natively: the wrapper must not hold the raw method at all.
    pytest.param(FAKE + "import asyncio, functools\nw = functools.cache(type(asyncio.timeout(1)))\nreturn w.when(fake)",
                 "'functools._lru_cache_wrapper' object has no attribute 'when'", id="functools-cache-when-source-read"),
    pytest.param("import collections, functools, textwrap\n"
                 "return functools.cache(collections.Counter).copy(textwrap.TextWrapper)",
                 "'functools._lru_cache_wrapper' object has no attribute 'copy'", id="functools-cache-of-a-host-class"),
    pytest.param(FAKE + "import asyncio\nreturn getattr(type(asyncio.timeout(1)), '__aenter__')(fake)",
                 "doesn't apply to a 'Fake' object", id="computed-sandbox-method-checked"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "expected"), HARMLESS)
async def test_the_judge_hands_out_the_stand_in(sb: Any, backend: str, code: str, expected: Any) -> None:
    await sb.assert_harmless(code, expected, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), REFUSED)
async def test_the_judge_refuses_what_leads_outside(sb: Any, backend: str, code: str, fragment: str) -> None:
    result = await sb.run(code, backend=backend)
    assert result.error is not None and result.error.kind == "exception", result
    assert fragment in result.error.message, result.error.message
    sb.assert_no_leak(result)
    await sb.assert_next_run_ok(backend)


# -- the judge itself, by value -------------------------------------------------------------------
def _gen() -> Any:
    yield 1


@pytest.mark.parametrize("value", [
    types, _gen().gi_frame, _gen.__code__, type, abc.ABCMeta, object.__new__,
    (lambda: (lambda: None) and None).__code__,
], ids=["module", "frame", "code", "type", "metaclass", "object.__new__", "nested-code"])
def test_forbidden_values_never_cross(value: Any) -> None:
    assert crossing.forbidden(value)
    with pytest.raises(AttributeError, match="not accessible"):
        crossing.judge(value)


def test_the_judge_decides_by_identity_not_by_name() -> None:
    # The same C method found under any name is wrapped; a snippet method named `format` is not.
    assert crossing.judge(str.format) is crossing.safe_format
    assert type(crossing.judge("ab".format)).__name__ == "_BoundFormat"
    assert type(crossing.judge(int.mro)).__name__ == "_VisibleMro"

    def format(*args: Any) -> str:  # noqa: A001 - a function that only shares the name
        return "mine"

    assert crossing.judge(format) is format
    for plain in (1, "s", [1], {"a": 1}, None, (1,), b"x"):
        assert crossing.judge(plain) is plain


def test_every_judged_name_has_a_row() -> None:
    """The names the policy routes through `_getattr_` for static reads are the names of the
    judge's rows (and ABC `register`), and the names judged by the value alone (`obj`): a row
    without its name would go unjudged on `x.name`."""
    from sandbox.policy import RUNTIME_CHECKED_ATTRIBUTES, VALUE_JUDGED_ATTRIBUTES

    rows = {d.__name__ for d, _, _ in crossing._ROWS} | {"register"}
    assert rows | VALUE_JUDGED_ATTRIBUTES == set(RUNTIME_CHECKED_ATTRIBUTES)
    assert not rows & VALUE_JUDGED_ATTRIBUTES


# -- normalisers ---------------------------------------------------------------------------------
def test_plain_str_runs_no_hook_of_the_argument() -> None:
    from sandbox.shims.base import plain_str

    ran: list[str] = []

    class LyingBytes(bytes):
        def __bytes__(self) -> bytes:
            ran.append("bytes")
            return b"lie"

        def __eq__(self, other: object) -> bool:
            ran.append("eq")
            return True

        __hash__ = bytes.__hash__

    class LyingStr(str):
        def __str__(self) -> str:
            ran.append("str")
            return "lie"

    for value, expected in ((LyingBytes(b"abc"), b"abc"), (LyingStr("abc"), "abc"),
                            (memoryview(b"abc"), b"abc"), (bytearray(b"abc"), b"abc")):
        copy = plain_str(value)
        assert type(copy) is type(expected) and copy == expected
    assert ran == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_lying_bytes_pattern_reaches_re_as_plain_bytes(sb: Any, backend: str) -> None:
    code = (
        "import re\nclass B(bytes):\n    def __bytes__(self):\n        return b'(?s).*'\n"
        "return [m.decode() for m in re.findall(B(b'a'), b'xaxa')]"
    )
    await sb.assert_harmless(code, ["a", "a"], backend=backend)
