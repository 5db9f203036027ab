"""Host-call arguments: what a snippet hands a binding is checked and copied to plain JSON before
the host sees it (no sets, functions, cycles, NaN, oversized or deep values, no subclass
overrides), hand-driven or forged scheduler requests never reach the binding, and a failing
binding's error does not leak host text back.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


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
# the class of `asyncio.gather()` then forge requests the argument checks never saw.
FORGE = """
import asyncio
async def grab():
    return await tools.f(x=1)
c = grab()
req = c.send(None)
c.close()
Request = type(req)
Await = type(asyncio.gather())
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


HAND_DRIVEN = """
async def grab():
    return await tools.f(x=1)
c = grab()
req = c.send(None)
class Weird:
    def __str__(self):
        return 'weird'
req.args.append(Weird())
req.kwargs['y'] = {1, 2}
Pending = type(tools.f(z=1))
return await Pending(req)
"""


async def test_hand_driven_request_args_cannot_be_mutated_inprocess(sb):
    result = await sb.run(HAND_DRIVEN, backend="inprocess")
    for args, kwargs in sb.spy.calls:
        assert all(type(a) in (int, str, float, bool, list, dict, type(None)) for a in args), args
        assert all(type(v) in (int, str, float, bool, list, dict, type(None)) for v in kwargs.values())
    sb.assert_no_leak(result)


async def test_hand_driven_request_args_mutation_is_inert_in_worker(sb):
    result = await sb.run(HAND_DRIVEN)
    # The request's fields are private: the mutation is refused before anything is sent.
    sb.assert_error(result, "exception", "AttributeError", "'CallRequest' object has no attribute 'args'")
    assert sb.spy.calls == []


async def test_host_binding_errors_do_not_leak(sb):
    async def failing(**kwargs):
        raise RuntimeError("host secret " + sb.secret.token)

    result = await sb.run("return await tools.f(x=1)", bindings={"f": failing})
    sb.assert_error(result, "exception", "ToolCallError", "the host function failed (RuntimeError)")
