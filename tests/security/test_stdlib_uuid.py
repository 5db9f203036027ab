"""uuid: a UUID stays immutable in a snippet subclass.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


UUID_GADGETS_CLOSED = [
        (
            "uuid_subclass_setattr_immutable",
            "import uuid\nclass U(uuid.UUID):\n    pass\nu = U(int=5)\nu.int = 7",
            "exception",
            ("TypeError", "immutable"),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", UUID_GADGETS_CLOSED, ids=[c[0] for c in UUID_GADGETS_CLOSED])
async def test_uuid_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()
