"""re: the module's process-wide state (the compile cache, `re.escape`'s translation table) must
not be keyed by or handed to snippet objects (int subclasses as flags, str subclasses as
patterns or as `translate` receivers), so the host's own regexes keep meaning what they say;
Match and Pattern objects hand out nothing private. In-process poisoning runs in a child
interpreter; in a worker it dies with the single-use process.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# == closed: the re module's global cache keyed by a snippet int subclass ==========================
#
# re._compile (re/__init__.py) caches `_cache[type(pattern), pattern, flags] = p` with the
# caller's `flags` object as part of the key. A snippet int subclass with `__hash__` = hash(0)
# and an `__eq__` that says True to 0 makes the entry answer every later plain
# `re.compile(P)` / `re.match(P, s)` in the process: here "^[a-z]+$" comes back MULTILINE, so a
# host-side validator in a binding accepts "abc\\nrm -rf /". The snippet's `__eq__` also keeps
# running inside later host calls (it could raise and break them).
RE_POISON = """
import re
class F(int):
    def __eq__(self, other):
        return other == 0 or int(self) == other
    def __hash__(self):
        return hash(0)
for i in range(600):
    re.compile("evict" + str(i))
re.compile("^[a-z]+$", F(re.MULTILINE))
return bool(re.match("^[a-z]+$", "abc\\nrm -rf /"))
"""


def test_re_cache_poisoning_by_flags_subclass(isolated):
    check = "import re\nstate = bool(re.match('^[a-z]+$', 'abc\\nrm -rf /'))"
    report = isolated(RE_POISON, check)
    assert report["before"] is False
    assert report["after"] is False


async def test_re_cache_poisoning_confined_to_worker(sb):
    # It poisons its own, single-use process only.
    probe = 'import re\nreturn bool(re.match("^[a-z]+$", "abc\\nrm -rf /"))'
    nxt = await sb.assert_confined_to_worker(RE_POISON, probe)
    assert nxt.value is False


async def test_re_pattern_str_subclass_does_not_hit_other_entries(sb):
    code = """
import re
class S(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash("^[a-z]+$")
re.compile(S("^[a-z]+$"), re.M)
return bool(re.match("^[a-z]+$", "abc\\nzzz"))
"""
    result = await sb.run(code, backend="worker")
    assert result.ok and result.value is False, result


def test_re_flags_subclass_leaves_host_cache_clean(isolated):
    check = "import re\nstate = [bool(re.match('a', 'A')), bool(re.match('a', 'A', re.I))]"
    code = """
import re
class F(int):
    def __hash__(self):
        return hash(0)
    def __eq__(self, o):
        return True
re.match('a', 'A', F(2))
re.match('a', 'A', flags=F(2))
return 1
"""
    report = isolated(code, check)
    assert report["before"] == [False, True]
    assert report["after"] == report["before"]


def test_re_flags_that_are_no_int_are_refused_and_leave_the_host_cache_clean(isolated):
    # A review's flags object that is no int at all (`__and__`/`__or__` enough for `re` to
    # compile with, `__hash__`/`__eq__` matching the default flags) passed the shim unchanged and
    # stayed in `re`'s cache: the host's own `re.compile` then got IGNORECASE, and ran the dead
    # run's `__eq__`, whose tick raised the run's stop into host code.
    check = "import re\nstate = [re.compile('r12abc').flags, bool(re.match('r12abc', 'R12ABC'))]"
    code = """
import re
class F:
    def __hash__(self):
        return hash(0)
    def __eq__(self, other):
        return True
    def __and__(self, other):
        return 0
    def __or__(self, other):
        return other | re.I
    def __ror__(self, other):
        return other | re.I
refused = []
for call in (lambda: re.compile("r12abc", F()), lambda: re.match("r12abc", "R12ABC", flags=F())):
    try:
        call()
    except TypeError as e:
        refused.append(str(e))
return refused
"""
    report = isolated(code, check)
    assert not report["hung"]
    assert report["result"]["value"] == ["flags must be an int (re.I, re.M, ...), not 'F'"] * 2, report["result"]
    assert report["before"] == report["after"] == [32, False]
    assert report["next"]["value"] == "[1]"


RE_HARMLESS = {
    "re_positional_flags_int_subclass": (
        "import re\nclass F(int):\n    def __hash__(self):\n        return 0\n    def __eq__(self, o):\n        return True\n"
        "return [re.sub('a', 'b', 'aA', 0, F(2)), re.split('a', 'bAc', 0, F(2)), re.search('a', 'A', F(2)) is not None,"
        " re.search('a', 'A', flags=F(2)) is not None]", ["bb", ["b", "c"], True, True]),
    "re_keyword_pattern": ("import re\nreturn re.fullmatch(pattern='a+', string='aa') is not None", True),
}


@pytest.mark.parametrize("name", sorted(RE_HARMLESS))
async def test_re_harmless(sb, name):
    code, expected = RE_HARMLESS[name]
    await sb.assert_harmless(code, expected, backend="inprocess")


# == closed: re.escape hands re's private `_special_chars_map` to a str subclass's translate() =====
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
    # It poisons its own, single-use process only.
    nxt = await sb.assert_confined_to_worker(RE_ESCAPE_POISON, "import re\nreturn re.escape('a.q')")
    assert nxt.value == "a\\.q"
    sb.assert_no_leak(nxt)


RE_CLOSED = [
    pytest.param("import re\nm = re.match('a', 'a')\nreturn getattr(m.re, '__reduce__')", "exception",
                 ["AttributeError", "private"], id="re-pattern-reduce"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), RE_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_re_closed_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


RE_CLOSED_NAMED = [
    # `__class__` is `type(x)` (issue 12); the host class it gives cannot be changed.
    ("re.Match __class__", "import re\nm = re.match('a', 'a')\nc = getattr(m, '__class__')\n"
     "if c is not type(m):\n    raise LookupError('not type(x)')\nc.span = None\nreturn 1", "exception",
     ["TypeError", "cannot modify class 'Match'"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", RE_CLOSED_NAMED, ids=[c[0] for c in RE_CLOSED_NAMED])
async def test_re_closed_paths(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


RE_CALLBACKS = [
    (
        "re.sub(repl=callable)",
        "import re\ngot = []\ndef repl(m):\n"
        "    got.append([type(m).__name__, type(m.re).__name__, m.string, m.regs, m.expand(r'<\\g<0>>')])\n"
        "    return 'X'\nreturn [re.sub('a', repl, 'banana'), got[0]]",
        ["bXnXnX", ["Match", "Pattern", "banana", [[1, 2]], "<a>"]],
    ),
]


@pytest.mark.parametrize("case", RE_CALLBACKS, ids=[c[0] for c in RE_CALLBACKS])
async def test_re_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


async def test_a_lying_int_cannot_stay_in_regexflag_member_cache(sb):
    """`type(re.I)` is the host's `re.RegexFlag`; calling it with a lying `int` subclass caches a
    pseudo member keyed on the snippet's object. In-process, that entry is dropped after the run,
    so the host's own `re.I | re.M` still means IGNORECASE|MULTILINE."""
    import re

    code = """
import re
class L(int):
    def __hash__(self):
        return hash(10)
    def __eq__(self, other):
        return other is self or other == 10
type(re.I)(L(2))
return "planted"
"""
    result = await sb.run(code, backend="inprocess")
    assert result.ok and result.value == "planted", result
    assert all(type(k) is int for k in re.RegexFlag._value2member_map_)
    assert re.I | re.M == 10 and re.findall("^b", "a\nB", re.I | re.M) == ["B"]
