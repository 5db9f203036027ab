"""typing: aliases forward attribute reads and writes to their origin, `register` reaches the
host's collections.abc classes, and `_tp_cache` is process-wide. No alias write, ABC
registration or cache entry made by a snippet may change what the host sees; forward
references are compiled, never evaluated; NamedTuple and Generic take no private or injected
names.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.anyio


def test_typing_alias_register_cannot_change_host_abcs(isolated):
    code = "import typing\ntyping.Mapping.register(int)\ntyping.Iterable.register(type(None))\nreturn 1"
    report = isolated(
        code,
        "import collections.abc\n"
        "state = [isinstance(1, collections.abc.Mapping), isinstance(None, collections.abc.Iterable)]",
    )
    assert not report["hung"]
    assert report["after"] == report["before"] == [False, False], report
    assert report["next"]["value"] == "[1]"


def test_abc_subclass_register_cannot_poison_host_abc_cache(isolated):
    code = (
        "import typing\nclass M(typing.Sequence):\n    pass\nM.register(dict)\n"
        "return isinstance({}, typing.Sequence)"
    )
    report = isolated(
        code, "import collections.abc, gc\ngc.collect()\nstate = [isinstance({}, collections.abc.Sequence)]"
    )
    assert not report["hung"]
    assert report["after"] == report["before"] == [False], report
    assert report["next"]["value"] == "[1]"


async def test_protocol_register_on_own_class_is_refused(sb):
    # ABC registration is refused outright, even on the snippet's own classes: isinstance checks
    # against a host ABC walk its subclasses and cache what they find, on the host's class.
    code = (
        "import typing\nclass P(typing.Protocol):\n    pass\nclass Q(P):\n    pass\n"
        "Q.register(int)\nreturn isinstance(1, Q)"
    )
    result = await sb.run(code)
    sb.assert_error(result, "exception", "ABC registration is not available")


TYPING_CLOSED = [
    ("typing alias write forwards to origin", "import typing\ntyping.List.pwned = 1\nreturn 1", "exception",
     ["cannot modify"]),
    ("typing alias setattr", "import typing\nsetattr(typing.Dict, 'pwned', 1)\nreturn 1", "exception",
     ["cannot modify"]),
    ("subclass typing alias class", "import typing, textwrap\nclass A(type(typing.List), _root=True):\n    pass\n"
     "a = A(textwrap.TextWrapper, 0)\na.pwned = 1\nreturn 1", "syntax", ['class keyword "_root" is not allowed']),
    # `__origin__` is a value (issue 12); the shared alias cannot be pointed elsewhere.
    ("typing alias __origin__", "import typing\no = getattr(typing.List, '__origin__')\n"
     "if o is not list:\n    raise LookupError('not list')\nsetattr(typing.List, '__origin__', dict)\nreturn 1",
     "exception", ["AttributeError", "private"]),
]


@pytest.mark.parametrize("name,code,kind,fragments", TYPING_CLOSED, ids=[c[0] for c in TYPING_CLOSED])
async def test_typing_alias_paths_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments, docs={"f": "doc f", "g": "doc g"})


# == closed: typing's global lru caches keyed by snippet objects ===================================
#
# typing._tp_cache wraps `__getitem__` of the special forms and aliases in a process-wide
# functools.lru_cache (typing.py, `_tp_cache` / `_caches`). An instance of a snippet class with
# `__call__` (so it passes `_type_check`), `__hash__` = hash(int) and `__eq__` -> True becomes the
# cached answer for the host's own `typing.List[int]` once the host entry has been evicted
# (maxsize 128): host code then gets `List[<snippet object>]`, and the snippet's `__eq__` runs in
# every later lookup.
TYPING_POISON = """
import typing
class K:
    def __call__(self):
        return None
for i in range(300):
    typing.List[K()]
class E:
    def __call__(self):
        return None
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash(int)
typing.List[E()]
return repr(typing.List[int])
"""


def test_typing_cache_poisoning(isolated):
    check = "import typing\nstate = typing.List[int].__args__[0] is int"
    report = isolated(TYPING_POISON, check)
    assert report["before"] is True
    assert report["after"] is True


async def test_typing_cache_poisoning_confined_to_worker(sb):
    nxt = await sb.assert_confined_to_worker(TYPING_POISON, "import typing\nreturn repr(typing.List[int])")
    assert nxt.value == "typing.List[int]"


async def test_typing_literal_cache_is_typed(sb):
    code = """
import typing
class E(str):
    def __eq__(self, other):
        return True
    def __hash__(self):
        return hash("a")
for i in range(300):
    typing.Literal[i]
typing.Literal[E("zzz")]
return repr(typing.Literal["a"])
"""
    result = await sb.run(code, backend="worker")
    assert result.ok and result.value == "typing.Literal['a']", result


async def test_typing_namedtuple_functional_str_subclass_refused(sb):
    code = """
import typing
class S(str):
    def isidentifier(self):
        return True
    def __str__(self):
        return self
N = typing.NamedTuple("N", [(S("a: open(SECRET_PATH).read() #"), int)])
return N(1)
"""
    result = await sb.run(code)
    assert result.error is not None and result.error.kind == "exception"
    sb.assert_no_leak(result)


TYPING_GADGETS_CLOSED = [
        (
            "typing_namedtuple_functional_underscore",
            "import typing\ntyping.NamedTuple('P', [('_x', int)])",
            "exception",
            ("ValueError",),
        ),
        (
            "typing_generic_string_args",
            "import typing\ntyping.Generic[\"open(OUT_PATH, 'w')\"]",
            "exception",
            ("TypeError",),
        ),
]


@pytest.mark.parametrize("name, code, kind, fragments", TYPING_GADGETS_CLOSED, ids=[c[0] for c in TYPING_GADGETS_CLOSED])
async def test_typing_gadgets_closed(sb, name, code, kind, fragments):
    await sb.assert_refused(code, kind, *fragments)
    await sb.assert_next_run_ok()


TYPING_HARMLESS = [
        (
            "forward_refs_are_compiled_not_evaluated",
            """
