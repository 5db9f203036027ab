"""What crosses between a snippet and the host: one value judge, and shared state made immutable.

Two jobs, both decided by identity and exact type, never by the name a snippet asked for:

- `judge(value)`: every value a computed attribute read returns (`getattr(x, name)`, the names
  the policy routes through `_getattr_`, `str.format` fields, a class's own functions, `super`)
  is one of three things. FORBIDDEN values never cross (modules, frames, code, tracebacks,
  cells, metaclasses, a type's `__new__`, ABC `register`). WRAPPED values cross as a checked
  stand-in (`str.format` as the guarded formatter, `type.mro` as the visible MRO, the caching
  `strptime`/`sub`/`subn` with plain copies, `throw`/`athrow` marking what they throw, the raw
  functions of `CheckedMethods` classes behind a receiver check). Everything else is PLAIN and
  crosses as it is. The rows are `_BOUND_ROWS`/`_DESCRIPTOR_ROWS` below; adding a stand-in is
  adding a row, not a branch in a guard.
- `freeze(...)`: the classes every run shares (the sandbox's own, and the host classes the
  shims expose) get CPython's immutable-type flag, so not even the real `setattr`,
  `type.__setattr__` or a `__class__` swap changes them; and the shared host functions and
  objects that cannot be made immutable (a function's `__defaults__`, an enum member's
  `__dict__`, the C fields of properties, closure cells and C functions: `_C_FIELDS`) are
  recorded, so `restore()` puts back whatever a run changed in them.

This module imports nothing of the sandbox but the policy's name tables and `raised`: the
guards build on it, never the reverse.
"""

from __future__ import annotations

import _collections
import _decimal
import _string
import abc
import ctypes
import datetime
import itertools
import operator
import re
import string
import sys
import sysconfig
import threading
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .control import RunOverError, refuse_while_collecting
from .enum_maps import PlainKeyedMap, keep_plain_keys
from .jsonvalue import type_name
from .policy import DATA_MODEL_METHODS, EXIT_METHODS, OPERAND_METHODS, READABLE_PRIVATE
from .raised import mark_raised

_MISSING = object()
#: Where the sandbox's own code lives (its functions are not host methods to route).
_SANDBOX_DIR = __file__.rpartition("/")[0] + "/"
#: Where the sandbox's own code lives (its functions are told from host ones by this).
SANDBOX_DIR = _SANDBOX_DIR


# -- names ---------------------------------------------------------------------------------------
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


_BUFFER_TYPES = (bytes, bytearray, memoryview)


def plain_str(value: Any) -> Any:
    """A `str` (or bytes-like) argument as a plain copy: stdlib caches keyed on the object as
    passed (`re`, `_strptime`) must never see a subclass with a lying `__eq__`/`__hash__`. The
    copy runs none of the argument's code: `str.__str__` and the buffer protocol of the base
    type, never `bytes(value)`, which calls a subclass's `__bytes__`."""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, _BUFFER_TYPES):
        if type(value) not in _BUFFER_TYPES and any(
            "__buffer__" in type.__getattribute__(klass, "__dict__")
            for klass in type.__getattribute__(type(value), "__mro__")
            if klass not in _BUFFER_TYPES and klass is not object
        ):
            raise TypeError("a bytes subclass that defines __buffer__ is not accepted here")
        return memoryview(value).tobytes()
    return value


class ReadOnly:
    """Marker base for host-made objects a snippet may use but never modify (module shims, the
    bindings namespace, the stand-ins below)."""

    __slots__ = ()


