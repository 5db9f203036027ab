"""`pprint` is a prelude: it walks, sorts and `repr()`s a snippet's objects as the snippet's own
code, and reads a dataclass's fields with the snippet's own `getattr`. Hostile zoo objects
(`hostile_zoo.py`) pprinted every way are never acted on by host code (a profiler sees who calls
each zoo hook), and nothing a zoo hook or recorder receives is forbidden: only the snippet's own
objects and plain values. The real `pprint`, run the same way, is host code acting on them."""

from __future__ import annotations

import dataclasses
import pprint as real_pprint
from typing import Any

import pytest
from hostile_zoo import (  # noqa: I001 - tests/security is on the path (pyproject)
    ZOO_SOURCE,
    find_forbidden,
    generated_by_dataclass,
    host_callers,
    run_snippet,
    zoo_through_calls,
)

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: The calls each zoo value goes through, as snippet code (so the containers around a zoo
#: value are built, and hashed, by the snippet itself).
CALLS_SOURCE = """
import pprint
CALLS = {
    'pformat': lambda v: pprint.pformat(v),
    'pformat-narrow': lambda v: pprint.pformat([v, {'k': v, 't': (v,)}], width=1),
    'pformat-compact': lambda v: pprint.pformat([v, [v, v]], width=1, compact=True, underscore_numbers=True),
    'pformat-keys': lambda v: pprint.pformat({v: 1, 'x': [v]}, width=1),
    'pformat-set': lambda v: pprint.pformat({v, 1, 's'}, width=1),
    'pformat-depth': lambda v: pprint.pformat([[v]], depth=1, sort_dicts=False),
    'saferepr': lambda v: pprint.saferepr({'a': v}),
    'isreadable': lambda v: pprint.isreadable([v]),
    'isrecursive': lambda v: pprint.isrecursive((v,)),
    'printer': lambda v: pprint.PrettyPrinter(width=1, indent=3).pformat({'a': v, 'b': [v]}),
    'printer-readable': lambda v: pprint.PrettyPrinter().isreadable({'a': v}),
}
return [ZOO, LOG, CALLS]
"""


def test_pprint_never_hands_a_zoo_object_to_host_code() -> None:
    # `real_dataclass`'s generated `__repr__` is host-compiled (`generated_by_dataclass`).
    outcomes, log, found, foreign = zoo_through_calls(CALLS_SOURCE, allowed=generated_by_dataclass)
    assert found == [], "host code acted on zoo objects:\n" + "\n".join(found[:40])
    assert len(log) > 100  # the zoo's hooks ran, as the snippet's own code
    assert find_forbidden([outcomes, log]) == []
    assert foreign == []


def test_the_oracle_sees_host_code_acting_on_the_zoo() -> None:
    # The real pprint, as the shim exposed it before: host code calls the zoo's hooks.
    zoo, _ = run_snippet(ZOO_SOURCE + "return ZOO", budget=False)
    _, found = host_callers(lambda: real_pprint.pformat([zoo["lying_dict"], zoo["everything"]], width=1))
    assert any("pprint.py" in c for c in found), found


DATACLASS_FIELDS = """
import dataclasses, pprint
seen = []
@dataclasses.dataclass
class D:
    a: list
    b: str = 'x' * 40
class Reads(D):
    @property
    def a(self):
        seen.append('a')
        return list(range(20))
    @a.setter
    def a(self, v):
        pass
class Planted:
    __dataclass_fields__ = D.__dataclass_fields__
    def __getattr__(self, name):
        seen.append(name)
        return name
    def __repr__(self):
        return 'Planted()' + '.' * 100
out = [pprint.pformat(Reads([1]), width=30), pprint.pformat(Planted(), width=30)]
try:
    pprint.pformat(D(list(range(30))).__repr__.__wrapped__)
except AttributeError as e:
    out.append(str(e)[:40])
return [out, seen]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dataclass_fields_are_read_with_the_snippets_rights(sb, backend) -> None:
    # A field is read as `getattr(obj, name)` in snippet code: a property runs as the snippet's
    # own; a planted `__dataclass_fields__` without the generated `__repr__` is a plain repr.
    result = await sb.run(DATACLASS_FIELDS, backend=backend)
    assert result.error is None, result.error
    out, seen = result.value
    assert out[0] == real_pprint.pformat(_Reads([1]), width=30)  # as CPython shows it
    assert out[0].startswith("Reads(a=[0,\n         1,")
    assert out[1] == "Planted()" + "." * 100
    assert out[2] == "'function' object has no attribute '__wr"  # nothing leads to the raw method
    assert seen == ["a", "a"]  # once by the generated __repr__, once by pprint's field read


@dataclasses.dataclass
class _D:
    a: list[int]
    b: str = "x" * 40


class _Reads(_D):
    @property  # type: ignore[override]
    def a(self) -> list[int]:
        return list(range(20))

    @a.setter
    def a(self, v: Any) -> None:
        pass


_Reads.__name__ = "Reads"


async def test_pprint_prints_to_the_log_of_each_run_of_a_session() -> None:
    # The prelude outlives a session's run; its `print` is the current run's.
    import sandbox

    s = sandbox.open_session("inprocess")
    try:
        first = await s.run("import pprint\npprint.pprint([1])\nreturn 1")
        second = await s.run("pprint.pprint({'b': 2})\npprint.pp([2])\nreturn 2")
    finally:
        s.close()
    assert (first.error, second.error) == (None, None)
    assert first.logs == ["[1]"] and second.logs == ["{'b': 2}", "[2]"]
