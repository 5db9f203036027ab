"""Curated stand-ins for the stdlib modules a snippet may import.

A snippet never gets a real module object: real modules reach `os` and `sys` through plain
attributes (`datetime.sys`, `json.decoder.re`...). A `ModuleShim` exposes a fixed list of
functions, classes and constants, refuses writes, and has no attribute of its own that leads
anywhere. Each run builds its own shims, so per-run state (the `random` generator) never leaks.

Left out on purpose: anything that touches files, processes, the network, the environment or
interpreter internals; `string.Formatter` (attribute traversal); `typing.get_type_hints` and
`ForwardRef` (they call `eval`); `uuid.uuid1` (reads the host's MAC address); `time.sleep`
(use `await asyncio.sleep`); `decimal.getcontext`/`setcontext` (thread state shared with the
host in-process); `functools.wraps`/`update_wrapper` (they write attributes onto any function).
"""

from __future__ import annotations

import base64
import bisect
import collections
import copy
import dataclasses
import datetime
import decimal
import difflib
import enum
import fractions
import functools
import hashlib
import heapq
import importlib
import itertools
import json
import keyword
import math
import operator
import random
import re
import statistics
import string
import textwrap
import time
import types
import typing
import unicodedata
import uuid
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType, ModuleType
from typing import Any

from .guards import CHECKED_REPLACEMENTS, ReadOnly, RunGuards, attribute_problem, plain_name
from .policy import FILENAME, RUNTIME_CHECKED_ATTRIBUTES


class ModuleShim(ReadOnly):
    """A read-only module look-alike. Only the listed names exist on it."""

    __slots__ = ("_shim_name", "_shim_attrs")

    def __init__(self, name: str, attrs: Mapping[str, Any]) -> None:
        try:
            object.__getattribute__(self, "_shim_name")
        except AttributeError:
            pass
        else:
            raise TypeError("a module shim cannot be re-initialised")
        object.__setattr__(self, "_shim_name", name)
        object.__setattr__(self, "_shim_attrs", MappingProxyType(dict(attrs)))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._shim_attrs[name]
        except KeyError:
            raise AttributeError(
                f"module '{self._shim_name}' has no attribute '{name}' in the sandbox"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise TypeError(f"cannot modify module '{self._shim_name}' in the sandbox")

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"cannot modify module '{self._shim_name}' in the sandbox")

    def __dir__(self) -> list[str]:
        return sorted(self._shim_attrs)

    def __repr__(self) -> str:
        return f"<module '{self._shim_name}' (sandbox)>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("module shims cannot be copied or pickled")


def _pick(module: Any, names: Iterable[str]) -> dict[str, Any]:
    return {name: getattr(module, name) for name in names if hasattr(module, name)}


def _public(module: Any, exclude: Iterable[str] = ()) -> dict[str, Any]:
    """A module's public API (its `__all__` when it has one), never another module object:
    `statistics.sys` is a plain attribute."""
    skip = set(exclude)
    names = getattr(module, "__all__", None) or dir(module)
    return {
        name: getattr(module, name)
        for name in names
        if not name.startswith("_")
        and name not in skip
        and not isinstance(getattr(module, name), ModuleType)
    }


#: Attribute names the data-driven getters refuse on top of the usual rules: the ones whose
#: values the runtime guard judges (the real `str.format` traverses attributes, ABC `register`
#: changes host classes, ...), since the C getters read them unjudged.
_GETTER_REFUSED = RUNTIME_CHECKED_ATTRIBUTES


def _checked_names(names: tuple[Any, ...], count: int, what: str) -> list[Any]:
    checked = list(names)
    for i in range(min(count, len(names))):
        name = plain_name(names[i])
        for part in name.split("."):
            problem = attribute_problem(part) or (
                f'attribute "{part}" is not accessible through {what}' if part in _GETTER_REFUSED else None
            )
            if problem:
                raise AttributeError(problem)
        checked[i] = name
    return checked


