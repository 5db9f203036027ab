"""Preludes and kernels: shims that traverse a snippet's objects run as the snippet's own code.

The kernel contract: every kernel refuses anything but exact plain data (or, for run kernels,
anything but the run's own objects) by exact type, and no method of a hostile object runs while
it checks. The prelude contract: each prelude compiles under the snippet policy, once per
process; it runs per run into fresh objects, which count as the run's own, so changing them
changes nothing a later run sees; and a hostile object handed to a prelude'd function gets
exactly the snippet's rights.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import anyio
import pytest

import sandbox
from sandbox import kernels, prelude, shims
from sandbox.guards import RunGuards

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


class Calls:
    """Counts every dunder a zoo object ran."""

    count = 0


class LyingStr(str):
    def __eq__(self, other: object) -> bool:
        Calls.count += 1
        return True

    def __hash__(self) -> int:
        Calls.count += 1
        return 0


class LyingInt(int):
    def __index__(self) -> int:
        Calls.count += 1
        return 0


class LyingList(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        Calls.count += 1
        return iter(["__globals__"])


class LyingDict(dict):  # type: ignore[type-arg]
    def items(self) -> Any:
        Calls.count += 1
        return [("x", dataclasses.field())]


class AnswersEverything:
    def __getattr__(self, name: str) -> Any:
        Calls.count += 1
        return name


ZOO = [LyingStr("a"), LyingInt(1), LyingList([1]), LyingDict(a=1), AnswersEverything(), b"x".hex,
       bytearray(b"x"), object()]


@pytest.mark.parametrize("value", ZOO, ids=[type(v).__name__ for v in ZOO])
def test_plain_kernels_refuse_anything_but_exact_plain_data(value: Any) -> None:
    Calls.count = 0
    with pytest.raises(TypeError, match="expected plain data"):
        kernels.plain(value)
    with pytest.raises(TypeError, match="expected plain data"):
        kernels.plain({"k": [value]})
    assert Calls.count == 0


def test_plain_kernels_copy_exact_plain_data() -> None:
    value = {"a": [1, 2.5, None, True, b"x", ("t", {"n": "s"})]}
    assert kernels.plain(value) == value
    deep: Any = []
    for _ in range(kernels.MAX_PLAIN_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        kernels.plain(deep)
    calls: list[Any] = []
    wrapped = kernels.kernel(lambda *a, **k: calls.append((a, k)))
    with pytest.raises(TypeError):
        wrapped(LyingStr("x"))
    wrapped("x", k=[1])
    assert calls == [(("x",), {"k": [1]})]
    assert not hasattr(wrapped, "__wrapped__")


@pytest.mark.parametrize(
    "fields",
    [LyingDict(x=dataclasses.field()), {"x": 1}, {"x": AnswersEverything()}, {LyingStr("x"): dataclasses.field()},
     {"y": dataclasses.field()}, [dataclasses.field()]],
    ids=["dict-subclass", "not-a-field", "field-look-alike", "lying-key", "unnamed-field", "a-list"],
)
def test_the_field_table_reads_only_real_fields(fields: Any) -> None:
    Calls.count = 0
    with pytest.raises(TypeError, match="__dataclass_fields__"):
        kernels.field_table(fields)
    assert Calls.count == 0


def test_the_field_table_reads_real_fields_through_their_slots() -> None:
    @dataclasses.dataclass
    class D:
        x: int
        y: int = dataclasses.field(default=0, init=False)

    rows = kernels.field_table(D.__dataclass_fields__)  # type: ignore[attr-defined]
    assert [(r[1], r[2], r[3], r[4]) for r in rows] == [("x", "field", True, False), ("y", "field", False, True)]


def test_run_kernels_change_only_the_runs_own_objects() -> None:
    guards = RunGuards()
    run = kernels.RunKernels(guards)
    with pytest.raises(TypeError, match="snippet's own functions"):
        run.mark_abstract(len)
    with pytest.raises(TypeError, match="snippet's own functions"):
        run.mark_abstract(functools.reduce)
    with pytest.raises(TypeError, match="only applies to classes defined in the snippet"):
        run.runtime_checkable(dict)
    wrapper = functools.cache(len)
    before = dict(vars(wrapper))
    run.copy_annotations(wrapper, len)
    assert dict(vars(wrapper)) == before
    assert not hasattr(len, "__isabstractmethod__")


def test_the_cache_kernel_copies_no_host_class_dictionary() -> None:
    """The [checked] leak: `functools.cache(type(x))` copied a host class's raw methods."""
    run = kernels.RunKernels(RunGuards())
    wrapped = run.cache_wrapper(sandbox.Limits, None, False)
    assert wrapped.__name__ == "Limits"
    assert "__init__" not in vars(wrapped) and "__repr__" not in vars(wrapped)
    with pytest.raises(TypeError):
        run.cache_wrapper(len, LyingInt(3), False)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cache_of_a_host_class_hands_out_no_raw_method(sb, backend) -> None:
    code = ("import functools, asyncio\nc = functools.cache(type(asyncio.timeout(1)))\n"
            "return [c.__name__, hasattr(c, '__aenter__'), hasattr(c, '__dict__')]")
    result = await sb.run(code, backend=backend)
    assert result.error is None, result.error
    assert result.value[:2] == ["Timeout", False]


