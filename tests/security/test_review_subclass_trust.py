"""Review: host classes a snippet can subclass (or feed a subclass instance to) where host code
trusts an overridable method or attribute of the snippet's object and uses it in exec/eval,
setattr, a format string, a regex, or hands it a host-internal object.

Each case checks the refusal or harmless outcome and the absence of the effect. Holes stay
strict xfails (`HOLE: ...`) so the suite flips when they are fixed.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def HOLE(reason: str):  # noqa: N802 - reads like a marker
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# == HOLE: re.escape hands re's private `_special_chars_map` to a str subclass's translate() ======
#
# `re.escape(pattern)` is `pattern.translate(_special_chars_map)` for any `str` instance. The
# shim exposes the real `re.escape`, so a str subclass with its own `translate` receives the
# module-level dict and can rewrite it: every later `re.escape` in the process (host code that
# builds a regex from untrusted text) stops escaping. `string.Template` subclasses reach the
# same call through `re.escape(cls.delimiter)` in `__init_subclass__`. In-process only: the
# worker is single-use (see the confinement case below).
RE_ESCAPE_POISON = """
import re
got = []
class S(str):
    def translate(self, table):
        got.append(table)
        return "x"
re.escape(S("a.b"))
if got:
    got[0][ord(".")] = "."
    got[0][ord("q")] = "(?s:.*)"
return len(got)
"""


def test_re_escape_table_not_handed_to_snippet(isolated):
    check = "import re\nstate = [re.escape('a.q'), bool(re.fullmatch(re.escape('q'), 'anything'))]"
    report = isolated(RE_ESCAPE_POISON, check)
    assert report["before"] == ["a\\.q", False]
    assert report["after"] == report["before"], "the snippet rewrote re.escape's table for the host"
    assert report["next"]["error"] is None


TEMPLATE_DELIMITER_POISON = """
import string
got = []
class S(str):
    def translate(self, table):
        got.append(table)
        return "[$]"
class T(string.Template):
    delimiter = S("$")
if got:
    got[0][ord(".")] = "."
return len(got)
"""


def test_template_delimiter_does_not_reach_re_escape_table(isolated):
    check = "import re\nstate = re.escape('a.b')"
    report = isolated(TEMPLATE_DELIMITER_POISON, check)
    assert report["before"] == "a\\.b"
    assert report["after"] == report["before"], "the snippet rewrote re.escape's table for the host"


async def test_re_escape_poisoning_confined_to_worker(sb):
    result = await sb.run(RE_ESCAPE_POISON, backend="worker")
    assert result.ok, result  # it poisons its own, single-use process only
    nxt = await sb.run("import re\nreturn re.escape('a.q')", backend="worker")
    assert nxt.ok and nxt.value == "a\\.q"
    sb.assert_no_leak(nxt)


# == HOLE: textwrap.TextWrapper.unicode_whitespace_trans is a shared, mutable host dict ===========
#
# Readable as a public class attribute (and also handed to a str subclass's `translate` by
# `_munge_whitespace`); mutating it changes `textwrap.wrap/fill` for the whole host process.
TEXTWRAP_POISON = """
import textwrap
got = []
class S(str):
    def expandtabs(self, n):
        return self
    def translate(self, table):
        got.append(table)
        return str(self)
textwrap.TextWrapper(width=10).wrap(S("a b"))
if got:
    got[0][ord("q")] = "Z"
else:
    textwrap.TextWrapper.unicode_whitespace_trans[ord("q")] = "Z"