class _CheckedGetter(ReadOnly):
    """attrgetter/methodcaller take attribute names as data. These classes check the names in
    their constructor, so `type(operator.attrgetter("x"))("__globals__")` is checked too; the
    real C getter sits in a private slot."""

    __slots__ = ("_real",)
    _factory: Any = None
    _what = ""
    _count = 0  # how many leading arguments are names (0: all of them)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        count = self._count or len(args)
        object.__setattr__(self, "_real", self._factory(*_checked_names(args, count, self._what), **kwargs))

    def __call__(self, obj: Any) -> Any:
        return self._real(obj)

    def __repr__(self) -> str:
        return f"<{self._what}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"{self._what} objects cannot be copied")


class attrgetter(_CheckedGetter):  # noqa: N801 - the stdlib's name
    __slots__ = ()
    _factory = operator.attrgetter
    _what = "attrgetter"


class methodcaller(_CheckedGetter):  # noqa: N801 - the stdlib's name
    __slots__ = ()
    _factory = operator.methodcaller
    _what = "methodcaller"
    _count = 1


def _refuse_field_subclasses(cls: Any) -> None:
    """`@dataclass` pastes every field name into source it executes, so each must be a plain
    identifier: only the real `Field` class may appear, and every name it will use (the class's
    own annotations, which a `TypedDict` base fills from any string it was given, and the fields
    of every dataclass base) must be a plain `str` that is an identifier and not a keyword."""
    for value in type.__getattribute__(cls, "__dict__").values():
        if isinstance(value, dataclasses.Field) and type(value) is not dataclasses.Field:
            raise TypeError("dataclass fields must be made with dataclasses.field()")
    for klass in type.__getattribute__(cls, "__mro__"):
        own = type.__getattribute__(klass, "__dict__")
        names = list(own.get("__annotations__", None) or ())
        fields = own.get("__dataclass_fields__", None) or {}
        names += list(fields)
        names += [f.name for f in fields.values() if isinstance(f, dataclasses.Field)]
        for name in names:
            if type(name) is not str or not name.isidentifier() or keyword.iskeyword(name):
                raise TypeError(f"dataclass field names must be identifiers, got {str(name)[:60]!r}")


def _owned_only(fn: Callable[..., Any], guards: RunGuards, what: str) -> Callable[..., Any]:
    """Class decorators that rewrite the class they get: only on the snippet's own classes."""

    @functools.wraps(fn)
    def decorate(cls: Any = None, /, **kwargs: Any) -> Any:
        if cls is None:
            return lambda c: decorate(c, **kwargs)
        guards.require_owned_class(cls, what)
        _refuse_field_subclasses(cls)
        return fn(cls, **kwargs)

    return decorate


class _EnumType(enum.EnumType):
    """The metaclass of the snippet's enum classes. The functional API
    (`Enum("Color", {...})`) builds a class from data, outside the class-statement checks, so
    member names starting with "_" (which would define dunders such as `__reduce_ex__`) are
    refused here."""

    def __call__(cls, value: Any, names: Any = None, *args: Any, **kwargs: Any) -> Any:
        if names is not None:
            names = _plain_members(names)
        return super().__call__(value, names, *args, **kwargs)


def _plain_members(names: Any) -> list[Any]:
    """The functional API's members as one plain list, built here in a single pass: the enum
    machinery then reads this list, not the snippet's object (which could answer a check one
    way and the real iteration another). Names must be plain strings not starting with "_"."""
    if isinstance(names, str):
        items: list[Any] = str.__str__(names).replace(",", " ").split()
    elif isinstance(names, dict):
        items = [(k, v) for k, v in dict.items(names)]
    else:
        items = []
        for entry in list(names):
            if isinstance(entry, (tuple, list)):
                pair = tuple(tuple.__iter__(entry)) if isinstance(entry, tuple) else tuple(list.__iter__(entry))
                if len(pair) != 2:
                    raise ValueError("enum members are names or (name, value) pairs")
                items.append(pair)
            else:
                items.append(entry)
    plain: list[Any] = []
    for item in items:
        name, rest = (item[0], item[1:]) if isinstance(item, tuple) else (item, ())
        if type(name) is not str or name.startswith("_"):
            raise ValueError(f"enum member name {name!r} is not allowed in the sandbox")
        plain.append((name, *rest) if rest else name)
    return plain


