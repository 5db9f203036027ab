"""dataclasses: `@dataclass` trusts `Field.name` (it pastes it into the source it `exec`s and
`setattr`s it on the class), `replace` takes `**kwargs` names, and `asdict` deep-copies and
calls a factory. Field names come only from the policy-checked class body, a Field cannot be
renamed or subclassed into lying, the decorator applies only to the snippet's classes, and
factories see plain data.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# == A Field subclass with a lying `name`: code injection into dataclasses' exec ===================
#
# `_repr_fn` generates `return self.__class__.__qualname__ + f"(NAME={self.NAME!r})"` and
# execs it with real builtins. A name such as `x" if 0 else EXPR if 1 else "` turns that line
# into `... f"(x" if 0 else EXPR if 1 else "={self.x" if 0 else EXPR if 1 else "!r})"`, so
# `repr(C())` evaluates EXPR as unrestricted host Python (`__import__('os')`, `open`, ...).
FIELD_PRELUDE = """
import dataclasses
FieldT = type(dataclasses.field())
class F(FieldT):
    def getn(self):
        return NAME
    def setn(self, v):
        pass
    name = property(getn, setn)
f = F(dataclasses.MISSING, dataclasses.MISSING, False, True, None, False, None, False)
"""


FIELD_INJECTION = FIELD_PRELUDE + """
NAME = "x\\" if 0 else EXPR if 1 else \\""
@dataclasses.dataclass(init=False, eq=False)
class C:
    a: int = f
return repr(C())
"""


async def test_field_subclass_name_cannot_inject_code_worker(sb):
    code = FIELD_INJECTION.replace("EXPR", "repr(__import__('os').system)")
    result = await sb.run(code)
    sb.assert_no_leak(result)
    assert "built-in function system" not in str(result.value), result
    assert result.error is not None, result


async def test_field_subclass_name_cannot_read_host_file_inprocess(sb):
    code = FIELD_INJECTION.replace("EXPR", "open(SECRET_PATH).read()")
    result = await sb.run(code, backend="inprocess")
    sb.assert_no_leak(result)
    assert result.error is not None, result


def test_field_subclass_name_cannot_change_host_module(isolated):
    code = FIELD_INJECTION.replace(
        "EXPR", "str(setattr(__import__('textwrap'), 'wrap', lambda *a, **k: ['PWNED']))"
    )
    report = isolated(code, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]


# == The same Field subclass makes @dataclass setattr a dunder on the class ========================
#
# `_process_class` reads `f.name` three times in a row: `fields[f.name] = f`,
# `isinstance(getattr(cls, f.name, None), Field)`, `setattr(cls, f.name, f.default)`. A name that
# answers "a" twice and "__reduce_ex__" the third time puts the snippet's function in the class
# dict as `__reduce_ex__`; `copy.copy` then reconstructs with `setattr(TextWrapper, 'wrap', ...)`.
# (The copy walk skips classes, and no instance dict is involved.)
FIELD_PLANT = """
import dataclasses, copy, textwrap
FieldT = type(dataclasses.field())
state = {'n': 0}
class F(FieldT):
    def getn(self):
        state['n'] += 1
        return 'a' if state['n'] <= 2 else '__reduce_ex__'
    def setn(self, v):
        pass
    name = property(getn, setn)
def ident(x):
    return x
def red(self, proto):
    return (ident, (textwrap.TextWrapper,), (None, {'wrap': lambda self, text: ['PWNED']}))
f = F(red, dataclasses.MISSING, False, False, None, False, None, False)
@dataclasses.dataclass(init=False, eq=False, repr=False, match_args=False)
class C:
    a: int = f
