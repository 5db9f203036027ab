"""fractions: a duck-typed rational with a zero denominator is refused, not trusted.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


FRACTIONS_GADGETS_CLOSED = [
        (
            "fraction_duck_rational",
            "import fractions\nclass Q:\n    numerator = 1\n    denominator = 0\nfractions.Fraction(Q())",
            "exception",
            ("TypeError",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", FRACTIONS_GADGETS_CLOSED, ids=[c[0] for c in FRACTIONS_GADGETS_CLOSED])
async def test_fractions_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()