def _safe_enum_classes() -> dict[str, Any]:
    """Memberless subclasses of the enum bases with the checking metaclass; a snippet
    subclasses or calls them exactly like the originals."""
    classes: dict[str, Any] = {}
    for base in (enum.Enum, enum.IntEnum, enum.StrEnum, enum.Flag, enum.IntFlag):
        classes[base.__name__] = _EnumType(base.__name__, (base,), enum.EnumType.__prepare__(base.__name__, (base,)))
    return classes


#: The `re` functions whose pattern and flags a snippet passes; see `_plain_re`.
_RE_FUNCTIONS = (
    "compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split",
)


def _plain_re(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`re` keeps a process-wide cache keyed on (pattern, flags) as passed: a snippet's `int`
    subclass with a lying `__eq__`/`__hash__` as flags could poison what the host's own `re`
    calls get back (in-process). Plain `str`/`bytes` and `int` go in instead."""

    @functools.wraps(fn)
    def call(pattern: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(pattern, str):
            pattern = str.__str__(pattern)
        elif isinstance(pattern, (bytes, bytearray)):
            pattern = bytes(pattern)
        if fn.__name__ in ("sub", "subn"):
            # The replacement template is cached process-wide too (`re._compile_repl`).
            if "repl" in kwargs:
                kwargs["repl"] = _plain_template(kwargs["repl"])
            elif args:
                args = (_plain_template(args[0]), *args[1:])
        if "flags" in kwargs:
            kwargs["flags"] = _plain_flags(kwargs["flags"])
        elif fn.__name__ in _FLAGS_POSITION and len(args) > _FLAGS_POSITION[fn.__name__]:
            i = _FLAGS_POSITION[fn.__name__]
            args = (*args[:i], _plain_flags(args[i]), *args[i + 1 :])
        return fn(pattern, *args, **kwargs)

    return call


#: Where `flags` sits among the arguments after the pattern, per function.
_FLAGS_POSITION = {
    "compile": 0, "search": 1, "match": 1, "fullmatch": 1, "findall": 1, "finditer": 1,
    "sub": 3, "subn": 3, "split": 2,
}


def _plain_template(repl: Any) -> Any:
    if isinstance(repl, str):
        return str.__str__(repl)
    if isinstance(repl, (bytes, bytearray)):
        return bytes(repl)
    return repl


def _plain_flags(flags: Any) -> Any:
    return re.RegexFlag(int.__int__(flags)) if isinstance(flags, int) else flags


def _plain_strptime(data: Any, fmt: Any = "%a %b %d %H:%M:%S %Y") -> Any:
    """`time.strptime` with plain strings: `_strptime` caches compiled formats process-wide,
    keyed on the format object, which a `str` subclass could make lie."""
    return time.strptime(
        str.__str__(data) if isinstance(data, str) else data,
        str.__str__(fmt) if isinstance(fmt, str) else fmt,
    )


class cached_property(functools.cached_property):  # noqa: N801 - the stdlib's name
    """`functools.cached_property` whose attribute name is checked when it is used: the cached
    value is written straight into the instance's `__dict__`, so a renamed property could plant
    `__reduce_ex__` or other dunders there."""

    def __set_name__(self, owner: Any, name: str) -> None:
        _check_cache_name(name)
        super().__set_name__(owner, name)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        # The name is read once, checked, and used for the store: the property's own function
        # (snippet code) runs in between and could rename the property.
        name = self.attrname
        if name is None:
            raise TypeError("cannot use cached_property without assigning it in a class body")
        _check_cache_name(name)
        name = str.__str__(name)
        cache = object.__getattribute__(instance, "__dict__")
        if type(cache) is not dict:
            raise TypeError("cached_property needs an instance with a plain __dict__")
        value = dict.get(cache, name, _MISSING_VALUE)
        if value is _MISSING_VALUE:
            value = self.func(instance)
            dict.__setitem__(cache, name, value)
        return value


_MISSING_VALUE = object()


CHECKED_REPLACEMENTS.add(cached_property)


def _check_cache_name(name: Any) -> None:
    if name is None:
        return
    problem = attribute_problem(plain_name(name), write=True) if isinstance(name, str) else "bad name"
    if problem or type(name) is not str:
        raise TypeError(f"cached_property name {name!r} is not allowed in the sandbox")


#: Names `copy` looks up on an *instance* (or writes back with setattr): none of them may come from
#: an instance dictionary, where host code such as cached_property could have put them.
_COPY_HOOKS = frozenset(
    {"__reduce_ex__", "__reduce__", "__deepcopy__", "__copy__", "__setstate__", "__getstate__",
     "__class__", "__dict__", "__getattr__", "__getattribute__"}
)

#: Hooks `copy` finds on an object's *class* (`cls.__copy__`, `x.__reduce_ex__`, `y.__setstate__`,
#: and the ones `object.__reduce_ex__` calls).
_CLASS_COPY_HOOKS = frozenset(
    {"__reduce_ex__", "__reduce__", "__deepcopy__", "__copy__", "__setstate__", "__getstate__",
     "__getnewargs__", "__getnewargs_ex__"}
)

#: Objects a copy check walks before giving up (a copy that large is not a snippet's business).
_MAX_COPY_WALK = 200_000


def _trusted_hook(cls: type, name: str, value: Any) -> bool:
    """A copy hook defined by host code: a Python function compiled from a host file, or the
    class's own C method. Anything else in a class dictionary (a snippet function, a bound
    method, a partial) came from data: a class-building API that took names as data, such as
    an enum functional API."""
    if value is None:
        return True  # `__copy__ = None` switches a hook off
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        return value.__code__.co_filename != FILENAME
    if isinstance(value, (types.WrapperDescriptorType, types.MethodDescriptorType)):
        return value.__objclass__ is cls and value.__name__ == name
    return False


def _class_hook_problem(cls: type, checked: set[type]) -> None:
    """Refuse classes whose own dictionaries (or their bases') hold a copy hook that host code
    did not define: `copy` calls it and drives `setattr` on whatever its result names."""
    for klass in type.__getattribute__(cls, "__mro__"):
        if klass in checked:
            continue
        attrs = type.__getattribute__(klass, "__dict__")
        for name in _CLASS_COPY_HOOKS:
            if name in attrs and not _trusted_hook(klass, name, attrs[name]):
                raise TypeError(f"cannot copy a '{cls.__name__}': its class defines {name} outside a class statement")
        checked.add(klass)


def _copy_problem(obj: Any, deep: bool) -> None:
    """Refuse to copy objects whose instance dictionaries hold the hooks `copy` looks up on the
    instance (`__reduce_ex__`, `__deepcopy__`, ...), or whose classes hold such hooks that host
    code did not define: their results drive `setattr` with any name on any object. Deep
    copies are checked all the way down."""
    seen: set[int] = set()
    classes: set[type] = set()
    kept: list[Any] = []
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if len(seen) > _MAX_COPY_WALK:
            raise ValueError("the object is too large to copy in the sandbox")
        if not isinstance(item, type):
            _class_hook_problem(type(item), classes)
        try:
            attrs = object.__getattribute__(item, "__dict__")
        except (AttributeError, TypeError):
            attrs = None
        if type(attrs) is dict and not isinstance(item, type):
            for key in dict.keys(attrs):
                if type(key) is not str or key in _COPY_HOOKS:
                    raise TypeError(f"cannot copy a '{type(item).__name__}' holding attribute {key!r}")
            if deep:
                stack.extend(dict.values(attrs))
        if not deep:
            continue
        if isinstance(item, dict):
            stack.extend(dict.keys(item))
            stack.extend(dict.values(item))
            if isinstance(item, collections.defaultdict):
                stack.append(item.default_factory)
        elif isinstance(item, (list, tuple, set, frozenset, collections.deque)):
            base = next(b for b in (list, tuple, set, frozenset, collections.deque) if isinstance(item, b))
            stack.extend(base.__iter__(item))
        elif not isinstance(item, _ATOMS):
            # Whatever copy will visit for this object: what its reduce protocol hands back
            # (a bound method's __self__, a partial's arguments, an iterator's container, ...).
            try:
                reduced = object.__reduce_ex__(item, 4)
            except Exception:
                continue
            kept.append(reduced)  # alive until the walk ends, so no id() is reused while it runs
            if isinstance(reduced, tuple):
                for part in reduced[1:]:
                    if isinstance(part, (tuple, list, dict)):
                        stack.append(part)
                    elif part is not None and not isinstance(part, _ATOMS):
                        stack.append(part)


#: Types with nothing inside for a copy check to look at.
_ATOMS = (type(None), bool, int, float, complex, str, bytes, type, ModuleShim)


def _checked_copy(x: Any) -> Any:
    _copy_problem(x, deep=False)
    return copy.copy(x)


def _checked_deepcopy(x: Any, memo: Any = None) -> Any:
    # A memo decides what each object's copy is (and keeps the originals): a snippet's memo
    # could substitute anything for any copy, so none is accepted.
    if memo is not None:
        raise TypeError("deepcopy(memo=...) is not supported in the sandbox")
    _copy_problem(x, deep=True)
    return copy.deepcopy(x)


def _checked_copying(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`dataclasses.asdict`/`astuple` deep-copy the values they find: the same check first."""

    @functools.wraps(fn)
    def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
        _copy_problem(obj, deep=True)
        return fn(obj, *args, **kwargs)

    return call


def _plain_escape(pattern: Any) -> Any:
    """`re.escape` with a plain string: it calls `pattern.translate(<re's own table>)`, which a
    `str` subclass could use to get (and change) that shared table."""
    if isinstance(pattern, str):
        pattern = str.__str__(pattern)
    elif isinstance(pattern, (bytes, bytearray)):
        pattern = bytes(pattern)
    return re.escape(pattern)


class Template(string.Template):
    """`string.Template` whose subclasses' pattern settings are made plain strings before the
    stdlib compiles them (it escapes `delimiter` through `re.escape`, see `_plain_escape`)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        for name in ("delimiter", "idpattern", "braceidpattern"):
            value = type.__getattribute__(cls, name)
            if isinstance(value, str):
                type.__setattr__(cls, name, str.__str__(value))
        super().__init_subclass__(**kwargs)


ALLOWED_MODULES: tuple[str, ...] = (
    "asyncio", "base64", "bisect", "collections", "copy", "dataclasses", "datetime", "decimal",
    "difflib", "enum", "fractions", "functools", "hashlib", "heapq", "itertools", "json", "math",
    "operator", "random", "re", "statistics", "string", "textwrap", "time", "typing",
    "unicodedata", "uuid",
)


@functools.cache
def _static_attrs() -> dict[str, dict[str, Any]]:
    """Attribute tables of the shims that hold no per-run state, computed once per process."""
    return {
        "json": _pick(json, ["dumps", "loads", "JSONDecodeError"]),
        "math": _public(math),
        "re": {
            **{name: _plain_re(getattr(re, name)) for name in _RE_FUNCTIONS},
            "escape": _plain_escape,
            **_pick(
                re,
                [
                    "error", "Pattern", "Match", "IGNORECASE", "I", "MULTILINE", "M",
                    "DOTALL", "S", "VERBOSE", "X", "ASCII", "A", "UNICODE", "U", "NOFLAG",
                ],
            ),
        },
        "datetime": _pick(
            datetime,
            ["date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR", "UTC"],
        ),
        "time": {**_pick(
            time,
            [
                "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns",
                "process_time", "process_time_ns", "gmtime", "localtime", "mktime", "strftime",
                "strptime", "asctime", "ctime", "struct_time", "timezone", "altzone", "daylight",
            ],
        ), "strptime": _plain_strptime},
        "itertools": _public(itertools),
        "collections": _pick(
            collections, ["Counter", "defaultdict", "OrderedDict", "deque", "namedtuple", "ChainMap"]
        ),
        "statistics": _public(statistics),
        "string": _pick(
            string,
            [
                "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
                "octdigits", "punctuation", "printable", "whitespace", "capwords",
            ],
        ) | {"Template": Template},
        "textwrap": _pick(textwrap, ["wrap", "fill", "dedent", "indent", "shorten", "TextWrapper"]),
        "decimal": _pick(
            decimal,
            [
                "Decimal", "Context", "DecimalException", "InvalidOperation", "DivisionByZero",
                "Inexact", "Rounded", "Overflow", "Underflow", "ROUND_CEILING", "ROUND_DOWN",
                "ROUND_FLOOR", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP",
                "ROUND_05UP", "MAX_PREC", "MAX_EMAX", "MIN_EMIN",
            ],
        ),
        "fractions": _pick(fractions, ["Fraction"]),
        "heapq": _public(heapq),
        "bisect": _public(bisect),
        "operator": {
            **_public(operator, exclude=["attrgetter", "methodcaller"]),
            "attrgetter": attrgetter,
            "methodcaller": methodcaller,
        },
        "copy": {"copy": _checked_copy, "deepcopy": _checked_deepcopy, "Error": copy.Error},
        "base64": _pick(
            base64,
            [
                "b64encode", "b64decode", "standard_b64encode", "standard_b64decode",
                "urlsafe_b64encode", "urlsafe_b64decode", "b32encode", "b32decode", "b32hexencode",
                "b32hexdecode", "b16encode", "b16decode", "a85encode", "a85decode", "b85encode",
                "b85decode", "encodebytes", "decodebytes",
            ],
        ),
        "hashlib": {
            **_pick(
                hashlib,
                [
                    "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256",
                    "sha3_384", "sha3_512", "shake_128", "shake_256", "blake2b", "blake2s", "new",
                    "pbkdf2_hmac",
                ],
            ),
            "algorithms_guaranteed": frozenset(hashlib.algorithms_guaranteed),
            "algorithms_available": frozenset(hashlib.algorithms_available),
        },
        "uuid": _pick(
            uuid,
            ["UUID", "uuid3", "uuid4", "uuid5", "NAMESPACE_DNS", "NAMESPACE_URL", "NAMESPACE_OID", "NAMESPACE_X500"],
        ),
        "difflib": _pick(
            difflib,
            ["SequenceMatcher", "Differ", "unified_diff", "context_diff", "ndiff", "get_close_matches", "restore"],
        ),
        "unicodedata": _public(unicodedata, exclude=["ucd_3_2_0", "UCD"]),
        "enum": {**_safe_enum_classes(), **_pick(enum, ["auto", "unique"])},
        "typing": _pick(
            typing,
            [
                "Any", "Optional", "Union", "List", "Dict", "Set", "FrozenSet", "Tuple", "Callable",
                "Iterable", "Iterator", "Sequence", "Mapping", "MutableMapping", "Literal",
                "TypedDict", "NamedTuple", "cast", "Final", "ClassVar", "TYPE_CHECKING", "Generic",
                "TypeVar", "Protocol", "Awaitable", "AsyncIterator", "NotRequired", "Required",
                "Self", "Annotated", "Coroutine", "Type", "DefaultDict", "Counter", "Deque",
                "OrderedDict", "AnyStr", "NoReturn", "Never",
            ],
        ),
    }


_STATIC_SHIMS: dict[str, ModuleShim] = {}

_RANDOM_METHODS = (
    "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform",
    "gauss", "seed", "getrandbits", "triangular", "betavariate", "expovariate",
    "normalvariate", "lognormvariate", "vonmisesvariate", "gammavariate", "paretovariate",
    "weibullvariate", "randbytes",
)


class ShimSet:
    """The shims of one run, built on first import. Stateless shims are shared across runs
    (they are read-only and hold only functions, classes and constants); `random`, `functools`
    and `dataclasses` are built per run because they hold per-run state or guards."""

    def __init__(self, guards: RunGuards, asyncio_attrs: Mapping[str, Any]) -> None:
        self._guards = guards
        self._asyncio_attrs = asyncio_attrs
        self._per_run: dict[str, ModuleShim] = {}

    def get(self, name: str) -> ModuleShim | None:
        shim = _STATIC_SHIMS.get(name) or self._per_run.get(name)
        if shim is not None:
            return shim
        if name not in ALLOWED_MODULES:
            return None
        static = _static_attrs()
        if name in static:
            shim = _STATIC_SHIMS[name] = ModuleShim(name, static[name])
            return shim
        shim = self._per_run[name] = ModuleShim(name, self._build(name))
        return shim

    def _build(self, name: str) -> dict[str, Any]:
        guards = self._guards
        if name == "asyncio":
            return dict(self._asyncio_attrs)
        if name == "random":
            rng = random.Random()
            return {**{n: getattr(rng, n) for n in _RANDOM_METHODS}, "Random": random.Random}
        if name == "functools":
            return {
                **_pick(
                    functools,
                    ["reduce", "partial", "lru_cache", "cache", "cmp_to_key", "partialmethod"],
                ),
                "cached_property": cached_property,
                "total_ordering": _owned_only(functools.total_ordering, guards, "total_ordering"),
            }
        if name == "dataclasses":
            return {
                **_pick(
                    dataclasses,
                    [
                        "field", "fields", "replace", "is_dataclass",
                        "FrozenInstanceError", "MISSING", "KW_ONLY", "InitVar",
                    ],
                ),
                "asdict": _checked_copying(dataclasses.asdict),
                "astuple": _checked_copying(dataclasses.astuple),
                "dataclass": _owned_only(dataclasses.dataclass, guards, "@dataclass"),
            }
        raise KeyError(name)  # pragma: no cover


def _import_error(name: str) -> ImportError:
    return ImportError(
        f"module '{name}' is not available in the sandbox; allowed modules: "
        + ", ".join(ALLOWED_MODULES)
    )


#: Host modules that stdlib C code imports lazily through the caller's `__import__`.
_INTERNAL_IMPORTS = frozenset({"_strptime"})


def make_import(shims: ShimSet) -> Callable[..., Any]:
    """The snippet's `__import__`: allowlisted names resolve to shims, anything else fails."""

    def import_(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0:
            raise ImportError("relative imports are not available in the sandbox")
        if not isinstance(name, str):
            raise ImportError("module name must be a string")
        if name in _INTERNAL_IMPORTS and level == 0 and not fromlist:
            # Imported by C code the snippet called (time.strptime): the module goes to that
            # caller, never to the snippet, whose own `import _x` the policy refuses.
            return importlib.import_module(name)
        shim = shims.get(name) if name in ALLOWED_MODULES else None
        if shim is None:
            raise _import_error(name)
        for item in fromlist or ():
            if not isinstance(item, str) or item not in shim._shim_attrs:
                raise ImportError(f"cannot import name '{item}' from '{name}' in the sandbox")
        return shim

    return import_