copy.copy(C())
return textwrap.wrap('a b c', 2)
"""


def test_field_subclass_name_cannot_plant_class_dunder(isolated):
    report = isolated(FIELD_PLANT, "import textwrap\nstate = textwrap.wrap('a b', 1)")
    assert not report["hung"]
    assert report["after"] == report["before"] == ["a", "b"], report
    assert report["result"]["error"] is not None, report["result"]
    assert report["next"]["value"] == "[1]"


# == A field name swapped in while @dataclass runs ================================================
#
# The decorator calls `getattr(cls, name)` for each annotated name, so a default's `__get__`
# runs snippet code in the middle of its loop over the class's annotations. A review deleted a
# later key there and added one of the same count: the unchecked name ran as part of the
# generated `__eq__`, with host rights. The decorator now reads read-only copies of what it
# takes names from, made and checked before it starts.
SWAPPED_MID_CALL = """
import dataclasses
EVIL = "a,self.__dict__.__setitem__('got', repr(__import__('os'))),open(OUT_PATH, 'w').write('ran')"
seen = []
class D:
    def __get__(self, obj, owner):
        try:
            ann = owner.__annotations__
            del ann['b']
            ann[EVIL] = int
        except (TypeError, KeyError) as e:
            seen.append(type(e).__name__)
        return 0
class C:
    a: int = D()
    b: int = 0
C = dataclasses.dataclass(init=False, repr=False, eq=True)(C)
x = C()
x.a = 1
return [x == x, sorted(f.name for f in dataclasses.fields(C)), sorted(vars(x)), sorted(C.__annotations__), seen[:1]]
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_field_name_swapped_in_while_the_decorator_runs_is_never_pasted(sb, backend):
    result = await sb.run(SWAPPED_MID_CALL, backend=backend)
    sb.assert_no_leak(result)
    assert result.value == [True, ["a", "b"], ["a"], ["a", "b"], ["TypeError"]], result
    assert not sb.secret.out_path.exists()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dataclasses_still_build_from_what_the_class_says(sb, backend):
    # Inheritance, slots (a new class made from the old one's dictionary) and order: the class
    # keeps its own annotations dict afterwards.
    code = """
import dataclasses
@dataclasses.dataclass(slots=True, order=True)
class P:
    x: int
    y: int = 2
@dataclasses.dataclass
class Q(P):
    z: list = dataclasses.field(default_factory=list)
P.__annotations__["later"] = int
return [repr(P(1)), P(1) < P(2), repr(Q(1, 2, [3])), type(P.__annotations__).__name__, list(P.__slots__),
        sorted(Q.__dataclass_fields__), sorted(P.__annotations__)]
"""
    await sb.assert_harmless(code, ["P(x=1, y=2)", True, "Q(x=1, y=2, z=[3])", "dict", ["x", "y"], ["x", "y", "z"],
                                    ["later", "x", "y"]], backend=backend)


async def test_the_generated_methods_never_run_in_a_host_modules_globals(sb):
    # `@dataclass` executes what it generates in `sys.modules[cls.__module__].__dict__`; a
    # snippet names the module, and `exec` put `__builtins__` into the host's `itertools`.
    import itertools

    assert "__builtins__" not in vars(itertools)
    code = ("import dataclasses\nclass C:\n    x: int = 1\nC.__module__ = 'itertools'\n"
            "D = dataclasses.dataclass(C)\nreturn [repr(D(2)), D.__module__]")
    await sb.assert_harmless(code, ["C(x=2)", "itertools"], backend="inprocess")
    assert "__builtins__" not in vars(itertools)