import typing
class TD(typing.TypedDict):
    a: "open(OUT_PATH, 'w')"
T = typing.TypedDict("T", {"b": "open(OUT_PATH, 'w')"})
L = typing.List["open(OUT_PATH, 'w')"]
V = typing.TypeVar("V", bound="open(OUT_PATH, 'w')")
N = typing.NamedTuple("N", [("c", "open(OUT_PATH, 'w')")])
return "ok"
""",
            "ok",
        ),
        (
            "cast_annotated_literal_are_inert",
            "import typing\nA = typing.Annotated[int, print]\n"
            "return [typing.cast(A, 'x'), repr(typing.Literal[1, 'a'])]",
            ["x", "typing.Literal[1, 'a']"],
        ),
]


@pytest.mark.parametrize("name, code, expected", TYPING_HARMLESS, ids=[c[0] for c in TYPING_HARMLESS])
async def test_typing_harmless(sb, name, code, expected):
    await sb.assert_harmless(code, expected)


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_annotated_aliases_are_hints_that_cannot_be_called(sb, backend):
    # Calling an alias calls its first argument and writes `__orig_class__` onto the result
    # with host rights; `Annotated` takes any callable first, which can return a host object.
    # Every alias made from one (`copy_with`, subscripting a generic one, a copy) is a hint too:
    # a review built CPython's callable alias again through `copy_with` and `Annotated[T, m][X]`.
    code = """
import typing, functools, copy
CacheInfo = type(functools.cache(len).cache_info())
T = typing.TypeVar("T")
def f(x: typing.Annotated[int, "meters"]) -> int:
    return x
refused = []
for call in (lambda: typing.Annotated[lambda: CacheInfo, 0](), lambda: typing.Annotated[type, 0](f),
             lambda: typing.Annotated[int, 0].copy_with((lambda: CacheInfo,))(),
             lambda: typing.Annotated[T, 0][lambda: CacheInfo](),
             lambda: copy.copy(typing.Annotated[lambda: CacheInfo, 0])(),
             lambda: copy.deepcopy(typing.Annotated[lambda: CacheInfo, 0])(),
             lambda: typing.Annotated[typing.Annotated[lambda: CacheInfo, 1], 2]()):
    try:
        call()
    except TypeError as e:
        refused.append(str(e))
nested = typing.Annotated[typing.Annotated[int, 1], 2]
return [repr(typing.Annotated[int, "unit"]), f(3), refused, hasattr(CacheInfo, "__orig_class__"),
        repr(nested), nested == typing.Annotated[int, 1, 2], repr(typing.Annotated[list[T], 0][int])]
"""
    hint = "an Annotated type hint cannot be called in the sandbox; call the type it annotates"
    await sb.assert_harmless(code, ["typing.Annotated[int, 'unit']", 3, [hint] * 7, False,
                                    "typing.Annotated[int, 1, 2]", True, "typing.Annotated[list[int], 0]"],
                             backend=backend)
    import functools

    assert not hasattr(type(functools.lru_cache()(len).cache_info()), "__orig_class__")


@pytest.mark.parametrize("backend", ["worker", "inprocess"])
async def test_no_alias_call_writes_onto_a_host_class(sb, backend):
    # Every generic alias writes `__orig_class__` onto what its origin returns, with host rights:
    # a review built callable ones around a snippet lambda that returns a host class through
    # `Annotated`'s real base class, `super(...).copy_with`, `typing._GenericAlias` and
    # `types.GenericAlias` (and the next review at `ExceptionGroup`, a builtin heap type, and at
    # the class of an exception a C function raises). The class is frozen, so the write fails
    # (typing's call raises, the C one ignores it), whichever alias is used; and `super()` never
    # starts past the sandbox's own subclass of a host class, whose overrides it would skip.
    code = """
import typing, functools, hashlib
CacheInfo = type(functools.cache(len).cache_info())
a = typing.Annotated[int, 0]
try:
    hashlib.pbkdf2_hmac("no-such-digest", b"p", b"s", 1)
except ValueError as e:
    Unsupported = type(e)
calls = (lambda: type(a).__bases__[0](lambda: CacheInfo, (0,))(),
         lambda: super(type(a), a).copy_with((lambda: CacheInfo,))(),
         lambda: type(typing.List[int])(lambda: CacheInfo, (int,))(),
         lambda: type(list[int])(lambda: CacheInfo, (int,))(),
         lambda: type(typing.List[int])(lambda: ExceptionGroup, (int,))(),
         lambda: type(typing.List[int])(lambda: Unsupported, (int,))())
out = []
for call in calls:
    try:
        out.append(repr(call()))
    except TypeError as e:
        out.append(str(e))
return out + [hasattr(CacheInfo, "__orig_class__")]
"""
    refused = "cannot set '__orig_class__' attribute of immutable type '{}'"
    skipped = "super() cannot start past '_HintAlias': it is the sandbox's own class"
    await sb.assert_harmless(code, [refused.format("CacheInfo"), skipped, refused.format("CacheInfo"),
                                    "<class 'functools.CacheInfo'>", refused.format("ExceptionGroup"),
                                    refused.format("UnsupportedDigestmodError"), False], backend=backend)
    import _hashlib
    import functools

    for cls in (type(functools.lru_cache()(len).cache_info()), ExceptionGroup, _hashlib.UnsupportedDigestmodError):
        assert "__orig_class__" not in cls.__dict__