# -- WRAPPED: the stand-ins ------------------------------------------------------------------------
class _GuardedFormatter(string.Formatter):
    """`str.format` without the traversal escape: every `{0.name}` step is read through the
    same name check as `getattr`, and what it finds is judged like any other read."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            if is_attr:
                problem = attribute_problem(key)
                if problem:
                    raise AttributeError(problem)
                obj = judge(getattr(obj, key))
            else:
                obj = obj[key]
        return obj, first


_FORMATTER = _GuardedFormatter()


def safe_format(template: str, /, *args: Any, **kwargs: Any) -> str:
    if not isinstance(template, str):
        raise TypeError("format() template must be a str")
    return _FORMATTER.vformat(template, args, kwargs)


def safe_format_map(template: str, mapping: Mapping[str, Any], /) -> str:
    if not isinstance(template, str):
        raise TypeError("format_map() template must be a str")
    return _FORMATTER.vformat(template, (), mapping)


class _BoundFormat(ReadOnly):
    """`"...".format` as a callable that holds the template and nothing else reachable."""

    __slots__ = ("_template", "_fn")

    def __init__(self, template: str, fn: Callable[..., str]) -> None:
        object.__setattr__(self, "_template", template)
        object.__setattr__(self, "_fn", fn)

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return self._fn(self._template, *args, **kwargs)

    def __repr__(self) -> str:
        return "<built-in method format of str object>"


class _TypeMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, type)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return isinstance(sub, type) and issubclass(sub, type)

    def __repr__(cls) -> str:
        return "<class 'type'>"


class SafeType(metaclass=_TypeMeta):
    """The snippet's `type`: `type(x)` and `isinstance(x, type)` work, and never hand out a
    metaclass (calling one builds classes outside the class-statement checks). Each run's
    `type` is a subclass made by `RunGuards`, whose `_make_class` builds the three-argument form
    through the run's class factory, with the checks a class body gets; this base has none
    and refuses it."""

    __slots__ = ()
    _make_class: Callable[..., type] | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        if len(args) == 1:
            if kwargs:
                raise TypeError("type() takes no keyword arguments")
            found = type(args[0])
            # The type of a class is a metaclass (`type` itself, EnumType, ...).
            return cls if issubclass(found, type) else found
        if len(args) != 3:
            raise TypeError("type() takes 1 or 3 arguments")
        make = cls._make_class
        if make is None:
            raise TypeError("type() with three arguments is not available here; define classes with 'class'")
        return make(*args, **kwargs)

    def __class_getitem__(cls, item: Any) -> Any:
        """`type[X]` (annotations such as `type[BaseException] | None`): an alias over this
        `type`, so its `__origin__` is never the real metaclass."""
        return types.GenericAlias(cls, item)


SafeType.__name__ = "type"
SafeType.__qualname__ = "type"
SafeType.__module__ = "builtins"  # messages name it as CPython does: `type() argument after **`

#: Host classes a snippet may use but never subclass: a subclass can override what the host
#: trusts. `dataclasses.Field`: `@dataclass` pastes `field.name` into generated source it
#: `exec`s and `setattr`s it on the class; `functools.cached_property`: it writes its name
#: straight into instance dicts (the `functools` shim offers a checked subclass instead);
#: `string.Template`: its `__init_subclass__` hands the subclass's `delimiter` to `re.escape`,
#: which gives it `re`'s own translation table (the `string` shim's `Template` is a prelude port
#: whose only base is `object`); `calendar.TextCalendar`: its `pr*` methods print to whatever
#: `sys.stdout` is, the host's after the run (the shim's checked subclass prints to the run's log).
import calendar as _calendar  # noqa: E402 - kept next to the table it feeds
import dataclasses as _dataclasses  # noqa: E402
import enum as _enum  # noqa: E402
import functools as _functools  # noqa: E402
import statistics as _statistics  # noqa: E402
import textwrap as _textwrap  # noqa: E402

UNSUBCLASSABLE: tuple[type, ...] = (
    _dataclasses.Field, _functools.cached_property, string.Template, _textwrap.TextWrapper,
    _calendar.TextCalendar, _statistics.NormalDist,
)


def hidden_base(cls: type) -> bool:
    """Bases `mro()` leaves out: the stdlib's memberless enum bases (their functional API builds
    classes from data with no name checks; the `enum` shim offers checked subclasses), the
    unsubclassable host classes behind the shims' checked replacements, and the run's `type`."""
    if type(cls) is _enum.EnumType and not cls._member_map_:
        return True
    return cls in UNSUBCLASSABLE or cls is SafeType


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
        return [c for c in type.mro(cls) if not hidden_base(c)]

    def __repr__(self) -> str:
        return "<built-in method mro>"


class _PlainStrMethod(ReadOnly):
    """A stdlib method that caches on the text arguments it gets, process-wide and keyed on the
    objects as passed (`datetime.strptime`'s formats, `Pattern.sub`'s templates, `str` or
    `bytes`): it is called with plain copies (`plain_str`), so a `str`, `bytes` or `bytearray`
    subclass with a lying `__eq__`/`__hash__` cannot answer the host's later lookups. The real
    method sits in a private slot."""

    __slots__ = ("_method",)

    def __init__(self, method: Callable[..., Any]) -> None:
        object.__setattr__(self, "_method", method)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        refuse_while_collecting()  # `_strptime` may hold its lock below us (`control`)
        return self._method(*map(plain_str, args), **{k: plain_str(v) for k, v in kwargs.items()})

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


# -- WRAPPED: the sandbox's own methods behind a receiver check -----------------------------------
#: id of a raw function (or property) of a `CheckedMethods` class -> (it, the classes whose
#: dictionaries hold it). Filled as such a class is made or given a method (all at import: the
#: entries live as long as the process); looked up by identity wherever the value turns up (a
#: class read, `super`, `functools.cache(cls).method`, a format field).
_OWN_METHODS: dict[int, tuple[Any, set[type]]] = {}


def _register_own(cls: type, value: Any) -> None:
    entries = [value]
    parts = _accessors(value)
    if parts is not None:
        entries += [f for f in parts[:3] if f is not None]
    for entry in entries:
        if type(entry) is types.FunctionType or type(entry) is property:
            _OWN_METHODS.setdefault(id(entry), (entry, set()))[1].add(cls)


def register_host_methods(classes: Iterable[type]) -> None:
    """Put the methods of the shared host classes (`collections.Counter`, `fractions.Fraction`,
    `textwrap.TextWrapper`, the `collections.abc` mixins...) behind the same receiver check as
    the sandbox's own: their code runs with host rights on whatever it gets as `self`, and
    `Counter.copy(cls)` runs `self.__class__(self)`, which for a class is the real `type`.
    Called once, when every shared class is frozen (`sandbox.shims`), with all of them; only
    functions and properties defined in the class body count (their `__qualname__` names the
    class, whatever name holds them: `Calendar.firstweekday` is a property over
    `Calendar.getfirstweekday`): a module function stored in a class (`total_ordering`'s) is a
    plain function."""
    for cls in classes:
        qualname = type.__getattribute__(cls, "__qualname__")
        for value in type.__getattribute__(cls, "__dict__").values():
            parts = _accessors(value)
            fns = parts[:3] if parts is not None else (value,)
            if any(type(fn) is types.FunctionType and fn.__qualname__.rpartition(".")[0] == qualname for fn in fns):
                _register_own(cls, value)


def host_methods() -> dict[str, list[Any]]:
    """Readable name (public, or `policy.READABLE_PRIVATE`: a namedtuple's `_replace`) -> the
    registered functions and properties that classes a snippet reaches and that are not the
    sandbox's own hold under that name (for the policy's routed names and their test)."""
    found: dict[str, list[Any]] = {}
    for value, owners in list(_OWN_METHODS.values()):
        if type(value) is property:
            fns = [f for f in (value.fget, value.fset, value.fdel) if type(f) is types.FunctionType]
        elif type(value) is types.FunctionType:
            fns = [value]
        else:
            continue
        if not fns or fns[0].__code__.co_filename.startswith(_SANDBOX_DIR):
            continue
        for cls in owners:
            for name, held in type.__getattribute__(cls, "__dict__").items():
                if held is value and (not name.startswith("_") or name in READABLE_PRIVATE):
                    found.setdefault(name, []).append(value)
    return found


def _owners(value: Any) -> set[type]:
    found = _OWN_METHODS.get(id(value))
    return found[1] if found is not None and found[0] is value else set()


class _OwnReceiver(ReadOnly):
    """A method of a `CheckedMethods` class read off the class (`Timeout.__aenter__`,
    `Task.set_name`, `PurePath.drive.fget`): host code that reads and writes `self`'s private
    slots natively, so it runs only on an instance of a class that defines it. Given a snippet
    object instead, it would store the run's scheduler task on it, or write through whatever
    the object's `_task` attribute is. Still a method when stored in a class (`__get__`)."""

    __slots__ = ("_fn",)

    def __init__(self, fn: Any) -> None:
        object.__setattr__(self, "_fn", fn)

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        fn = self._fn
        # The receiver is the first parameter, by position or by its own name (`cls`, `a`:
        # `Fraction.numerator.fget(a=x)` once skipped a check that looked for `self`).
        code = fn.__code__
        first = code.co_varnames[0] if code.co_argcount > code.co_posonlyargcount or args else None
        if not args and first not in kwargs:
            return fn(**kwargs)  # no receiver to misuse (`Path.cwd()` raises its own error)
        receiver = args[0] if args else kwargs[first]
        if fn.__name__ == "__init__":
            # Re-initialising a live object would point its slots at whatever is passed
            # (`Task.__init__(task, None, field)`, then `set_name` writes the field's name).
            raise TypeError(f"'{fn.__qualname__.rpartition('.')[0]}' objects cannot be initialised again")
        owners = _owners(fn)
        if not any(klass in owners for klass in type.__getattribute__(type(receiver), "__mro__")):
            got = type(receiver).__name__
            owner = fn.__qualname__.rpartition(".")[0] or "its class"
            raise TypeError(f"descriptor '{fn.__name__}' for '{owner}' objects doesn't apply to a '{got}' object")
        return fn(*args, **kwargs)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Bound to the check, not to the raw function: `__get__(fake)` must not skip it.
        return self if instance is None else types.MethodType(self, instance)

    def __getattr__(self, name: str) -> Any:
        if name in ("__name__", "__qualname__", "__doc__", "__module__"):
            return getattr(self._fn, name)
        raise AttributeError(f"'function' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<function {self._fn.__qualname__}>"

    def __eq__(self, other: Any) -> bool:
        return type(other) is _OwnReceiver and other._fn is self._fn

    def __hash__(self) -> int:
        return hash(self._fn)


class CheckedMethods(type):
    """Metaclass of the sandbox's own classes whose methods work on private slots (asyncio's
    primitives and tasks, pathlib's paths, `io.BytesIO`): their functions and plain properties
    are registered by identity, and the judge hands each out behind a receiver check wherever
    it turns up. Public attribute reads of a class are not guarded at run time, so the class
    applies the judge itself. Reads on instances bind as usual."""

    def __init__(cls, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwds: Any) -> None:
        super().__init__(name, bases, namespace, **kwds)
        # From the class dictionary, not the namespace: `__new__` is a staticmethod there.
        for value in type.__getattribute__(cls, "__dict__").values():
            _register_own(cls, value)

    def __setattr__(cls, name: str, value: Any) -> None:
        type.__setattr__(cls, name, value)
        _register_own(cls, value)

    def __getattribute__(cls, name: str) -> Any:
        return _judge_own(type.__getattribute__(cls, name))


class _RunSuper(super):
    """The snippet's `super`: `super(Sub, Sub).name` looks names up in the classes' own
    dictionaries, past `CheckedMethods.__getattribute__`, so what it finds is judged the same
    way. (No `__init__` of its own: zero-argument `super()` reads the snippet's frame, which
    must stay the caller's.)"""

    def __new__(cls, *args: Any) -> Any:
        if args and not isinstance(args[0], type):
            # CPython's wording (a subclass of `super` would otherwise get argparse's).
            raise TypeError(f"super() argument 1 must be a type, not {type(args[0]).__name__}")
        if args and _sandbox_class(args[0]):
            # A sandbox subclass of a host class overrides what the host's version does with
            # host rights (`_HintAlias.copy_with`); `super(Sub, x)` would skip past it.
            raise TypeError(f"super() cannot start past {args[0].__name__!r}: it is the sandbox's own class")
        return super().__new__(cls)

    def __getattribute__(self, name: str) -> Any:
        return _judge_own(super().__getattribute__(name))


def _sandbox_class(cls: type) -> bool:
    """`cls` is a shared class whose own functions are the sandbox's code (read from its
    dictionary: no code runs). A snippet's class is never frozen (its forwarders are the
    sandbox's code too)."""
    flags = type.__dict__["__flags__"].__get__(cls)
    if not flags & _HEAP_FLAG or not flags & _IMMUTABLE_FLAG:
        return False
    for value in type.__getattribute__(cls, "__dict__").values():
        fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if type(fn) is types.FunctionType and fn.__code__.co_filename.startswith(_SANDBOX_DIR):
            return True
    return False


_RunSuper.__name__ = _RunSuper.__qualname__ = "super"
_RunSuper.__module__ = "builtins"

# Shown as what they stand for: a snippet sees functions and classes of `type`.
_OwnReceiver.__module__ = CheckedMethods.__module__ = "builtins"
_OwnReceiver.__name__ = _OwnReceiver.__qualname__ = "function"
_OwnReceiver.__doc__ = property(lambda self: self._fn.__doc__)  # type: ignore[assignment]
CheckedMethods.__name__ = CheckedMethods.__qualname__ = "type"


def _accessors(value: Any) -> tuple[Any, Any, Any, Any] | None:
    """fget, fset, fdel and doc of a property or `types.DynamicClassAttribute` (`enum.property`,
    which `EnumType` builds in the snippet's own enum around a base's raw accessors), read from
    their slots or instance dictionary, so a subclass's descriptors never answer; None for
    anything else."""
    if isinstance(value, property):
        return tuple(_PROPERTY_FIELDS[name].__get__(value) for name in ("fget", "fset", "fdel", "__doc__"))  # type: ignore[return-value]
    if isinstance(value, types.DynamicClassAttribute):
        held = object.__getattribute__(value, "__dict__")
        return held.get("fget"), held.get("fset"), held.get("fdel"), held.get("__doc__")
    return None


_PROPERTY_FIELDS = {name: property.__dict__[name] for name in ("fget", "fset", "fdel", "__doc__")}


def _judge_own(value: Any) -> Any:
    """A registered raw function of a `CheckedMethods` class behind the check, and a property
    that is one or holds one as an accessor (host code builds such properties in the snippet's
    own classes: `EnumType`'s redirects) as a plain property over the checked accessors;
    anything else as it is (the fast path of `CheckedMethods` and `super` reads)."""
    kind = type(value)
    if kind is types.FunctionType:
        return _OwnReceiver(value) if _owners(value) else value
    parts = _accessors(value)
    if parts is None:
        return value
    *accessors, doc = parts
    registered = [type(f) is types.FunctionType and bool(_owners(f)) for f in accessors]
    if kind is property and _owners(value):
        return property(*(None if f is None else _OwnReceiver(f) for f in accessors), doc)
    if any(registered):
        return property(*(_OwnReceiver(f) if mine else f for f, mine in zip(accessors, registered, strict=True)), doc)
    return value


# -- arguments host code passes to the snippet's own methods ------------------------------------
def judged_operand(value: Any) -> Any:
    """`_operand_`: the other operand of a snippet's comparison or reflected operator
    (`policy.OPERAND_METHODS`). C code picks it: `mappingproxy` hands its own dictionary on
    (`proxy == x` calls `x.__eq__(d)`, `proxy | x` calls `x.__ror__(d)`), and a shared class's,
    pattern's or enum's proxy stands before host state. A `dict` arrives as a copy (made in C:
    no key's hook runs), anything else as the judge decides."""
    if type(value) is dict:
        return dict.copy(value)
    try:
        return judge(value)
    except AttributeError:
        raise TypeError(f"the other operand is not accessible: {LEADS_OUTSIDE}") from None


def judged_operands(args: tuple[Any, ...], index: int) -> tuple[Any, ...]:
    """`_operands_`: `judged_operand` for the operand at `index` of a method's `*args`."""
    if not 0 <= index < len(args):
        return args
    return (*args[:index], judged_operand(args[index]), *args[index + 1:])


def no_traceback(traceback: Any) -> None:
    """`_no_traceback_`: the traceback `with`/`async with` pass to `__exit__`/`__aexit__`
    (frames stand behind it: `tracebacks never cross`) arrives as None; the exception keeps its
    type and value."""
    return None


def exit_arguments(args: tuple[Any, ...], index: int) -> tuple[Any, ...]:
    """`_exit_args_`: `no_traceback` for the traceback at `index` of `__exit__`'s `*args`."""
    if not 0 <= index < len(args):
        return args
    return (*args[:index], None, *args[index + 1:])


#: Classes whose comparisons and operators are C code that only type-checks the other operand
#: and computes (comparing items lands on the snippet's own judged methods): a snippet class
#: may inherit them as they are. Not `OrderedDict` or `defaultdict`, whose `|` calls
#: `type(self)(operand)`.
_PLAIN_OPERAND_CLASSES = frozenset({
    object, int, bool, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset,
    datetime.date, datetime.datetime, datetime.time, datetime.timedelta, _decimal.Decimal,
})


_MRO = type.__dict__["__mro__"]


def _linearization(bases: tuple[type, ...]) -> list[type]:
    """The classes a new class with `bases` would inherit from, in CPython's (C3) order, read
    before the class exists (its bases' `__init_subclass__` may already compare instances),
    from the orders CPython stored for the bases. How often each class still waits in a tail is
    counted, so a head is tested at once: a review's class of 1,000 bases cost 43 s of host CPU
    with a tail scan per head. An inconsistent order ends early; `type.__new__` then raises
    CPython's own error."""
    seqs = [_MRO.__get__(base) for base in bases] + [bases]
    waiting: dict[int, int] = {}
    for seq in seqs:
        for cls in seq[1:]:
            waiting[id(cls)] = waiting.get(id(cls), 0) + 1
    at = [0] * len(seqs)
    order: list[type] = []
    while True:
        for i, seq in enumerate(seqs):
            if at[i] < len(seq) and not waiting.get(id(seq[at[i]])):
                head = seq[at[i]]
                break
        else:
            return order  # every sequence is done, or the order is inconsistent
        order.append(head)
        for i, seq in enumerate(seqs):
            if at[i] < len(seq) and seq[at[i]] is head:
                at[i] += 1
                if at[i] < len(seq):
                    waiting[id(seq[at[i]])] -= 1


class _Stepping(threading.local):
    """Whose snippet code may run on this thread now: the token (`RunGuards.owner_token`) of the
    run whose step is running (`execution._RunContext`), or None between steps. The garbage
    collector finalizes a run's objects whenever host code allocates (after the run's clean-up,
    or while a binding runs), and what a freed generator's `with` block calls on the way out
    must not run then, in the host's context: the forwarders below check it."""

    run: object | None = None


STEPPING = _Stepping()


def outside_its_run(run: object | None) -> bool:
    """Code made in the in-process run `run` (None: in a worker, or by the sandbox itself) is
    about to run, and no step of that run is running on this thread."""
    return run is not None and STEPPING.run is not run


def _forwarder(name: str, held: Any, owner: type | list[type], judged: Callable[..., tuple[Any, ...]],
               index: int) -> Callable[..., Any]:
    """A snippet class's `name` in place of `held`: the argument at `index` (after `self`) goes
    through `judged` first, then `held` runs as CPython would have run it, bound through its
    descriptor if it has one (a lambda, a `classmethod`) and called as it is if not (a bound
    builtin method). It runs on instances of `owner` alone, as CPython's slot does: the host
    class `held` was inherited from, or (a one-item list, filled once the class exists) the
    class whose body held it. Called with anything else, a `classmethod` would be bound to that
    object's type, a metaclass for a class: a review got the real `type` that way."""
    bind = getattr(type(held), "__get__", None)
    # The in-process run whose class this is (None: a worker's, or made outside any run's step,
    # by the sandbox itself). It runs only in that run's steps, also a session's later runs
    # (they share the token).
    run = STEPPING.run

    def forward(self: Any, *args: Any) -> Any:
        if outside_its_run(run):
            raise RunOverError() from None
        cls = owner if isinstance(owner, type) else (owner[0] if owner else None)
        if cls is not None and not isinstance(owner, type) and len(owner) > 1:
            cls = next((c for c in owner if issubclass(type(self), c)), cls)  # a rebuilt class
        if cls is None or not issubclass(type(self), cls):
            shown = "the class being made" if cls is None else f"'{type.__getattribute__(cls, '__name__')}'"
            raise TypeError(f"descriptor '{name}' for {shown} objects doesn't apply to a "
                            f"'{type_name(type(self))}' object")
        method = held if bind is None else bind(held, self, type(self))
        return method(*judged(args, index))

    forward.__name__ = name
    if isinstance(owner, type):
        forward.__qualname__ = f"{owner.__name__}.{name}"
    return forward



class _Delegate(ReadOnly):
    """What a snippet generator delegates to (`yield from x`, and what a snippet class's
    `__await__` returns) when that is an object of a Python class: CPython calls its `close` by
    name when the generator is closed, also when the garbage collector frees it outside the run,
    in the host. A review put a C `functools.partial` there as an instance attribute, which no
    tick or forwarder sees. This object passes `next`, `send` and `throw` on, and `close` only
    inside a step of its run (`STEPPING`)."""

    __slots__ = ("_it", "_run")

    def __init__(self, it: Any) -> None:
        object.__setattr__(self, "_it", it)
        object.__setattr__(self, "_run", STEPPING.run)

    def __iter__(self) -> _Delegate:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def send(self, value: Any) -> Any:
        return self._it.send(value)

    def throw(self, *args: Any) -> Any:
        throw = getattr(self._it, "throw", None)
        if throw is None:  # CPython raises it where the generator delegates
            raise _thrown(*args)
        return throw(*args)

    def close(self) -> None:
        if outside_its_run(self._run):
            raise RunOverError() from None
        close = getattr(self._it, "close", None)
        if close is not None:
            close()

    def __repr__(self) -> str:
        return f"<iterator of {type_name(type(self._it))}>"


def _thrown(kind: Any, value: Any = None, tb: Any = None) -> BaseException:
    """The exception `throw(kind[, value[, tb]])` raises, as CPython builds it."""
    if isinstance(kind, BaseException):
        error = kind
    elif isinstance(value, BaseException):
        error = value
    else:
        error = kind() if value is None else kind(*value) if type(value) is tuple else kind(value)
    return error if tb is None else error.with_traceback(tb)


def delegate(it: Any) -> Any:
    """`it`, as something a snippet generator may delegate to: as it is when its class is C code
    (a generator or coroutine closes by resuming frames that tick; a list iterator has no
    `close`), else behind a `_Delegate`."""
    return _Delegate(it) if is_heap_type(type(it)) else it


def yield_from(value: Any) -> Any:
    """`_yield_from_`: what `yield from value` delegates to (`delegate`). A generator or a
    coroutine is left to CPython, which also says what it thinks of the latter."""
    if isinstance(value, (types.GeneratorType, types.CoroutineType)):
        return value
    return delegate(iter(value))


def delegating_await(held: Any) -> Callable[..., Any]:
    """A snippet class's `__await__` in place of `held`: what `held` returns goes through
    `delegate` (it is what an `await` of an instance delegates to)."""
    bind = getattr(type(held), "__get__", None)

    def __await__(self: Any) -> Any:
        method = held if bind is None else bind(held, self, type(self))
        return delegate(method())

    return __await__


def is_forwarder(value: Any) -> bool:
    return type(value) is types.FunctionType and value.__code__ is _FORWARD_CODE


_FORWARD_CODE = _forwarder("__eq__", object.__eq__, object, judged_operands, 0).__code__
#: The methods whose arguments C code picks (`policy.OPERAND_METHODS`, `EXIT_METHODS`), with the
#: hook that judges them and where their argument sits after `self`.
_ARGUMENT_HOOKS: Mapping[str, tuple[Callable[..., tuple[Any, ...]], int]] = types.MappingProxyType({
    **dict.fromkeys(sorted(OPERAND_METHODS), (judged_operands, 0)),
    **dict.fromkeys(sorted(EXIT_METHODS), (exit_arguments, 2)),
})


def _as_given(args: tuple[Any, ...], index: int) -> tuple[Any, ...]:
    return args


#: Data-model methods CPython calls by name (`repr()` of an object the unraisable hook reports, a
#: `str` subclass's `__format__` in a warning, a hash lookup by host code that kept the object)
#: whose forwarder judges nothing: it only runs what it holds inside a step of its run, on
#: instances of its class. Not the implicit class methods (`__class_getitem__`).
STEPPED_METHODS = frozenset(
    (DATA_MODEL_METHODS | {"__get__", "__set__", "__delete__", "__set_name__"}) - set(_ARGUMENT_HOOKS)
    - {"__class_getitem__"}
)


def stepping_subclasshook(cls: type) -> staticmethod:
    """The `__subclasshook__` of the snippet's ABC class `cls`: what it had (typing's
    `_proto_hook`, an inherited `collections.abc` hook), only inside a step of its run, and
    `NotImplemented` (no answer) outside. A snippet class that derives from a host ABC is in
    that ABC's `__subclasses__()`, which the host's own `isinstance(x, Iterable)` walks, running
    the hook: a review's protocol member, a descriptor with a C `__get__`, printed to the host's
    stdout there after the run."""
    hook = type.__getattribute__(cls, "__subclasshook__")
    run = STEPPING.run
    protocol = getattr(hook, "__qualname__", "").endswith("._proto_hook")

    def __subclasshook__(other: Any) -> Any:
        if outside_its_run(run):
            return NotImplemented
        if protocol:
            _protocol_checks(cls, sys._getframe(2))
        return hook(other)

    return staticmethod(__subclasshook__)


def _protocol_checks(cls: type, caller: types.FrameType) -> None:
    """What typing's `_proto_hook` refuses when `issubclass` is not called by `abc` or
    `functools`: it decides by the module of the frame three above its own, which this hook's
    frame moves one up (to `abc`'s), so it would always answer quietly. The caller's module is
    read here, where it is one frame nearer."""
    if caller.f_globals.get("__name__") in ("abc", "functools", None) or not type.__getattribute__(
        cls, "__dict__"
    ).get("_is_protocol", False):
        return
    if not getattr(cls, "_is_runtime_protocol", False):
        raise TypeError("Instance and class checks can only be used with @runtime_checkable protocols")
    if not typing._is_callable_members_only(cls):  # type: ignore[attr-defined]
        raise TypeError("Protocols with non-method members don't support issubclass()")


def stepping_method(name: str, held: Any, owner: type | list[type]) -> Any:
    """A snippet class's data-model method `name` in place of `held`, when `held` is not snippet
    code (a C `functools.partial`, a builtin or bound method): snippet code ticks, and stops
    outside its run's steps, but C code does not, so this runs it only inside one. What CPython
    calls without `self` (a `staticmethod`, or something that is no descriptor: a `partial`, a
    builtin function) stays so, behind a `staticmethod`; the rest gets a forwarder."""
    if type(held) is staticmethod:
        return staticmethod(stepped_call(held.__func__))
    if getattr(type(held), "__get__", None) is None:
        return staticmethod(stepped_call(held))
    return _forwarder(name, held, owner, _as_given, 0)


def stepped_call(held: Callable[..., Any]) -> Callable[..., Any]:
    """`held`, callable only inside a step of the run that made it (see `stepping_method`)."""
    run = STEPPING.run

    def call(*args: Any, **kwargs: Any) -> Any:
        if outside_its_run(run):
            raise RunOverError() from None
        return held(*args, **kwargs)

    return call


_STEPPED_CALL_CODE = stepped_call(len).__code__


def is_stepped(value: Any) -> bool:
    """`value` is what `stepping_method` made (a forwarder, or a `staticmethod` of a stepped
    call): it needs no second wrapping."""
    if type(value) is staticmethod:
        value = value.__func__
    return type(value) is types.FunctionType and value.__code__ in (_FORWARD_CODE, _STEPPED_CALL_CODE)


def rehome_forwarders(made: type, old: type) -> None:
    """`@dataclass(slots=True)` rebuilt `old` as `made` from its dictionary: the forwarders that
    came along run on instances of `made` too (they hold the class of the body that made them)."""
    for value in list(type.__getattribute__(made, "__dict__").values()):
        if is_forwarder(value):
            cell = value.__closure__[value.__code__.co_freevars.index("owner")]
            owner = cell.cell_contents
            if type(owner) is list and old in owner and made not in owner:
                owner.append(made)


def judging_method(name: str, held: Any, owner: type) -> Callable[..., Any] | None:
    """What host code that adds `held` to the snippet's class `owner` after it was made
    (`total_ordering`, `@dataclass`) puts there under `name`: the judging forwarder for a
    comparison, binary operator or `__exit__` name; None for any other name."""
    row = _ARGUMENT_HOOKS.get(name)
    return None if row is None else _forwarder(name, held, owner, *row)


#: The operators `EnumType` copies from `Flag` into every Flag class whose body does not define
#: them, after the class is made: over a `dict`, `int` or `frozenset` base's, which come first in
#: its order (`class F(dict, Flag)` got the raw `Flag.__or__`, which passes a mappingproxy's
#: dictionary on to the member's value).
_FLAG_OPERATORS = ("__or__", "__and__", "__xor__", "__ror__", "__rand__", "__rxor__")


def _added_by(meta: type | None, order: list[type]) -> dict[str, tuple[Any, type]]:
    """What the shared metaclass `meta` puts into a new class after making it, unless the body
    defines it, as (method, class it comes from)."""
    if meta is not None and issubclass(meta, _enum.EnumType) and _enum.Flag in order:
        return {name: (_enum.Flag.__dict__[name], _enum.Flag) for name in _FLAG_OPERATORS}
    return {}


def judged_methods(bases: tuple[type, ...], namespace: Any, has_prologue: Callable[[str, Any], bool],
                   meta: type | None = None, holder: list[type] | None = None) -> dict[str, Callable[..., Any]]:
    """The comparisons, binary operators and `__exit__`/`__aexit__` a new snippet class must
    hold in place of what it would hold: a forwarder that judges the operand (or drops the
    traceback) before the method runs, for each such method that has no prologue of its own
    (`has_prologue(name, value)`). C code hands those methods whatever it holds (`mappingproxy`
    its own dictionary) and picks them by name, so this covers what the class body holds there
    (a lambda, a bound builtin method such as `stash.append`, a `staticmethod`, an `__eq__` put
    under `__exit__`) and what the class would inherit from a host class other than the plain
    builtins (`OrderedDict`'s and `defaultdict`'s `|` call `type(self)(operand)`), or that its
    metaclass `meta` would put there after making it (`_added_by`). `holder`: the list the
    caller puts the class into once it exists; a forwarder for what the body held runs only on
    its instances, and on nothing before then."""
    holder = [] if holder is None else holder
    found: dict[str, Callable[..., Any]] = {}
    order: list[type] | None = None
    added: dict[str, tuple[Any, type]] = {}
    for name, (judged, index) in _ARGUMENT_HOOKS.items():
        owner: type | list[type] = holder
        if name in namespace:
            held = namespace[name]
            if has_prologue(name, held):
                continue
        else:
            if order is None:
                order = [] if all(base is object for base in bases) else _linearization(bases)
                added = _added_by(meta, order)
            if name in added:
                held, owner = added[name]
            else:
                for owner in order:
                    held = type.__getattribute__(owner, "__dict__").get(name, _MISSING)
                    if held is not _MISSING:
                        break
                else:
                    continue
            if owner in _PLAIN_OPERAND_CLASSES or is_forwarder(held) or has_prologue(name, held):
                continue
        found[name] = _forwarder(name, held, owner, judged, index)
    return found


# -- the table -----------------------------------------------------------------------------------
REGISTER_REFUSED = (
    "ABC registration is not available in the sandbox (it would change classes shared with the host)"
)
LEADS_OUTSIDE = "it leads outside the sandbox"

#: Never cross, by type: modules, frames (generator and coroutine frames too), code objects,
#: tracebacks and closure cells.
_FORBIDDEN_TYPES = (types.ModuleType, types.FrameType, types.CodeType, types.TracebackType, types.CellType)


def _bound_self(value: Any, descriptor: Any) -> Any:
    """The object `value` is `descriptor` bound to (a C method bound to an instance, or a C
    classmethod bound to a class), or _MISSING. Bound C methods compare by the identity of
    their receiver and their C function, so no snippet code runs."""
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


def _refuse_register(value: Any) -> Any:
    raise AttributeError(REGISTER_REFUSED)


#: C descriptor (by identity) -> (stand-in for the descriptor itself, stand-in for it bound to
#: an object). Bound C methods are found by their own `__name__` (a property of the value, not
#: of the name the snippet read) and then compared by identity (`_bound_self`).
_ROWS: tuple[tuple[Any, Callable[[Any], Any], Callable[[Any, Any], Any]], ...] = (
    (str.__dict__["format"], lambda v: safe_format, lambda v, s: _BoundFormat(str.__str__(s), safe_format)),
    (str.__dict__["format_map"], lambda v: safe_format_map,
     lambda v, s: _BoundFormat(str.__str__(s), safe_format_map)),
    (type.__dict__["mro"], lambda v: _VisibleMro(None), lambda v, s: _VisibleMro(s)),
    (datetime.datetime.__dict__["strptime"], _PlainStrMethod, lambda v, s: _PlainStrMethod(v)),
    (re.Pattern.__dict__["sub"], _PlainStrMethod, lambda v, s: _PlainStrMethod(v)),
    (re.Pattern.__dict__["subn"], _PlainStrMethod, lambda v, s: _PlainStrMethod(v)),
    (types.GeneratorType.__dict__["throw"], lambda v: _MarkedThrow(v, unbound=True),
     lambda v, s: _MarkedThrow(v, unbound=False)),
    (types.CoroutineType.__dict__["throw"], lambda v: _MarkedThrow(v, unbound=True),
     lambda v, s: _MarkedThrow(v, unbound=False)),
    (types.AsyncGeneratorType.__dict__["athrow"], lambda v: _MarkedThrow(v, unbound=True),
     lambda v, s: _MarkedThrow(v, unbound=False)),
)
_DESCRIPTOR_ROWS: Mapping[int, tuple[Any, Callable[[Any], Any]]] = types.MappingProxyType(
    {id(d): (d, unbound) for d, unbound, _ in _ROWS}
)
_BOUND_ROWS: Mapping[str, tuple[tuple[Any, Callable[[Any, Any], Any]], ...]] = types.MappingProxyType({
    name: tuple((d, bound) for d, _, bound in _ROWS if d.__name__ == name)
    for name in {d.__name__ for d, _, _ in _ROWS}
})
#: C methods that raise what they are given inside their object's code, decided by name, not
#: by type: besides generators' and coroutines' own, the awaitables of `asend`, `athrow`,
#: `anext` and `__await__` have a `throw` of their own, and a `MemoryError` the snippet made,
#: thrown in through one unmarked, was reported as the memory limit.
_THROWS = frozenset({"throw", "athrow"})
#: Python functions (by identity) that never cross, bound or not, and what a read says instead.
_FORBIDDEN_FUNCTIONS: Mapping[int, tuple[Any, Callable[[Any], Any]]] = types.MappingProxyType(
    {id(abc.ABCMeta.register): (abc.ABCMeta.register, _refuse_register)}
)

#: Exact types that are always PLAIN: the fast path of `judge`.
_PLAIN_TYPES = frozenset(
    {int, bool, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset,
     type(None), range, slice, type(Ellipsis), type(NotImplemented)}
)


def forbidden(value: Any) -> bool:
    """FORBIDDEN: modules, frames, code objects, tracebacks, cells, metaclasses, and a type's
    `__new__` (`object.__new__` builds any host class without its checks; enum's metaclass
    stores it in the snippet's own enum as `_new_member_`)."""
    if isinstance(value, _FORBIDDEN_TYPES) or (isinstance(value, type) and issubclass(value, type)):
        return True
    return (
        type(value) is types.BuiltinMethodType
        and value.__name__ == "__new__"
        and isinstance(value.__self__, type)
    )


def judge(value: Any) -> Any:
    """What a snippet gets for `value`, found by a read it made: `value` itself (PLAIN), its
    stand-in (WRAPPED), or an `AttributeError` (FORBIDDEN)."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return value
    if isinstance(value, types.BuiltinMethodType):  # `Pattern.sub` is a subclass (a C method of a class)
        for descriptor, bound in _BOUND_ROWS.get(value.__name__, ()):
            owner = _bound_self(value, descriptor)
            if owner is not _MISSING:
                return bound(value, owner)
        if value.__name__ in _THROWS:
            return _MarkedThrow(value, unbound=False)
    elif kind is types.MethodDescriptorType or kind is types.ClassMethodDescriptorType:
        row = _DESCRIPTOR_ROWS.get(id(value))
        if row is not None and row[0] is value:
            return row[1](value)
        if value.__name__ in _THROWS:
            return _MarkedThrow(value, unbound=True)
    elif kind is types.MethodType:
        row = _FORBIDDEN_FUNCTIONS.get(id(value.__func__))
        if row is not None and row[0] is value.__func__:
            return row[1](value)
    elif kind is types.FunctionType or isinstance(value, (property, types.DynamicClassAttribute)):
        row = _FORBIDDEN_FUNCTIONS.get(id(value))
        if row is not None and row[0] is value:
            return row[1](value)
        return _judge_own(value)
    if forbidden(value):
        raise AttributeError(f"the value is not accessible: {LEADS_OUTSIDE}")
    return value


#: Exact containers whose items a returned value is judged by (one level: what host code built).
_CONTAINERS = (list, tuple, set, frozenset, dict)
#: Plain types that hold nothing: a `slice` holds any three objects, so it is walked like a
#: container.
_SCALARS = _PLAIN_TYPES.difference(_CONTAINERS).difference({slice})
_WALKED = frozenset({*_CONTAINERS, slice})


def _outside(what: str, value: Any, passed: bool) -> TypeError:
    verb = "would pass a callback" if passed else "returned"
    return TypeError(f"{what}() {verb} a {type(value).__name__} object, which leads outside the sandbox")


def _items(container: Any) -> Any:
    """The items of an exact container: a dict's keys and values, a slice's bounds; read
    through the base types' own iterators, so no snippet code runs."""
    kind = type(container)
    if kind is dict:
        return (*dict.keys(container), *dict.values(container))
    if kind is slice:
        return (container.start, container.stop, container.step)
    return container if kind is tuple or kind is list else (*kind.__iter__(container),)


#: How many items (and nested containers) below its first level a returned container is walked
#: for; the first level always is. A value host code hands back by reference (a snippet object's
#: state to the copy prelude, `reduce`'s accumulator) then costs at most about a millisecond
#: however big its graph; deeper than that the judge relies on host code having built only
#: plain data from plain data, which the boundary fuzz checks.
NESTED_ITEMS_WALKED = 1_000


#: Kinds of item whose judge can answer with a stand-in or a refusal (the rows of `judge`).
_JUDGED_ITEM_KINDS = (
    types.BuiltinMethodType, types.MethodDescriptorType, types.ClassMethodDescriptorType, types.MethodType,
    types.FunctionType, property,
)


def _refuse_forbidden_items(value: Any, what: str, passed: bool) -> None:
    """Every item of the exact container `value`, and of the exact containers in it up to
    `NESTED_ITEMS_WALKED` items below the first level, refused if forbidden or if the judge
    would hand it out only as a stand-in. Decided by type at C speed a level at a time (a flat
    list of strings costs one `set(map(type, ...))`); each nested container is walked once, so
    a cycle ends."""
    items = _items(value)
    seen: set[int] | None = None
    budget = NESTED_ITEMS_WALKED
    while True:
        kinds = set(map(type, items))
        kinds -= _SCALARS  # usually empty
        if not kinds:
            return
        nested: list[Any] = []
        for kind in kinds:
            if kind in _WALKED:
                if seen is None:
                    seen = {id(value)}
                for item in items:
                    if type(item) is kind and id(item) not in seen:
                        seen.add(id(item))
                        nested.append(item)
            # Decided by type, except for the two checks `forbidden` makes on the value itself.
            elif issubclass(kind, _FORBIDDEN_TYPES):
                raise _outside(what, next(i for i in items if type(i) is kind), passed)
            elif issubclass(kind, type):
                for item in items:
                    if type(item) is kind and forbidden(item):
                        raise _outside(what, item, passed)
            elif issubclass(kind, _JUDGED_ITEM_KINDS):
                # A value the judge hands out as a stand-in (`str.format` bound, a raw method of
                # a checked class) cannot be swapped inside a container host code built.
                for item in items:
                    if type(item) is kind and not _judged_as_is(item):
                        raise _outside(what, item, passed)
        items = []
        for container in nested:
            kind = type(container)
            budget -= 1 + (3 if kind is slice else 2 * len(container) if kind is dict else len(container))
            if budget < 0:
                return
            items += _items(container)
        if not items:
            return


def judge_crossing(value: Any, what: str, passed: bool = False) -> Any:
    """`judge` for a value host code hands over (a shim function's return, an argument it
    passes to a snippet callback): PLAIN as it is, WRAPPED as its stand-in, FORBIDDEN a
    `TypeError` naming `what`; the items of exact containers (and slices) are refused if
    forbidden or WRAPPED (`_refuse_forbidden_items`)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind in _PLAIN_TYPES:
        if value:
            _refuse_forbidden_items(value, what, passed)
        return value
    try:
        return judge(value)
    except AttributeError:
        raise _outside(what, value, passed) from None


def guarded_getattr(obj: Any, name: Any, default: Any = _MISSING) -> Any:
    """`getattr` for snippets: refuses private and frame/code attributes, and judges what the
    read returns (whatever the receiver and whatever the name)."""
    name = plain_name(name)
    problem = attribute_problem(name)
    if problem:
        raise AttributeError(problem)
    if default is _MISSING:
        value = getattr(obj, name)
    else:
        value = getattr(obj, name, _MISSING)
        if value is _MISSING:
            return default
    try:
        return judge(value)
    except AttributeError as refused:
        if str(refused) == REGISTER_REFUSED:
            raise
        raise AttributeError(f'attribute "{name}" is not accessible: {LEADS_OUTSIDE}') from None


def host_attr(obj: Any, name: str) -> Any:
    """`_hostattr_`: `obj.name` written in source, for the names under which a host class defines
    a method or property (`policy.HOST_METHOD_NAMES`: `copy`, `wrap`, `numerator`...). Read on
    an instance it is the usual bound method or value; read off a class (or through a forwarder
    such as `typing.Counter`) the raw host function comes behind the receiver check. Only the
    registry lookup of `judge`: these reads are in snippets' loops."""
    value = getattr(obj, name)
    kind = type(value)
    if kind is types.FunctionType or kind is property:
        return _judge_own(value)
    return value


#: Offset of `tp_getattro` in `PyTypeObject` (the object head, then 15 slots: tp_name ...
#: tp_str), the same from 3.10 to 3.13; checked against known types when first used.
_GETATTRO_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p) + 15 * ctypes.sizeof(ctypes.c_void_p)
_GENERIC_GETATTR = ctypes.cast(ctypes.pythonapi.PyObject_GenericGetAttr, ctypes.c_void_p).value


def _generic_getattr(kind: type) -> bool:
    """Attribute reads on instances of `kind` are CPython's generic lookup (instance dictionary,
    then the MRO's class dictionaries), with no `__getattr__` and no forwarding to another
    object (`typing.Counter`, `list[int]`, `super`)."""
    return bool(ctypes.c_void_p.from_address(id(kind) + _GETATTRO_OFFSET).value == _GENERIC_GETATTR)


_GETATTRO_KNOWN = (
    _generic_getattr(object) and _generic_getattr(int) and not _generic_getattr(types.GenericAlias)
    and not _generic_getattr(type) and not _generic_getattr(types.ModuleType)
)


class _JudgedPattern(type):
    """The class a pattern names in place of `C` when CPython would read, natively, a name a
    source read judges (`case Fraction(numerator=n)`, `case object(copy=f)`), or read
    `C.__match_args__` (it reads the stand-in's, the tuple the guard checked). The instance
    check is `C`'s own; then each such read must be one whose every outcome is safe, whatever
    snippet code runs between this check and CPython's own read (a descriptor's `__get__`, an
    earlier sub-pattern): see `_pattern_read_problem`."""

    def __instancecheck__(cls, subject: Any) -> bool:
        target, names, owns = type.__getattribute__(cls, "_judged_")
        if not isinstance(subject, target):
            return False
        for name in names:
            problem = _pattern_read_problem(subject, name, owns)
            if problem:
                raise TypeError(
                    f"class pattern {target.__name__}(...) would read attribute {name!r} {problem}: "
                    f"match {target.__name__}() as x and read x.{name} in the case body"
                )
        return True


def _pattern_read_problem(subject: Any, name: str, owns: Callable[[Any], bool]) -> str | None:
    """Why CPython's native `getattr(subject, name)` could hand out what a source read would
    not, or None. Decided from what snippet code cannot change: off a class the read is a raw
    host function (refused); through a forwarding or `__getattr__` lookup it is not CPython's
    generic one (refused); otherwise it ends in the instance dictionary (the snippet's own, or
    a host object's, which it cannot write: judged now) or binds a class-dictionary entry to
    the instance (a bound method, a property's value: as in source), except a host
    `staticmethod`, which stays the raw function (refused). What the read returns now is judged
    as well."""
    kind = type(subject)
    if isinstance(subject, type):
        return "off a class"
    if not (_GETATTRO_KNOWN and _generic_getattr(kind)):
        return "through a forwarding lookup"
    if name.startswith("_"):
        # A private name only where every place the read could end is the snippet's own: its
        # instance, and each class along the MRO that defines the name (a host class's slot or
        # method stays where it is when the snippet deletes its own in between).
        if not owns(subject):
            return "on an object the sandbox did not make for the snippet"
        for klass in type.__getattribute__(kind, "__mro__"):
            if name in type.__getattribute__(klass, "__dict__") and not owns(klass):
                return "where a host class defines it"
        return None
    for klass in type.__getattribute__(kind, "__mro__"):
        entry = type.__getattribute__(klass, "__dict__").get(name)
        if type(entry) is staticmethod and not owns(klass):
            return "unchecked"
    if not owns(subject):
        try:
            own = object.__getattribute__(subject, "__dict__")
        except AttributeError:
            own = None
        if type(own) is dict and name in own and not _judged_as_is(own[name]):
            return "unchecked"
    value = getattr(subject, name, _MISSING)
    return None if value is _MISSING or _judged_as_is(value) else "unchecked"


def _judged_as_is(value: Any) -> bool:
    try:
        return judge(value) is value
    except AttributeError:
        return False


def _no_subclasses(cls: type, **kwargs: Any) -> None:
    raise TypeError("a class pattern's stand-in cannot be subclassed")


def judged_pattern(
    cls: type, match_args: tuple[Any, ...] | None, names: tuple[str, ...], owns: Callable[[Any], bool]
) -> type:
    """A frozen `_JudgedPattern` for `cls`, for one run (`owns`: the run's ownership test):
    same name, the checked `__match_args__` (none if `cls` has none), and for a class that
    matches itself positionally (`int`, `str`...) a subclass of it, which inherits that."""
    namespace: dict[str, Any] = {
        "__slots__": (), "__module__": cls.__module__, "_judged_": (cls, names, owns),
        "__init_subclass__": classmethod(_no_subclasses),
    }
    if match_args is not None:
        namespace["__match_args__"] = match_args
    base = _self_matching_base(cls) if match_args is None and matches_itself(cls) else ()
    stand_in = _JudgedPattern(cls.__name__, base, namespace)
    make_immutable(stand_in)
    return stand_in


_MATCH_SELF_FLAG = 1 << 22  # _Py_TPFLAGS_MATCH_SELF: `case int(x)` binds the subject itself


def matches_itself(cls: type) -> bool:
    """Whether a positional class pattern without `__match_args__` matches the subject itself
    (`case int(x)`, also for a subclass of `int`): CPython's own type flag, read off the type
    object, so no metaclass `__eq__`/`__hash__` answers it (a set lookup would ask them)."""
    return bool(type.__dict__["__flags__"].__get__(cls) & _MATCH_SELF_FLAG)


def _self_matching_base(cls: type) -> tuple[type, ...]:
    """The builtin a stand-in derives from to inherit the self-match: the first C type along the
    MRO with the flag (`int` for `bool`, which cannot be subclassed), never a snippet class."""
    for klass in type.__getattribute__(cls, "__mro__"):
        if not is_heap_type(klass) and matches_itself(klass):
            return (int,) if klass is bool else (klass,)
    return ()


def guarded_hasattr(obj: Any, name: Any) -> bool:
    name = plain_name(name)
    if attribute_problem(name):
        return False
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        return False
    return True


# -- freezing what runs share --------------------------------------------------------------------
_IMMUTABLE_FLAG = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE (CPython 3.10+)
_HEAP_FLAG = 1 << 9  # Py_TPFLAGS_HEAPTYPE
#: Offset of `tp_flags` in `PyTypeObject`: the variable-size object head (refcount, type, size),
#: then 18 pointer-sized slots (tp_name ... tp_as_buffer), the same from 3.10 to 3.13.
_FLAGS_OFFSET = 3 * ctypes.sizeof(ctypes.c_void_p) + 18 * ctypes.sizeof(ctypes.c_void_p)


class FreezeError(RuntimeError):
    """A shared class could not be made immutable: runs would share writable state, so none
    starts (the caller fails closed)."""


def make_immutable(cls: type) -> None:
    """Set the immutable-type flag on the heap class `cls`: afterwards `setattr`,
    `type.__setattr__`, `delattr` and `__class__` assignment to or from it raise `TypeError`,
    for the host as for a snippet. Checked before and after the write; `FreezeError` when the
    layout is not the one expected. A class without annotations gets an empty read-only
    mapping first: reading `__annotations__` off a heap class that has none stores a new, empty
    and writable dict in it (CPython 3.10+), past the flag. A C class CPython made immutable
    itself is left as it is (an entry in its dictionary is found on its instances too, and a
    `functools.partial` with `__annotations__` breaks `functools.wraps`); every put-back drops
    what a run's reads stored in any of them (`drop_lazy_annotations`)."""
    flags = type.__dict__["__flags__"].__get__(cls)
    if not flags & _HEAP_FLAG or flags & _IMMUTABLE_FLAG:
        return  # static (C) types have no `__annotations__`; see `drop_lazy_annotations`
    annotations = type.__getattribute__(cls, "__dict__").get("__annotations__")
    if annotations is None or (type(annotations) is dict and not annotations):
        # None yet, or the empty one a read made: a class body's are never empty.
        type.__setattr__(cls, "__annotations__", types.MappingProxyType({}))
        flags = type.__dict__["__flags__"].__get__(cls)
    slot = _flags_slot(cls, flags)
    slot.value = flags | _IMMUTABLE_FLAG
    if not type.__dict__["__flags__"].__get__(cls) & _IMMUTABLE_FLAG:
        raise FreezeError(f"could not freeze {cls.__qualname__}")


#: The C classes CPython made immutable, whose `__annotations__` only a read makes, each with its
#: dictionary's read-only view (made once: a put-back reads them all), and how many modules were
#: loaded when `_find_lazy_annotations` last looked.
_LAZY_ANNOTATIONS: dict[type, types.MappingProxyType[str, Any]] = {}
_LAZY_SCANNED = [-1]


def drop_lazy_annotations() -> int:
    """The put-back of the `__annotations__` dict a read stored in a C class CPython made
    immutable (`classmethod(re.Pattern)`, and `typing`'s protocol checks, read it over a
    class's MRO: a review gave 17 of them a dict the host and every later run shared); how many
    had one. The flag is lifted for the one delete."""
    _find_lazy_annotations()
    dropped = 0
    for cls, namespace in _LAZY_ANNOTATIONS.items():
        if "__annotations__" in namespace and type(namespace["__annotations__"]) is dict:
            flags = type.__dict__["__flags__"].__get__(cls)
            slot = _flags_slot(cls, flags)
            slot.value = flags & ~_IMMUTABLE_FLAG
            try:
                type.__delattr__(cls, "__annotations__")
            finally:
                slot.value = type.__dict__["__flags__"].__get__(cls) | _IMMUTABLE_FLAG
            dropped += 1
    return dropped


def _find_lazy_annotations() -> None:
    """Every such class, through `object.__subclasses__()` (the freeze's crawl reaches the
    classes modules expose; a snippet also holds `type(functools.cmp_to_key(f)(1))`, which none
    does), again whenever more modules are loaded (C modules make their classes when loaded).
    About 2 ms for 1,400 classes."""
    if len(sys.modules) == _LAZY_SCANNED[0]:
        return
    _LAZY_SCANNED[0] = len(sys.modules)
    for sub in every_class():
        flags = type.__dict__["__flags__"].__get__(sub)
        if not flags & _HEAP_FLAG or not flags & _IMMUTABLE_FLAG or sub in _LAZY_ANNOTATIONS:
            continue
        # Nothing but a read puts an empty `dict` in a class CPython made immutable (it refuses
        # writes): also one the run that loaded the class's module made before this looked. A
        # Python class `make_immutable` froze has a read-only mapping, or the annotations of its
        # class body.
        namespace = type.__getattribute__(sub, "__dict__")
        annotations = namespace.get("__annotations__", {})
        if type(annotations) is dict and not annotations:
            _LAZY_ANNOTATIONS[sub] = namespace


def every_class() -> Iterator[type]:
    """Every class there is but `object`, through `__subclasses__()`, each once."""
    seen = {id(object)}
    pending: list[type] = [object]
    while pending:
        for sub in type.__subclasses__(pending.pop()):
            if id(sub) not in seen:
                seen.add(id(sub))
                pending.append(sub)
                yield sub


def _flags_slot(cls: type, flags: int) -> ctypes.c_ulong:
    """`cls`'s `tp_flags`, to write; `FreezeError` unless it reads `flags` there."""
    if sys.implementation.name != "cpython" or sys.version_info < (3, 10):
        raise FreezeError("freezing shared classes needs CPython 3.10 or later")
    slot = ctypes.c_ulong.from_address(id(cls) + _FLAGS_OFFSET)
    if slot.value != flags:
        raise FreezeError(f"cannot find the type flags of {cls.__qualname__}; refusing to run unfrozen")
    return slot


def is_heap_type(cls: type) -> bool:
    return bool(type.__dict__["__flags__"].__get__(cls) & _HEAP_FLAG)


def is_immutable(cls: type) -> bool:
    return bool(type.__dict__["__flags__"].__get__(cls) & _IMMUTABLE_FLAG)


#: Exact types whose instances hold no state a write could change (a C function's writable
#: `__module__` is put back: `_C_FIELDS`).
_STATELESS = _PLAIN_TYPES - {list, dict, set, bytearray} | {
    types.MethodDescriptorType, types.WrapperDescriptorType,
    types.ClassMethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
    types.MethodWrapperType,
    # A mapping proxy has no writable state of its own (frozen classes' `__annotations__`).
    types.MappingProxyType,
}
_FUNCTION_STATE = ("__code__", "__defaults__", "__kwdefaults__", "__dict__", "__annotations__", "__name__",
                   "__qualname__", "__doc__", "__module__")
_function_state = operator.attrgetter(*_FUNCTION_STATE)


#: `property`'s own `__doc__` (a writable member: `None` reads for an unset one).
_PROPERTY_DOC = property.__dict__["__doc__"]
#: The type of a namedtuple's field accessors.
_TUPLEGETTER: type = _collections._tuplegetter
_TUPLEGETTER_DOC = _TUPLEGETTER.__dict__["__doc__"]


def _property_fields(obj: Any) -> tuple[Any, ...]:
    """fget, fset, fdel, doc, name and whether the doc came from the getter: what `__init__`
    called again, `__set_name__` or a `__doc__` write re-points. The last three are read from
    the object's memory where its layout is known (`_C_SPANS`), an unset field as `_MISSING`."""
    doc, name, getter_doc = _PROPERTY_DOC.__get__(obj, property), _MISSING, _MISSING
    if property in _C_SPANS:
        words = _pointers(obj, 2 * _WORD, 5)
        doc = _MISSING if words[3] == 0 else doc
        name = _MISSING if words[4] == 0 else ctypes.cast(words[4], ctypes.py_object).value
        getter_doc = ctypes.c_int.from_address(id(obj) + 7 * _WORD).value
    return (obj.fget, obj.fset, obj.fdel, doc, name, getter_doc)


def _put_back_property(obj: Any, state: tuple[Any, ...]) -> None:
    fget, fset, fdel, doc, name, getter_doc = state
    # A doc given, so `__init__` reads nothing off the getter; then each field as it was.
    property.__init__(obj, fget, fset, fdel, "")
    if doc is _MISSING:
        _PROPERTY_DOC.__delete__(obj)
    else:
        _PROPERTY_DOC.__set__(obj, doc)
    if name is not _MISSING:
        property.__set_name__(obj, None, name)
    if getter_doc is not _MISSING:
        ctypes.c_int.from_address(id(obj) + 7 * _WORD).value = getter_doc


def _tuplegetter_fields(obj: Any) -> tuple[Any, ...]:
    if _TUPLEGETTER in _C_SPANS and _pointers(obj, 3 * _WORD, 1)[0] == 0:
        return (_MISSING,)
    return (_TUPLEGETTER_DOC.__get__(obj, _TUPLEGETTER),)


def _put_back_tuplegetter(obj: Any, state: tuple[Any, ...]) -> None:
    if state[0] is _MISSING:
        _TUPLEGETTER_DOC.__delete__(obj)
    else:
        _TUPLEGETTER_DOC.__set__(obj, state[0])


def _cell_fields(obj: Any) -> tuple[Any, ...]:
    try:
        return (obj.cell_contents,)
    except ValueError:
        return (_MISSING,)


def _put_back_cell(obj: Any, state: tuple[Any, ...]) -> None:
    if state[0] is _MISSING:
        if _cell_fields(obj)[0] is not _MISSING:
            del obj.cell_contents
    else:
        obj.cell_contents = state[0]


#: A C function's `__module__` (a writable member; `None` reads for an unset one).
_BUILTIN_MODULE = types.BuiltinFunctionType.__dict__["__module__"]


def _builtin_fields(obj: Any) -> tuple[Any, ...]:
    if types.BuiltinFunctionType in _C_SPANS and _pointers(obj, 4 * _WORD, 1)[0] == 0:
        return (_MISSING,)
    return (_BUILTIN_MODULE.__get__(obj, types.BuiltinFunctionType),)


def _put_back_builtin(obj: Any, state: tuple[Any, ...]) -> None:
    if state[0] is _MISSING:
        _BUILTIN_MODULE.__delete__(obj)
    else:
        _BUILTIN_MODULE.__set__(obj, state[0])


#: Shared objects of C types whose fields a write can re-point though they have no `__dict__`
#: or slots: a C function (`abs.__module__ = x`), a property (`property.__init__(p, f)` again,
#: `__set_name__`, `p.__doc__ = x`), a namedtuple field accessor (`__doc__`), a closure cell of
#: a shared function (`cell.cell_contents = x`). Type -> (its fields, putting them back). Which
#: C types of what runs share have writable fields is pinned by a crawl in
#: `tests/security/test_persistence.py`, so a new shim cannot add one unnoticed.
_C_FIELDS: Mapping[type, tuple[Callable[[Any], tuple[Any, ...]], Callable[[Any, tuple[Any, ...]], None]]] = (
    types.MappingProxyType({
        types.BuiltinFunctionType: (_builtin_fields, _put_back_builtin),
        property: (_property_fields, _put_back_property),
        _TUPLEGETTER: (_tuplegetter_fields, _put_back_tuplegetter),
        types.CellType: (_cell_fields, _put_back_cell),
    })
)


def _c_fields(obj: Any) -> tuple[Any, ...]:
    return _C_FIELDS[type(obj)][0](obj)


#: What a static type's dictionary can hold that a write can change.
_STATIC_TYPE_STATE = (staticmethod, classmethod, property)


#: What Python and `dataclasses` keep on a class about its own definition: never a security
#: decision of the sandbox's classes (the snippet cannot write them: the class is frozen).
_CLASS_BOOKKEEPING = frozenset({"__annotations__", "__dataclass_fields__", "__dataclass_params__",
                                "__match_args__", "__doc__", "__module__", "__qualname__"})


def _record_kind(obj: Any) -> type:
    """How `_Record` and `_Probe` treat `obj`: by its type, and a shared enum's `PlainKeyedMap`
    as the `dict` it is (its items, its version tag)."""
    kind = type(obj)
    return dict if kind is PlainKeyedMap else kind


class _Record:
    """The pristine state of one shared object whose state CPython cannot make read-only: a
    function's writable attributes, an instance's `__dict__` and `__slots__`, a container's
    items. Compared by identity only: comparing with `==` or hashing what a run put there would
    run its code."""

    __slots__ = ("obj", "state", "items", "slots")

    def __init__(self, obj: Any) -> None:
        kind = _record_kind(obj)
        self.obj = obj
        self.state: tuple[Any, ...] = ()
        self.slots: tuple[tuple[Any, Any], ...] = ()
        self.items: Any = None
        if kind is dict or kind is list:
            self.items = kind(obj)
            return
        if kind is set:
            self.items = (set(obj), {id(x) for x in obj})
            return
        if kind is types.FunctionType:
            self.state = _function_state(obj)  # reading `__annotations__` makes it once, here
            kw = obj.__kwdefaults__
            self.items = (dict(obj.__dict__), None if kw is None else dict(kw))
            return
        if kind in _C_FIELDS:
            # The fields, and the object's own memory with them (`_C_SPANS`): what `restore`
            # puts back is checked against it word by word.
            self.state = _c_fields(obj)
            span = _C_SPANS.get(kind)
            self.items = None if span is None else _words(obj, span).raw
            return
        try:
            found = object.__getattribute__(obj, "__dict__")
        except (AttributeError, TypeError):
            found = None
        if type(found) is dict:
            self.state = (found,)
            self.items = (dict(found), None)
            if kind is staticmethod or kind is classmethod:
                self.state = (found, obj.__func__)  # `__init__` called again replaces it
        slots = []
        for klass in type.__getattribute__(kind, "__mro__"):
            if not type.__dict__["__flags__"].__get__(klass) & _HEAP_FLAG:
                continue  # only `__slots__` of Python classes (a function's `__globals__` is a member)
            for member in type.__getattribute__(klass, "__dict__").values():
                if type(member) is types.MemberDescriptorType:
                    slots.append((member, _slot(member, obj)))
        self.slots = tuple(slots)

    def values(self) -> list[Any]:
        """What the recorded state holds (for the walk)."""
        kind = _record_kind(self.obj)
        if kind is dict:
            return list(self.items.values())
        if kind is list:
            return list(self.items)
        if kind is set:
            return list(self.items[0])
        if kind in _C_FIELDS:
            return []  # the walk follows what these hold itself (`SharedState.freeze`)
        found = [] if kind is types.FunctionType else list(self.state[1:])
        if self.items is not None:
            found += self.items[0].values()
        return found + [v for _, v in self.slots if v is not _MISSING]

    def changed(self) -> bool:
        obj = self.obj
        kind = _record_kind(obj)
        if kind is dict:
            return not _same_items(obj, self.items)
        if kind is list:
            then = self.items
            return len(obj) != len(then) or not all(map(operator.is_, obj, then))
        if kind is set:
            return len(obj) != len(self.items[0]) or {id(x) for x in obj} != self.items[1]
        if kind is types.FunctionType:
            if not all(map(operator.is_, _function_state(obj), self.state)):
                return True
            attrs, kw = self.items
            if (attrs or obj.__dict__) and not _same_items(obj.__dict__, attrs):
                return True
            return kw is not None and not _same_items(obj.__kwdefaults__, kw)
        if kind in _C_FIELDS:
            if self.items is not None:
                return _words(obj, _C_SPANS[kind]).raw != self.items
            return not all(map(operator.is_, _c_fields(obj), self.state))
        if self.state:
            if object.__getattribute__(obj, "__dict__") is not self.state[0]:
                return True
            if not _same_items(self.state[0], self.items[0]):
                return True
            if (kind is staticmethod or kind is classmethod) and obj.__func__ is not self.state[1]:
                return True
        for member, value in self.slots:
            if _slot(member, obj) is not value:
                return True
        return False

    def restore(self) -> None:
        obj = self.obj
        kind = _record_kind(obj)
        if kind is dict or kind is set:
            obj.clear()
            obj.update(self.items if kind is dict else self.items[0])
            return
        if kind is list:
            obj[:] = self.items
            return
        if kind is types.FunctionType:
            for name, value in zip(_FUNCTION_STATE, self.state, strict=True):
                setattr(obj, name, value)
            attrs, kw = self.items
            obj.__dict__.clear()
            obj.__dict__.update(attrs)
            if kw is not None:
                obj.__kwdefaults__.clear()
                obj.__kwdefaults__.update(kw)
            return
        if kind in _C_FIELDS:
            _C_FIELDS[kind][1](obj, self.state)
            if self.items is not None and _words(obj, _C_SPANS[kind]).raw != self.items:
                raise FreezeError(f"could not put back a shared {kind.__name__} object; refusing to run on")
            return
        if self.state:
            if kind is staticmethod or kind is classmethod:
                kind.__init__(obj, self.state[1])  # copies the callable's names into `__dict__`, put back next
            object.__setattr__(obj, "__dict__", self.state[0])
            self.state[0].clear()
            self.state[0].update(self.items[0])
        for member, value in self.slots:
            if value is _MISSING:
                if _slot(member, obj) is not _MISSING:
                    member.__delete__(obj)
            else:
                member.__set__(obj, value)


class _Probe:
    """Whether anything recorded changed since the last put-back, for many records at once.

    A run almost never changes shared state (the guards refuse every write to it; only a
    Python-layer break could), so the common answer, "nothing changed", must be cheap. It is
    read from the objects' own memory, not through their attributes: the words of a function
    (or `staticmethod`/`classmethod`) object that hold every reference a write could replace
    (`__code__`, `__defaults__`, `__dict__`, ... as pointers), the fields of the C objects of
    `_C_FIELDS` (the bytes `_Record.changed` compares), and the head of every recorded dict,
    whose version tag CPython changes on every change of its contents (PEP 509; dicts have no
    other way to change). All of it is copied in one `bytes` join and compared with the
    copy taken when the state was last known pristine: one C-level pass, no attribute lookup,
    no `==` or hash of what a run put there, no code of it runs. Lists are compared item by
    item by identity, and what the memory layout does not cover (sets, slots, other instances,
    an unexpected layout) by `_Record.changed`.

    Sound because the snapshot is only ever taken right after `_Record.changed` found nothing
    changed (or `restore` put it back), and `changed` checks everything the words hold; when
    the words differ, `SharedState.restore` takes the slow path and snapshots again."""

    __slots__ = ("records", "views", "saved", "lists", "lengths", "items", "holders", "holder_dicts", "others")

    def __init__(self, records: tuple[_Record, ...]) -> None:
        self.records = records
        views: list[Any] = []
        lists: list[tuple[list[Any], list[Any]]] = []
        holders: list[_Record] = []
        others: list[_Record] = []
        for record in records:
            obj, kind = record.obj, _record_kind(record.obj)
            if kind is list:
                lists.append((obj, record.items))
            elif kind is dict and _DICT_WORDS:
                views.append(_words(obj, _DICT_WORDS))
            elif kind is types.FunctionType and _FUNCTION_WORDS and _DICT_WORDS and _layout_holds(record):
                views.append(_words(obj, _FUNCTION_WORDS))
                views.append(_words(record.state[_FUNCTION_DICT], _DICT_WORDS))
                if record.items[1] is not None:
                    views.append(_words(record.state[_FUNCTION_KWDEFAULTS], _DICT_WORDS))
            elif kind in (staticmethod, classmethod) and _DICT_WORDS and _layout_holds(record):
                views.append(_words(obj, _WRAPPER_WORDS))
                views.append(_words(record.state[0], _DICT_WORDS))
            elif kind in _C_FIELDS and record.items is not None:
                views.append(_words(obj, _C_SPANS[kind]))  # the very bytes `changed` compares
            elif (record.state and not record.slots and kind is not staticmethod and kind is not classmethod
                  and kind not in _C_FIELDS and _DICT_WORDS):
                # An instance whose state is its `__dict__` (an enum member, `enum.property`):
                # the same dict object (compared below) with the same version tag.
                holders.append(record)
                views.append(_words(record.state[0], _DICT_WORDS))
            elif record.state or record.slots or kind is set or kind is dict:
                others.append(record)
            # else: nothing a write could change (no `__dict__`, no slots): `changed()` is False
        # As memoryviews: `bytes.join` takes a memoryview's buffer for less than a ctypes
        # array's (the same bytes; each holds its array, which the record keeps valid).
        self.views = tuple(map(memoryview, views))
        self.lists = tuple(live for live, _ in lists)
        self.lengths = tuple(len(saved) for _, saved in lists)
        self.items = tuple(_chain(saved for _, saved in lists))
        self.holders = tuple(record.obj for record in holders)
        self.holder_dicts = tuple(record.state[0] for record in holders)
        self.others = tuple(others)
        self.saved = self.snapshot()

    def snapshot(self) -> bytes:
        # `bytes.join` takes the views as buffers: one copy of each object's words, no `raw`
        # read and no bytes object per view (a third of the time, on a thousand views).
        return b"".join(self.views)

    def unchanged(self) -> bool:
        if b"".join(self.views) != self.saved:
            return False
        if tuple(map(len, self.lists)) != self.lengths or not all(map(operator.is_, _chain(self.lists), self.items)):
            return False
        # `object.__getattribute__`: the instance's own dictionary, whatever its class answers.
        if not all(map(operator.is_, map(object.__getattribute__, self.holders, _DICT_NAMES), self.holder_dicts)):
            return False
        return not any(record.changed() for record in self.others)


_chain = itertools.chain.from_iterable
_DICT_NAMES = itertools.repeat("__dict__")
_WORD = ctypes.sizeof(ctypes.c_void_p)
_FUNCTION_DICT = _FUNCTION_STATE.index("__dict__")
_FUNCTION_KWDEFAULTS = _FUNCTION_STATE.index("__kwdefaults__")


def _words(obj: Any, span: tuple[int, int]) -> Any:
    """A view of `span` (offset, size) of `obj`'s memory; the record keeps `obj` alive."""
    offset, size = span
    return (ctypes.c_char * size).from_address(id(obj) + offset)


def _pointers(obj: Any, offset: int, count: int) -> list[int]:
    return list((ctypes.c_size_t * count).from_address(id(obj) + offset))


#: CPython 3.11's `PyFunctionObject` after the object head: globals, builtins, name, qualname,
#: code, defaults, kwdefaults, closure, doc, dict, weakreflist, module, annotations, checked
#: per function. The weak reference list is read too (one span is cheaper than two), though
#: taking a weak reference is no write: if one is taken, the next put-back takes the slow path
#: once and snapshots the new list.
_FUNCTION_FIELDS = ("__globals__", "__builtins__", "__name__", "__qualname__", "__code__", "__defaults__",
                    "__kwdefaults__", "__closure__", "__doc__", "__dict__", None, "__module__", "__annotations__")
_FUNCTION_WORDS: tuple[int, int] | None = None
#: `staticmethod`/`classmethod`: the callable, then the `__dict__`.
_WRAPPER_WORDS = (2 * _WORD, 2 * _WORD)
#: `PyDictObject` after the head: ma_used, ma_version_tag, ma_keys, ma_values.
_DICT_WORDS: tuple[int, int] | None = None


def _layout_holds(record: _Record) -> bool:
    """The words `_Probe` reads of this object are the references its attributes hold now
    (read through the attributes, so a layout other than the one expected is found here and
    the record is checked the slow way instead)."""
    obj = record.obj
    if type(obj) is types.FunctionType:
        found = _pointers(obj, 2 * _WORD, len(_FUNCTION_FIELDS))
        state = dict(zip(_FUNCTION_STATE, record.state, strict=True))
        state.update(__globals__=obj.__globals__, __builtins__=obj.__builtins__, __closure__=obj.__closure__)
        for name, word in zip(_FUNCTION_FIELDS, found, strict=True):
            if name is not None and word != id(state[name]) and not (state[name] is None and word == 0):
                return False
        return record.state[_FUNCTION_DICT] is obj.__dict__
    return _pointers(obj, 2 * _WORD, 2) == [id(obj.__func__), id(record.state[0])]


def _dict_layout() -> tuple[int, int] | None:
    """Where a dict's size and version tag live, if this interpreter keeps them where 3.11-3.13
    do and changes the tag on every kind of change: checked on scratch dicts, else None (then
    dicts are compared item by item)."""
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return None
    span = (2 * _WORD, 4 * _WORD)
    scratch: dict[Any, Any] = {"a": 1, "b": 2}
    changes: tuple[Callable[[], Any], ...] = (
        lambda: scratch.__setitem__("a", 3), lambda: scratch.__setitem__("c", 1), lambda: scratch.__delitem__("c"),
        lambda: scratch.pop("b"), lambda: scratch.setdefault("z", 1), lambda: scratch.update(q=1),
        lambda: scratch.popitem(), lambda: scratch.__ior__({"k": 2}), lambda: dict.__init__(scratch, k=3),
        scratch.clear,
    )
    for change in changes:
        before = _words(scratch, span).raw
        change()
        if _words(scratch, span).raw == before or _pointers(scratch, 2 * _WORD, 1)[0] != len(scratch):
            return None
    return span


def _function_layout() -> tuple[int, int] | None:
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None  # the fields differ in 3.12+ (functions are then compared by attribute)
    return (2 * _WORD, len(_FUNCTION_FIELDS) * _WORD)


_DICT_WORDS = _dict_layout()
_FUNCTION_WORDS = _function_layout()


def _c_layouts() -> dict[type, tuple[int, int]]:
    """Where the fields of the `_C_FIELDS` types live (after the object head, to the end of the
    object), for the types whose layout on this interpreter is the one 3.11-3.13 have: checked
    on scratch objects, field by field. A type left out is compared by its attributes."""
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] <= (3, 13):
        return {}
    found: dict[type, tuple[int, int]] = {}

    def fget(self: Any) -> None:
        """doc"""

    def fset(self: Any, value: Any) -> None:
        pass

    doc, name = "a doc", "a name"
    prop = property(fget, fset, None, doc)
    words = _pointers(prop, 2 * _WORD, 5)
    property.__set_name__(prop, None, name)
    named = _pointers(prop, 2 * _WORD, 5)
    _PROPERTY_DOC.__delete__(prop)
    from_getter, given = property(fget), property(fget, None, None, doc)
    if (property.__basicsize__ == 8 * _WORD and words == [id(fget), id(fset), 0, id(doc), 0]
            and named[4] == id(name) and _pointers(prop, 5 * _WORD, 1) == [0]
            and ctypes.c_int.from_address(id(from_getter) + 7 * _WORD).value == 1
            and ctypes.c_int.from_address(id(given) + 7 * _WORD).value == 0):
        found[property] = (2 * _WORD, 6 * _WORD)
    accessor = _TUPLEGETTER(5, doc)
    if _TUPLEGETTER.__basicsize__ == 4 * _WORD and _pointers(accessor, 2 * _WORD, 2) == [5, id(doc)]:
        found[_TUPLEGETTER] = (2 * _WORD, 2 * _WORD)
    bound = {}.get
    if (types.BuiltinFunctionType.__basicsize__ == 7 * _WORD and _pointers(abs, 4 * _WORD, 1) == [id(abs.__module__)]
            and _pointers(bound, 3 * _WORD, 2) == [id(bound.__self__), 0]):
        found[types.BuiltinFunctionType] = (4 * _WORD, _WORD)  # `__module__` alone (not the weak references)
    full, empty = types.CellType(doc), types.CellType()
    if (types.CellType.__basicsize__ == 3 * _WORD and _pointers(full, 2 * _WORD, 1) == [id(doc)]
            and _pointers(empty, 2 * _WORD, 1) == [0]):
        found[types.CellType] = (2 * _WORD, _WORD)
    return found


