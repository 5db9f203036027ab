"""operator: `attrgetter` and `methodcaller` read every name, dotted part by part, with the
snippet's own guarded getattr (they are prelude classes, the run's own), so through `type()` or
a subclass they reach exactly what `obj.name` would: no private attribute, and `format`/`mro`
come back judged; `setitem`/`delitem` cannot change a shim.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# == type() hands out the real, unchecked operator.attrgetter / methodcaller classes ===============
#
# The shim's `operator.attrgetter` is a checking factory, but it returns a real
# `operator.attrgetter` instance, and `type()` of that is the real C class, whose constructor
# checks nothing. One line later the snippet reads `__globals__` of the guarded `getattr`
# builtin: the real `sandbox.guards` module dict, with the real builtins module in it.
ATTRGETTER_ESCAPE = """
import operator
AG = type(operator.attrgetter('real'))
g = AG('__globals__')(getattr)
B = g['_builtins']
"""


METHODCALLER_ESCAPE = """
import operator
MC = type(operator.methodcaller('upper'))
fmt = MC('format', getattr)
"""


async def test_attrgetter_class_from_type_reads_host_file_inprocess(sb):
    code = ATTRGETTER_ESCAPE + "return B.open(SECRET_PATH).read()"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception")
    await sb.assert_next_run_ok("inprocess")


async def test_attrgetter_class_from_type_gets_real_os_in_worker(sb):
    code = ATTRGETTER_ESCAPE + (
        "os = AG('__import__')(B)('os')\n"
        "return [type(os).__name__, os.getpid() > 1, repr(B)]"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception")
    await sb.assert_next_run_ok()


async def test_methodcaller_class_from_type_is_real_format_inprocess(sb):
    code = METHODCALLER_ESCAPE + (
        "return fmt('{0.__globals__[weakref].sys.modules[os].environ[' + ENV_NAME + ']}')"
    )
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception")


async def test_methodcaller_class_from_type_is_real_format_in_worker(sb):
    code = METHODCALLER_ESCAPE + "return fmt('{0.__globals__[_builtins]}')"
    result = await sb.run(code)
    sb.assert_error(result, "exception")
    assert "builtins" not in repr(result.value)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_attrgetter_reads_with_the_snippets_own_rights(sb, backend):
    # The getters are the snippet's own code: each name is read by the snippet's guarded
    # getattr, part by part, so they reach exactly what `obj.a.b` would, and no further.
    code = "import operator\nreturn operator.attrgetter('real.__init__')(1)"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "private")
    code = ("import operator, enum\nclass E(enum.Enum):\n    A = 1\n"
            "return [operator.attrgetter('real.__class__')(1) is int, operator.methodcaller('format', 1)('{0}'),"
            " operator.attrgetter('mro')(E)() == E.mro(), operator.methodcaller('upper')('a')]")
    result = await sb.run(code, backend=backend)
    assert result.error is None, result.error
    assert result.value == [True, "1", True, "A"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_changing_the_getter_classes_changes_nothing_they_check(sb, backend):
    # They are the run's own classes: a snippet may change them, and the next read is still
    # the guarded one; the next run gets fresh ones.
    code = ("import operator\nsetattr(operator.attrgetter, 'count', 5)\n"
            "return operator.attrgetter('__globals__')(len)")
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", '"__globals__" is not accessible')
    await sb.assert_next_run_ok()


OPERATOR_REFUSED = {
    # attrgetter / methodcaller: the snippet's own classes, so a subclass or a call of the type
    # reads with the same guarded getattr.
    "ag_subclass": ("import operator\nclass X(operator.attrgetter):\n    pass\nreturn X('__globals__')(len)",
                    "exception", '"__globals__" is not accessible'),
    "mc_subclass_skip_init": (
        "import operator\nclass X(operator.methodcaller):\n    def __init__(self):\n        pass\nreturn X()(1)",
        "exception", "'X' object has no attribute 'name'"),
    "ag_type_call": ("import operator\nreturn type(operator.attrgetter('a'))('__globals__')(len)", "exception",
                     '"__globals__" is not accessible'),
    "ag_real": ("import operator\nreturn operator.attrgetter('_real')(operator.attrgetter('x'))", "exception", "_real"),
    "mc_format": ("import operator\nreturn operator.methodcaller('format', 1)('{0.__init__.__globals__}')",
                  "exception", '"__init__" is not accessible'),
    "mc_name_kw": ("import operator\nreturn operator.methodcaller(name='__reduce_ex__')(1)", "exception", "methodcaller"),
    "mc_reduce": ("import operator\nreturn operator.methodcaller('__reduce_ex__', 4)(1)", "exception",
                  '"__reduce_ex__" is not accessible'),
    "ag_dotted": ("import operator\nreturn operator.attrgetter('real.__init__')(1)", "exception", "__init__"),
    "ag_str_subclass_split": (
        "import operator\nclass S(str):\n    def split(self, sep):\n        return ['__globals__']\n"
        "return operator.attrgetter(S('x.y'))(len)", "exception", "__globals__"),
    "mc_register": ("import operator\nreturn operator.methodcaller('register', int)(1)", "exception", "register"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(OPERATOR_REFUSED))
async def test_operator_refused(sb, name, backend):
    code, kind, fragment = OPERATOR_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


OPERATOR_CLOSED = [
    pytest.param("import operator\nreturn operator.attrgetter('real.__init__')(1)", "exception",
                 ["AttributeError", "private"], id="attrgetter-dotted"),
    pytest.param("import operator\nreturn operator.methodcaller('format_map', {'x': 1})('{x.__init__}')", "exception",
                 ["AttributeError", '"__init__" is not accessible'], id="methodcaller-format-map"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), OPERATOR_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_operator_closed_paths(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


OPERATOR_GADGETS_CLOSED = [
        (
            "operator_setitem_module_shim",
            "import operator, json\noperator.setitem(json, 'dumps', print)",
            "exception",
            ("TypeError",),
        ),
        (
            "operator_delitem_module_shim",
            "import operator, json\noperator.delitem(json, 'dumps')",
            "exception",
            ("TypeError",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", OPERATOR_GADGETS_CLOSED, ids=[c[0] for c in OPERATOR_GADGETS_CLOSED])
async def test_operator_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


OPERATOR_HARMLESS = [
        (
            "operator_inplace_on_own_objects",
            "import operator\na = [1]\noperator.iadd(a, [2])\nd = {}\noperator.setitem(d, '__class__', 1)\n"
            "return [a, operator.concat('a', 'b'), d, operator.itemgetter(0, 1)(a)]",
            [[1, 2], "ab", {"__class__": 1}, [1, 2]],
        ),
]


@pytest.mark.parametrize("name, code, expected", OPERATOR_HARMLESS, ids=[c[0] for c in OPERATOR_HARMLESS])
async def test_operator_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
