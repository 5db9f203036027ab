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
