"""Second adversarial review: paths the first suite did not walk.

Themes: gadget chains through shims (enum's functional API, copy's reconstruction, typing
protocols' `register`, class-pattern `__match_args__`), `super()` with arguments, the run's
own control objects (`RunStopped`, scheduler requests), the output cap, the host side of the
worker channel, and a sweep of shim attributes and odd builtins that must stay closed.
Cases marked `HOLE` are open; each says what a fix must make true.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]


def HOLE(reason: str):
    return pytest.mark.xfail(reason="HOLE: " + reason, strict=True)


# -- 1. The gadget chain: arbitrary dunders -> arbitrary setattr -> arbitrary getattr -----------
#
# (a) `enum.Enum(name, {...})` puts dict keys into the class namespace without the policy's name
#     checks, so a snippet defines any dunder (`__reduce_ex__`, `__match_args__`, `__del__`...).
# (b) `copy.copy(x)` calls that `__reduce_ex__` and `_reconstruct` then runs
#     `setattr(y, key, value)` for a "slot state" dict: any name, on any object, no `_write_`.
# (c) A subclass of a `typing.Protocol` class is an ABC: `Q.register(type(f))` makes every
#     function an instance of Q.
# (d) `case Q(g)` reads `Q.__match_args__[0]` from the subject with a native getattr.
# Together: `__globals__` of the guarded `getattr` builtin, i.e. the real `sandbox.guards`
# module dict with the real builtins module in it.
ENUM_DUNDERS = """
import enum, copy
def red(self, proto):
    return (print, ('reduced',))
E = enum.Enum('E', {'A': 1, '__reduce_ex__': red, '__copy__': None})
copy.copy(E.A)
return 'dunders defined'
"""

SETATTR_GADGET = """
import enum, copy, json, textwrap
def ident(x):
    return x
def red(self, proto):
    return (ident, (TARGET,), (None, {NAME: VALUE}))
E = enum.Enum('E', {'A': 1, '__reduce_ex__': red, '__copy__': None})
copy.copy(E.A)
"""

ESCAPE = """
import enum, copy, typing
class P(typing.Protocol):
    pass
class Q(P):
    pass
def ident(x):
    return x
def red(self, proto):
    return (ident, (Q,), (None, {'__match_args__': ('__globals__',)}))
E = enum.Enum('E', {'A': 1, '__reduce_ex__': red, '__copy__': None})
copy.copy(E.A)
Q.register(type(ident))
match getattr:
    case Q(g):
        pass
B = g['_builtins']
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_enum_functional_api_cannot_define_dunders(sb, backend):
    result = await sb.run(ENUM_DUNDERS, backend=backend)
    sb.assert_error(result, "exception", "_")
    assert "reduced" not in result.logs


@pytest.mark.parametrize("backend", BACKENDS)
async def test_copy_reconstruct_cannot_setattr_host_classes(sb, backend):
    code = (
        SETATTR_GADGET.replace("TARGET", "textwrap.TextWrapper")
        .replace("NAME", "'pwned'").replace("VALUE", "1")
        + "return textwrap.TextWrapper.pwned"
    )
    result = await sb.run(code, backend=backend)
    # The gadget's first link, an enum defining __reduce_ex__, is refused.
    sb.assert_error(result, "exception", "enum member name '__reduce_ex__' is not allowed")
    import textwrap

    assert not hasattr(textwrap.TextWrapper, "pwned")
    await sb.assert_next_run_ok(backend)


def test_copy_gadget_cannot_corrupt_shared_host_class(isolated):
    code = (
        SETATTR_GADGET.replace("TARGET", "type(json)")
        .replace("NAME", "'__getattr__'").replace("VALUE", "lambda self, name: 'PWNED'")
        + "return json.dumps([1])"
    )
    report = isolated(
        code, "import sandbox.shims as s\nstate = sorted(k for k in vars(s.ModuleShim) if 'getattr' in k or k == 'pwned')\nstate = [state, repr(s.ModuleShim.__getattr__.__module__)]"
    )
    assert not report["hung"]
    assert report["result"]["error"] is not None, report["result"]
    assert report["after"] == report["before"]
    assert report["next"]["value"] == "[1]"


