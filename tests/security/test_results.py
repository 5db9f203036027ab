"""The result channel, BaseException subclasses, and abuse of binding arguments."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


RESULTS = [
    pytest.param("def f():\n    pass\nreturn f", "functions cannot be returned", id="function"),
    pytest.param("return lambda: open(SECRET_PATH).read()", "functions cannot be returned", id="lambda"),
    pytest.param("return print", "functions cannot be returned", id="builtin"),
    pytest.param("class A:\n    pass\nreturn A", "functions cannot be returned", id="class"),
    pytest.param("import json\nreturn json", "ModuleShim is not JSON", id="module-shim"),
    pytest.param("return tools", "Namespace is not JSON", id="namespace"),
    pytest.param("return tools.f(x=1)", "PendingCall is not JSON", id="pending-call"),
    pytest.param("x = []\nx.append(x)\nreturn x", "cycle", id="list-cycle"),
    pytest.param("d = {}\nd['self'] = d\nreturn {'a': [d]}", "cycle", id="dict-cycle"),
    pytest.param("x = []\nfor i in range(100000):\n    x = [x]\nreturn x", "nested deeper than 100", id="deep-100000"),
    pytest.param("x = {}\nfor i in range(100000):\n    x = {'k': x}\nreturn x", "nested deeper than 100", id="deep-dicts"),
    pytest.param("class A:\n    def __repr__(self):\n        raise SystemExit(1)\n    def __str__(self):\n        raise SystemExit(1)\nreturn [A()]", "A is not JSON", id="repr-raises"),
    pytest.param("return float('nan')", "NaN and infinity", id="nan"),
    pytest.param("return {'x': [float('-inf')]}", "NaN and infinity", id="inf"),
    pytest.param("return 10 ** 5000", "more than 4000 digits", id="huge-int"),
    pytest.param("return {1: 'a'}", "keys must be str", id="int-key"),
    pytest.param("return {(1, 2): 'a'}", "keys must be str", id="tuple-key"),
    pytest.param("return {'a', 'b'}", "set is not JSON", id="set"),
    pytest.param("return b'secret'", "bytes is not JSON", id="bytes"),
    pytest.param("return 'x' * 2_000_000", "the limit is 1048576 bytes", id="too-big"),
    pytest.param("class I(int):\n    pass\nreturn I(3)", "I is not JSON", id="int-subclass"),
    pytest.param("def g():\n    yield 1\nreturn g()", "generator is not JSON", id="generator"),
    pytest.param("async def c():\n    return 1\nreturn c()", "coroutine is not JSON", id="coroutine"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragment"), RESULTS)
async def test_invalid_results(sb, backend, code, fragment):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "invalid-result", fragment)
    assert sb.spy.calls == []
    await sb.assert_next_run_ok(backend)


async def test_container_subclass_overrides_do_not_run(sb):
    code = (
        "class D(dict):\n    def items(self):\n        raise SystemExit(3)\n    def __iter__(self):\n        raise SystemExit(3)\n"
        "class S(str):\n    def __str__(self):\n        return 'lie'\n"
        "class L(list):\n    def __iter__(self):\n        raise SystemExit(4)\n"
        "return D(a=L([S('truth')]))"
    )
    result = await sb.run(code)
    assert result.ok, result
    assert result.value == {"a": ["truth"]}


BASE_EXCEPTIONS = [
    pytest.param("raise SystemExit(0)", "SystemExit", id="SystemExit"),
    pytest.param("import sys\nraise SystemExit('bye')", "ImportError", id="import-sys-exit"),
    pytest.param("raise KeyboardInterrupt", "KeyboardInterrupt", id="KeyboardInterrupt"),
    pytest.param("raise GeneratorExit('x')", "GeneratorExit", id="GeneratorExit"),
    pytest.param("class Mine(BaseException):\n    pass\nraise Mine('boom')", "Mine: boom", id="BaseException-subclass"),
    pytest.param("raise BaseExceptionGroup('g', [SystemExit(1), KeyboardInterrupt()])", "BaseExceptionGroup", id="group"),
    pytest.param("import asyncio\nasync def bad():\n    raise SystemExit(2)\nawait asyncio.gather(bad(), tools.f(x=1))", "SystemExit", id="in-gather"),
    pytest.param("class E(Exception):\n    def __str__(self):\n        raise SystemExit(5)\nraise E()", "<exception message could not be shown>", id="str-raises-SystemExit"),
    pytest.param("class E(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\nraise E()", "<exception message could not be shown>", id="str-raises-KeyboardInterrupt"),
    pytest.param("try:\n    raise SystemExit(1)\nfinally:\n    raise KeyboardInterrupt", "KeyboardInterrupt", id="finally-chain"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragment"), BASE_EXCEPTIONS)
async def test_base_exceptions_are_snippet_errors(sb, backend, code, fragment):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", fragment)
    await sb.assert_next_run_ok(backend)


FORGED_STOP = """
try:
    while True:
        print('x' * 1000)
