"""Addresses: what `id()` promises and what it does not.

`id()` numbers objects per run (stable for an object, distinct for live ones). It does not hide
where the host keeps objects: `repr(object())` and `hash()` of identity-hashed objects show
addresses, and the sandbox does not claim otherwise (SECURITY.md). What the Python layers never
hand a snippet is a table keyed on real addresses: `copy.deepcopy`'s memo is keyed on the run's
own `id()` numbers (`tests/security/test_copy_memo.py`).
"""

from __future__ import annotations

import pytest

from .test_copy_memo import GRAB_MEMO

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_id_numbers_objects_per_run(sb, backend):
    code = """
a, b = object(), [1]
return [id(a), id(b), id(a), id(a) != id(b)]
"""
    first = await sb.assert_harmless(code, [0x1000, 0x1010, 0x1000, True], backend=backend)
    second = await sb.run(code, backend=backend)
    assert second.value == first.value  # numbering starts again in every run


@pytest.mark.parametrize("backend", BACKENDS)
async def test_no_memo_keyed_on_addresses_reaches_the_snippet(sb, backend):
    code = GRAB_MEMO + """
return [sorted(memo.keys()), sorted([id(memo), id(got)])]
"""
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    keys, ids = result.value
    # The copied list's entry and the keep-alive entry (under the memo's own number), both keyed
    # on the run's `id()` numbers, which start at 0x1000 in every run.
    assert len(keys) == 2 and keys[1] == ids[0], result.value
    assert all(0x1000 <= key < 0x1100 for key in keys), result.value
