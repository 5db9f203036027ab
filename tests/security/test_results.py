"""The result channel: what a run hands back. Only JSON values come back as the result; a
snippet's BaseException is a snippet error; the snippet cannot forge the kind or message of a
stop; printed output and error messages stay within their caps however the snippet lies about
its strings.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


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
    pytest.param("import sys\nraise SystemExit('bye')", "ModuleNotFoundError", id="import-sys-exit"),
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
    assert result.error.kind == "output-limit", result.error  # the host's verdict stands
    assert "the host cancelled" not in result.error.message


FORGE_KIND = """
try:
    while True:
        print('x' * 1000)
except BaseException as e:
    e.kind = 'cancelled'
    e.message = 'the run was cancelled: by the host'
    raise e
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_caught_stop_cannot_be_rewritten(sb, backend):
    result = await sb.run(FORGE_KIND, backend=backend, max_output=1024)
    assert result.error is not None
    # The stop refuses the write, and the TypeError raised instead does not change the verdict.
    assert result.error.kind == "output-limit", result.error
    assert "by the host" not in result.error.message


# == output and error-size accounting ==============================================================

OUTPUT_LIE = """
class L(str):
    def isascii(self):
        return True
    def __len__(self):
        return 0
    def __add__(self, other):
        return L(''.join([self, other]))
class J(str):
    def join(self, items):
        return L(''.join(items))
for i in range(200):
    print('y' * 10000, 'z', sep=J(' '))
return 1
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_output_cap_cannot_be_lied_to(sb, backend):
    result = await sb.run(OUTPUT_LIE, backend=backend, max_output=1000)
    assert sum(len(line) for line in result.logs) < 10_000
    if result.error is not None:
        assert result.error.kind == "output-limit", result.error


async def test_huge_exception_message_is_an_exception(sb):
    result = await sb.run("raise ValueError('m' * 2_000_000)")
    sb.assert_error(result, "exception", "ValueError")
    assert len(result.error.message) < 100_000
