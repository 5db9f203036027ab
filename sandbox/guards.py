"""Runtime guards and the builtins a snippet sees.

The compile policy refuses dangerous names it can see. These guards decide what it cannot:
computed attribute names (`getattr(x, name)`), `str.format` field traversal, attribute writes,
class creation, `type()` and imports. One `RunGuards` is made per run, so the set of classes the
snippet created (the only classes it may modify) never outlives the run.
"""

from __future__ import annotations

import _string
import abc
import builtins as _builtins
import dataclasses
import datetime
import enum
import functools
import re
import string
import types
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .policy import READABLE_PRIVATE, RUNTIME_CHECKED_ATTRIBUTES
from .raised import mark_raised

_MISSING = object()
_SNIPPET_LOCALS = "__snippet__.<locals>."

#: Types whose instances accept attribute writes: a snippet only reaches instances of these that
#: it made itself (JSON copies, its own containers, exceptions it raised).
_WRITABLE_INSTANCE_TYPES: tuple[type, ...] = (dict, list, set, bytearray, deque, BaseException)


def plain_name(name: object) -> str:
    """A computed attribute name as a plain `str`. A `str` subclass could override
    `startswith` or `__eq__` and lie to the checks, so the check and the lookup both use this
    copy."""
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    return str.__str__(name)


def attribute_problem(name: str, *, write: bool = False) -> str | None:
    """Why a plain attribute name may not be read (or written), or None if it may."""
    if type(name) is not str:
        return "attribute name must be a plain string"
    if name in READABLE_PRIVATE and not write:
        return None
    if name.startswith("_"):
        return f'attribute "{name}" is not accessible: names starting with "_" are private'
    if name in INSPECT_ATTRIBUTES or name.endswith("__roles__"):
        return f'attribute "{name}" is not accessible: it exposes interpreter internals'
    return None


class _GuardedFormatter(string.Formatter):
    """`str.format` without the traversal escape: `"{0.__class__}"` reads attributes through the
    same check as `getattr`."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            if is_attr:
                problem = attribute_problem(key)
                if problem:
                    raise AttributeError(problem)
                obj = getattr(obj, key)
            else:
                obj = obj[key]
        return obj, first


def _formatter_field_name_split(field_name: str) -> Any:
    return _string.formatter_field_name_split(field_name)


_FORMATTER = _GuardedFormatter()


def safe_format(template: str, /, *args: Any, **kwargs: Any) -> str:
    if not isinstance(template, str):
        raise TypeError("format() template must be a str")
    return _FORMATTER.vformat(template, args, kwargs)


def safe_format_map(template: str, mapping: Mapping[str, Any], /) -> str:
    if not isinstance(template, str):
        raise TypeError("format_map() template must be a str")
    return _FORMATTER.vformat(template, (), mapping)


class _BoundFormat:
    """`"...".format` as a callable that holds the template and nothing else reachable."""

    __slots__ = ("_template", "_fn")

    def __init__(self, template: str, fn: Callable[..., str]) -> None:
        self._template = template
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return self._fn(self._template, *args, **kwargs)

    def __repr__(self) -> str:
        return "<built-in method format of str object>"


class ReadOnly:
    """Marker base for host-made objects a snippet may use but never modify (module shims, the
    bindings namespace)."""

    __slots__ = ()


#: Host classes a snippet may use but never subclass: a subclass can override what the host
#: trusts. `dataclasses.Field`: `@dataclass` pastes `field.name` into generated source it
#: `exec`s and `setattr`s it on the class; `functools.cached_property`: it writes its name
#: straight into instance dicts (the `functools` shim offers a checked subclass instead).
UNSUBCLASSABLE: tuple[type, ...] = (dataclasses.Field, functools.cached_property)

#: Checked replacements the shims offer for unsubclassable host classes (filled in by the shims).
CHECKED_REPLACEMENTS: set[type] = set()


def _hidden_base(cls: type) -> bool:
    """Bases `mro()` leaves out: the stdlib's memberless enum bases (their functional API builds
    classes from data with no name checks; the `enum` shim offers checked subclasses) and the
    unsubclassable host classes behind the shims' checked replacements."""
    if type(cls) is enum.EnumType and not cls._member_map_:
        return True
    return cls in UNSUBCLASSABLE