@pytest.mark.parametrize("value", ZOO, ids=[type(v).__name__ for v in ZOO])
def test_the_pprint_kernels_run_no_method_of_a_hostile_object(value: Any) -> None:
    from sandbox.shims import pprint as pprint_shim

    guards = RunGuards()
    cases = [(value, False), ([value], False), ({"a": value}, True), ({1, 2.5}, True)]
    if isinstance(value, (str, int)):
        cases.append(({value: 1}, False))  # a lying key's type is not plain (built before counting)
    Calls.count = 0
    assert kernels.RunKernels(guards).type_of(value) is type(value)
    assert kernels.RunKernels(guards).type_of(type(value)) is guards.safe_type  # never a metaclass
    for container, plain_keys in cases:
        assert pprint_shim._sorts_plainly(container) is plain_keys
    assert pprint_shim._generated_repr(value) is False
    with pytest.raises(TypeError, match="SimpleNamespace"):
        pprint_shim._namespace_names(value)
    assert Calls.count == 0


def test_every_prelude_compiles_under_the_snippet_policy_once_per_process() -> None:
    assert set(prelude.names()) >= {"abc", "contextlib", "dataclasses", "functools", "operator", "pprint", "string",
                                    "typing"}
    for name in prelude.names():
        for budget in (False, True):
            code = prelude.compiled(name, budget)
            assert code is prelude.compiled(name, budget)
            assert prelude.is_prelude_code(code) and code.co_filename == f"<prelude:{name}>"


def test_a_prelude_runs_per_run_and_only_when_imported() -> None:
    shims.ShimSet(RunGuards(), {})  # the process's first ShimSet also builds every table once, to freeze
    first, second = shims.ShimSet(RunGuards(), {}), shims.ShimSet(RunGuards(), {})
    assert first.context.preludes == []
    a, b = first.get("contextlib"), second.get("contextlib")
    assert a is not None and b is not None
    assert a.ExitStack is not b.ExitStack
    assert first.get("contextlib") is a  # once per run
    assert len(first.context.preludes) == 1


def test_changing_a_prelude_object_changes_nothing_a_later_run_sees(backend="inprocess") -> None:
    async def go() -> list[Any]:
        plant = ("import contextlib, operator, functools, dataclasses\n"
                 "contextlib.suppress.__enter__ = lambda self: 1 / 0\n"
                 "operator.attrgetter.__call__ = lambda self, obj: 'planted'\n"
                 "functools.update_wrapper.__name__ = 'planted'\n"
                 "return 1")
        later = ("import contextlib, operator, functools\nout = []\n"
                 "try:\n    with contextlib.suppress(KeyError):\n        raise ValueError('v')\n"
                 "except ValueError:\n    out.append('raised')\n"
                 "out.append(operator.attrgetter('real')(3))\nout.append(functools.update_wrapper.__name__)\n"
                 "return out")
        first = await sandbox.run(plant, backend="inprocess")
        second = await sandbox.run(later, backend="inprocess")
        return [first.value, first.error, second.value, second.error]

    assert anyio.run(go) == [1, None, ["raised", 3, "update_wrapper"], None]


