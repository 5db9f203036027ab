"""The judge on shim returns and on what host code passes to snippet callbacks
(`sandbox.shims.base.judged`, `sandbox.crossing.judge_crossing`).

Every function of a shim that is not one of `PLAIN_RESULT_SHIMS` returns through the judge: a
FORBIDDEN value (a module, a frame, a metaclass...), also as an item of a returned list, tuple,
set, dict or slice at any depth, is a `TypeError` naming the function; a WRAPPED value comes
back as its stand-in.
Callbacks it is given by a callback keyword (`key=`, `dict_factory=`, `isjunk=`...) or position
(`functools.reduce`'s function) get judged arguments. A test-only shim stands in for a stdlib
function that would hand something out (no real shim does today).
"""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest

from sandbox import shims
from sandbox.shims.base import judged

pytestmark = pytest.mark.anyio


def _frame() -> Any:
    return sys._getframe()


def _cycle_with_module() -> list[Any]:
    inner: list[Any] = []
    outer = [inner, inner]
    inner.extend([outer, {"m": [type]}])  # a cycle, and the metaclass below it
    return outer


class _LeakyShim(types.ModuleType):
    """A per-run shim `leaky` whose functions hand out what a broken stdlib function might."""

    NAME = "leaky"
    PER_RUN = True

    @staticmethod
    def build(ctx: Any) -> dict[str, Any]:
        return {
            "module": lambda: sys,
            "frame": _frame,
            "metaclass": lambda: type,
            "in_list": lambda: [1, "a", sys],
            "in_dict": lambda: {"k": sys},
            "nested": lambda: [1, ({"k": [frozenset({2}), (3, sys)]},)],
            "in_slice": lambda: slice(0, sys),
            "in_cycle": _cycle_with_module,
            "format": lambda: "{0}".format,
            "plain": lambda: [1, {"a": (2, 3)}],
            "call_key": lambda x, key: key(x),
            "call_key_with_module": lambda key: key(sys),
        }


@pytest.fixture
def leaky(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(shims._BY_NAME, "leaky", _LeakyShim("leaky"))


@pytest.mark.parametrize(("call", "kind"), [
    ("leaky.module()", "module"),
    ("leaky.frame()", "frame"),
    ("leaky.metaclass()", "type"),
    ("leaky.in_list()", "module"),
    ("leaky.in_dict()", "module"),
    ("leaky.nested()", "module"),
    ("leaky.in_slice()", "module"),
    ("leaky.in_cycle()", "type"),
])
async def test_a_forbidden_shim_return_is_refused(sb: Any, leaky: None, call: str, kind: str) -> None:
    code = f"import leaky\ngot = {call}\nreturn repr(got)"
    result = await sb.run(code, backend="inprocess")
    name = call.partition("(")[0]
    sb.assert_error(result, "exception", "TypeError",
                    f"{name}() returned a {kind} object, which leads outside the sandbox")
    assert "<module 'sys'" not in str(result.to_json())


async def test_a_shim_return_crosses_as_its_stand_in_or_as_it_is(sb: Any, leaky: None) -> None:
    code = "import leaky\nf = leaky.format()\nreturn [repr(f), f(7), leaky.plain(), leaky.call_key(2, key=lambda v: v * 3)]"
    result = await sb.run(code, backend="inprocess")
    assert result.ok, result
    assert result.value == ["<built-in method format of str object>", "7", [1, {"a": [2, 3]}], 6]


async def test_a_callback_never_receives_a_forbidden_argument(sb: Any, leaky: None) -> None:
    code = (
        "import leaky\nseen = []\n"
        "try:\n    leaky.call_key_with_module(key=lambda m: seen.append(m))\n"
        "except TypeError as e:\n    seen.append(str(e))\nreturn seen"
    )
    result = await sb.run(code, backend="inprocess")
    assert result.ok, result
    assert result.value == ["leaky.call_key_with_module() would pass a callback a module object, "
                            "which leads outside the sandbox"]  # and the callback never ran


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_judged_shim_functions_keep_working_and_their_names(sb: Any, backend: str) -> None:
    code = (
        "import functools, dataclasses, difflib, math\n"
        "@dataclasses.dataclass\nclass X:\n    a: int = 1\n"
        "return [functools.reduce(lambda a, b: a + [b], [1, 2], []), functools.reduce.__name__,\n"
        "        [f.name for f in dataclasses.fields(X)], dataclasses.is_dataclass(X),\n"
        "        list(difflib.ndiff(['a'], ['b'], charjunk=lambda c: c == ' ')),\n"
        "        type(functools.reduce).__name__, type(math.sqrt).__name__, math.sqrt(4.0)]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [[1, 2], "reduce", ["a"], True, ["- a", "+ b"], "function",
                            "builtin_function_or_method", 2.0]


def test_the_wrapper_shows_the_original_and_leads_nowhere() -> None:
    wrapper = judged(sys.intern, "leaky.intern")
    assert (wrapper.__name__, wrapper.__qualname__, wrapper.__doc__) == ("intern", "intern", sys.intern.__doc__)
    assert not hasattr(wrapper, "__wrapped__")
    assert wrapper("ab") == "ab"


async def test_a_kernel_return_crosses_the_judge_into_its_prelude(sb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A prelude runs with the snippet's rights: what a kernel hands it, the snippet could reach.
    from sandbox import kernels

    monkeypatch.setattr(kernels, "copy_host", lambda x, deep: sys)
    code = "import copy, datetime\nc = copy.copy(datetime.date(2020, 1, 2))\nreturn repr(c)"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception", "TypeError",
                    "copy.copy_host() returned a module object, which leads outside the sandbox")
    assert "<module 'sys'" not in str(result.to_json())
