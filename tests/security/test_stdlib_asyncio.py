"""asyncio shim and the run's scheduler: `sleep` and `gather` take only what they document, and a
snippet that drives a coroutine by hand cannot build or forge the scheduler's requests (sleep,
gather) into anything but a snippet error.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


FORGED_SLEEP = """
import asyncio
async def s():
    await asyncio.sleep(1)
c = s()
r = c.send(None)
c.close()
Await = type(asyncio.sleep(0))
await Await(type(r)(DELAY))
return 1
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_sleep_is_a_snippet_error(sb, backend):
    try:
        result = await sb.run(FORGED_SLEEP.replace("DELAY", "'x'"), backend=backend)
    except Exception as exc:
        pytest.fail(f"sandbox.run raised {type(exc).__name__}: {exc}")
    sb.assert_error(result, "exception", "TypeError")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_negative_sleep_is_harmless(sb, backend):
    result = await sb.run(FORGED_SLEEP.replace("DELAY", "-1e9"), backend=backend)
    sb.assert_error(result, "exception", "TypeError", "sandbox internals cannot be created by a snippet")


FORGED_GATHER = """
import asyncio
async def g():
    await asyncio.gather()
c = g()
r = c.send(None)
c.close()
Gather = type(r)
Await = type(asyncio.sleep(0))
async def one():
    return 1
class Lie:
    def __len__(self):
        return 0
    def __bool__(self):
        return True
    def __iter__(self):
        return iter([one(), one()])
return await Await(Gather(Lie(), False))
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_gather_is_a_snippet_error(sb, backend):
    try:
        result = await sb.run(FORGED_GATHER, backend=backend)
    except Exception as exc:
        pytest.fail(f"sandbox.run raised {type(exc).__name__}: {exc}")
    assert result.error is not None and result.error.kind == "exception", result
    sb.assert_no_leak(result)


SCHEDULER_REFUSED = {
    # scheduler internals
    "sched_subclass": (
        "import asyncio\nT = type(asyncio.sleep(0))\nclass X(T):\n    pass\nreturn repr(X())", "exception", "internals"),
    "sched_direct": ("import asyncio\nT = type(asyncio.sleep(0))\nreturn repr(T())", "exception", "internals"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SCHEDULER_REFUSED))
async def test_scheduler_internals_refused(sb, name, backend):
    code, kind, fragment = SCHEDULER_REFUSED[name]
    await sb.assert_refused(code, kind, fragment, backend=backend)


ASYNCIO_CLOSED = [
    pytest.param("import asyncio\nreturn await asyncio.gather(1)", "exception",
                 ["TypeError", "takes awaitables"], id="gather-non-awaitable"),
    pytest.param("import asyncio\nawait asyncio.sleep(True)", "exception", ["TypeError", "number of seconds"],
                 id="sleep-bool"),
    pytest.param("import asyncio\nawait asyncio.sleep(float('nan'))", "exception", ["ValueError", "NaN"],
                 id="sleep-nan"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), ASYNCIO_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_asyncio_closed_paths(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gather_with_non_awaitables_and_odd_sleep(sb, backend):
    code = (
        "import asyncio\nout = []\n"
        "try:\n    await asyncio.gather(5)\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "class N(float):\n    pass\nawait asyncio.sleep(N(0.0))\n"
        "try:\n    await asyncio.sleep(float('nan'))\nexcept Exception as e:\n    out.append(type(e).__name__)\n"
        "r = await asyncio.gather(tools.f(1), return_exceptions=True)\nreturn [out, r]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value[0][1] == "ValueError"
    assert result.value[1] == [{"echo": [1], "kw": {}}]
    assert len(sb.spy.calls) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_gather_return_exceptions_with_base_exception(sb, backend):
    code = (
        "import asyncio\n"
        "async def boom():\n    raise SystemExit(7)\n"
        "async def ok():\n    return await tools.f(1)\n"
        "r = await asyncio.gather(boom(), ok(), return_exceptions=True)\n"
        "return [type(r[0]).__name__, r[1]]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["SystemExit", {"echo": [1], "kw": {}}]
    assert sb.spy.calls == [((1,), {})]