class _VisibleMro(ReadOnly):
    """`cls.mro` for snippets: the method resolution order without the hidden bases. Made
    without a class it stands for the unbound `type.mro` (`typing.Type.mro(cls)`)."""

    __slots__ = ("_cls",)

    def __init__(self, cls: type | None) -> None:
        object.__setattr__(self, "_cls", cls)

    def __call__(self, *args: Any) -> list[type]:
        cls = self._cls
        if cls is None:
            if len(args) != 1 or not isinstance(args[0], type):
                raise TypeError("mro() takes one class")
            cls = args[0]
        elif args:
            raise TypeError("mro() takes no arguments")
        return [c for c in type.mro(cls) if not _hidden_base(c)]

    def __repr__(self) -> str:
        return "<built-in method mro>"


class _PlainStrMethod(ReadOnly):
    """A stdlib method that caches on the `str` arguments it gets, process-wide and keyed on the
    objects as passed (`datetime.strptime`'s formats, `Pattern.sub`'s templates): it is called
    with plain copies, so a `str` subclass with a lying `__eq__`/`__hash__` cannot answer the
    host's later lookups. The real method sits in a private slot."""

    __slots__ = ("_method",)

    def __init__(self, method: Callable[..., Any]) -> None:
        object.__setattr__(self, "_method", method)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._method(*map(_plain_str, args), **{k: _plain_str(v) for k, v in kwargs.items()})

    def __repr__(self) -> str:
        return f"<built-in method {getattr(self._method, '__name__', '?')}>"


class _MarkedThrow(ReadOnly):
    """`throw` of a generator or coroutine, or `athrow` of an async generator: a `MemoryError`
    the snippet throws in is marked as its own (see `sandbox.raised`), so it is reported as an
    `exception`, never as the memory limit. `unbound` is the method read from the type, which
    takes the generator first. The real method sits in a private slot."""

    __slots__ = ("_method", "_unbound")

    def __init__(self, method: Callable[..., Any], unbound: bool) -> None:
        object.__setattr__(self, "_method", method)
        object.__setattr__(self, "_unbound", unbound)

    def __call__(self, *args: Any) -> Any:
        head, rest = (args[:1], args[1:]) if self._unbound else ((), args)
        if len(rest) >= 2 and rest[1] is None and isinstance(rest[0], type):
            rest = (rest[0](), *rest[2:])  # throw(MemoryError, None) raises MemoryError()
        elif len(rest) >= 2:
            rest = (rest[1], *rest[2:]) if isinstance(rest[1], BaseException) else rest
        if rest:
            rest = (mark_raised(rest[0]), *rest[1:])
        return self._method(*head, *rest)

    def __repr__(self) -> str:
        return f"<built-in method {getattr(self._method, '__name__', '?')}>"


def _plain_str(value: Any) -> Any:
    return str.__str__(value) if isinstance(value, str) else value


# -- judging what comes back ------------------------------------------------------------------
# The policy sends every read of a name in RUNTIME_CHECKED_ATTRIBUTES here, whatever the
# receiver is. What the read returns is judged by its identity: an object that forwards
# attribute reads (typing aliases, `types.GenericAlias`, bound methods) hands out its target's
# attributes, so deciding by the receiver's type would let the real method through.

_STR_FORMAT = str.__dict__["format"]
_STR_FORMAT_MAP = str.__dict__["format_map"]
_TYPE_MRO = type.__dict__["mro"]
_ABC_REGISTER = abc.ABCMeta.register
_STRPTIME = datetime.datetime.__dict__["strptime"]
_PATTERN_SUB = re.Pattern.__dict__["sub"]
_PATTERN_SUBN = re.Pattern.__dict__["subn"]
_THROWS = {
    "throw": (types.GeneratorType.__dict__["throw"], types.CoroutineType.__dict__["throw"]),
    "athrow": (types.AsyncGeneratorType.__dict__["athrow"],),
}

