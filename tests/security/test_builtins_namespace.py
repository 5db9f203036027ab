"""Dangerous builtins, and the bindings namespace (`tools`) itself."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


BUILTINS = [
    pytest.param("return open(SECRET_PATH).read()", "exception", ["NameError", "'open' is not defined"], id="open"),
    pytest.param("f = open\nf(OUT_PATH, 'w').write('x')", "exception", ["NameError", "'open' is not defined"], id="open-write"),
    pytest.param("return eval(\"open(SECRET_PATH).read()\")", "syntax", ["eval() is not available"], id="eval"),
    pytest.param("exec(\"x = 1\")\nreturn 1", "syntax", ["exec() is not available"], id="exec"),
    pytest.param("c = compile('1', 'x', 'eval')\nreturn 1", "syntax", ["compile() is not available"], id="compile"),
    pytest.param("e = eval\nreturn e('1')", "exception", ["NameError", "'eval' is not defined"], id="eval-by-name"),
    pytest.param("C = type('C', (), {'x': 1})\nreturn C.x", "exception",
                 ["TypeError", "type() takes exactly one argument in the sandbox"], id="type-3-arg"),
    pytest.param("m = __import__('os')\nreturn 1", "syntax", ['"__import__"'], id="__import__"),
    pytest.param("b = __builtins__\nreturn str(b)", "syntax", ['"__builtins__"'], id="__builtins__"),
    pytest.param("g = globals()\nreturn str(g['__builtins__'])", "exception", ["NameError", "'globals' is not defined"], id="globals"),
    pytest.param("g = locals()\nreturn str(g)", "exception", ["NameError", "'locals' is not defined"], id="locals"),
    pytest.param("return str(vars())", "exception", ["NameError", "'vars' is not defined"], id="vars"),
    pytest.param("breakpoint()", "syntax", ['"breakpoint" is reserved'], id="breakpoint"),
    pytest.param("return input()", "exception", ["NameError", "'input' is not defined"], id="input"),
    pytest.param("help(print)", "exception", ["NameError", "'help' is not defined"], id="help"),
    pytest.param("m = memoryview(b'abc')\nreturn 1", "exception", ["NameError", "'memoryview' is not defined"], id="memoryview"),
    pytest.param("return dir(tools)", "exception", ["NameError", "'dir' is not defined"], id="dir"),
    pytest.param("return id(tools)", "exception", ["NameError", "'id' is not defined"], id="id"),
    pytest.param("print('x', file=1)", "exception", ["TypeError", "print(file=...) is not supported"], id="print-file"),
    pytest.param("s = getattr(print, '__self__')\nreturn str(s)", "exception", ['"__self__" is not accessible'], id="print-self"),
    pytest.param("printed = 1\nreturn printed", "syntax", ['"printed" is reserved'], id="printed"),
    pytest.param("return str(exit)", "exception", ["NameError", "'exit' is not defined"], id="exit"),
    pytest.param("T = type(int)\nC = T('C', (), {'x': 1})\nreturn C.x", "exception",
                 ["TypeError", "type() takes exactly one argument"], id="type-of-int-is-real-type"),
    pytest.param("T = type(type)\nC = T('C', (), {'x': 1})\nreturn C.x", "exception",
                 ["TypeError", "type() takes exactly one argument"], id="type-of-safetype-is-a-metaclass"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "kind", "fragments"), BUILTINS)
async def test_dangerous_builtins(sb, backend, code, kind, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, kind, *fragments)


DOCS = {"f": "f(x): does f", "g": "g(): does g"}

NAMESPACE = [
    pytest.param("T = type(tools)\nt = T(None, 'tools', ['f'], print)\nreturn 1", "exception",
                 ["TypeError", "namespaces cannot be created by a snippet"], id="construct-namespace"),
    pytest.param("return str(tools.__dict__)", "syntax", ['"__dict__"'], id="tools-dict-literal"),
    pytest.param("return str(getattr(tools, '__dict__'))", "exception", ['"__dict__" is not accessible'], id="tools-dict-computed"),
    pytest.param("return str(getattr(tools, '_ns_entries'))", "exception", ['"_ns_entries" is not accessible'], id="tools-private-slot"),
    pytest.param("return str(getattr(tools.f, '_binding_issue'))", "exception", ['"_binding_issue" is not accessible'], id="binding-issue-slot"),
    pytest.param("return str(getattr(tools.f, '__closure__'))", "exception", ['"__closure__" is not accessible'], id="binding-closure"),
    pytest.param("return str(getattr(tools.f, '__call__'))", "exception", ['"__call__" is not accessible'], id="binding-call"),
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