return textwrap.fill("qqq")
"""


@pytest.mark.xfail(strict=True, reason="in-process limitation (SECURITY.md): TextWrapper.unicode_whitespace_trans is a mutable public class attribute shared with the host")
def test_textwrap_translate_table_not_shared(isolated):
    check = "import textwrap\nstate = textwrap.fill('qqq')"
    report = isolated(TEXTWRAP_POISON, check)
    assert report["before"] == "qqq"
    assert report["after"] == report["before"], "the snippet changed textwrap for the host"


async def test_textwrap_poisoning_confined_to_worker(sb):
    result = await sb.run(TEXTWRAP_POISON, backend="worker")
    assert result.ok, result
    nxt = await sb.run("import textwrap\nreturn textwrap.fill('qqq')", backend="worker")
    assert nxt.ok and nxt.value == "qqq"


# == HOLE (low): copy.deepcopy's memo hands back the originals, e.g. a bound method's __self__ ====
#
# `copy._keep_alive` appends every original it copied to `memo[id(memo)]`; a snippet passing its
# own dict as memo reads them back. For `random.randint` (a bound method of the run's private
# `random.Random`) that is the `__self__` the guards refuse to hand out. The Random is per run,
# so nothing host-wide leaks today, but any Python-level bound method of a host object in a shim
# would give away its instance (and, through its reduce state, its attribute values).
MEMO_SELF = """
import copy, random
m = {}
copy.deepcopy(random.randint, m)
kept = [v for v in m.values() if type(v) is list]
return [type(x).__name__ for x in (kept[0] if kept else [])]
"""


async def test_deepcopy_memo_does_not_leak_method_self(sb):
    result = await sb.run(MEMO_SELF, backend="worker")
    sb.assert_no_leak(result)
    assert not (result.ok and "Random" in result.value), result


# == harmless: host-internal callables / formats reached through overridable hooks ================


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


async def test_tzinfo_tzname_replace_only_shapes_strftime_output(sb):
    code = """
import datetime
class S(str):
    def replace(self, a, b):
        return "%Y"
class Z(datetime.tzinfo):
    def utcoffset(self, d):
        return datetime.timedelta(0)
    def tzname(self, d):
        return S("Q%")
    def dst(self, d):
        return None
return datetime.datetime(2020, 1, 1, tzinfo=Z()).strftime("%Z|%z")
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == "2020|+0000"  # a format directive, nothing more
    sb.assert_no_leak(result)


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


async def test_typing_namedtuple_functional_str_subclass_refused(sb):
    code = """
import typing
class S(str):
    def isidentifier(self):
        return True
    def __str__(self):
        return self
N = typing.NamedTuple("N", [(S("a: open(SECRET_PATH).read() #"), int)])
return N(1)
"""
    result = await sb.run(code)
    assert result.error is not None and result.error.kind == "exception"
    sb.assert_no_leak(result)


async def test_overridden_descriptor_attributes_are_ignored_by_c_code(sb):
    code = """
import functools, enum, collections, fractions, uuid
class Pr(property):
    @property
    def fget(self):
        return len
class C:
    @Pr
    def x(self):
        return 1
class P(functools.partial):
    @property
    def func(self):
        return repr
class E(enum.Enum):
    A = 1
    @property
    def name(self):
        return "__class__"
class D(collections.defaultdict):
    @property
    def default_factory(self):
        return repr
class U(uuid.UUID):
    @property
    def hex(self):
        return "%s{0.__class__}"
class S(super):
    def __init__(self, *a):
        pass
return [C().x, P(len, "abc")(), repr(E.A), str(E.A), D(list)["k"], str(U(int=5)), type(S()).__name__]
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == [1, 3, "<E.A: 1>", "E.A", [], "00000000-0000-0000-0000-000000000005", "S"]


async def test_json_dict_subclass_items_only_shapes_output(sb):
    code = """
import json
class D(dict):
    def items(self):
        return [("a", 1)]
return [json.dumps(D(z=2)), json.dumps(D(z=2), indent=1, sort_keys=True)]
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == ['{"a": 1}', '{\n "a": 1\n}']


async def test_difflib_format_uses_snippet_format_only_as_text(sb):
    code = """
import difflib
class S(str):
    def __format__(self, spec):
        return "{0.__class__}"
return list(difflib.unified_diff(["a"], ["b"], fromfile=S("x"), tofile="y", lineterm=""))
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value[0] == "--- {0.__class__}"  # host format strings are literals: no traversal


async def test_partialmethod_overridden_func_cannot_bind_host_descriptor(sb):
    code = """