_REGISTER_REFUSED = (
    "ABC registration is not available in the sandbox (it would change classes shared with the host)"
)


def _is_abc(obj: Any) -> bool:
    """An abstract base class, or a typing alias whose own origin is one (`typing.Mapping`)."""
    if isinstance(obj, abc.ABCMeta):
        return True
    try:
        origin = object.__getattribute__(obj, "__origin__")
    except AttributeError:
        return False
    return isinstance(origin, abc.ABCMeta)


def _bound_self(value: Any, descriptor: Any) -> Any:
    """The object `value` is `descriptor` bound to (a C method bound to an instance, or a C
    classmethod bound to a class), or _MISSING. Bound C methods compare by the identity of
    their receiver and their C function, so no snippet code runs."""
    if not isinstance(value, types.BuiltinMethodType):
        return _MISSING
    owner = value.__self__
    try:
        if type(descriptor) is types.ClassMethodDescriptorType:
            bound = descriptor.__get__(None, owner)
        else:
            # Always with the type: a one-argument `__get__` of a method that takes its defining
            # class (`Pattern.sub`) crashes CPython 3.11.
            bound = descriptor.__get__(owner, type(owner))
    except TypeError:
        return _MISSING
    return owner if bound == value else _MISSING


def _judge_format(value: Any, descriptor: Any, safe: Callable[..., str]) -> Any:
    if value is descriptor:
        return safe
    owner = _bound_self(value, descriptor)
    if owner is not _MISSING:
        return _BoundFormat(str.__str__(owner), safe)
    return value


def _judge_mro(value: Any) -> Any:
    if value is _TYPE_MRO:
        return _VisibleMro(None)
    owner = _bound_self(value, _TYPE_MRO)
    return _VisibleMro(owner) if owner is not _MISSING else value


def _judge_register(value: Any) -> Any:
    func = value.__func__ if isinstance(value, types.MethodType) else value
    if func is _ABC_REGISTER:
        raise AttributeError(_REGISTER_REFUSED)
    return value


def _judge_plain(value: Any, descriptor: Any) -> Any:
    if value is descriptor or _bound_self(value, descriptor) is not _MISSING:
        return _PlainStrMethod(value)
    return value


def _judge_throw(value: Any, name: str) -> Any:
    for descriptor in _THROWS[name]:
        if value is descriptor:
            return _MarkedThrow(value, unbound=True)
        if _bound_self(value, descriptor) is not _MISSING:
            return _MarkedThrow(value, unbound=False)
    return value


#: name -> what a snippet gets instead of the value a read of that name returned.
_JUDGES: dict[str, Callable[[Any], Any]] = {
    "format": lambda v: _judge_format(v, _STR_FORMAT, safe_format),
    "format_map": lambda v: _judge_format(v, _STR_FORMAT_MAP, safe_format_map),
    "mro": _judge_mro,
    "register": _judge_register,
    "strptime": lambda v: _judge_plain(v, _STRPTIME),
    "sub": lambda v: _judge_plain(v, _PATTERN_SUB),
    "subn": lambda v: _judge_plain(v, _PATTERN_SUBN),
    "throw": lambda v: _judge_throw(v, "throw"),
    "athrow": lambda v: _judge_throw(v, "athrow"),
}
assert set(_JUDGES) == RUNTIME_CHECKED_ATTRIBUTES, "every runtime-checked name has a judge"


