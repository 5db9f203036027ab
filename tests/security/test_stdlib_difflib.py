"""difflib: `isjunk` sees only the sequences' elements, and a str subclass's `__format__` is used
as text, never as a format string that traverses.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


DIFFLIB_CALLBACKS = [
    (
        "difflib isjunk",
        "import difflib\nseen = []\ndef junk(c):\n    seen.append(type(c).__name__)\n    return c == ' '\n"
        "s = difflib.SequenceMatcher(junk, 'a b', 'a c')\nreturn [round(s.ratio(), 3), sorted(set(seen))]",
        [0.667, ["str"]],
    ),
]


@pytest.mark.parametrize("case", DIFFLIB_CALLBACKS, ids=[c[0] for c in DIFFLIB_CALLBACKS])
async def test_difflib_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


DIFFLIB_HARMLESS = [
        (
            "sequence_matcher_isjunk_sees_elements",
            "import difflib\nseen = set()\ndef j(x):\n    seen.add(type(x).__name__)\n    return False\n"
            "difflib.SequenceMatcher(j, 'abc', 'abd').ratio()\nreturn sorted(seen)",
            ["str"],
        ),
]


@pytest.mark.parametrize("name, code, expected", DIFFLIB_HARMLESS, ids=[c[0] for c in DIFFLIB_HARMLESS])
async def test_difflib_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)


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