import functools
class PM(functools.partialmethod):
    @property
    def func(self):
        return str.upper
    @property
    def args(self):
        return ()
    @property
    def keywords(self):
        return {}
class C:
    m = PM(len)
return C().m()
"""
    result = await sb.run(code)
    assert result.error is not None  # str.upper bound to a C instance: a type check, no escape
    sb.assert_no_leak(result)


# == HOLE (full escape): copy.deepcopy trusts a snippet `memo` (dict subclass with its own get) ==
#
# `copy.deepcopy(x, memo)` asks `memo.get(id(obj), _nil)` for every object before copying it and
# returns whatever `get` hands back. `_checked_deepcopy` walks `x` (clean) and then passes the
# snippet's memo straight through, so `get` swaps in a state dict `{"__reduce_ex__": red}` for
# the clean instance's `__dict__`; copy._reconstruct runs `y.__dict__.update(state)` and the
# copy comes out with a reduce hook in its instance dict. `dataclasses.asdict` then deep-copies
# that value with the RAW `copy.deepcopy` (no `_copy_problem` walk), which calls the hook and
# runs `setattr(operator.attrgetter, "_count", -1)`: the shim's name check is off, and
# attrgetter("__globals__") reaches the guards' real builtins -> os.
MEMO_PLANT = """
import copy, operator, dataclasses
def red(proto):
    return (lambda: operator.attrgetter, (), (None, {"count": 1, "_count": -1}))
calls = []
class M(dict):
    def get(self, k, default=None):
        calls.append(1)
        if len(calls) == 3:  # x, type(x), then x's state dict
            return {"__reduce_ex__": red}
        return default
class X:
    pass
x = X()
x.a = 1
planted = copy.deepcopy(x, M())
@dataclasses.dataclass
class D:
    v: object
dataclasses.asdict(D(planted))
"""


async def test_deepcopy_snippet_memo_escape_worker(attrgetter_plant):
    await attrgetter_plant.assert_worker_escape_fails(MEMO_PLANT)


def test_deepcopy_snippet_memo_escape_inprocess(attrgetter_plant):
    attrgetter_plant.assert_inprocess_contained(MEMO_PLANT)


async def test_deepcopy_memo_cannot_plant_instance_dunders(sb):
    code = """
import copy
calls = []
class M(dict):
    def get(self, k, default=None):
        calls.append(1)
        if len(calls) == 3:
            return {"__reduce_ex__": len}
        return default
class X:
    pass
x = X()
x.a = 1
y = copy.deepcopy(x, M())
copy.copy(y)  # the checked copy refuses a copy holding an instance-dict hook
return "planted"
"""
    result = await sb.run(code)
    # Fixed means deepcopy refuses the memo (or ignores it): no copy with a planted hook.
    assert result.error is not None and "holding attribute" not in result.error.message, result


async def test_asdict_uses_checked_deepcopy(sb):
    # A partial whose args hold something _copy_problem refuses: copy.deepcopy refuses it,
    # dataclasses.asdict must too.
    code = """
import copy, dataclasses, functools
calls = []
class M(dict):
    def get(self, k, default=None):
        calls.append(1)
        if len(calls) == 3:
            return {"__copy__": len}
        return default
class X:
    pass
x = X()
x.a = 1
try:
    y = copy.deepcopy(x, M())
except Exception:
    return "memo refused"
@dataclasses.dataclass
class D:
    v: object
out = []
for fn in (copy.deepcopy, lambda o: dataclasses.asdict(D(o)), lambda o: dataclasses.astuple(D(o))):
    try:
        fn(y)
        out.append("copied")
    except TypeError:
        out.append("refused")
return out
"""
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == "memo refused" or result.value == ["refused", "refused", "refused"], result.value
