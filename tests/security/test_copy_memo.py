"""The memo a snippet's `__deepcopy__` gets is a plain dict of the snippet's own objects.

CPython's memo is keyed on real `id()`s, its keep-alive list holds every original the copy
visited, and the real `copy` visits host internals: a bound method's `__self__` (the `calendar`
module's own `TextCalendar`, reached through `calendar.month`), an iterator's container, a reduce
value's parts. The `copy` prelude walks as the snippet's own code instead: the memo is its own
dict, keyed on the run's `id()`, and holds only what the walk read with the snippet's rights
(its objects, their public attributes) and the copies it made, so the snippet may have it, pass
it back to `copy.deepcopy(x, memo)` to continue the same copy, or bring its own.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

#: What a snippet's hook is given when `calendar.month` (a bound method of the module's own
#: TextCalendar) is deep-copied next to it.
GRAB_MEMO = """
import copy, calendar
got = []
class S:
    def __deepcopy__(self, memo):
        got.append(memo)
        return self
copy.deepcopy([calendar.month, S()])
memo = got[0]
"""

#: F3: the hook's memo held the module's TextCalendar; its `firstweekday` setter changes the host.
CALENDAR_ESCAPE = GRAB_MEMO + """
kept = [v for v in memo.values() if isinstance(v, list)]
c = [x for v in kept for x in v if type(x).__name__ == 'TextCalendar'][0]
calendar.Calendar.firstweekday.fset(c, 6)
return calendar.firstweekday()
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_deepcopy_hook_gets_a_plain_memo_without_host_originals(sb, backend):
    result = await sb.run(CALENDAR_ESCAPE, backend=backend)
    # No TextCalendar anywhere in the memo: the escape's second step finds nothing.
    sb.assert_error(result, "exception", "IndexError")
    probe = GRAB_MEMO + """
kept = [x for v in memo.values() if type(v) is list for x in v]
names = {type(x).__name__ for x in kept}
return [type(memo).__name__, sorted(names - {type(calendar.month).__name__}), type(calendar.month).__name__ in names]
"""
    # The memo holds the outer list's copy (`calendar.month` is its own copy: its object is the
    # module's, never the snippet's to copy) and, after the walk, the original list the snippet
    # handed in: its own objects only.
    await sb.assert_harmless(probe, ["dict", ["S", "list"], True], backend=backend)


def test_the_host_calendar_is_unchanged_in_process(isolated):
    report = isolated(CALENDAR_ESCAPE, "import calendar\nstate = calendar.firstweekday()")
    assert not report["hung"]
    assert report["result"]["error"]["kind"] == "exception", report["result"]
    assert report["before"] == 0 and report["after"] == 0
    assert report["next"]["error"] is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_memo_continues_the_same_copy(sb, backend):
    # The idiom `copy.deepcopy(self.part, memo)` keeps shared parts shared, as in Python.
    code = """
import copy
class Box:
    def __init__(self, items):
        self.items = items
    def __deepcopy__(self, memo):
        return Box(copy.deepcopy(self.items, memo))
shared = [1]
outer = [shared, Box([shared, shared])]
c = copy.deepcopy(outer)
return [c[1].items[0] is c[1].items[1], c[0] is c[1].items[0], c[0] is shared, c[0] == shared]
"""
    await sb.assert_harmless(code, [True, True, False, True], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_memo_of_the_snippets_own_decides_only_its_own_copy(sb, backend):
    # As in CPython, a memo entry is the copy: the snippet gets back what it put in, and nothing
    # else is read or written (a dict subclass's own `get` runs as the snippet's code).
    code = """
import copy
x = [1]
planted = copy.deepcopy([x, 2], {id(x): 'planted'})
calls = []
class M(dict):
    def get(self, key, default=None):
        calls.append(type(key).__name__)
        return default
fresh = copy.deepcopy([x], M())
return [planted, fresh, fresh[0] is not x, calls]
"""
    await sb.assert_harmless(code, [["planted", 2], [[1]], True, ["int"] * 4], backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_memo_through_getattr_or_asdict_is_plain_too(sb, backend):
    # `deepcopy` finds the hook on the instance (so a `__getattr__` can answer it), and
    # `dataclasses.asdict` deep-copies its leaves with the same prelude.
    code = """
import copy, dataclasses
got = []
class G:
    def __getattr__(self, name):
        if name == '__deepcopy__':
            return lambda memo: got.append(memo) or 'g'
        raise AttributeError(name)
class S:
    def __deepcopy__(self, memo):
        got.append(memo)
        return 's'
@dataclasses.dataclass
class D:
    x: object
first = copy.deepcopy([G()])
second = dataclasses.asdict(D(S()))
direct = S.__deepcopy__(S(), {'planted': 1})
return [first, second, [type(m).__name__ for m in got], [len(m) for m in got]]
"""
    # Each walk's memo ends with a copy and the keep-alive list of originals; the direct call
    # gets exactly the dict it was given.
    await sb.assert_harmless(code, [["g"], {"x": "s"}, ["dict"] * 3, [3, 2, 1]], backend=backend)
