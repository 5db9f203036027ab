"""A snippet's `__deepcopy__` never holds `copy.deepcopy`'s memo.

The memo is keyed on real `id()`s, its keep-alive list holds the originals (host objects such as
the `calendar` module's own `TextCalendar`, reached through `calendar.month`), and its entries
decide what every later copy is. A snippet's hook gets an opaque token instead; passed back to
`copy.deepcopy(x, memo)` it continues the same copy, and nothing else is accepted as a memo.
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
c = [x for x in kept[-1] if type(x).__name__ == 'TextCalendar'][0]
calendar.Calendar.firstweekday.fset(c, 6)
return calendar.firstweekday()
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_deepcopy_hook_gets_an_opaque_memo(sb, backend):
    result = await sb.run(CALENDAR_ESCAPE, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "values")
    probe = GRAB_MEMO + """
out = [repr(memo)]
for attempt in (lambda: memo[0], lambda: len(memo), lambda: list(memo), lambda: vars(memo),
                lambda: memo.get(0), lambda: memo._memo):
    try:
        attempt()
        out.append('allowed')
    except Exception as e:
        out.append(type(e).__name__)
return out
"""
    await sb.assert_harmless(
        probe,
        ["<deepcopy memo>", "TypeError", "TypeError", "TypeError", "TypeError", "AttributeError", "AttributeError"],
        backend=backend,
    )


def test_the_host_calendar_is_unchanged_in_process(isolated):
    report = isolated(CALENDAR_ESCAPE, "import calendar\nstate = calendar.firstweekday()")
    assert not report["hung"]
    assert report["result"]["error"]["kind"] == "exception", report["result"]
    assert report["before"] == 0 and report["after"] == 0
    assert report["next"]["error"] is None


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_token_continues_the_same_copy(sb, backend):
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
@pytest.mark.parametrize("memo", ["{}", "{0: 1}", "object()"])
async def test_a_memo_of_the_snippets_own_is_refused(sb, backend, memo):
    code = f"import copy\nreturn copy.deepcopy([1], {memo})"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "TypeError", "deepcopy(memo=...) is not supported")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_memo_through_getattr_or_asdict_is_hidden_too(sb, backend):
    # `copy` finds the hook with getattr (so a `__getattr__` can answer it), and
    # `dataclasses.asdict` deep-copies with a memo `copy.deepcopy` makes itself.
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
return [first, second, [repr(m) for m in got]]
"""
    await sb.assert_harmless(code, [["g"], {"x": "s"}, ["<deepcopy memo>"] * 3], backend=backend)
