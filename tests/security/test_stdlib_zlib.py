"""`zlib`: decompression bombs stop at the shim's bound, before the memory they ask for."""

from __future__ import annotations

import pytest

from sandbox.shims.zlib import MAX_OUTPUT

pytestmark = pytest.mark.anyio

BOMB = """
import zlib
bomb = zlib.compress(b'\\0' * (SIZE), 9)
try:
    zlib.decompress(bomb)
except zlib.error as e:
    return [len(bomb) < 1_000_000, str(e)]
return 'decompressed'
"""


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_decompression_bomb_is_refused_at_the_bound(sb, backend):
    result = await sb.run(BOMB.replace("SIZE", str(MAX_OUTPUT + 1)), backend=backend, memory=512 * 1024 * 1024)
    assert result.ok, result
    assert result.value == [True, f"decompressed data exceeds the sandbox limit of {MAX_OUTPUT} bytes"]
    await sb.assert_next_run_ok(backend)


async def test_streaming_objects_are_not_offered(sb):
    result = await sb.run("import zlib\nreturn str(zlib.decompressobj())")
    sb.assert_error(result, "exception", "has no attribute 'decompressobj'")
