"""Review of the last three sandbox commits (subclass trust, dunder planting, new-code escape):
cached_property shim, Field subclass refusal, copy checks, deepcopy memo, asdict/astuple,
re.escape and the Template shim. Each case checks the refusal or harmless outcome."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


async def test_cached_property_subclass_cannot_override_get(sb):
    code = """
import functools
class C(functools.cached_property):
    def __get__(self, inst, owner=None):
        return super(functools.cached_property, self).__get__(inst, owner)
return 1
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "syntax", "__get__")


async def test_cached_property_rename_refused(sb):
    code = """
import functools
class K:
    @functools.cached_property
    def x(self):
        return 1
c = K.x
c.attrname = "_" + "_deepcopy__"
return K().x
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "cannot modify attributes")


async def test_real_cached_property_not_reachable_by_mro(sb):
    code = """
import functools
return [c.__name__ for c in functools.cached_property.__mro__]
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "syntax", "__mro__")


async def test_field_name_cannot_be_set(sb):
    code = """
import dataclasses
f = dataclasses.field(default=1)
f.name = "_" + "_x"
return f.name
"""
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "cannot modify attributes")


async def test_field_inherited_from_plain_base_is_harmless(sb):
    code = """
import dataclasses
class B:
    x = dataclasses.field(default=1)
@dataclasses.dataclass
class D(B):
    x: int
return str(D())
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == "D(x=1)"
    sb.assert_no_leak(r)


@pytest.mark.parametrize("backend", ["inprocess", "worker"])
async def test_deepcopy_positional_memo_refused(sb, backend):
    r = await sb.run("import copy\nm = {}\nreturn str(copy.deepcopy([1], m))", backend=backend)
    sb.assert_error(r, "exception", "memo")


async def test_setattr_dunder_refused(sb):
    code = 'class K: pass\nk = K()\nsetattr(k, "_" + "_deepcopy__", 1)\nreturn 1'
    r = await sb.run(code, backend="inprocess")
    sb.assert_error(r, "exception", "private")


async def test_asdict_dict_factory_gets_copies(sb):
    code = """
import dataclasses
@dataclasses.dataclass
class D:
    x: list
got = []
def fac(items):
    got.append(items)
    return dict(items)
r = dataclasses.asdict(D([1]), dict_factory=fac)
return str(r), len(got)
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == ["{'x': [1]}", 1]
    sb.assert_no_leak(r)


async def test_deepcopy_iterator_is_harmless(sb):
    r = await sb.run("import copy\nit = iter([1, 2])\nreturn list(copy.deepcopy(it))", backend="inprocess")
    assert r.ok, r.error
    assert r.value == [1, 2]


async def test_template_pattern_attribute_is_harmless(sb):
    code = """
import string
class T(string.Template):
    pattern = r"\\$(?:(?P<escaped>\\$)|(?P<named>[a-z]+)|(?P<braced>x)|(?P<invalid>))"
return T("$abc").substitute(abc=1)
"""
    r = await sb.run(code, backend="inprocess")
    assert r.ok, r.error
    assert r.value == "1"


async def test_template_delimiter_set_after_class_is_harmless(isolated):
    code = """
import string
got = []
class S(str):
    def translate(self, t):
        got.append(t)
        return "x"
class T(string.Template):
    pass
T.delimiter = S("$")
class U(T):
    pass
return [T("$a").substitute(a=1), len(got)]
"""
    check = "import re\nstate = re.escape('a.q')"
    report = isolated(code, check)
    assert report["after"] == report["before"] == "a\\.q"
    assert report["next"]["error"] is None


async def test_template_bases_not_reachable(sb):
    r = await sb.run("import string\nreturn str(string.Template.__bases__)", backend="inprocess")
    sb.assert_error(r, "syntax", "__bases__")


async def test_metaclass_refused(sb):
    r = await sb.run("class M(type(object)):\n    pass\nreturn 1", backend="inprocess")
    sb.assert_error(r, "exception", "metaclasses")
