"""Frames, tracebacks, generators and coroutines: `gi_frame`, `cr_frame`, `ag_frame`,
`__traceback__`, `__context__` and the code objects behind them lead to `f_globals` and the real
builtins. They must be refused, literal or computed, on every object that carries them
(exceptions, exception groups, unawaited host calls), while the ordinary generator and
coroutine protocol keeps working.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


# The tail most escapes use once they hold a real function's globals dict `G`.
READ = "return G['__builtins__']['open'](SECRET_PATH).read()"


INTERNALS = "it exposes interpreter internals"


FRAMES = [
    pytest.param("def g():\n    yield 1\nreturn g().gi_frame.f_back", "syntax", ['"gi_frame"', INTERNALS], id="gen-gi_frame-literal"),
    pytest.param("async def c():\n    return 1\nx = c()\nreturn x.cr_frame.f_globals", "syntax", ['"cr_frame"'], id="coro-cr_frame-literal"),
    pytest.param("async def a():\n    yield 1\nreturn a().ag_frame", "syntax", ['"ag_frame"'], id="agen-ag_frame-literal"),
    pytest.param("try:\n    1/0\nexcept Exception as e:\n    return e.__traceback__.tb_frame.f_back", "syntax",
                 ['"__traceback__"', '"tb_frame"'], id="traceback-literal"),
    pytest.param("def g():\n    yield 1\nfr = getattr(g(), 'gi_frame')\nreturn fr.f_globals", "syntax", ['"f_globals"'], id="mixed-literal"),
    pytest.param("def g():\n    yield 1\nfr = getattr(g(), 'gi_fr' + 'ame')\nG = getattr(fr, 'f_glo' + 'bals')\n" + READ,
                 "exception", ['"gi_frame" is not accessible', INTERNALS], id="gen-gi_frame-computed"),
    pytest.param("async def c():\n    return 1\nx = c()\nfr = getattr(x, 'cr_frame')\nx.close()\nreturn str(fr)",
                 "exception", ['"cr_frame" is not accessible'], id="coro-cr_frame-computed"),
    pytest.param("fr = getattr(tools.f(x=1), 'cr_frame')\nreturn str(fr)",
                 "exception", ['"cr_frame" is not accessible'], id="unawaited-binding-cr_frame"),
    pytest.param("p = tools.f(x=1)\nfr = getattr(p, 'cr_await')\nreturn str(fr)",
                 "exception", ['"cr_await" is not accessible'], id="unawaited-binding-cr_await"),
    pytest.param("p = tools.f(x=1)\nreturn str(p.send(None))",
                 "exception", ["AttributeError", "'PendingCall' object has no attribute 'send'"], id="unawaited-binding-send"),
    pytest.param("p = tools.f(x=1)\np.throw(ValueError('x'))",
                 "exception", ["AttributeError", "has no attribute 'throw'"], id="unawaited-binding-throw"),
    pytest.param("p = tools.f(x=1)\nit = getattr(p, '__await__')()\nreturn str(next(it))",
                 "exception", ['"__await__" is not accessible'], id="unawaited-binding-__await__"),
    pytest.param("async def a():\n    yield 1\nag = a()\nfr = getattr(ag, 'ag_frame')\nreturn str(fr)",
                 "exception", ['"ag_frame" is not accessible'], id="agen-ag_frame-computed"),
    pytest.param("async def a():\n    yield 1\nag = a()\nx = anext(ag)\nreturn str(getattr(x, 'gi_frame'))",
                 "exception", ['"gi_frame" is not accessible'], id="anext-awaitable-frame"),
    pytest.param("try:\n    1/0\nexcept Exception as e:\n    tb = getattr(e, '__traceback__')\n    return str(getattr(tb, 'tb_frame'))",
                 "exception", ['"__traceback__" is not accessible'], id="traceback-computed"),
    pytest.param("def g():\n    yield 1\nit = g()\nnext(it)\ntry:\n    it.throw(ValueError('boom'))\nexcept ValueError as e:\n    return str(getattr(e, '__traceback__'))",
                 "exception", ['"__traceback__" is not accessible'], id="gen-throw-traceback"),
    pytest.param("async def a():\n    yield 1\nag = a()\nawait anext(ag)\ntry:\n    await ag.athrow(ValueError('boom'))\nexcept ValueError as e:\n    return str(getattr(e, '__context__') or getattr(e, '__traceback__'))",
                 "exception", ['"__traceback__" is not accessible'], id="agen-athrow-context"),
    pytest.param("def g():\n    yield 1\nreturn str(getattr(g(), 'gi_code'))",
                 "exception", ['"gi_code" is not accessible'], id="gen-gi_code"),
    pytest.param("def g():\n    yield from range(3)\nit = g()\nnext(it)\nreturn str(getattr(it, 'gi_yieldfrom'))",
                 "exception", ['"gi_yieldfrom" is not accessible'], id="gen-gi_yieldfrom"),
]


@pytest.mark.parametrize(("code", "kind", "fragments"), FRAMES)
async def test_frames_unreachable(sb, code, kind, fragments):
    result = await sb.run(code)
    sb.assert_error(result, kind, *fragments)
    assert sb.spy.calls == []


TRACEBACKS_CLOSED = [
    pytest.param("eg = ExceptionGroup('g', [ValueError('v')])\nreturn eg.exceptions[0].__traceback__",
                 "syntax", ["__traceback__"], id="group-traceback"),
    pytest.param(
        "try:\n    raise ExceptionGroup('g', [ValueError('v')])\nexcept ExceptionGroup as eg:\n"
        "    part = eg.split(ValueError)[0]\nreturn getattr(part, '__traceback__')",
        "exception", ["AttributeError", "private"], id="group-split-traceback"),
    pytest.param(
        "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise ValueError('x')\n"
        "except ValueError as e:\n    c = getattr(e, '__context__')\n"
        "    if type(c) is not ZeroDivisionError:\n        raise LookupError('not the context')\n"
        "    return str(getattr(c, '__traceback__'))\nreturn 1",
        "exception", ["AttributeError", '"__traceback__" is not accessible', "private"], id="exception-context"),
    pytest.param("import json\ntry:\n    json.loads('{')\nexcept json.JSONDecodeError as e:\n    return getattr(e, '__traceback__')",
                 "exception", ["AttributeError", "private"], id="jsondecodeerror-traceback"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), TRACEBACKS_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_exception_tracebacks_closed(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


FRAMES_CLOSED = [
    ("exception __traceback__", "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    return getattr(e, '__traceback__')",
     "exception", ["private"]),
    ("generator gi_frame", "def g():\n    yield 1\nreturn getattr(g(), 'gi_frame')", "exception", ["internals"]),
    ("coroutine cr_await", "async def c():\n    return 1\nx = c()\ntry:\n    return getattr(x, 'cr_await')\n"
     "finally:\n    x.close()", "exception", ["internals"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", FRAMES_CLOSED, ids=[c[0] for c in FRAMES_CLOSED])
async def test_frame_attributes_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_generator_and_async_generator_methods(sb, backend):
    code = (
        "def g():\n    x = yield 1\n    yield x\nit = g()\nnext(it)\na = it.send('s')\n"
        "try:\n    it.throw(ValueError('t'))\nexcept ValueError:\n    pass\nit.close()\n"
        "async def ag():\n    yield 1\na2 = ag()\nv = await anext(a2)\nawait a2.aclose()\n"
        "return [a, v, it.gi_running]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == ["s", 1, False]
