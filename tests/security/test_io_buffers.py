"""The sandbox's `io` streams wrap real ones instead of subclassing them. `io.BytesIO` hands out
no `memoryview` of its memory: neither `super()` nor its `__mro__` reaches the real `getbuffer`.
Neither stream can be subclassed: a subclass of a real stream gets the C `IOBase` finalizer,
which calls `close` by name when the object is freed, outside the run."""

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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_stringio_cannot_be_subclassed_and_still_works_as_a_stream(sb, backend):
    # A review's subclass held a C `functools.partial` as `close`, and the finalizer called it
    # in the host when the collector freed the object after the run (it printed to the host's
    # stdout, and changed `re.RegexFlag`'s value map after the put-back).
    code = """
import io, csv, copy, json
try:
    class S(io.StringIO):
        pass
except TypeError as e:
    refused = str(e)
s = io.StringIO("a,b\\n1,2\\n")
rows = list(csv.reader(s))
out = io.StringIO()
csv.writer(out).writerow(["x", "y"])
out.write(json.dumps({"k": 1}))
with io.StringIO("l1\\nl2\\n") as t:
    lines = [line for line in t]
c = copy.copy(out)
return [refused, rows, out.getvalue(), lines, t.closed, c.getvalue(), io.StringIO("ab", newline=None).read(),
        [k.__name__ for k in io.StringIO.__mro__]]
"""
    await sb.assert_harmless(code, [
        "io.StringIO cannot be subclassed in the sandbox", [["a", "b"], ["1", "2"]], 'x,y\r\n{"k": 1}',
        ["l1\n", "l2\n"], True, 'x,y\r\n{"k": 1}', "ab", ["StringIO", "object"],
    ], backend=backend)