def guarded_getattr(obj: Any, name: Any, default: Any = _MISSING) -> Any:
    """`getattr` for snippets: refuses private and frame/code attributes, and hands out the
    sandbox's version of what the guard judges (`str.format`, `mro`, ABC `register`,
    string-caching methods) by what the read returns, whatever the receiver is."""
    name = plain_name(name)
    problem = attribute_problem(name)
    if problem:
        raise AttributeError(problem)
    if name == "mro" and isinstance(obj, type):
        return _VisibleMro(obj)
    if name == "register" and _is_abc(obj):
        raise AttributeError(_REGISTER_REFUSED)
    if name == "format" or name == "format_map":
        fn = safe_format if name == "format" else safe_format_map
        target = obj.__self__ if isinstance(obj, super) else obj  # super(S, s).format
        if isinstance(target, str):
            return _BoundFormat(str.__str__(target), fn)
        if isinstance(target, type) and issubclass(target, str):
            return fn
    if default is _MISSING:
        value = getattr(obj, name)
    else:
        value = getattr(obj, name, _MISSING)
        if value is _MISSING:
            return default
    judge = _JUDGES.get(name)
    return judge(value) if judge is not None else value


def guarded_hasattr(obj: Any, name: Any) -> bool:
    name = plain_name(name)
    if attribute_problem(name):
        return False
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


class _TypeMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, type)

    def __repr__(cls) -> str:
        return "<class 'type'>"


class SafeType(metaclass=_TypeMeta):
    """The snippet's `type`: `type(x)` and `isinstance(x, type)` work; the three-argument form,
    which builds classes outside the class-statement checks, does not."""

    def __new__(cls, *args: Any) -> Any:  # type: ignore[misc]
        if len(args) != 1:
            raise TypeError(
                "type() takes exactly one argument in the sandbox; define classes with 'class'"
            )
        found = type(args[0])
        # The type of a class is a metaclass (`type` itself, EnumType, ...): calling it would
        # build classes outside the class-statement checks, so the snippet sees this one.
        return SafeType if issubclass(found, type) else found


SafeType.__name__ = "type"
SafeType.__qualname__ = "type"


class RunGuards:
    """Per-run guard state: the classes this run created."""

    def __init__(self) -> None:
        self.owned: weakref.WeakSet[type] = weakref.WeakSet()
        self.class_factory = _ClassFactory(self.owned)

    def write(self, obj: Any) -> Any:
        """`_write_`: the target of `obj.attr = v` / `del obj.attr`. Returns obj if allowed."""
        cls = type(obj)
        if isinstance(obj, type):
            if obj in self.owned:
                return obj
            raise TypeError(
                f"cannot modify class '{obj.__name__}': only classes defined in the snippet can be changed"
            )
        if cls in self.owned or isinstance(obj, _WRITABLE_INSTANCE_TYPES):
            return obj
        if isinstance(obj, ReadOnly):
            raise TypeError(f"cannot modify {obj!r}")
        raise TypeError(f"cannot modify attributes of a '{cls.__name__}' object in the sandbox")

    def setattr(self, obj: Any, name: Any, value: Any) -> None:
        name = plain_name(name)
        problem = attribute_problem(name, write=True)
        if problem:
            raise AttributeError(problem)
        setattr(self.write(obj), name, value)

    def delattr(self, obj: Any, name: Any) -> None:
        name = plain_name(name)
        problem = attribute_problem(name, write=True)
        if problem:
            raise AttributeError(problem)
        delattr(self.write(obj), name)

    def require_owned_class(self, cls: Any, what: str) -> None:
        if not (isinstance(cls, type) and cls in self.owned):
            raise TypeError(f"{what} only applies to classes defined in the snippet")