async def test_match_args_escape_inprocess_reads_host_file(sb):
    code = ESCAPE + "return B.open(SECRET_PATH).read()"
    result = await sb.run(code, backend="inprocess")
    sb.assert_error(result, "syntax", "positional patterns in a class pattern are not supported")


async def test_match_args_escape_worker_gets_real_os(sb):
    code = ESCAPE + (
        "os = B.getattr(B, '__import__')('os')\n"
        "return [type(os).__name__, os.getpid() > 1, sorted(os.environ)]"
    )
    result = await sb.run(code)
    sb.assert_error(result, "syntax", "positional patterns in a class pattern are not supported")


async def test_hostile_worker_frame_cannot_crash_the_host(sb):
    code = "import asyncio, json\n" + ESCAPE + (
        "os = B.getattr(B, '__import__')('os')\n"
        "body = json.dumps({'op': 'call', 'id': 1, 'name': [], 'a': [[], {}]}).encode()\n"
        "os.write(3, len(body).to_bytes(4, 'big') + body)\n"
        "await asyncio.sleep(1)\n"
    )
    try:
        result = await sb.run(code)
    except Exception as exc:  # the host must never see the worker's malformation as an exception
        pytest.fail(f"sandbox.run raised {type(exc).__name__}")
    # The escape is closed at compile time now; the host side of a frame whose name is a list
    # is covered with a scripted worker in tests/sandbox/test_worker.py (unhashable-name).
    assert result.error is not None and result.error.kind == "syntax", result
    assert sb.spy.calls == []


async def test_match_class_pattern_on_own_class_cannot_set_match_args(sb):
    # The direct ways to get __match_args__ onto a class stay refused.
    code = "class Q:\n    __match_args__ = ('__globals__',)\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "syntax", "__match_args__")
    code = "class Q:\n    pass\nsetattr(Q, '__match_args__', ('__globals__',))\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "AttributeError", "private")


async def test_namedtuple_cannot_smuggle_private_match_args(sb):
    code = "import collections\nP = collections.namedtuple('P', ['__globals__'])\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ValueError", "underscore")
    code = "import typing\nP = typing.NamedTuple('P', [('_x', int)])\nreturn 1"
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ValueError", "underscore")


# -- 2. super() with arguments hands out the real str.format ----------------------------------

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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_super_with_args_cannot_read_init(sb, backend):
    result = await sb.run("return super(int, 1).__init__()", backend=backend)
    sb.assert_error(result, "syntax", "may only be read as super().__init__")


# -- 3. The run's control objects --------------------------------------------------------------

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
    # The stop refuses the write (a TypeError the snippet raised instead), never a fake kind.
    assert result.error.kind in ("output-limit", "exception"), result.error
    assert "RunStopped cannot be changed" in result.error.message
    assert "by the host" not in result.error.message


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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_forged_negative_sleep_is_harmless(sb, backend):
    result = await sb.run(FORGED_SLEEP.replace("DELAY", "-1e9"), backend=backend)
    sb.assert_error(result, "exception", "TypeError", "sandbox internals cannot be created by a snippet")


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


# -- 4. Output and error-size accounting -------------------------------------------------------

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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_print_odd_arguments(sb, backend):
    result = await sb.run("print('a', file=tools)", backend=backend)
    sb.assert_error(result, "exception", "TypeError", "print(file=...) is not supported")
    result = await sb.run("print('a', 'b', sep=1)", backend=backend)
    sb.assert_error(result, "exception", "TypeError", "sep and end must be str")


