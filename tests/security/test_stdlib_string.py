"""string.Template: placeholders are looked up in the mapping, never traversed as attributes;
subclass hooks (`delimiter`, `idpattern`, `pattern`, a pattern object) shape only the regex and
the output, and reach no host internals.
"""

from __future__ import annotations

from typing import Any

import pytest
from hostile_zoo import find_forbidden, generated_by_dataclass, zoo_through_calls  # noqa: I001

from sandbox import guards as sandbox_guards

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


async def test_string_template_does_not_traverse(sb):
    result = await sb.run("import string\nreturn string.Template('${a.__class__}').substitute(a=1)")
    sb.assert_error(result, "exception", "ValueError", "Invalid placeholder")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_template_subclass_does_not_traverse(sb, backend):
    code = (
        "import string\n"
        "class T(string.Template):\n    idpattern = r'[a-z_][a-z0-9_.]*'\n"
        "t = T('$a.__class__ and ${b.__globals__}')\n"
        "return t.safe_substitute({'a.__class__': 'one'})"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == "one and ${b.__globals__}"


async def test_template_pattern_attribute_is_harmless(sb):
    code = """
import string
class T(string.Template):
    pattern = r"\\$(?:(?P<escaped>\\$)|(?P<named>[a-z]+)|(?P<braced>x)|(?P<invalid>))"
return T("$abc").substitute(abc=1)
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == "1"


async def test_template_delimiter_set_after_class_is_harmless(isolated):
    code = """
import string
got = []
class S(str):
    def translate(self, t):
        got.append(t)
        return "x"
class T(string.Template):
    pass
T.delimiter = S("$")
class U(T):
    pass
return [T("$a").substitute(a=1), len(got)]
"""
    check = "import re\nstate = re.escape('a.q')"
    report = isolated(code, check)
    assert report["after"] == report["before"] == "a\\.q"
    assert report["next"]["error"] is None


async def test_template_bases_not_reachable(sb):
    # `__bases__`/`__mro__` are introspection (issue 12). The run's `Template` is prelude code
    # whose only base is `object`, as CPython's is: the real `string.Template` is in no MRO.
    code = (
        "import string\nT = string.Template\n"
        "return [T.__bases__ == (object,), [c is T for c in T.__mro__], T.__mro__[-1] is object,\n"
        "        [c is T for c in T.mro()]]"
    )
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r
    assert r.value == [True, [True, False], True, [True, False]]


REAL_TEMPLATE_POISONS_RE_ESCAPE = """
import string, re
RT = string.Template.mro()[1] if len(string.Template.mro()) > 2 else object
class L(str):
    def translate(self, table):
        table[ord('a')] = 'PWNED'
        return str.translate(self, table)
class X(RT):
    delimiter = L('$')
return re.escape('abc')
"""


def test_real_template_cannot_poison_re_escape(isolated):
    # Through the real `string.Template` (reachable by `mro()` before), a subclass's lying
    # `delimiter` got `re`'s process-wide translation table from `re.escape`.
    report = isolated(REAL_TEMPLATE_POISONS_RE_ESCAPE, "import re\nstate = re.escape('a.q')")
    assert report["result"]["value"] == "abc"
    assert report["after"] == report["before"] == "a\\.q"
    assert report["next"]["error"] is None


def test_real_template_cannot_be_subclassed() -> None:
    # Should a snippet get the real class some other way, its class statement is refused; the
    # run's own Template (prelude code, not derived from the real one) subclasses as usual.
    import string

    import sandbox.shims
    from sandbox.guards import RunGuards

    guards = RunGuards()
    factory = guards.class_factory
    with pytest.raises(TypeError, match="'Template' cannot be subclassed"):
        factory("X", (string.Template,), {})
    own = sandbox.shims.ShimSet(guards, {}).get("string").Template  # type: ignore[union-attr]
    assert not issubclass(own, string.Template) and guards.owns(own)
    sub = factory("Y", (own,), {"__qualname__": "Y", "delimiter": "%"})
    assert sub("%a").substitute(a=1) == "1"


async def test_template_pattern_object_gets_convert_but_no_internals(sb):
    code = """
import string
got = []
class Pat:
    def sub(self, fn, s):
        got.append(fn)
        return "x"
class T(string.Template):
    pass
t = T("abc")
t.pattern = Pat()
t.substitute({})
return getattr(got[0], "__globals__")["os"]
"""
    result = await sb.run(code)
    sb.assert_error(result, "exception", "private")


async def test_template_pattern_str_subclass_is_just_a_regex(sb):
    code = """
import string
class P(str):
    def replace(self, a, b):
        return "__import__"
class T(string.Template):
    pattern = P(r"\\$(?:(?P<escaped>\\$)|(?P<named>[a-z]+)|{(?P<braced>[a-z]+)}|(?P<invalid>))")
return T("$a-$$").substitute({"a": 1})
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == "1-$"


STRING_GADGETS_CLOSED = [
        (
            "template_subclass_bad_pattern",
            "import string\nclass T(string.Template):\n    idpattern = '('\nT('$a').substitute(a=1)",
            "exception",
            ("error",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", STRING_GADGETS_CLOSED, ids=[c[0] for c in STRING_GADGETS_CLOSED])
async def test_string_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


STRING_CALLBACKS = [
    (
        "string.Template subclass hooks",
        "import string\nclass T(string.Template):\n    delimiter = '%'\n    idpattern = '[a-z_]+'\n"
        "class M(dict):\n    def __getitem__(self, k):\n        return '<' + k + '>'\n"
        "return T('%__globals__ %x').substitute(M())",
        "<__globals__> <x>",
    ),
]


@pytest.mark.parametrize("case", STRING_CALLBACKS, ids=[c[0] for c in STRING_CALLBACKS])
async def test_string_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


STRING_HARMLESS = [
        (
            "template_custom_pattern_reads_mapping_only",
            "import string\nclass T(string.Template):\n    delimiter = '%'\n    idpattern = '[_a-z]+'\n"
            "return T('%__class__ %x').substitute({'__class__': 'c', 'x': 'y'})",
            "c y",
        ),
]


@pytest.mark.parametrize("name, code, expected", STRING_HARMLESS, ids=[c[0] for c in STRING_HARMLESS])
async def test_string_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)


#: `Template` is a prelude: every way a zoo value can reach it, as snippet code (the template,
#: the mapping, a keyword, each pattern setting of a subclass).
TEMPLATE_CALLS_SOURCE = """
import string
def sub(**settings):
    return type('T', (string.Template,), settings)
CALLS = {
    'substitute': lambda v: string.Template('$a ${b} $$').substitute(v),
    'safe-substitute': lambda v: string.Template('$a ${b} $$ $').safe_substitute(v),
    'chained': lambda v: string.Template('$a ${b}').substitute(v, a='x'),
    'safe-chained': lambda v: string.Template('$a ${b}').safe_substitute(v, a='x'),
    'keyword': lambda v: string.Template('$a').substitute(a=v),
    'template': lambda v: string.Template(v).safe_substitute({'a': 1}),
    'template-substitute': lambda v: string.Template(v).substitute({}),
    'identifiers': lambda v: string.Template(v).get_identifiers(),
    'valid': lambda v: string.Template(v).is_valid(),
    'delimiter': lambda v: sub(delimiter=v)('$a').safe_substitute(a=1),
    'idpattern': lambda v: sub(idpattern=v)('$a').safe_substitute(a=1),
    'braceidpattern': lambda v: sub(braceidpattern=v)('${a}').safe_substitute(a=1),
    'flags': lambda v: sub(flags=v)('$a').safe_substitute(a=1),
    'pattern': lambda v: sub(pattern=v)('$a').safe_substitute(a=1),
}
return [ZOO, LOG, CALLS]
"""

def _class_building(code: Any) -> bool:
    """Callers a test accepts: the run's class factory, which builds every snippet class (a class
    statement too) and so calls a descriptor's `__set_name__` as CPython's `type()` does, and
    the `__repr__` that `@dataclass` generated (`generated_by_dataclass`)."""
    return code is sandbox_guards._ClassFactory.__call__.__code__ or generated_by_dataclass(code)


@pytest.mark.filterwarnings("ignore:The re.TEMPLATE/re.T flag is deprecated")  # a zoo int's flags
def test_template_never_hands_a_zoo_object_to_host_code() -> None:
    outcomes, log, found, foreign = zoo_through_calls(TEMPLATE_CALLS_SOURCE, allowed=_class_building)
    assert found == [], "host code acted on zoo objects:\n" + "\n".join(found[:40])
    assert len(log) > 50  # the zoo's hooks ran, as the snippet's own code
    assert find_forbidden([outcomes, log]) == []
    assert foreign == []
    # The mapping's own `__getitem__` ran, as the snippet's code, with plain names.
    assert ("LyingDict.__getitem__", ("a",), {}) in log


@pytest.mark.parametrize("backend", BACKENDS)
async def test_template_errors_are_cpythons(sb, backend) -> None:
    code = (
        "import string\nout = []\n"
        "for t, m in [('abcd$', {}), ('abcd $', {}), ('$a', {}), ('x\\n  $!', {}), ('${a', {'a': 1})]:\n"
        "    try:\n        string.Template(t).substitute(m)\n"
        "    except (ValueError, KeyError) as e:\n        out.append([type(e).__name__, str(e)])\n"
        "return out"
    )
    result = await sb.run(code, backend=backend)
    assert result.error is None, result.error
    assert result.value == [
        # CPython 3.11's own messages (the column counts from the character after the delimiter)
        ["ValueError", "Invalid placeholder in string: line 1, col 5"],
        ["ValueError", "Invalid placeholder in string: line 1, col 6"], ["KeyError", "'a'"],
        ["ValueError", "Invalid placeholder in string: line 2, col 3"],
        ["ValueError", "Invalid placeholder in string: line 1, col 1"],
    ]
