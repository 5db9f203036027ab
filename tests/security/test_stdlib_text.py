"""`pprint`, `shlex`, `fnmatch`, `struct`, `urllib.parse`: output goes to the run's log, no
process stream is read or written, and the stdlib's process-wide caches only see plain
strings (a `str` subclass with a lying hash cannot answer the host's later lookups)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_pprint_writes_to_the_log_only(sb):
    result = await sb.run("import pprint\npprint.pprint({'a': [1, 2]})\npprint.pp([3])\nreturn 1")
    assert result.ok and result.logs == ["{'a': [1, 2]}", "[3]"], result


@pytest.mark.parametrize(("code", "fragment"), [
    ("import pprint\npprint.pprint(1, stream=1)\nreturn 1", "stream=...) is not available"),
    ("import shlex\nreturn shlex.split(None)", "needs a string"),
    ("import shlex\nreturn str(shlex.shlex)", "has no attribute 'shlex'"),
])
async def test_process_streams_stay_out_of_reach(sb, code, fragment):
    result = await sb.run(code)
    sb.assert_error(result, "exception", fragment)


LIAR = """
class S(str):
    def __hash__(self):
        return hash('*.py')
    def __eq__(self, other):
        return True
import fnmatch, struct, urllib.parse
fnmatch.fnmatch('a.txt', S('*.txt'))
struct.calcsize(S('<I'))
urllib.parse.urlsplit(S('http://evil/'))
return 1
"""


async def test_caches_only_see_plain_strings(isolated):
    check = (
        "import fnmatch, struct, urllib.parse\n"
        "state = [fnmatch.fnmatch('a.py', '*.py'), struct.calcsize('<I'), urllib.parse.urlsplit('http://good/').netloc]"
    )
    report = isolated(LIAR, check)
    assert report["result"]["value"] == 1, report["result"]
    assert report["before"] == [True, 4, "good"] and report["after"] == report["before"]


# Found by the boundary fuzz: a pattern that is not a `str` at all (here an object with
# `__len__`, `__getitem__` and an `__eq__` that always agrees) went through `plain_str`
# unchanged, and `fnmatchcase` stored it as a key of `fnmatch`'s process-wide pattern cache,
# where the host's own later lookups compare against it (its `__eq__` runs on the host).
NON_STR_PATTERN = """
class P:
    def __hash__(self):
        return hash('*.py')
    def __eq__(self, other):
        return True
    def __len__(self):
        return 0
    def __getitem__(self, i):
        return 'x'
import fnmatch
for fn in (fnmatch.fnmatch, fnmatch.fnmatchcase):
    try:
        fn('a.py', P())
    except TypeError as e:
        print(e)
try:
    fnmatch.filter(['a.py'], P())
except TypeError as e:
    print(e)
return 1
"""


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_fnmatch_refuses_a_pattern_that_is_not_text(sb, backend):
    result = await sb.run(NON_STR_PATTERN, backend=backend)
    assert result.ok and result.value == 1, result
    assert result.logs == ["fnmatch pattern must be str or bytes, not P"] * 3, result.logs


def test_fnmatch_cache_never_holds_a_snippet_pattern(isolated):
    # The types in the keys of the real `fnmatch._compile_pattern` cache, before and after.
    check = (
        "import fnmatch, gc\n"
        "fnmatch.fnmatch('a.py', '*.py')\n"
        "caches = [d for d in gc.get_referents(fnmatch._compile_pattern) if type(d) is dict and d]\n"
        "state = sorted({type(x).__name__ for d in caches for k in d"
        " for x in (k if isinstance(k, (list, tuple)) else [k])})"
    )
    report = isolated(NON_STR_PATTERN, check)
    assert report["result"]["value"] == 1, report["result"]
    assert "P" not in report["after"] and report["after"] == report["before"], report


# Found by the boundary fuzz's full sweep: `urlsplit` is an LRU cache keyed on all three
# arguments, and the shim passed what is not text through (`urlsplit(url, '', obj)`, or
# `urljoin(obj, ...)`, which decodes it with its own `decode` and splits the result), so a
# snippet object sat among the keys the host's own later `urlsplit` calls compare against.
NON_TEXT_URL_PARTS = """
class P:
    def __hash__(self):
        return 0
    def __eq__(self, other):
        return True
    def __bool__(self):
        return True
import urllib.parse
for call in (lambda: urllib.parse.urlsplit('http://h/p', P()),
             lambda: urllib.parse.urlparse(P()),
             lambda: urllib.parse.urlsplit('http://h/p#f', '', P()),
             lambda: urllib.parse.urljoin(P(), 'x'),
             lambda: urllib.parse.urldefrag(P())):
    try:
        call()
    except TypeError as e:
        print(e)
return [urllib.parse.urlsplit('http://h/p#f', '', 0).fragment,
        urllib.parse.urljoin('http://h/a/b', 'c'),
        urllib.parse.urlunsplit(urllib.parse.urlsplit('http://h/p?q#f'))]
"""


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_urllib_parse_takes_only_plain_values(sb, backend):
    result = await sb.run(NON_TEXT_URL_PARTS, backend=backend)
    assert result.ok and result.value == ["", "http://h/a/c", "http://h/p?q#f"], result
    assert result.logs == ["urllib.parse takes text, not P"] * 5, result.logs


def test_urlsplit_cache_never_holds_a_snippet_object(isolated):
    check = (
        "import urllib.parse, gc\n"
        "urllib.parse.urlsplit('http://good/')\n"
        "caches = [d for d in gc.get_referents(urllib.parse.urlsplit) if type(d) is dict and d]\n"
        "state = sorted({type(x).__name__ for d in caches for k in d"
        " for x in (k if isinstance(k, (list, tuple)) else [k])})"
    )
    report = isolated(NON_TEXT_URL_PARTS, check)
    assert report["result"]["value"] == ["", "http://h/a/c", "http://h/p?q#f"], report["result"]
    # Only plain keys, as before the run.
    plain = {"str", "bytes", "bool", "int", "type"}
    assert set(report["after"]) <= plain and set(report["before"]) <= plain, report


# Found by the boundary fuzz: `calendar.TextCalendar`'s `prmonth`/`prweek`/`pryear` (methods, so
# the shim's list of functions did not leave them out) print to the process's `sys.stdout`:
# the host's own stdout in-process (an MCP stdio server's protocol stream). While snippet code
# runs, the process's streams are the run's log.
CALENDAR_PRINTS = """
import calendar
c = calendar.TextCalendar()
c.prmonth(2020, 1)
calendar.TextCalendar.prweek(c, c.monthdays2calendar(2020, 2)[0], 2)
return 1
"""


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_stdlib_writes_to_process_streams_go_to_the_log(sb, backend, capfd):
    result = await sb.run(CALENDAR_PRINTS, backend=backend)
    assert result.ok and result.value == 1, result
    assert result.logs[:2] == ["    January 2020", "Mo Tu We Th Fr Sa Su"], result.logs
    assert any(line.endswith(" 1  2") for line in result.logs), result.logs  # the prweek line
    out, err = capfd.readouterr()
    assert "January" not in out + err and "Mo Tu" not in out + err, (out, err)
