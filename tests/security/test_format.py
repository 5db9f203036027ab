"""str.format and format_map: replacement fields (`{0.__globals__}`) must not walk private
attributes, however the format method is reached (bound, unbound, through `type()`, `getattr`,
`map`, a str subclass or `super()`). Each case checks the AttributeError and that no host
binding was called.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


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
    pytest.param("def g():\n    yield 1\nreturn '{0.gi_frame.f_globals}'.format(g())", ["it exposes interpreter internals"], id="format-gi_frame"),
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


FORMAT_CLOSED = [
    ("format traversal", "class C:\n    pass\nreturn '{0.__class__}'.format(C())", "exception", ["private"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", FORMAT_CLOSED, ids=[c[0] for c in FORMAT_CLOSED])
async def test_format_traversal_on_own_class(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_type_of_bound_format_only_calls_what_it_is_given(sb, backend):
    # `_BoundFormat(template, fn)` only ever calls the snippet's own fn: no traversal happens.
    code = (
        "BF = type('{0}'.format)\nout = []\n"
        "BF('{0.__globals__}', lambda t, *a: out.append(t))(getattr)\n"
        "return [out, '{0.__globals__}'.format is None]"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == [["{0.__globals__}"], False]


# == super() with arguments hands out the real str.format ==========================================

SUPER_FORMAT = """
class S(str):
    pass
fmt = super(S, S('{0.__globals__[weakref].sys.modules[os].environ[' + ENV_NAME + ']}')).METHOD
return fmt(FIRST)
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_super_with_args_format_is_guarded(sb, backend):
    code = SUPER_FORMAT.replace("METHOD", "format").replace("FIRST", "getattr")
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "private")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_super_with_args_format_map_is_guarded(sb, backend):
    code = SUPER_FORMAT.replace("METHOD", "format_map").replace("{0.", "{f.").replace(
        "FIRST", "{'f': getattr}"
    )
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, "exception", "AttributeError", "private")
