"""Builtins: the dangerous ones are absent or refused (open, eval, exec, compile, `__import__`,
globals, vars, dir, id, memoryview, ...), `type()` builds no class from data, `super` cannot be
rebound and hands out nothing the guard refuses, `print` accepts no odd arguments, and builtins
that call back into the snippet (`iter`, `ExceptionGroup.split`) hand it plain objects only.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


BUILTINS = [
    pytest.param("return open(SECRET_PATH).read()", "exception", ["NameError", "'open' is not defined"], id="open"),
    pytest.param("f = open\nf(OUT_PATH, 'w').write('x')", "exception", ["NameError", "'open' is not defined"], id="open-write"),
    pytest.param("return eval(\"open(SECRET_PATH).read()\")", "syntax", ["eval() is not available"], id="eval"),
    pytest.param("exec(\"x = 1\")\nreturn 1", "syntax", ["exec() is not available"], id="exec"),
    pytest.param("c = compile('1', 'x', 'eval')\nreturn 1", "syntax", ["compile() is not available"], id="compile"),
    pytest.param("e = eval\nreturn e('1')", "exception", ["NameError", "'eval' is not defined"], id="eval-by-name"),
    pytest.param("C = type('C', (), {'x': 1, '__reduce_ex__': print})\nreturn C.x", "exception",
                 ["TypeError", 'type(): name "__reduce_ex__" is not allowed'], id="type-3-arg"),
    pytest.param("m = __import__('os')\nreturn 1", "syntax", ['"__import__"'], id="__import__"),
    pytest.param("b = __builtins__\nreturn str(b)", "syntax", ['"__builtins__"'], id="__builtins__"),
    pytest.param("g = globals()\nreturn str(g['__builtins__'])", "exception", ["NameError", "'globals' is not defined"], id="globals"),
    pytest.param("g = locals()\nreturn str(g)", "exception", ["NameError", "'locals' is not defined"], id="locals"),
    pytest.param("return str(vars())", "exception", ["TypeError", "vars() needs an argument"], id="vars"),
    pytest.param("breakpoint()", "syntax", ['"breakpoint" is reserved'], id="breakpoint"),
    pytest.param("return input()", "exception", ["NameError", "'input' is not defined"], id="input"),
    pytest.param("help(print)", "exception", ["NameError", "'help' is not defined"], id="help"),
    pytest.param("m = memoryview(b'abc')\nreturn 1", "exception", ["NameError", "'memoryview' is not defined"], id="memoryview"),
    pytest.param("return dir(tools)", "exception", ["NameError", "'dir' is not defined"], id="dir"),
    pytest.param("print('x', file=1)", "exception", ["TypeError", "print(file=...) is not supported"], id="print-file"),
    pytest.param("s = getattr(print, '__self__')\nreturn str(s)", "exception", ['"__self__" is not accessible'], id="print-self"),
    pytest.param("printed = 1\nreturn printed", "syntax", ['"printed" is reserved'], id="printed"),
    pytest.param("return str(exit)", "exception", ["NameError", "'exit' is not defined"], id="exit"),
    pytest.param("T = type(int)\nC = T('C', (T,), {'x': 1})\nreturn C.x", "exception",
                 ["TypeError", "defining metaclasses is not allowed"], id="type-of-int-is-real-type"),
    pytest.param("T = type(type)\nC = T('C', (), {'__getattribute__': getattr})\nreturn C.x", "exception",
                 ["TypeError", 'name "__getattribute__" is not allowed'], id="type-of-safetype-is-a-metaclass"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "kind", "fragments"), BUILTINS)
async def test_dangerous_builtins(sb, backend, code, kind, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, kind, *fragments)


BUILTINS_CLOSED = [
    pytest.param("return dir(tools)", "exception", ["NameError", "dir"], id="dir"),
    pytest.param("return vars(tools)", "exception", ["TypeError", "vars() argument must have __dict__"], id="vars"),
    pytest.param("import statistics\nreturn str(vars(statistics.mean))", "exception",
                 ["TypeError", "vars() of a 'function' object is not available"], id="vars-host-function"),
    pytest.param("import json\nreturn str(vars(type(json)))", "exception",
                 ["TypeError", "vars() of a 'type' object is not available"], id="vars-host-class"),
    pytest.param("return memoryview(b'x')", "exception", ["NameError", "memoryview"], id="memoryview"),
    pytest.param("return type('X', (), {'__reduce_ex__': print})", "exception",
                 ["TypeError", 'name "__reduce_ex__" is not allowed'], id="type-three-args"),
    pytest.param("return type(type(int))('X', (type(int),), {})", "exception",
                 ["TypeError", "defining metaclasses is not allowed"], id="metaclass-of-metaclass"),
]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_id_says_nothing_of_host_addresses(sb, backend):
    # `id()` exists (issue 12) but numbers objects per run: the same object keeps its number,
    # distinct objects differ, and the numbers are the run's own count, not addresses.
    code = "a = [id(tools), id(print), id(tools), id(tools.f), id(1), id(print)]\nreturn a"
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [0x1000, 0x1010, 0x1000, 0x1020, 0x1030, 0x1010]
    sb.assert_no_leak(result)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), BUILTINS_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_builtins_closed(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


# == type() of host objects ========================================================================

TYPE_OF_CASES = [
    ("namespace", "N = type(tools)\nreturn N(object(), 'tools', ['x'], print)", "namespaces cannot be created"),
    ("pending", "P = type(tools.f(1))\nreturn P(1)", "cannot be created by a snippet"),
    ("metaclass", "import enum\nclass M(type(enum.Enum)):\n    pass\nreturn 1", "metaclasses"),
    ("three-arg", "return type('X', (), {'__reduce_ex__': 1})", 'name "__reduce_ex__" is not allowed'),
    ("type-of-type", "return type(type)('X', (type,), {})", "defining metaclasses is not allowed"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name,code,fragment", TYPE_OF_CASES, ids=[c[0] for c in TYPE_OF_CASES])
async def test_type_of_host_objects_builds_nothing(sb, backend, name, code, fragment):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", fragment)
    assert sb.spy.calls == []


BUILTIN_CALLS_CLOSED = [
    ("property(getattr)", "class C:\n    p = property(getattr)\nreturn C().p", "exception",
     ["getattr expected at least 2 arguments, got 1"]),
    ("super(type, C)", "class A:\n    pass\nreturn super(type, A).mro()", "exception", ["must be an instance or subtype"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", BUILTIN_CALLS_CLOSED, ids=[c[0] for c in BUILTIN_CALLS_CLOSED])
async def test_property_and_super_on_host_callables(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


# == super =========================================================================================

SUPER_REFUSED = {
    # policy: `super` cannot be rebound, in any binding form
    "super_assign": ("super = len\nreturn super([1])", "syntax", "super"),
    "super_for": ("for super in [len]:\n    pass\nreturn 1", "syntax", "super"),
    "super_walrus": ("(super := len)\nreturn 1", "syntax", "super"),
    "super_arg": ("def f(super):\n    return super\nreturn 1", "syntax", "super"),
    "super_lambda": ("f = lambda super: super\nreturn 1", "syntax", "super"),
    "super_except": ("try:\n    1/0\nexcept Exception as super:\n    pass\nreturn 1", "syntax", "super"),
    "super_import": ("import json as super\nreturn 1", "syntax", "super"),
    "super_from_import": ("from json import dumps as super\nreturn 1", "syntax", "super"),
    "super_class": ("class super:\n    pass\nreturn 1", "syntax", "super"),
    "super_def": ("def super():\n    return 1\nreturn 1", "syntax", "super"),
    "super_del": ("del super\nreturn 1", "syntax", "super"),
    "super_global": ("def f():\n    global super\n    super = len\nf()\nreturn 1", "syntax", "super"),
    "super_nonlocal": (
        "def f():\n    super = 1\n    def g():\n        nonlocal super\n    return g\nreturn 1", "syntax", "super"),
    "super_comp": ("return [super for super in [1]]", "syntax", "super"),
    "super_match": ("match 1:\n    case super:\n        pass\nreturn 1", "syntax", "super"),
    "super_match_as": ("match 1:\n    case int() as super:\n        pass\nreturn 1", "syntax", "super"),
    "super_with": (
        "class C:\n    def __enter__(self):\n        return 1\n    def __exit__(self, *a):\n        return False\n"
        "with C() as super:\n    pass\nreturn 1", "syntax", "super"),
    "super_tuple": ("a, super = 1, 2\nreturn 1", "syntax", "super"),
    "super_star": ("a, *super = 1, 2\nreturn 1", "syntax", "super"),
    "super_aug": ("super += 1\nreturn 1", "syntax", "super"),
    "super_annot": ("super: int = 1\nreturn 1", "syntax", "super"),
    # `__init__` through a super() with arguments: refused by the runtime guard (the snippet's
    # own class does not define it past A).
    "super_with_args": (
        "class A:\n    def __init__(self):\n        super(A, self).__init__()\nA()\nreturn 1", "exception",
        '"__init__" is not accessible'),
    "super_of_module": (
        "import json\nclass A:\n    def m(self):\n        return super(json).__init__\nreturn A().m()", "exception",
        "super() argument 1 must be a type"),
    "super_of_module_type": (
        "import json\nclass A:\n    def m(self):\n        return super(type(json), json).__init__\nreturn A().m()",
        "exception", "super() cannot start past 'ModuleShim': it is the sandbox's own class"),
}


# A static refusal does not depend on the backend: in-process is enough.
@pytest.mark.parametrize("backend", ["inprocess"])
@pytest.mark.parametrize("name", sorted(SUPER_REFUSED))
async def test_super_cannot_be_rebound(sb, name, backend):
    code, kind, fragment = SUPER_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_super_with_args_cannot_read_init(sb, backend):
    result = await sb.run("return super(int, 1).__init__()", backend=backend)
    sb.assert_error(result, "exception", "AttributeError", '"__init__" is not accessible')


# == print =========================================================================================

@pytest.mark.parametrize("backend", BACKENDS)
async def test_print_odd_arguments(sb, backend):
    result = await sb.run("print('a', file=tools)", backend=backend)
    sb.assert_error(result, "exception", "TypeError", "print(file=...) is not supported")
    result = await sb.run("print('a', 'b', sep=1)", backend=backend)
    sb.assert_error(result, "exception", "TypeError", "sep and end must be str")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_str_that_prints_from_str(sb, backend):
    code = (
        "class A:\n    def __str__(self):\n        print('inner')\n        return 'outer'\n"
        "print(A())\nreturn 1"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.logs == ["inner", "outer"]


# == builtins that call the snippet back ===========================================================

BUILTIN_CALLBACKS = [
    (
        "ExceptionGroup.split(callable)",
        "seen = []\ndef pred(e):\n    seen.append(type(e).__name__)\n    return isinstance(e, ValueError)\n"
        "eg = ExceptionGroup('g', [ValueError('a'), TypeError('b')])\nm, r = eg.split(pred)\n"
        "return [len(m.exceptions), len(r.exceptions), seen]",
        [1, 1, ["ExceptionGroup", "ValueError", "TypeError"]],
    ),
    (
        "iter(callable, sentinel)",
        "n = [0]\ndef f():\n    n[0] += 1\n    return n[0]\nreturn list(iter(f, 4))",
        [1, 2, 3],
    ),
]


@pytest.mark.parametrize("case", BUILTIN_CALLBACKS, ids=[c[0] for c in BUILTIN_CALLBACKS])
async def test_builtin_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


async def test_codec_names_a_run_asked_for_are_not_kept(sb):
    """`encodings` caches every codec name it could not find, with no bound: a review's runs
    left 190 MB each in `encodings._cache` with 1 MB names, and a later run could time which
    names an earlier one had asked for. The clean-up drops the names no codec answered."""
    import encodings

    before = dict(encodings._cache)
    code = ("n = 0\nfor i in range(50):\n    try:\n        b'a'.decode('nocodec' * 1000 + str(i))\n"
            "    except LookupError:\n        n += 1\nreturn [n, len(b'a'.decode('latin-1'))]")
    result = await sb.run(code, backend="inprocess")
    assert result.value == [50, 1], result
    added = {name: found for name, found in encodings._cache.items() if name not in before}
    assert all(found is not None for found in added.values()), sorted(added)[:3]
    assert not any("nocodec" in name for name in encodings._cache)
