"""collections: `namedtuple` builds its class from source text, so field and type names must be
plain identifiers without underscores however a str subclass lies; `module=` and defaults are
data; defaultdict, ChainMap and Counter callbacks see plain objects.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_namedtuple_cannot_smuggle_private_match_args(sb):
    code = "import collections\nP = collections.namedtuple('P', ['__globals__'])\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ValueError", "underscore")
    code = "import typing\nP = typing.NamedTuple('P', [('_x', int)])\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ValueError", "underscore")


async def test_namedtuple_and_typeddict_functional_forms_define_no_dunders(sb):
    code = (
        "import collections, typing\n"
        "N = collections.namedtuple('N', ['__globals__', 'ok'], rename=True, defaults=[1], module='os')\n"
        "T = typing.TypedDict('T', {'__globals__': int, '__class__': str})\n"
        "return [N._fields, sorted(T()), N(0)._replace(ok=2)]"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == [["_0", "ok"], [], [0, 2]]


async def test_namedtuple_str_subclass_field_names_cannot_reach_eval(sb):
    code = """
import collections
class S(str):
    def isidentifier(self):
        return True
    def startswith(self, p):
        return False
    def __str__(self):
        return self
N = collections.namedtuple("N", [S("a: open(SECRET_PATH).read() #")])
return N(1)
"""
    result = await sb.run(code)
    assert result.error is not None
    assert result.error.kind == "exception"
    assert "TypeError" in result.error.message or "ValueError" in result.error.message
    sb.assert_no_leak(result)


COLLECTIONS_GADGETS_CLOSED = [
        (
            "namedtuple_str_subclass_lying_isidentifier",
            """
import collections
class S(str):
    def __str__(self):
        return self
    def isidentifier(self):
        return True
    def startswith(self, p):
        return False
collections.namedtuple("P", [S("a=open(OUT_PATH, 'w')")])
""",
            "exception",
            ("TypeError", "must be strings"),
        ),
        (
            "namedtuple_injected_field_plain",
            'import collections\ncollections.namedtuple("P", ["a=open(" + OUT_PATH + ", 1)"])',
            "exception",
            ("ValueError",),
        ),
        (
            "namedtuple_underscore_field",
            "import collections\ncollections.namedtuple('P', ['__class__'])",
            "exception",
            ("ValueError",),
        ),
        (
            "namedtuple_injected_typename",
            'import collections\ncollections.namedtuple("P(): pass\\nopen(" + OUT_PATH + ")", ["a"])',
            "exception",
            ("ValueError",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", COLLECTIONS_GADGETS_CLOSED, ids=[c[0] for c in COLLECTIONS_GADGETS_CLOSED])
async def test_collections_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


COLLECTIONS_CALLBACKS = [
    (
        "defaultdict / ChainMap / Counter",
        "import collections\nd = collections.defaultdict(lambda: 'made')\ncm = collections.ChainMap({'a': 1}, {'b': 2})\n"
        "return [d['x'], cm.new_child({'c': 3})['c'], dict(cm.parents), collections.Counter('abca').most_common(1)]",
        ["made", 3, {"b": 2}, [["a", 2]]],
    ),
]


@pytest.mark.parametrize("case", COLLECTIONS_CALLBACKS, ids=[c[0] for c in COLLECTIONS_CALLBACKS])
async def test_collections_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


COLLECTIONS_HARMLESS = [
        (
            "namedtuple_module_is_just_data",
            "import collections\nP = collections.namedtuple('P', 'a b', defaults=[print], module=print)\n"
            "return [P(1).b is print, P(1)._asdict()['a']]",
            [True, 1],
        ),
        (
            "defaultdict_factory_gets_no_arguments",
            "import collections\nseen = []\ndef fac(*a):\n    seen.append(len(a))\n    return 0\n"
            "d = collections.defaultdict(fac)\nd['x']\nreturn seen",
            [0],
        ),
]


@pytest.mark.parametrize("name, code, expected", COLLECTIONS_HARMLESS, ids=[c[0] for c in COLLECTIONS_HARMLESS])
async def test_collections_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