@pytest.mark.parametrize("backend", BACKENDS)
async def test_str_that_prints_from_str(sb, backend):
    code = (
        "class A:\n    def __str__(self):\n        print('inner')\n        return 'outer'\n"
        "print(A())\nreturn 1"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.logs == ["inner", "outer"]


# -- 5. Shim attributes and odd builtins that must stay closed ---------------------------------

CLOSED = [
    pytest.param("import functools\nreturn functools.partial(print).func.__self__", "syntax",
                 ["__self__"], id="partial-func-self"),
    pytest.param("import functools\nreturn getattr(functools.lru_cache(lambda: 1), '__wrapped__')",
                 "exception", ["AttributeError", "private"], id="lru-cache-wrapped"),
    pytest.param("import functools\nc = functools.cached_property(lambda s: 1)\nreturn getattr(c.func, '__globals__')",
                 "exception", ["AttributeError", "private"], id="cached-property-func-globals"),
    pytest.param(
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    x: int = 1\n"
        "f = dataclasses.fields(D)[0]\nf.name = '__globals__'\nreturn 1",
        "exception", ["TypeError", "cannot modify attributes of a 'Field'"], id="dataclass-field-rename"),
    pytest.param(
        "import dataclasses\n@dataclasses.dataclass\nclass D:\n    x: int = 1\n"
        "return getattr(dataclasses.fields(D)[0], '_field_type')",
        "exception", ["AttributeError", "private"], id="dataclass-field-private"),
    pytest.param("import dataclasses, json\nreturn dataclasses.dataclass(type(json))", "exception",
                 ["TypeError", "only applies to classes defined in the snippet"], id="dataclass-host-class"),
    pytest.param("import functools, re\nreturn functools.total_ordering(re.Pattern)", "exception",
                 ["TypeError", "only applies to classes defined in the snippet"], id="total-ordering-host"),
    pytest.param("import operator\nreturn operator.attrgetter('real.__class__')(1)", "exception",
                 ["AttributeError", "private"], id="attrgetter-dotted"),
    pytest.param("import operator\nreturn operator.methodcaller('format_map', {})('{0}')", "exception",
                 ["AttributeError", "through methodcaller"], id="methodcaller-format-map"),
    pytest.param("eg = ExceptionGroup('g', [ValueError('v')])\nreturn eg.exceptions[0].__traceback__",
                 "syntax", ["__traceback__"], id="group-traceback"),
    pytest.param(
        "try:\n    raise ExceptionGroup('g', [ValueError('v')])\nexcept ExceptionGroup as eg:\n"
        "    part = eg.split(ValueError)[0]\nreturn getattr(part, '__traceback__')",
        "exception", ["AttributeError", "private"], id="group-split-traceback"),
    pytest.param(
        "try:\n    try:\n        1 / 0\n    except ZeroDivisionError:\n        raise ValueError('x')\n"
        "except ValueError as e:\n    c = getattr(e, '__context__')\nreturn 1",
        "exception", ["AttributeError", "private"], id="exception-context"),
    pytest.param("import re\nm = re.match('a', 'a')\nreturn getattr(m.re, '__reduce__')", "exception",
                 ["AttributeError", "private"], id="re-pattern-reduce"),
    pytest.param("import json\ntry:\n    json.loads('{')\nexcept json.JSONDecodeError as e:\n    return getattr(e, '__traceback__')",
                 "exception", ["AttributeError", "private"], id="jsondecodeerror-traceback"),
    pytest.param("import enum\nclass C(enum.Enum):\n    A = 1\nreturn C._member_map_", "syntax",
                 ["_member_map_"], id="enum-private-map"),
    pytest.param("import string\nreturn string.Formatter", "exception",
                 ["AttributeError", "has no attribute 'Formatter'"], id="string-formatter"),
    pytest.param("import time\ntime.sleep(0)", "exception", ["AttributeError", "'sleep'"], id="time-sleep"),
    pytest.param("import uuid\nreturn str(uuid.uuid1())", "exception", ["AttributeError", "'uuid1'"], id="uuid1"),
    pytest.param("import decimal\nreturn decimal.getcontext()", "exception",
                 ["AttributeError", "'getcontext'"], id="decimal-getcontext"),
    pytest.param("import typing\nreturn typing.get_type_hints(int)", "exception",
                 ["AttributeError", "'get_type_hints'"], id="typing-get-type-hints"),
    pytest.param("import functools\nreturn functools.wraps", "exception", ["AttributeError", "'wraps'"],
                 id="functools-wraps"),
    pytest.param("return dir(tools)", "exception", ["NameError", "dir"], id="dir"),
    pytest.param("return vars(tools)", "exception", ["NameError", "vars"], id="vars"),
    pytest.param("return memoryview(b'x')", "exception", ["NameError", "memoryview"], id="memoryview"),
    pytest.param("return type('X', (), {'__reduce_ex__': print})", "exception",
                 ["TypeError", "exactly one argument"], id="type-three-args"),
    pytest.param("return type(type(int))('X', (), {})", "exception",
                 ["TypeError", "exactly one argument"], id="metaclass-of-metaclass"),
    pytest.param("import copy\nreturn copy.deepcopy(tools)", "exception", ["TypeError", "cannot be copied"],
                 id="deepcopy-namespace"),
    pytest.param("import copy, json\nreturn copy.copy(json)", "exception", ["TypeError", "cannot be copied"],
                 id="copy-shim"),
    pytest.param("import copy\nreturn copy.copy(tools.f)", "exception", ["TypeError", "cannot be copied"],
                 id="copy-binding"),
    pytest.param("return anext(tools)", "exception", ["TypeError"], id="anext-namespace"),
    pytest.param("import asyncio\nreturn await asyncio.gather(1)", "exception",
                 ["TypeError", "takes awaitables"], id="gather-non-awaitable"),
    pytest.param("import asyncio\nawait asyncio.sleep(True)", "exception", ["TypeError", "number of seconds"],
                 id="sleep-bool"),
    pytest.param("import asyncio\nawait asyncio.sleep(float('nan'))", "exception", ["ValueError", "NaN"],
                 id="sleep-nan"),
    pytest.param("return sorted([1, 2], key=tools.f)", "exception", ["TypeError", "<"], id="sorted-key-binding"),
    pytest.param("return tools.describe.__self__", "syntax", ["__self__"], id="describe-self"),
    pytest.param("import json\nreturn json.loads('[' * 200000 + ']' * 200000)", "exception",
                 ["RecursionError"], id="json-deep-recursion"),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("code", "kind", "fragments"), CLOSED)
@pytest.mark.filterwarnings("ignore")
async def test_closed_paths(sb, backend, code, kind, fragments):
    result = await sb.run(code, backend=backend)
    sb.assert_error(result, kind, *fragments)
    assert sb.spy.calls == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_describe_internals_with_docs(sb, backend):
    docs = {"f": "doc of f", "g": "doc of g"}
    result = await sb.run("return getattr(tools.describe, '__func__')", backend=backend, docs=docs)
    sb.assert_error(result, "exception", "AttributeError", "private")
    result = await sb.run("return tools.describe(123)", backend=backend, docs=docs)
    sb.assert_error(result, "exception", "TypeError", "takes a function name")
    result = await sb.run("return [tools.list(), tools.describe('f')]", backend=backend, docs=docs)
    assert result.value == [["f", "g"], "doc of f"]


@pytest.mark.parametrize("backend", BACKENDS)
async def test_template_subclass_does_not_traverse(sb, backend):
    code = (
        "import string\n"
        "class T(string.Template):\n    idpattern = r'[a-z_][a-z0-9_.]*'\n"
        "t = T('$a.__class__ and ${b.__globals__}')\n"
        "return t.safe_substitute({'a.__class__': 'one'})"
    )
    result = await sb.run(code, backend=backend)
    assert result.ok, result
    assert result.value == "one and ${b.__globals__}"


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


@pytest.mark.parametrize("backend", BACKENDS)
async def test_map_of_binding_never_awaited_never_runs(sb, backend):
    result = await sb.run("xs = list(map(tools.f, [1, 2, 3]))\nreturn len(xs)", backend=backend)
    assert result.value == 3
    assert sb.spy.calls == []
    assert sum("never awaited" in line for line in result.logs) == 3


@pytest.mark.parametrize("backend", BACKENDS)
async def test_unawaited_call_warnings_respect_output_cap(sb, backend):
    result = await sb.run("xs = [tools.f() for _ in range(100000)]\nreturn 1", backend=backend, max_output=1000)
    assert sb.spy.calls == []
    assert sum(len(line) for line in result.logs) < 10_000
    assert result.error is None or result.error.kind != "crashed", result.error


async def test_long_c_call_is_killed(sb):
    code = "import hashlib\nreturn hashlib.pbkdf2_hmac('sha256', b'x', b's', 10 ** 9).hex()"
    result, ticks, elapsed = await sb.run_with_ticker(code, wall_time=0.5, cpu_time=5)
    assert result.error is not None and result.error.kind == "timeout", result
    assert elapsed < 4
    assert ticks > 10
    await sb.assert_next_run_ok()