#: Type -> the span of its objects' memory `_Probe` reads and `_Record` compares (`_C_FIELDS`).
_C_SPANS: Mapping[type, tuple[int, int]] = types.MappingProxyType(_c_layouts())


def _slot(member: Any, obj: Any) -> Any:
    try:
        return member.__get__(obj, type(obj))
    except AttributeError:
        return _MISSING


def _same_items(now: Any, then: dict[Any, Any]) -> bool:
    """The dict holds exactly the recorded keys, each with the same value object, in the same
    order. By identity only, at C speed: a lookup of a key a run planted would run its
    `__hash__`. (A key deleted and put back moves to the end: reported as a change, and put back.)"""
    return (
        type(now) is dict and len(now) == len(then)
        and all(map(operator.is_, now, then)) and all(map(operator.is_, now.values(), then.values()))
    )


class SharedState:
    """What every run of this process shares: frozen classes, and the records `restore` uses."""

    def __init__(self) -> None:
        self.frozen: set[type] = set()
        self.records: dict[int, _Record] = {}
        #: Records by group (a shim's name, or "core" for the sandbox's own classes): a run
        #: that imported only `json` can have changed only what `json` and the core reach.
        self.groups: dict[str, tuple[_Record, ...]] = {}
        self._unions: dict[frozenset[str], _Probe] = {}
        #: The stdlib modules whose classes have been frozen whole (see `freeze`): the records
        #: their crawl found, and the modules it reached.
        self._module_records: dict[str, tuple[tuple[_Record, ...], frozenset[str]]] = {}
        #: The frozen classes found from what the shims hand out (not only through a module
        #: frozen whole): the methods `register_host_methods` puts behind the receiver check.
        self.reached: set[type] = set()
        #: Set once the shims have frozen everything runs share (`sandbox.shims`).
        self.ready = False

    def freeze(self, values: Iterable[Any], *, modules: Iterable[str] = (), group: str = "core") -> None:
        """Freeze the classes among `values` (and every class reachable from them through
        bases, metaclasses, class dictionaries and instance types), the classes the named
        sandbox modules define, and record the state of the shared functions and objects found
        on the way. Reads only dictionaries and slots: no code of the objects runs."""
        pending: list[Any] = list(values)
        for name in modules:
            module = sys.modules.get(name)
            if module is None:
                continue
            for cls in [v for v in vars(module).values() if isinstance(v, type) and _defined_in(v, name)]:
                # The sandbox's own functions cross only behind the receiver check (`judge`),
                # wherever a snippet reads them: never as the raw, writable function. Their
                # bases are the sandbox's own (found here too) or C types.
                if cls not in self.frozen:
                    make_immutable(cls)
                    self.frozen.add(cls)
                self.reached.add(cls)
                # Its C bases, for what their dictionaries hold (its Python bases are the
                # sandbox's own, found here, or host classes it does not hand out).
                pending.extend(b for b in type.__getattribute__(cls, "__mro__")[1:] if not is_heap_type(b))
                for key, value in type.__getattribute__(cls, "__dict__").items():
                    _register_own(cls, value)
                    if key not in _CLASS_BOOKKEEPING and type(value) is not types.FunctionType and not _owners(value):
                        pending.append(value)
        found: list[_Record] = []
        defining: set[str] = set()
        self._crawl(pending, set(), found, defining, True)
        # The classes a stdlib module defines, private ones too, whenever one of its functions
        # (C ones included) or classes is shared: its call results (`functools._CacheInfo`,
        # `difflib.Match`, the exceptions it raises) are host classes a snippet holds as
        # `type(x)`, and host code it steers (a generic alias's call) writes onto them. What
        # such a module's crawl records belongs to every group that reaches the module, not only
        # to the first: the put-back restores the groups a run imported (a review wrote onto a
        # `typing` method recorded only under `tomllib`, which the run had not imported).
        todo = sorted(defining)
        added: set[str] = set()
        while todo:
            name = todo.pop()
            if name in added:
                continue
            added.add(name)
            records, uses = self._module_records.get(name) or self._crawl_module(name)
            found.extend(records)
            todo.extend(uses)
        self.groups[group] = (*self.groups.get(group, ()), *found)
        self._unions.clear()

    def _crawl_module(self, name: str) -> tuple[tuple[_Record, ...], frozenset[str]]:
        """Freeze every class the stdlib module `name` defines and record what they reach (once
        per process): those records, and the modules their functions and classes come from."""
        found: list[_Record] = []
        uses: set[str] = set()
        module = sys.modules.get(name)
        if module is not None and _in_stdlib(module):
            classes = [v for v in vars(module).values()
                       if issubclass(type(v), type) and is_heap_type(v) and _defined_in(v, name)]
            self._crawl(classes, set(), found, uses, False)
        held = self._module_records[name] = (tuple({id(r): r for r in found}.values()), frozenset(uses))
        return held

    def _crawl(self, pending: list[Any], seen: set[int], found: list[_Record], defining: set[str],
               direct: bool) -> None:
        """Freeze the classes and record the objects reachable from `pending`; the modules that
        defined the functions and classes found go into `defining`. `direct`: `pending` is what
        the shims hand out, so the classes found go into `reached`."""
        while pending:
            value = pending.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            kind = type(value)
            if kind in _STATELESS or isinstance(value, types.ModuleType):
                if kind in _STATELESS:
                    pending.append(kind)  # a C type: what its dictionary holds (see below)
                continue
            if isinstance(value, type):
                if type.__dict__["__flags__"].__get__(value) & _HEAP_FLAG:
                    self._freeze_class(value, pending)
                    if direct:
                        self.reached.add(value)
                    module = type.__getattribute__(value, "__dict__").get("__module__")
                    if type(module) is str:
                        defining.add(module)
                else:
                    # A static type is immutable, but the `staticmethod`/`classmethod`/`property`
                    # objects in its dictionary are not (`str.maketrans`: `__init__` called again
                    # re-points it, for every run and the host). (Its other C functions are its
                    # `__new__`, which never crosses: `forbidden`.)
                    pending.extend(v for v in type.__getattribute__(value, "__dict__").values()
                                   if type(v) in _STATIC_TYPE_STATE)
                    pending.extend(type.__getattribute__(value, "__mro__")[1:])
                continue
            if kind is types.FunctionType and _owners(value):
                continue  # never handed out raw (see `_OwnReceiver`): nothing a run could write
            # (A registered property is recorded all the same: its fields are C fields that
            # `property.__init__` called again re-points, on whatever route reached it.)
            record = self.records.get(id(value))
            if record is None:
                record = self.records[id(value)] = _Record(value)
            found.append(record)
            pending.append(kind)
            if _record_kind(value) in (dict, list, set):
                pending.extend(record.values())
                continue
            if kind is types.FunctionType or kind is types.BuiltinFunctionType:
                # (A C function's module defines the exceptions it raises: `hashlib`'s
                # `_hashlib.UnsupportedDigestmodError`, which no table holds.)
                if type(value.__module__) is str:
                    defining.add(value.__module__)
            if kind is types.FunctionType:
                pending.extend(value.__defaults__ or ())
                pending.extend(value.__kwdefaults__.values() if value.__kwdefaults__ else ())
                pending.extend(value.__closure__ or ())  # its cells: `cell_contents` is writable
                pending.append(types.CodeType)  # (code objects hold nothing writable; their type's `__new__`)
            elif kind is types.CellType:
                # What a closure holds is followed as far as functions and classes: a cell's
                # other contents (a cache, a run's context) are the function's working state.
                held = record.state[0]
                if type(held) is types.FunctionType or isinstance(held, type):
                    pending.append(held)
            elif kind is types.MethodType:
                pending.extend((value.__func__, value.__self__))
            elif kind in (staticmethod, classmethod):
                pending.append(value.__func__)
            elif kind is property:
                pending.extend(f for f in (value.fget, value.fset, value.fdel) if f is not None)
            pending.extend(record.values())

    def _freeze_class(self, cls: type, pending: list[Any]) -> None:
        if cls not in self.frozen:
            keep_plain_keys(cls)
            make_immutable(cls)
            self.frozen.add(cls)
        pending.extend(type.__getattribute__(cls, "__mro__")[1:])
        pending.append(type(cls))
        for name, value in type.__getattribute__(cls, "__dict__").items():
            if name not in ("__dict__", "__weakref__"):
                pending.append(value)

    def restore(self, groups: Iterable[str] | None = None) -> int:
        """Put back every recorded object (of `groups`, or all) a run changed; how many had
        changed. With `groups`, a `_Probe` of their records answers first, cheaply, whether
        anything changed at all."""
        dropped = drop_lazy_annotations()
        if groups is None:
            return dropped + _put_back(self.records.values())
        key = frozenset(groups)
        probe = self._unions.get(key)
        if probe is None:
            records = tuple({id(r): r for g in key for r in self.groups.get(g, ())}.values())
            changed = _put_back(records)
            self._unions[key] = _Probe(records)  # pristine now: the probe's reference
            return dropped + changed
        if probe.unchanged():
            return dropped
        changed = _put_back(probe.records)
        probe.saved = probe.snapshot()  # pristine again (`changed` checks all a probe reads)
        return dropped + changed


def _put_back(records: Iterable[_Record]) -> int:
    changed = [record for record in records if record.changed()]
    for record in changed:
        record.restore()
    return len(changed)


_STDLIB = tuple(sorted({sysconfig.get_paths()["stdlib"] + "/", sysconfig.get_paths()["platstdlib"] + "/"}))


def _in_stdlib(module: types.ModuleType) -> bool:
    """A module of the standard library (compiled in, or a file of it), not a site package or
    the host application's: only those are frozen whole (a third-party library may rightly
    change its own classes)."""
    filename = getattr(module, "__file__", None)
    if filename is None:
        return module.__name__ in sys.builtin_module_names
    return type(filename) is str and filename.startswith(_STDLIB) and "/site-packages/" not in filename


def _defined_in(cls: type, module: str) -> bool:
    """`cls` was made by `module`'s own code (some classes are shown as `builtins`)."""
    if cls.__module__ == module:
        return True
    filename = getattr(sys.modules[module], "__file__", None)
    for value in type.__getattribute__(cls, "__dict__").values():
        fn = getattr(value, "__func__", value)
        if type(fn) is types.FunctionType and fn.__code__.co_filename == filename:
            return True
    return False


SHARED = SharedState()