async def test_real_field_names_still_come_from_the_class_body(sb):
    # The decorator overwrites a plain Field's name with the (policy-checked) annotation name.
    code = (
        "import dataclasses\n@dataclasses.dataclass\nclass C:\n"
        "    a: int = dataclasses.field(default=1)\n"
        "return [f.name for f in dataclasses.fields(C)] + [repr(C())]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == ["a", "C(a=1)"]


async def test_field_name_cannot_be_set(sb):
    code = """
import dataclasses
f = dataclasses.field(default=1)
f.name = "_" + "_x"
return f.name
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "cannot modify attributes")


async def test_field_inherited_from_plain_base_is_harmless(sb):
    code = """
import dataclasses
class B:
    x = dataclasses.field(default=1)
@dataclasses.dataclass
class D(B):
    x: int
return str(D())
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == "D(x=1)"
    sb.assert_no_leak(r)


DATACLASSES_CLOSED = [
    pytest.param(
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    x: int = 1\n"
        "f = dataclasses.fields(D)[0]\nf.name = '__globals__'\nreturn 1",
        "exception", ["TypeError", "cannot modify attributes of a 'Field'"], id="dataclass-field-rename"),
    pytest.param(
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    x: int = 1\n"
        "return getattr(dataclasses.fields(D)[0], '_field_type')",
        "exception", ["AttributeError", "private"], id="dataclass-field-private"),
    pytest.param("import dataclasses, json\nreturn dataclasses.dataclass(type(json))", "exception",
                 ["TypeError", "only applies to classes defined in the snippet"], id="dataclass-host-class"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), DATACLASSES_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_dataclasses_closed_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


DATACLASSES_CLOSED_NAMED = [
    ("dataclass Field rename", "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
     "f = dataclasses.fields(C)[0]\nf.name = '__globals__'\nreturn 1", "exception", ["cannot modify", "Field"]),
    ("setattr Field rename", "import dataclasses\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
     "setattr(dataclasses.fields(C)[0], 'name', '__globals__')\nreturn 1", "exception", ["cannot modify"]),
    ("replace on a function", "import dataclasses\nreturn dataclasses.replace(getattr, x=2)", "exception",
     ["dataclass instances"]),
    ("@dataclass on host class", "import dataclasses, textwrap\ndataclasses.dataclass(textwrap.TextWrapper)\nreturn 1",
     "exception", ["only applies to classes defined in the snippet"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", DATACLASSES_CLOSED_NAMED, ids=[c[0] for c in DATACLASSES_CLOSED_NAMED])
async def test_dataclasses_closed_paths(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


DATACLASSES_REFUSED = {
    "dataclass_replace_dunder": (
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    a: int = 1\n"
        "return dataclasses.replace(D(), **{'__reduce_ex__': 1})", "exception", "__reduce_ex__"),
}


# A static refusal does not depend on the backend: in-process is enough.
@pytest.mark.parametrize("backend", ["inprocess"])
@pytest.mark.parametrize("name", sorted(DATACLASSES_REFUSED))
async def test_dataclasses_refused(sb, name, backend):
    code, kind, fragment = DATACLASSES_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


DATACLASSES_GADGETS_CLOSED = [
        (
            "dataclasses_replace_dunder_change",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n"
            "dataclasses.replace(P(1), **{'__class__': int})",
            "exception",
            ("TypeError",),
        ),
        (
            "dataclass_on_host_class",
            "import dataclasses, fractions\ndataclasses.dataclass(fractions.Fraction)",
            "exception",
            ("TypeError", "only applies to classes defined in the snippet"),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", DATACLASSES_GADGETS_CLOSED, ids=[c[0] for c in DATACLASSES_GADGETS_CLOSED])
async def test_dataclasses_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


async def test_dataclass_options_keep_frozen(sb):
    code = (
        "import dataclasses\n@dataclasses.dataclass(slots=True, frozen=True, kw_only=True)\n"
        "class C:\n    a: int\n    b: int = 2\nc = C(a=1)\n"
        "try:\n    setattr(c, 'a', 5)\nexcept Exception as e:\n    err = type(e).__name__\n"
        "return [c.a, dataclasses.astuple(c), dataclasses.replace(c, b=3).b, err]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value[:3] == [1, [1, 2], 3]
    assert result.value[3] in ("FrozenInstanceError", "TypeError")


async def test_asdict_dict_factory_gets_copies(sb):
    code = """
import dataclasses
@dataclasses.dataclass
class D:
    x: list
got = []
def fac(items):
    got.append(items)
    return dict(items)
r = dataclasses.asdict(D([1]), dict_factory=fac)
return str(r), len(got)
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == ["{'x': [1]}", 1]
    sb.assert_no_leak(r)


DATACLASSES_CALLBACKS = [
    (
        "dataclasses.asdict(dict_factory=)",
        "import dataclasses\nseen = []\ndef fac(pairs):\n    seen.append([type(p).__name__ for p in pairs])\n"
        "    return dict(pairs)\n@dataclasses.dataclass\nclass C:\n    x: int = 1\n"
        "    y: list = dataclasses.field(default_factory=list)\n"
        "return [dataclasses.asdict(C(), dict_factory=fac), seen]",
        [{"x": 1, "y": []}, [["tuple", "tuple"]]],
    ),
]


@pytest.mark.parametrize("case", DATACLASSES_CALLBACKS, ids=[c[0] for c in DATACLASSES_CALLBACKS])
async def test_dataclasses_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


DATACLASSES_HARMLESS = [
        (
            "dataclass_plain_annotations",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: list = None\n"
            "return dataclasses.asdict(P(1))",
            {"a": 1, "b": None},
        ),
        (
            "asdict_factory_gets_plain_pairs",
            "import dataclasses\n@dataclasses.dataclass\nclass P:\n    a: int\n    b: list\n"
            "seen = []\ndef fac(pairs):\n    seen.append([type(k).__name__ for k, v in pairs])\n    return dict(pairs)\n"
            "dataclasses.asdict(P(1, [2]), dict_factory=fac)\ndataclasses.astuple(P(1, [2]), tuple_factory=list)\n"
            "return seen",
            [["str", "str"]],
        ),
]


@pytest.mark.parametrize("name, code, expected", DATACLASSES_HARMLESS, ids=[c[0] for c in DATACLASSES_HARMLESS])
async def test_dataclasses_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)


# == TypedDict keys as dataclass field names: code injection into dataclasses' exec =============
#
# A TypedDict accepts any string as a key, and a class statement deriving from it gets those keys
# as its own `__annotations__`; `@dataclass` would paste them into the `__init__` source it execs
# with the real builtins (the snippet's module is not in sys.modules). The marker file stands for
# any host effect.
TYPEDDICT_INJECTION = """
import typing, dataclasses
PAY = '{}[open(MARKER, "w").write("x")]'
N1 = "_,*z,a=" + PAY + "+\\'\\'\\'"
N2 = "b=\\'\\'\\'"
TD = typing.TypedDict("TD", {N1: int, N2: int})
class Y(TD):
    pass
dataclasses.dataclass(repr=False, eq=False, match_args=False)(Y)
return "decorated"
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_typeddict_keys_cannot_become_dataclass_source(sb, tmp_path, backend):
    marker = tmp_path / "ran.txt"
    import json

    result = await sb.run(TYPEDDICT_INJECTION.replace("MARKER", json.dumps(str(marker))), backend=backend)
    sb.assert_error(result, "exception", "dataclass field names must be identifiers")
    assert not marker.exists()
    await sb.assert_next_run_ok(backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dataclass_on_a_typeddict_subclass_with_plain_keys_still_works(sb, backend):
    code = """
import typing, dataclasses
TD = typing.TypedDict("TD", {"a": int, "b": str})
class Y(TD):
    pass
D = dataclasses.dataclass(Y)
return sorted(f.name for f in dataclasses.fields(D))
"""
    result = await sb.run(code, backend=backend)
    assert result.ok and result.value == ["a", "b"], result


# -- the methods @dataclass generates are host-compiled: they run only on their own instances ------
FOREIGN_SELF = [
    pytest.param("@dataclasses.dataclass\nclass X:\n    pwned: int\nX.__init__(textwrap.TextWrapper, 5)",
                 "descriptor '__init__' for 'X' objects doesn't apply to a 'type' object", id="init-host-class"),
    pytest.param("@dataclasses.dataclass(frozen=True)\nclass X:\n    pwned: int\nX.__init__(type(print), 5)",
                 "descriptor '__init__' for 'X' objects doesn't apply to a 'type' object", id="frozen-init-run-builtin"),
    pytest.param("@dataclasses.dataclass(frozen=True)\nclass X:\n    pwned: int\nX.__setattr__(textwrap.TextWrapper, 'pwned', 1)",
                 "cannot modify class 'TextWrapper'", id="frozen-setattr"),
    pytest.param("@dataclasses.dataclass(order=True)\nclass X:\n    width: int\nX.__lt__(textwrap.TextWrapper(), X(1))",
                 "descriptor '__lt__' for 'X' objects doesn't apply to a 'TextWrapper' object", id="order-host-instance"),
    pytest.param("@dataclasses.dataclass\nclass X:\n    width: int\nX.__eq__(textwrap.TextWrapper(), X(1))",
                 "descriptor '__eq__' for 'X' objects", id="eq-host-instance"),
    pytest.param("@dataclasses.dataclass\nclass X:\n    width: int\nX.__repr__(textwrap.TextWrapper())",
                 "descriptor '__repr__' for 'X' objects", id="repr-host-instance"),
    pytest.param("@dataclasses.dataclass\nclass X:\n    __annotations__ = {'__class__': object}",
                 "dataclass field names cannot be dunders in the sandbox, got '__class__'", id="dunder-field"),
    pytest.param("dataclasses.dataclass(type('S', (), {'__annotations__': {'__dict__': object}}))",
                 "dataclass field names cannot be dunders in the sandbox, got '__dict__'", id="dunder-field-type"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "fragment"), FOREIGN_SELF)
async def test_generated_dataclass_methods_refuse_a_foreign_self(sb, backend, code, fragment):
    result = await sb.run(f"import dataclasses, textwrap\n{code}\nreturn 1", backend=backend)
    sb.assert_error(result, "exception", "TypeError", fragment)
    assert sb.spy.calls == []


async def test_generated_dataclass_methods_leave_host_classes_unchanged(isolated):
    code = (
        "import dataclasses, textwrap\nout = []\n"
        "@dataclasses.dataclass\nclass X:\n    pwned: int\n"
        "@dataclasses.dataclass(frozen=True)\nclass F:\n    pwned: int\n"
        "for cls in (X, F):\n    for target in (textwrap.TextWrapper, type(print), textwrap.TextWrapper()):\n"
        "        try:\n            cls.__init__(target, 5)\n        except TypeError:\n            out.append('refused')\n"
        "return out"
    )
    check = "import textwrap\nstate = [hasattr(textwrap.TextWrapper, 'pwned')]"
    report = isolated(code, check)
    assert report["result"]["value"] == ["refused"] * 6, report
    assert report["before"] == report["after"] == [False]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_dataclasses_still_work_through_the_checked_methods(sb, backend):
    code = (
        "import dataclasses\n"
        "@dataclasses.dataclass(frozen=True, order=True, slots=True)\nclass Y:\n    a: int\n    b: str = 'x'\n"
        "@dataclasses.dataclass\nclass Base:\n    _n: int\n"
        "@dataclasses.dataclass\nclass Z(Base):\n    more: int = 0\n"
        "    def __post_init__(self):\n        self.seen = True\n"
        "@dataclasses.dataclass(frozen=True)\nclass F:\n    a: int\n"
        "y = Y(1)\nz = Z(1, 2)\n"
        "try:\n    F(1).a = 2\nexcept dataclasses.FrozenInstanceError:\n    frozen = True\n"
        "return [repr(y), y == Y(1), y < Y(2), hash(y) == hash(Y(1)), repr(dataclasses.replace(y, a=3)),\n"
        "        repr(z), z.seen, z._n, frozen, Y.__init__.__qualname__, dataclasses.astuple(z)]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["Y(a=1, b='x')", True, True, True, "Y(a=3, b='x')", "Z(_n=1, more=2)", True, 1, True,
                            "Y.__init__", [1, 2]]
