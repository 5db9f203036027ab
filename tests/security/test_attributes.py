"""Dunder chains, computed getattr, str.format traversal and frames.

Every snippet, if the guard let it through, would reach a real function's globals (and from
there `open` or `os.environ`) and return the secret. Literal attribute names are refused by the
compile policy (`syntax`); computed ones by the runtime guard (`exception: AttributeError`).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# The tail most escapes use once they hold a real function's globals dict `G`.
READ = "return G['__builtins__']['open'](SECRET_PATH).read()"

PRIVATE = 'names starting with "_" are private'
INTERNALS = "it exposes interpreter internals"

DUNDER = [
    pytest.param("return (1).__class__.__mro__[1].__subclasses__()", "syntax",
                 ['attribute "__class__" is not allowed', PRIVATE], id="literal-class-mro-subclasses"),
    pytest.param("import json\nG = json.dumps.__globals__\n" + READ, "syntax",
                 ['attribute "__globals__" is not allowed'], id="literal-globals"),
    pytest.param("def f():\n    pass\nreturn f.__code__.co_consts", "syntax",
                 ['attribute "__code__"'], id="literal-code"),
    pytest.param("return super().__getattribute__('x')", "syntax",
                 ['"__getattribute__"'], id="literal-getattribute"),
    pytest.param("return object.__subclasses__()", "syntax",
                 ['"__subclasses__"'], id="literal-object-subclasses"),
    pytest.param("class A:\n    pass\nreturn A.__dict__", "syntax",
                 ['"__dict__"'], id="literal-class-dict"),
    pytest.param("import json\nreturn json.dumps.__init__.__self__", "syntax",
                 ['"__self__"'], id="init-then-self-literal"),
    pytest.param("import statistics\nG = getattr(statistics.mean, '__globals__')\n" + READ, "exception",
                 ["AttributeError", 'attribute "__globals__" is not accessible', PRIVATE], id="getattr-globals"),
    pytest.param("import statistics\nG = getattr(statistics.mean, '__' + 'glob' + 'als__')\n" + READ, "exception",
                 ["AttributeError", '"__globals__" is not accessible'], id="getattr-computed-globals"),
    pytest.param("c = getattr(1, '__class__')\nreturn str(c)", "exception",
                 ["AttributeError", '"__class__" is not accessible'], id="getattr-class"),
    pytest.param("import statistics\nm = getattr(statistics.mean, '__init__')\nG = getattr(getattr(m, '__self__'), '__globals__')\n" + READ,
                 "exception", ["AttributeError", '"__init__" is not accessible'], id="getattr-init-self"),
    pytest.param("bases = type(1).mro()\nsubs = getattr(bases[-1], '__subclasses__')()\nreturn [str(s) for s in subs]",
                 "exception", ["AttributeError", '"__subclasses__" is not accessible'], id="type-mro-subclasses"),
    pytest.param("import statistics\nif not hasattr(statistics.mean, '__globals__'):\n    raise LookupError('hasattr said no')\nG = getattr(statistics.mean, '__globals__')\n" + READ,
                 "exception", ["LookupError: hasattr said no"], id="hasattr-globals"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('__globals__')(statistics.mean)\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-globals"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('mean.__globals__')(statistics)\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-dotted"),
    pytest.param("import operator, statistics\nG = operator.attrgetter('mean', '__globals__')(statistics)[1]\n" + READ,
                 "exception", ["AttributeError", '"__globals__" is not accessible'], id="attrgetter-second-name"),
    pytest.param("import operator\nr = operator.methodcaller('__reduce_ex__', 2)(1)\nreturn str(r)",
                 "exception", ["AttributeError", '"__reduce_ex__" is not accessible'], id="methodcaller-reduce"),
    pytest.param("x = vars(1)\nreturn str(x)", "exception",
                 ["NameError", "'vars' is not defined"], id="vars"),
    pytest.param("import statistics\nG = getattr(statistics.mean, 'func_globals', None) or getattr(statistics.mean, '__builtins__')\n" + READ,
                 "exception", ["AttributeError", '"__builtins__" is not accessible'], id="getattr-builtins"),
    pytest.param("def f():\n    pass\nsetattr(f, '__code__', None)\nreturn 1", "exception",
                 ["AttributeError", '"__code__" is not accessible'], id="setattr-code"),
    pytest.param(
        "class P:\n    pass\nmatch P():\n    case P(__class__=c):\n        return str(c)",
        "syntax", ['attribute "__class__" is not allowed in a class pattern'], id="match-class-pattern-dunder"),
    pytest.param(
        "class P:\n    pass\nmatch (lambda: 0):\n    case object(__globals__=G):\n        return str(G)",
        "syntax", ['"__globals__" is not allowed in a class pattern'], id="match-class-pattern-globals"),
    pytest.param("class A:\n    __getattr__ = getattr\nreturn 1", "syntax",
                 ['"__getattr__"'], id="class-body-dunder-assign"),
    pytest.param("class A:\n    def __getattribute__(self, n):\n        return 1\nreturn 1", "syntax",
                 ['"__getattribute__"'], id="class-def-undefinable-dunder"),
    pytest.param("class M(type(int)):\n    pass\nreturn 1", "exception",
                 ["TypeError", "defining metaclasses is not allowed"], id="metaclass-by-base"),
    pytest.param("class A(metaclass=type):\n    pass\nreturn 1", "syntax",
                 ["metaclass= is not allowed"], id="metaclass-keyword"),
    pytest.param("__metaclass__ = type\nclass A:\n    pass\nreturn 1", "syntax",
                 ['"__metaclass__"'], id="dunder-metaclass-global"),
]


@pytest.mark.parametrize(("code", "kind", "fragments"), DUNDER)
async def test_dunder_chains_refused(sb, code, kind, fragments):
    result = await sb.run(code)
    sb.assert_error(result, kind, *fragments)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(
    ("code", "fragments"),
    [
        pytest.param("import statistics\nG = getattr(statistics.mean, '__globals__')\nreturn G['sys'].modules['os'].environ[ENV_NAME]",
                     ['"__globals__" is not accessible'], id="getattr-env"),
        pytest.param("import operator, statistics\nG = operator.attrgetter('__globals__')(statistics.mean)\nreturn G['sys'].modules['os'].environ[ENV_NAME]",
                     ['"__globals__" is not accessible'], id="attrgetter-env"),
    ],
)
async def test_computed_getattr_guard_on_both_backends(sb, backend, code, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", *fragments)


# A str subclass is a str: the guard's own checks call methods the snippet overrides.
STR_SUBCLASS = (
    "class S(str):\n"
    "    def startswith(self, *a):\n"
    "        return False\n"
    "    def endswith(self, *a):\n"
    "        return False\n"
    "    def __str__(self):\n"
    "        return 'harmless'\n"
)

# Fixed: names are copied to plain `str` before they are checked and used.
STR_SUBCLASS_HOLES = [
    pytest.param(STR_SUBCLASS + "import statistics\nG = getattr(statistics.mean, S('__globals__'))\n" + READ,
                 id="getattr-str-subclass-startswith"),
    pytest.param(STR_SUBCLASS + "import statistics\nif hasattr(statistics.mean, S('__globals__')):\n    G = getattr(statistics.mean, S('__globals__'))\n    " + READ + "\nraise LookupError('hasattr said no')",
                 id="hasattr-str-subclass"),
    pytest.param(STR_SUBCLASS + "import operator, statistics\nG = operator.attrgetter(S('__globals__'))(statistics.mean)\n" + READ,
                 id="attrgetter-str-subclass-__str__"),
    pytest.param(STR_SUBCLASS + "import statistics\nB = getattr(statistics.mean, S('__globals__'))['__builtins__']\n"
                 "def gen():\n    yield 1\nfr = B['getattr'](gen(), 'gi_frame')\nG = B['getattr'](fr, 'f_globals')\n"
                 "return [str(k) for k in G] + [B['open'](SECRET_PATH).read()]",
                 id="frame-via-real-getattr"),
]


@pytest.mark.parametrize("code", STR_SUBCLASS_HOLES)
async def test_str_subclass_attribute_names(sb, code):
    result = await sb.run(code)
    if "hasattr" in code:  # hasattr answers False, so the snippet gives up
        sb.assert_error(result, "exception", "LookupError", "hasattr said no")
    else:
        sb.assert_error(result, "exception", "AttributeError", "is not accessible")
    assert sb.secret.token not in str(result)


FORMAT = [
    pytest.param("return '{0.__class__}'.format(1)", ['"__class__" is not accessible'], id="format-class"),
    pytest.param("import statistics\nreturn '{0.__globals__[sys].modules[os].environ}'.format(statistics.mean)",
                 ['"__globals__" is not accessible'], id="format-globals-env"),
    pytest.param("return str.format('{0.__class__.__mro__}', 1)", ['"__class__" is not accessible'], id="str.format-unbound"),
    pytest.param("f = '{0.__class__}'.format\nreturn f(1)", ['"__class__" is not accessible'], id="format-bound-later"),
    pytest.param("return getattr('{0.__class__}', 'format')(1)", ['"__class__" is not accessible'], id="getattr-format"),
    pytest.param("return getattr(str, 'format')('{0.__class__}', 1)", ['"__class__" is not accessible'], id="getattr-str-format"),
    pytest.param("return type('x').format('{0.__class__}', 1)", ['"__class__" is not accessible'], id="type-str-format"),
    pytest.param("import statistics\nreturn '{a.__init__.__globals__}'.format_map({'a': statistics.mean})",
                 ['"__init__" is not accessible'], id="format_map-init-globals"),
    pytest.param("return str.format_map('{a.__class__}', {'a': 1})", ['"__class__" is not accessible'], id="str.format_map"),
    pytest.param("def g():\n    yield 1\nreturn '{0.gi_frame.f_globals}'.format(g())", [INTERNALS], id="format-gi_frame"),
    pytest.param("return '{0._request}'.format(tools.f())", ['"_request" is not accessible'], id="format-pending-call"),
    pytest.param("import functools\nreturn functools.reduce(lambda a, b: a + b, ['{0.__cla', 'ss__}']).format(1)",
                 ['"__class__" is not accessible'], id="format-built-template"),
    pytest.param("return list(map(str.format, ['{0.__class__}'], [1]))", ['"__class__" is not accessible'], id="map-str-format"),
]


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
@pytest.mark.parametrize(("code", "fragments"), FORMAT)
async def test_format_traversal(sb, backend, code, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", *fragments)
    assert sb.spy.calls == []


async def test_string_template_does_not_traverse(sb):
    result = await sb.run("import string\nreturn string.Template('${a.__class__}').substitute(a=1)")
    sb.assert_error(result, "exception", "ValueError", "Invalid placeholder")


# Fixed: every str subclass gets the safe format; attrgetter/methodcaller refuse "format".
REAL_FORMAT_HOLES = [
    pytest.param("class U(str):\n    pass\nimport statistics\nreturn U.format('{0.__globals__[sys].modules[os].environ[" + "CODEMODE_SECURITY_SECRET" + "]}', statistics.mean)",
                 id="str-subclass-unbound-format"),
    pytest.param("import operator, statistics\nf = operator.attrgetter('format')(str)\nreturn f('{0.__globals__[sys].modules[os].environ[CODEMODE_SECURITY_SECRET]}', statistics.mean)",
                 id="attrgetter-format"),
    pytest.param("import operator, statistics\nf = operator.methodcaller('format', statistics.mean)\nreturn f('{0.__globals__[sys].modules[os].environ[CODEMODE_SECURITY_SECRET]}')",
                 id="methodcaller-format"),
]


@pytest.mark.parametrize("code", REAL_FORMAT_HOLES)
async def test_real_str_format_unreachable(sb, code):
    # In-process: the host's environment holds the secret (the worker's environment is empty).
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "exception", "AttributeError", "is not accessible")


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
                 "exception", ['"__context__" is not accessible'], id="agen-athrow-context"),
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
