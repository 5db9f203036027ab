"""The bindings namespace (`tools`), its bindings and their pending calls: none can be built,
copied, modified or looked into by a snippet, odd keys resolve to real bindings only, and a call
that is never awaited never reaches the host.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


DOCS = {"f": "f(x): does f", "g": "g(): does g"}


NAMESPACE = [
    pytest.param("T = type(tools)\nt = T(None, 'tools', ['f'], print)\nreturn 1", "exception",
                 ["TypeError", "namespaces cannot be created by a snippet"], id="construct-namespace"),
    pytest.param("return str(tools.__dict__)", "exception", ['"__dict__" is not accessible'], id="tools-dict-literal"),
    pytest.param("return str(getattr(tools, '__dict__'))", "exception", ['"__dict__" is not accessible'], id="tools-dict-computed"),
    pytest.param("return str(getattr(tools, '_ns_entries'))", "exception", ['"_ns_entries" is not accessible'], id="tools-private-slot"),
    pytest.param("return str(getattr(tools.f, '_binding_issue'))", "exception", ['"_binding_issue" is not accessible'], id="binding-issue-slot"),
    pytest.param("return str(getattr(tools.f, '__closure__'))", "exception", ['"__closure__" is not accessible'], id="binding-closure"),
    # `__call__` is a data-model method (issue 12): the bound method leads nowhere further, and
    # the class's function refuses any object but a real binding as `self`.
    pytest.param("c = getattr(tools.f, '__call__')\nreturn str(getattr(c, '__self__'))", "exception",
                 ['"__self__" is not accessible'], id="binding-call"),
    pytest.param("class Fake:\n    def __init__(self):\n        self._binding_name = 'f'\n"
                 "        self._binding_label = 'tools'\n        self._binding_issue = lambda r: r\n"
                 "return str(type(tools.f).__call__(Fake(), 1))", "exception",
                 ["TypeError", "doesn't apply to a 'Fake' object"], id="binding-call-forged-self"),
    pytest.param("return str(getattr(tools.describe, '__func__'))", "exception", ['"__func__" is not accessible'], id="describe-func"),
    pytest.param("return str(getattr(tools.describe, '__self__'))", "exception", ['"__self__" is not accessible'], id="describe-self"),
    pytest.param("return str(getattr(type(tools), '__slots__'))", "exception", ['"__slots__" is not accessible'], id="namespace-slots"),
    pytest.param("tools.f = print\nreturn 1", "exception", ["TypeError", "cannot modify"], id="assign-binding"),
    pytest.param("setattr(tools, 'f', print)\nreturn 1", "exception", ["TypeError", "cannot modify"], id="setattr-binding"),
    pytest.param("del tools.f\nreturn 1", "exception", ["TypeError", "cannot modify"], id="del-binding"),
    pytest.param("tools.f.name = 'g'\nreturn 1", "exception", ["TypeError", "cannot modify"], id="assign-on-binding"),
    pytest.param("return str(tools['__class__'])", "exception", ["KeyError", "tools has no function '__class__'"], id="item-dunder"),
    pytest.param("return str(tools.nope)", "exception", ["AttributeError", "tools has no function 'nope'"], id="unknown-name"),
    pytest.param("return tools.describe('__init__')", "exception", ["AttributeError", "tools has no function '__init__'"], id="describe-dunder"),
    pytest.param("P = type(tools.f(x=1))\nreturn await P(print)", "exception",
                 ["TypeError", "sandbox internals cannot be created by a snippet"], id="forged-pending-call"),
    pytest.param("p = tools.f(x=1)\nawait p\nawait p", "exception",
                 ["RuntimeError", "already awaited"], id="await-twice"),
    pytest.param("import copy\nt = copy.copy(tools)\nreturn str(t)", "exception", [], id="copy-namespace"),
    pytest.param("import copy\nt = copy.deepcopy(tools.f)\nreturn str(t)", "exception", ["TypeError"], id="deepcopy-binding"),
]


@pytest.mark.parametrize(("code", "kind", "fragments"), NAMESPACE)
async def test_bindings_namespace(sb, code, kind, fragments):
    result = await sb.run(code, docs=DOCS)
    sb.assert_error(result, kind, *fragments)
    # await-twice makes exactly one call; nothing else reaches the host.
    assert len(sb.spy.calls) == (1 if "await p\nawait p" in code else 0)


async def test_describe_absent_without_docs(sb):
    result = await sb.run("return tools.describe('f')")
    sb.assert_error(result, "exception", "AttributeError", "tools has no function 'describe'")
    result = await sb.run("return [tools.describe('f'), tools.list()]", docs=DOCS)
    assert result.ok and result.value == ["f(x): does f", ["f", "g"]]


async def test_unawaited_call_never_runs(sb):
    result = await sb.run("tools.f(x=1)\nreturn 1")
    assert result.ok and result.value == 1
    assert sb.spy.calls == []
    assert any("was never awaited" in line for line in result.logs)


NAMESPACE_CLOSED = [
    pytest.param("return anext(tools)", "exception", ["TypeError"], id="anext-namespace"),
    pytest.param("return sorted([1, 2], key=tools.f)", "exception", ["TypeError", "<"], id="sorted-key-binding"),
    pytest.param("return tools.describe.__self__", "syntax", ["__self__"], id="describe-self"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), NAMESPACE_CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_namespace_closed_on_both_backends(sb, backend, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, backend=backend)


DESCRIBE_CLOSED = [
    ("describe internals", "d = tools.describe\nreturn getattr(d, '__self__')", "exception", ["private"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", DESCRIBE_CLOSED, ids=[c[0] for c in DESCRIBE_CLOSED])
async def test_describe_internals_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_describe_internals_with_docs(sb, backend):
    docs = {"f": "doc of f", "g": "doc of g"}
    result = await sb.run("return getattr(tools.describe, '__func__')", backend=backend, docs=docs)
    sb.assert_error(result, "exception", "AttributeError", "private")
    result = await sb.run("return tools.describe(123)", backend=backend, docs=docs)
    sb.assert_error(result, "exception", "TypeError", "takes a function name")
    result = await sb.run("return [tools.list(), tools.describe('f')]", backend=backend, docs=docs)
    assert result.value == [["f", "g"], "doc of f"]


async def test_forged_binding_object_cannot_issue_calls(sb):
    code = (
        "Binding = type(tools.f)\n"
        "b = Binding('tools', 'f', lambda req: req)\n"
        "req = b(x=1)\n"
        "Pending = type(tools.g(z=1))\n"
        "return await Pending(req)"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception", "TypeError", "cannot be created by a snippet")
    assert sb.spy.calls == []


async def test_namespace_cannot_be_constructed(sb):
    result = await sb.run("return type(tools)(None, 'x', ['f'], print)")
    sb.assert_error(result, "exception", "TypeError", "cannot be created by a snippet")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_binding_cannot_issue_calls(sb, backend):
    code = (
        "B = type(tools.f)\nseen = []\n"
        "b = B('tools', 'nope', seen.append)\n"
        "try:\n    b(1)\nexcept Exception as e:\n    seen.append(type(e).__name__)\n"
        "return [repr(x)[:30] for x in seen]"
    )
    result = await sb.run(code, backend=backend)
    sb.assert_no_leak(result)
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_tools_lookup_with_lying_str_subclass(sb, backend):
    code = (
        "class S(str):\n    def __eq__(self, o):\n        return True\n"
        "    def __hash__(self):\n        return hash('f')\n"
        "b = tools[S('f')]\nr = await b(1)\n"
        "r['other'] = repr(tools[S('zzz')])\n"
        "r['doc'] = tools.describe(S('g'))\nreturn r"
    )
    result = await sb.run(code, backend=backend, docs={"f": "doc f", "g": "doc g"})
    assert result.ok, result
    # A lying key resolves to a real binding (by hash), and the call carries the real name.
    assert result.value["other"] == "<host function tools.f>"
    assert result.value["doc"] in ("doc f", "doc g")
    assert len(sb.spy.calls) == 1


@pytest.mark.parametrize("backend", BACKENDS)
async def test_map_of_binding_never_awaited_never_runs(sb, backend):
    result = await sb.run("xs = list(map(tools.f, [1, 2, 3]))\nreturn len(xs)", backend=backend)
    assert result.value == 3
    assert sb.spy.calls == []
    assert sum("never awaited" in line for line in result.logs) == 3


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unawaited_call_warnings_respect_output_cap(sb, backend):
    # 100,000 calls take about 2 s in-process: limits that hold on a machine many times slower.
    result = await sb.run_heavy("xs = [tools.f() for _ in range(100000)]\nreturn 1", backend=backend, max_output=1000)
    assert sb.spy.calls == []
    assert sum(len(line) for line in result.logs) < 10_000
    assert result.error is None, result.error


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_a_refused_argument_hides_the_internal_exception(sb, backend):
    # The binding raises `TypeError(...) from None` over the sandbox's internal NotJSONError;
    # a suppressed `__context__` reads as absent, so the internal class stays out of reach.
    code = (
        "try:\n    tools.f(object())\nexcept TypeError as e:\n"
        "    return [e.__context__ is None, e.__suppress_context__, 'not JSON' in str(e)]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [True, True, True]
    assert sb.spy.calls == []
