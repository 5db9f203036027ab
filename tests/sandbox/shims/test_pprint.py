"""The `pprint` shim is a prelude port of CPython's pprint; this file is its spec: on random nested
plain data, with random options, every function gives what the real `pprint` gives, byte for
byte. The prelude's functions are called host-side (they run as the run's own code all the
same), so hypothesis can try many examples; `test_prelude_modules_match_cpython.py` runs
programs with dataclasses and the `collections` types as snippets on both backends."""

from __future__ import annotations

import collections
import pprint as real
import re
import types
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sandbox_helpers import BACKENDS, run

from sandbox import shims
from sandbox.guards import RunGuards

#: Keys and set items whose ordering never falls back to `id()` (CPython orders unorderable
#: values of one type by address, the sandbox by the run's `id()` numbers): numbers, text,
#: bytes, None and tuples of numbers, which compare within their kind and differ in type name
#: across kinds.
hashables = st.one_of(
    st.integers(-10**12, 10**12), st.booleans(), st.floats(allow_nan=False), st.text(max_size=12),
    st.binary(max_size=12), st.none(), st.tuples(st.integers(-5, 5), st.integers(-5, 5)),
)
leaves = st.one_of(
    hashables, st.floats(), st.complex_numbers(allow_nan=False), st.integers(),
    st.text(alphabet=st.sampled_from("ab \n\t'\"é"), max_size=120), st.binary(max_size=60),
    st.binary(max_size=40).map(bytearray),
)
plain = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=8),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(hashables, inner, max_size=6),
        st.sets(hashables, max_size=6),
        st.frozensets(hashables, max_size=6),
    ),
    max_leaves=40,
)
options = st.fixed_dictionaries({
    "indent": st.integers(0, 6),
    "width": st.integers(-3, 120).filter(bool),
    "depth": st.one_of(st.none(), st.integers(1, 5)),
    "compact": st.booleans(),
    "sort_dicts": st.booleans(),
    "underscore_numbers": st.booleans(),
})


@pytest.fixture(scope="module")
def shim() -> Any:
    return shims.ShimSet(RunGuards(), {}).get("pprint")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(value=plain, opts=options)
def test_pformat_is_cpythons_on_plain_data(shim: Any, value: Any, opts: dict[str, Any]) -> None:
    assert shim.pformat(value, **opts) == real.pformat(value, **opts)
    printer = shim.PrettyPrinter(**opts)
    assert printer.pformat(value) == real.PrettyPrinter(**opts).pformat(value)
    assert printer.isreadable(value) == real.PrettyPrinter(**opts).isreadable(value)
    assert shim.saferepr(value) == real.saferepr(value)
    assert shim.isreadable(value) == real.isreadable(value)
    assert shim.isrecursive(value) is real.isrecursive(value) is False


def _without_ids(text: str) -> str:
    return re.sub(r"with id=\d+>", "with id=N>", text)


def test_recursive_structures_are_shown_as_cpython_shows_them(shim: Any) -> None:
    # Only the number differs: the run's `id()` instead of an address.
    a: list[Any] = [1, "x" * 50]
    a.append(a)
    d: dict[str, Any] = {"k": a, "l": list(range(30))}
    d["self"] = d
    for value in (a, d, [d, a]):
        for width in (5, 40, 80):
            assert _without_ids(shim.pformat(value, width=width)) == _without_ids(real.pformat(value, width=width))
        assert _without_ids(shim.saferepr(value)) == _without_ids(real.saferepr(value))
        assert shim.isrecursive(value) is real.isrecursive(value) is True
        assert shim.isreadable(value) is real.isreadable(value) is False


def test_host_types_a_snippet_only_sees_are_shown_as_cpython_shows_them(shim: Any) -> None:
    # A class's `__dict__` reaches a snippet as a `mappingproxy`; `SimpleNamespace` has a path of
    # its own in CPython (a snippet cannot make one).
    proxy = types.MappingProxyType({"a": list(range(30)), "b": "x" * 60})
    ns = types.SimpleNamespace(a=list(range(30)), b={"k": "v" * 70})
    for value in (proxy, ns, [ns, proxy], collections.OrderedDict(a=proxy)):
        for width in (10, 60):
            assert shim.pformat(value, width=width) == real.pformat(value, width=width)


@pytest.mark.parametrize("kwargs, message", [
    ({"indent": -1}, "indent must be >= 0"),
    ({"depth": 0}, "depth must be > 0"),
    ({"width": 0}, "width must be != 0"),
])
def test_bad_options_fail_as_in_cpython(shim: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        real.pformat(1, **kwargs)
    with pytest.raises(ValueError, match=message):
        shim.pformat(1, **kwargs)
    with pytest.raises(ValueError, match=message):
        shim.PrettyPrinter(**kwargs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_printing_goes_to_the_runs_log(backend: str) -> None:
    data = {"k": list(range(30)), "t": ("x" * 40, b"y" * 40)}
    code = (f"import pprint\ndata = {data!r}\npprint.pprint(data, width=30)\npprint.pp(data, width=30)\n"
            "pprint.PrettyPrinter(width=30).pprint(data)\n"
            "try:\n    pprint.PrettyPrinter(stream=1)\nexcept TypeError as e:\n    print(str(e))\nreturn 1")
    result = run(code, backend)
    assert result.error is None, result.error
    shown = real.pformat(data, width=30)
    assert "\n".join(result.logs) == "\n".join([
        shown, real.pformat(data, width=30, sort_dicts=False), shown,
        "PrettyPrinter(stream=...) is not available in the sandbox; use pformat()"])
