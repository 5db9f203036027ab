"""random: the module's bound methods hand out no `__self__`, and crafted generator state (from a
subclass's `getstate` or `setstate`) is an error, not a corrupted generator.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


RANDOM_CLOSED = [
    ("random bound method __self__", "import random\nreturn getattr(random.random, '__self__')", "exception",
     ["private"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", RANDOM_CLOSED, ids=[c[0] for c in RANDOM_CLOSED])
async def test_random_closed_paths(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


RANDOM_GADGETS_CLOSED = [
        (
            "random_subclass_crafted_state",
            "import random, copy\nclass R(random.Random):\n    def getstate(self):\n"
            "        return (3, (1,) * 5, None)\ncopy.copy(R(1))",
            "exception",
            ("Error",),
        ),
        (
            "random_setstate_crafted",
            "import random\nr = random.Random()\nr.setstate((3, tuple(range(700)), None))",
            "exception",
            ("Error",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", RANDOM_GADGETS_CLOSED, ids=[c[0] for c in RANDOM_GADGETS_CLOSED])
async def test_random_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()