except BaseException as e:
    Stop = type(e)
raise Stop('cancelled', 'the host cancelled the run')
"""


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_snippet_cannot_forge_error_kinds(sb, backend):
    result = await sb.run(FORGED_STOP, backend=backend, max_output=1024)
    assert result.error is not None
    assert result.error.kind in ("output-limit", "exception"), result.error


ARGS = [
    pytest.param("await tools.f(x={1, 2})", "TypeError", "argument is not JSON", id="set"),
    pytest.param("await tools.f(lambda: 1)", "TypeError", "functions cannot be returned", id="function"),
    pytest.param("await tools.f(x=float('nan'))", "TypeError", "NaN", id="nan"),
    pytest.param("await tools.f(x=10 ** 5000)", "TypeError", "4000 digits", id="huge-int"),
    pytest.param("x = []\nx.append(x)\nawait tools.f(x=x)", "TypeError", "cycle", id="cycle"),
    pytest.param("await tools.f(x=b'abc')", "TypeError", "bytes is not JSON", id="bytes"),
    pytest.param("await tools.f(x={1: 2})", "TypeError", "keys must be str", id="int-key"),
    pytest.param("await tools.f(x=tools)", "TypeError", "Namespace is not JSON", id="namespace"),
    pytest.param("class A:\n    def __repr__(self):\n        raise SystemExit\nawait tools.f(A())", "TypeError", "A is not JSON", id="object"),
    pytest.param("await tools.f(x='y' * 5000)", "ValueError", "the limit is 1000", id="too-big"),
    pytest.param("x = []\nfor i in range(1000):\n    x = [x]\nawait tools.f(x=x)", "TypeError", "nested", id="deep"),
    pytest.param("import json\nawait tools.f(x=json.dumps)", "TypeError", "not JSON", id="host-function"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "exc", "fragment"), ARGS)
@pytest.mark.filterwarnings("ignore")
async def test_binding_arguments_checked_before_the_host(request, sb, backend, code, exc, fragment):
    result = await sb.run(code, backend=backend, max_call_bytes=1000)
    sb.assert_error(result, "exception", exc, fragment)
    assert sb.spy.calls == [], "the host binding was called"


async def test_dict_subclass_argument_is_copied_plainly(sb):
    code = "class D(dict):\n    def items(self):\n        return [('evil', 1)]\nreturn await tools.f(x=D(a=1))"
    result = await sb.run(code)
    assert result.ok, result
    assert sb.spy.calls == [((), {"x": {"a": 1}})]
    assert type(sb.spy.calls[0][1]["x"]) is dict


# Driving a coroutine by hand hands the snippet the scheduler's request object; its class and
# the class of `asyncio.sleep(0)` then forge requests the argument checks never saw.
FORGE = """
import asyncio
async def grab():
    return await tools.f(x=1)
c = grab()
req = c.send(None)
c.close()
Request = type(req)
Await = type(asyncio.sleep(0))
class Weird:
    pass
"""


async def test_forged_request_inprocess(sb):
    code = FORGE + "return await Await(Request('f', [Weird(), {1, 2}], {'z': float('nan')}, '[[],{}]', 1))"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception", "TypeError", "sandbox internals cannot be created by a snippet")
    assert sb.spy.calls == [], f"host binding got {sb.spy.calls!r}"


async def test_forged_request_worker(sb):
    code = FORGE + "return await Await(Request('f', [], {}, '[[\"' + 'y' * 50000 + '\"],{}]', 1))"
    result = await sb.run(code, max_call_bytes=1000)
    sb.assert_error(result, "exception", "TypeError", "sandbox internals cannot be created by a snippet")
    assert sb.spy.calls == [], "host binding was called with a 50 KB argument"


async def test_host_binding_errors_do_not_leak(sb):
    async def failing(**kwargs):
        raise RuntimeError("host secret " + sb.secret.token)

    result = await sb.run("return await tools.f(x=1)", bindings={"f": failing})
    sb.assert_error(result, "exception", "ToolCallError", "the host function failed (RuntimeError)")
