"""itertools: callbacks (accumulate, groupby keys, starmap) see only the snippet's items.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


ITERTOOLS_CALLBACKS = [
    (
        "itertools callbacks",
        "import itertools\nreturn [list(itertools.accumulate([1, 2, 3], lambda a, b: a * b)),"
        " [k for k, _ in itertools.groupby('aab', key=lambda c: c.upper())], list(itertools.starmap(pow, [(2, 3)]))]",
        [[1, 2, 6], ["A", "B"], [8]],
    ),
]


@pytest.mark.parametrize("case", ITERTOOLS_CALLBACKS, ids=[c[0] for c in ITERTOOLS_CALLBACKS])
async def test_itertools_callbacks_receive_only_plain_objects(sb, case):
    _, code, expected = case
    await sb.assert_harmless(code, expected)