HOSTILE_DATACLASSES = {
    # A class body plants a real dataclass's fields: replace reads each by the snippet's own
    # getattr, so a `__getattr__` answering every name gives plain strings, nothing else.
    "planted-fields-answering-getattr": (
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    x: int\n    y: int = 0\n"
        "got = []\nclass Evil:\n    __dataclass_fields__ = D.__dataclass_fields__\n"
        "    def __init__(self, **kw):\n        got.append(kw)\n"
        "    def __getattr__(self, name):\n        return name\n"
        "dataclasses.replace(Evil())\nreturn [got, dataclasses.asdict(Evil()), dataclasses.astuple(Evil())]",
        [[{}, {"x": "x", "y": "y"}, {}, {}], {"x": "x", "y": "y"}, ["x", "y"]],
    ),
    # Planted rows that are no real Field objects are refused, whatever they claim.
    "planted-look-alike": (
        "import dataclasses\nclass F:\n    name = '__setattr__'\n    init = True\n"
        "class Evil:\n    __dataclass_fields__ = {'__setattr__': F()}\n"
        "out = []\nfor f in (dataclasses.replace, dataclasses.asdict, dataclasses.astuple, dataclasses.fields):\n"
        "    try:\n        f(Evil())\n    except TypeError as e:\n        out.append(str(e))\nreturn out",
        ["__dataclass_fields__ must be a dict of dataclasses.Field objects"] * 4,
    ),
    "unnamed-field": (
        "import dataclasses\nclass Evil:\n    __dataclass_fields__ = {'__class__': dataclasses.field()}\n"
        "try:\n    dataclasses.replace(Evil())\nexcept TypeError as e:\n    return str(e)",
        "__dataclass_fields__ must map each field's name to its Field",
    ),
    # Properties and setters are the snippet's own code, called as an attribute read would.
    "properties-run-as-the-snippet": (
        "import dataclasses\nseen = []\n@dataclasses.dataclass\nclass D:\n    x: int\n"
        "class E(D):\n    @property\n    def x(self):\n        seen.append('read')\n        return 5\n"
        "    @x.setter\n    def x(self, v):\n        seen.append(type(v).__name__)\n"
        "e = E(1)\nr = dataclasses.replace(e)\nreturn [seen, dataclasses.asdict(e)]",
        [["int", "read", "int", "read"], {"x": 5}],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(HOSTILE_DATACLASSES))
async def test_dataclass_helpers_give_a_hostile_object_exactly_the_snippets_rights(sb, name, backend) -> None:
    code, expected = HOSTILE_DATACLASSES[name]
    result = await sb.run(code, backend=backend)
    assert result.error is None, result.error
    assert result.value == expected


DATACLASS_HELPERS_AS_CPYTHON = (
    "import dataclasses\nfrom collections import namedtuple, defaultdict, OrderedDict\nfrom typing import ClassVar\n"
    "P = namedtuple('P', 'a b')\n"
    "@dataclasses.dataclass(frozen=True)\nclass Pt:\n    x: int\n    y: int = 0\n    k: ClassVar[int] = 3\n"
    "@dataclasses.dataclass\nclass Box:\n    p: Pt\n    rows: list\n    nt: P\n    od: OrderedDict\n"
    "    hidden: int = dataclasses.field(default=7, init=False)\n"
    "b = Box(Pt(1, 2), [Pt(3), {'k': (Pt(4),)}], P(Pt(5), [1]), OrderedDict(a=Pt(6)))\n"
    "d = dataclasses.asdict(b)\nt = dataclasses.astuple(b)\n"
    "out = [d['p'], d['rows'], d['nt'] == P({'x': 5, 'y': 0}, [1]), type(d['od']).__name__, d['hidden'],\n"
    "       t[0], t[2] == P((5, 0), [1]), [f.name for f in dataclasses.fields(Box)],\n"
    "       [f.name for f in dataclasses.fields(b)], dataclasses.replace(Pt(1), y=9) == Pt(1, 9)]\n"
    "try:\n    dataclasses.replace(b, hidden=1)\nexcept ValueError as e:\n    out.append(str(e))\n"
    "try:\n    dataclasses.fields(1)\nexcept TypeError as e:\n    out.append(str(e))\n"
    "try:\n    dataclasses.asdict(Box)\nexcept TypeError as e:\n    out.append(str(e))\n"
    "out.append(dataclasses.asdict(Pt(1), dict_factory=lambda kv: [list(p) for p in kv]))\n"
    "return out"
)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dataclass_helpers_behave_as_in_cpython(sb, backend) -> None:
    result = await sb.run(DATACLASS_HELPERS_AS_CPYTHON, backend=backend)
    assert result.error is None, result.error
    assert result.value == [
        {"x": 1, "y": 2}, [{"x": 3, "y": 0}, {"k": [{"x": 4, "y": 0}]}], True, "OrderedDict", 7,
        [1, 2], True, ["p", "rows", "nt", "od", "hidden"], ["p", "rows", "nt", "od", "hidden"], True,
        "field hidden is declared with init=False, it cannot be specified with replace()",
        "must be called with a dataclass type or instance",
        "asdict() should be called on dataclass instances",
        [["x", 1], ["y", 0]],
    ]


async def test_preludes_follow_each_run_of_a_session() -> None:
    # A session's preludes outlive a run: the next run's budget ticks and log are theirs.
    s = sandbox.open_session("inprocess")
    try:
        first = await s.run("import contextlib, functools\n@functools.cache\ndef f(x):\n    return x * 2\n"
                            "stack = contextlib.ExitStack()\nreturn f(2)")
        second = await s.run("with stack:\n    stack.callback(print, 'bye')\nreturn [f(3), f.cache_info().hits]")
        assert first.value == 4 and first.error is None, first
        assert second.error is None, second
        assert second.value == [6, 0] and second.logs == ["bye"]
    finally:
        s.close()


URLENCODE_LIARS = """
from urllib.parse import urlencode, quote
seen = []
class LyingBytes(bytes):
    def __iter__(self):
        seen.append('iter')
        return iter([LyingInt(38)])
class LyingInt(int):
    def __eq__(self, other):
        seen.append('eq')
        return True
    def __hash__(self):
        return 38
class Liar(str):
    def __eq__(self, other):
        seen.append('eq')
        return True
    def __hash__(self):
        return hash('a&b')
    def encode(self, *args):
        return LyingBytes(b'&')
class Key:
    def __str__(self):
        return Liar('k&')
out = [urlencode({Key(): Liar('v v'), 'n': 1, b'x': LyingBytes(b'y&')}), urlencode([('a', [1, 2])], doseq=True),
       urlencode({'a': 'b c'}, quote_via=quote), urlencode({'a': [1, 2]})]
try:
    urlencode('abc')
except TypeError as e:
    out.append(str(e))
return [out, seen]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_urlencode_walks_the_query_as_the_snippet_and_quotes_plain_copies(sb, backend) -> None:
    import gc
    import urllib.parse

    result = await sb.run(URLENCODE_LIARS, backend=backend)
    assert result.error is None, result.error
    assert result.value == [
        ["k%26=v+v&n=1&x=y%26", "a=1&a=2", "a=b%20c", "a=%5B1%2C+2%5D",
         "not a valid non-string sequence or mapping object"],
        [],
    ]
    # No snippet object sits in the stdlib's process-wide quoting caches (in-process).
    for quoter in [o for o in gc.get_objects() if isinstance(o, urllib.parse._Quoter)]:  # type: ignore[attr-defined]
        assert {type(k) for k in dict.keys(quoter)} <= {int}
    assert urllib.parse.quote_plus("a&b") == "a%26b"


def test_a_prelude_function_planted_as_a_copy_hook_is_never_called() -> None:
    """The `copy` prelude runs no reduce protocol: a class built from data with a prelude's
    function as its `__reduce_ex__` copies as an enum member does (itself), and the hook never
    runs (it would fail on the arguments it got)."""
    import enum

    guards = RunGuards()
    shim_set = shims.ShimSet(guards, {})
    urlencode = shim_set.get("urllib.parse").urlencode  # type: ignore[union-attr]
    made = enum.Enum("Made", {"A": 1, "__reduce_ex__": urlencode, "__copy__": None})  # type: ignore[misc]
    copy_shim = shim_set.get("copy")
    assert copy_shim.copy(made.A) is made.A  # type: ignore[union-attr]
    assert copy_shim.deepcopy([made.A])[0] is made.A  # type: ignore[union-attr]


def test_kernels_copy_shared_plain_data_once() -> None:
    # A list holding the same list twice, forty levels deep: copied as a tree it is 2**40
    # items (a review blocked the host for minutes through `urlencode(encoding=...)` and a deep
    # copy of a `TextWrapper`). Copied with its sharing, it is forty.
    from sandbox.kernels import _plain_state, plain

    shared: list = [0]
    for _ in range(40):
        shared = [shared, shared]
    for copied in (plain(shared), _plain_state(shared)):
        assert copied is not shared and copied[0] is copied[1] and copied[0][0] is copied[0][1]
    looped: list = []
    looped.append(looped)
    with pytest.raises(ValueError, match="contains itself"):
        plain(looped)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_urllib_takes_one_level_of_parts(sb, backend) -> None:
    code = """
import urllib.parse
refused = ""
try:
    urllib.parse.quote("a", safe=[["x"]])
except TypeError as e:
    refused = str(e)
return [urllib.parse.urlunsplit(("https", "a.b", "/p", "q=1", "")), refused]
"""
    await sb.assert_harmless(code, ["https://a.b/p?q=1", "urllib.parse takes text, not list"], backend=backend)
