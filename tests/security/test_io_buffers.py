"""`io.BytesIO` hands out no `memoryview` of its memory: the sandbox's class wraps a real stream
instead of subclassing it, so neither `super()` nor its `__mro__` reaches the real `getbuffer`."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]

ROUTES = {
    "method": "b.getbuffer()",
    "super": "super(io.BytesIO, b).getbuffer()",
    "mro-base": "io.BytesIO.__mro__[1].getbuffer(b)",
    "subclass-super": "class B(io.BytesIO):\n    def grab(self):\n        return super().getbuffer()\nB(b'abc').grab()",
    "iter": "iter(b).getbuffer()",
    "with": "with b as s:\n    s.getbuffer()",
}
EXPECTED = {
    "method": "getbuffer() is not available", "super": "super() cannot start past 'BytesIO'",
    "mro-base": "has no attribute 'getbuffer'", "subclass-super": "io.BytesIO cannot be subclassed",
    "iter": "getbuffer() is not available", "with": "getbuffer() is not available",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("route", sorted(ROUTES))
async def test_no_memoryview_of_a_bytesio(sb, backend, route):
    code = f"import io\nb = io.BytesIO(b'abc')\n{ROUTES[route]}\nreturn 'got a buffer'"
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", EXPECTED[route])
    # The stream is unchanged and still works after the refusal.
    after = f"import io\nb = io.BytesIO(b'abc')\ntry:\n    {ROUTES[route].splitlines()[0]}\nexcept Exception:\n    pass\nreturn b.getvalue().decode()"
    if "\n" not in ROUTES[route]:
        await sb.assert_harmless(after, "abc", backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_bytesio_still_works_as_a_stream(sb, backend):
    code = """
import io, tomllib, copy
b = io.BytesIO()
b.write(b'a = 1\\nb = 2\\n')
b.seek(0)
lines = [line for line in b]
b.seek(0)
parsed = tomllib.load(b)
with io.BytesIO(b'xy') as s:
    first = s.read(1)
    c = copy.copy(s)
closed = s.closed
return [len(lines), parsed, first.decode(), c.read().decode(), closed, [t.__name__ for t in io.BytesIO.__mro__]]
"""
    await sb.assert_harmless(code, [2, {"a": 1, "b": 2}, "x", "y", True, ["BytesIO", "object"]], backend=backend)
