"""heapq and bisect (with sorted/max): key functions see only the items being ordered.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


KEY_CALLBACKS = [
    (
        "sort and heap keys",
        "import heapq, bisect\nseen = []\ndef k(x):\n    seen.append(type(x).__name__)\n    return -x\n"
        "return [heapq.nsmallest(2, [3, 1, 2], key=k), sorted([1, 3, 2], key=k), max([1, 2], key=k),"
        " bisect.bisect([1, 2, 3], -2, key=k), list(heapq.merge([1], [2], key=k)), sorted(set(seen))]",
        [[3, 2], [3, 2, 1], 1, 3, [2, 1], ["int"]],
    ),
]


@pytest.mark.parametrize("case", KEY_CALLBACKS, ids=[c[0] for c in KEY_CALLBACKS])
async def test_key_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)


KEY_HARMLESS = [
        (
            "heapq_bisect_key_callbacks_see_items",
            "import heapq, bisect\nseen = set()\ndef k(x):\n    seen.add(type(x).__name__)\n    return x\n"
            "a = [1, 3]\nbisect.insort(a, 2, key=k)\nm = list(heapq.merge([1], [2], key=k))\n"
            "heapq.nsmallest(1, [5, 4], key=k)\nreturn [a, m, sorted(seen)]",
            [[1, 2, 3], [1, 2], ["int"]],
        ),
]


@pytest.mark.parametrize("name, code, expected", KEY_HARMLESS, ids=[c[0] for c in KEY_HARMLESS])
async def test_key_callbacks_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)