class _ClassFactory:
    """What RestrictedPython's class rewrite calls as `__metaclass__`.

    It finds the metaclass the bases imply (so `class Color(Enum)` and `class Row(TypedDict)`
    work), refuses new metaclasses (a base that is itself a metaclass), and records the class as
    snippet-owned.
    """

    __slots__ = ("_owned",)

    def __init__(self, owned: weakref.WeakSet[type]) -> None:
        self._owned = owned

    @staticmethod
    def _meta(bases: tuple[Any, ...]) -> type:
        meta: type = type
        for base in bases:
            if not isinstance(base, type):
                raise TypeError(f"class bases must be classes, got a '{type(base).__name__}'")
            if issubclass(base, type) or SafeType in base.__mro__:
                raise TypeError("defining metaclasses is not allowed in the sandbox")
            mro = type.mro(base)
            for host in UNSUBCLASSABLE:
                if host in mro and not any(c in CHECKED_REPLACEMENTS for c in mro):
                    raise TypeError(f"'{host.__name__}' cannot be subclassed in the sandbox")
            base_meta = type(base)
            if issubclass(base_meta, meta):
                meta = base_meta
            elif not issubclass(meta, base_meta):
                raise TypeError("the bases of this class have conflicting metaclasses")
        return meta

    def __prepare__(self, name: str, bases: tuple[Any, ...], **kwds: Any) -> Any:
        meta = self._meta(bases)
        if meta is type:
            return {}
        return meta.__prepare__(name, bases, **kwds)

    def __call__(self, name: str, bases: tuple[Any, ...], namespace: Any, **kwds: Any) -> type:
        meta = self._meta(bases)
        qualname = namespace.get("__qualname__")
        if isinstance(qualname, str) and qualname.startswith(_SNIPPET_LOCALS):
            # Classes live in the snippet's function; show them as a script would.
            namespace["__qualname__"] = qualname[len(_SNIPPET_LOCALS):]
        cls = meta(name, bases, namespace, **kwds)
        self._owned.add(cls)
        return cls


SAFE_BUILTIN_NAMES = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "int", "isinstance", "issubclass", "iter", "len", "list", "map",
    "max", "min", "next", "object", "oct", "ord", "pow", "property", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple", "zip",
    "aiter", "anext",
)

EXCEPTION_NAMES = (
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BufferError",
    "EOFError", "Exception", "FloatingPointError", "GeneratorExit", "ImportError", "IndexError",
    "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError", "ModuleNotFoundError",
    "NameError", "NotImplementedError", "OSError", "OverflowError", "RecursionError",
    "ReferenceError", "RuntimeError", "StopAsyncIteration", "StopIteration", "SyntaxError",
    "SystemExit", "TimeoutError", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "ValueError", "ZeroDivisionError", "Warning",
    "UserWarning", "DeprecationWarning", "RuntimeWarning", "LookupError", "ExceptionGroup",
    "BaseExceptionGroup",
)


def build_builtins(
    guards: RunGuards,
    *,
    print_fn: Callable[..., None],
    import_fn: Callable[..., Any],
    extra: Mapping[str, Any] = {},
    budget_iter: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The `__builtins__` dict of one run."""
    b: dict[str, Any] = {name: getattr(_builtins, name) for name in SAFE_BUILTIN_NAMES}
    b.update({name: getattr(_builtins, name) for name in EXCEPTION_NAMES})
    b.update(
        {
            "None": None,
            "True": True,
            "False": False,
            "NotImplemented": NotImplemented,
            "Ellipsis": Ellipsis,
            "type": SafeType,
            "getattr": guarded_getattr,
            "hasattr": guarded_hasattr,
            "setattr": guards.setattr,
            "delattr": guards.delattr,
            "print": print_fn,
            "__import__": import_fn,
            "__build_class__": _builtins.__build_class__,
            "__name__": "__snippet__",
        }
    )
    if budget_iter is not None:
        b["range"] = _budgeted_range(budget_iter)
    b.update(extra)
    return b


def _budgeted_range(budget_iter: Callable[[Iterable[Any]], Iterable[Any]]) -> Callable[..., Any]:
    """In budget mode a large range counts against the operation budget as C code consumes it
    (`sum(range(10**12))` would otherwise never yield to a cooperative limit)."""

    def range_(*args: Any) -> Any:
        r = range(*args)
        if len(r) <= 10_000:
            return r
        return budget_iter(r)

    return range_


def make_globals(builtins: dict[str, Any], guards: RunGuards, **hooks: Any) -> dict[str, Any]:
    """Fresh module globals for the compiled snippet."""
    g: dict[str, Any] = {
        "__builtins__": builtins,
        "__name__": "__snippet__",
        "__metaclass__": guards.class_factory,
        "_getattr_": guarded_getattr,
        "_write_": guards.write,
    }
    g.update(hooks)
    return g
