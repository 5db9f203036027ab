"""Runtime guards and the builtins a snippet sees.

The compile policy refuses dangerous names it can see. These guards decide what it cannot, per
run: which names the snippet's own objects may read and write, attribute writes, class
creation, `type()` and the builtins. What a read hands out is decided by one judge, by the
value's identity (`sandbox.crossing`). One `RunGuards` is made per run, so the set of classes
the snippet created (the only classes it may modify) never outlives the run.
"""

from __future__ import annotations

import abc
import builtins as _builtins
import decimal
import dis
import enum
import types
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .crossing import (
    _MISSING,
    LEADS_OUTSIDE,
    SANDBOX_DIR,
    STEPPED_METHODS,
    UNSUBCLASSABLE,
    CheckedMethods,
    ReadOnly,
    SafeType,
    _linearization,
    _RunSuper,
    _TypeMeta,
    attribute_problem,
    delegating_await,
    exit_arguments,
    forbidden,
    guarded_getattr,
    guarded_hasattr,
    hidden_base,
    host_attr,
    is_forwarder,
    is_heap_type,
    is_immutable,
    is_stepped,
    judge,
    judged_methods,
    judged_operand,
    judged_operands,
    judged_pattern,
    judging_method,
    matches_itself,
    no_traceback,
    plain_name,
    safe_format,
    safe_format_map,
    stepping_method,
    stepping_subclasshook,
    yield_from,
)
from .jsonvalue import type_name
from .policy import (
    ASSIGNABLE_DUNDERS,
    DATA_MODEL_METHODS,
    EXIT_HOOKS,
    EXIT_METHODS,
    FILENAME,
    HOST_METHOD_NAMES,
    INTROSPECTION_DUNDERS,
    OPERAND_HOOKS,
    OPERAND_METHODS,
    READABLE_PRIVATE,
    RUNTIME_CHECKED_ATTRIBUTES,
    SUPER_ONLY,
    VALUE_JUDGED_ATTRIBUTES,
    WRITABLE_DUNDERS,
    class_name_problem,
    is_dunder,
    mangle,
)
from .prelude import is_prelude_code

__all__ = [  # what other modules and the tests take from here, the crossing's names included
    "CHECKED_REPLACEMENTS", "HOST_STATE_CLASH", "SEALED", "UNSUBCLASSABLE", "CheckedMethods", "ReadOnly", "RunGuards",
    "SafeType", "attribute_problem", "build_builtins", "guarded_getattr", "guarded_hasattr",
    "is_snippet_function", "make_globals", "metaclass_for", "plain_name", "safe_format", "safe_format_map",
    "seal", "stored_value", "unjudged_methods",
]
#: Private names the stdlib's class machinery stores on (the snippet's own) classes and trusts.
HOST_MACHINERY_PREFIXES = ("_abc_",)
HOST_MACHINERY_NAMES = frozenset(
    {"_is_protocol", "_is_runtime_protocol", "_gorg", "_value2member_map_", "_member_map_",
     "_member_names_", "_member_type_", "_new_member_", "_use_args_", "_value_repr_"}
)
_SNIPPET_LOCALS = "__snippet__.<locals>."

#: Types whose instances accept attribute writes: a snippet only reaches instances of these that
#: it made itself (JSON copies, its own containers, exceptions it raised, decimal contexts: its
#: own, or the run's, which the execution installs around every step).
_WRITABLE_INSTANCE_TYPES: tuple[type, ...] = (dict, list, set, bytearray, deque, BaseException, decimal.Context)

#: Types (exactly these, not subclasses) whose instances have no attribute a write could change:
#: the write is left to CPython, which refuses it with its own `AttributeError`.
_IMMUTABLE_TYPES = frozenset(
    {int, bool, float, complex, str, bytes, tuple, frozenset, range, slice, type(None),
     type(Ellipsis), type(NotImplemented)}
)


#: Checked replacements the shims offer for unsubclassable host classes (filled in by the shims).
CHECKED_REPLACEMENTS: set[type] = set()

#: The sandbox's own classes a snippet may use but never subclass, each with the module it is
#: shown under (filled in by `seal`). Their host code writes private slots on `self`
#: (`Timeout.__aenter__` stores the running task): a subclass's property would catch the value.
#: The class factory judges every class in the bases' MROs, so a snippet base placed first with
#: an `__init_subclass__` that skips `super()` gets no further than a class statement would.
SEALED: dict[type, str] = {}


def seal(cls: type, shown_as: str = "") -> None:
    """Refuse snippet subclasses of `cls` and of every class derived from it (shown in the
    refusal as `shown_as.Name`, or as `'Name'` without a module)."""
    SEALED[cls] = shown_as


def freeze_tables() -> None:
    """Make the class-factory tables read-only once every shim has registered (`seal` and the
    shims' `CHECKED_REPLACEMENTS.add` run at import): nothing a run can do changes them later."""
    global SEALED, CHECKED_REPLACEMENTS
    SEALED = MappingProxyType(dict(SEALED))  # type: ignore[assignment]
    CHECKED_REPLACEMENTS = frozenset(CHECKED_REPLACEMENTS)  # type: ignore[assignment]

# The guards' own stand-ins (checked writes, run builtins, module shims, the tools
# namespace): a subclass with the same slots is the same layout, one `__class__` swap away.
seal(ReadOnly)


#: Why `__subclasses__` is refused on anything but the snippet's own classes.
SUBCLASSES_REFUSED = (
    'attribute "__subclasses__" is only available on classes the snippet defines: a host '
    "class's subclasses are host classes; keep your own registry (in __init_subclass__) instead"
)


def _arg_type(value: Any) -> str:
    return "None" if value is None else type(value).__name__


#: Dunders the guard hands out only when the snippet's own object or class defines them.
_OWNED_ONLY_DUNDERS = frozenset(
    {"__dict__", "__annotations__", "__dataclass_fields__", "__dataclass_params__",
     "__match_args__", "__slots__", "__defaults__", "__kwdefaults__", "__set_name__", "__get__",
     "__set__", "__delete__", "__copy__", "__deepcopy__", "__getattr__"}
) | SUPER_ONLY

_OWNER_KEY = "__sandbox_owner__"


class _BuildToken:
    """A run's ownership token (`RunGuards.owner_token`), which a class carries in its
    dictionary, under `_OWNER_KEY`, while the run's class factory builds it. The factory puts
    it first in the namespace, so CPython calls its `__set_name__` as soon as it has made the
    class, before any snippet code (another `__set_name__`, an `__init_subclass__`) gets the
    class: `building` holds every class the factory started and has not finished, so a failed
    statement finds the classes it made without looking among every class there is (which a
    review made cost 65 ms per failed statement, by making 50,000 classes first)."""

    __slots__ = ("building",)

    def __init__(self) -> None:
        self.building: list[type] = []

    def __set_name__(self, owner: type, name: str) -> None:
        if name == _OWNER_KEY and type.__getattribute__(owner, "__dict__").get(_OWNER_KEY) is self:
            self.building.append(owner)

#: Data-model names `copy` reads off an instance: never written into an instance dictionary.
_INSTANCE_COPY_HOOKS = frozenset({"__copy__", "__deepcopy__", "__getattr__"})


def _own_dict(obj: Any, guards: RunGuards | None = None) -> Any:
    """`__dict__`/`vars()` of the snippet's own object. An instance gets its real dictionary; a
    class gets a read-only copy: its `mappingproxy` hands the real class dictionary to the
    reflected operator of whatever it is compared with (`C.__dict__ == x` calls
    `x.__eq__(real_dict)`), and writing there would define what a class statement may not
    (`__class__`, the pickling hooks) and skip the write rules. The copy leaves out the run's
    ownership token, and holds each value as a judged read of it would give it (inside a
    `staticmethod`/`classmethod`, its function): host code puts host functions in the
    snippet's classes (`EnumType` stores the raw `Flag.__invert__`, which run on a class calls
    its real metaclass), and a forbidden value is left out. Its `__setattr__`/`__delattr__` are
    the checked ones a read gives (`_CheckedWrite`): a frozen dataclass's generated one writes
    any name but its fields natively, and a review planted a host base's state with it."""
    found = object.__getattribute__(obj, "__dict__")
    if not isinstance(obj, type):
        return found
    copy: dict[str, Any] = {}
    for key, value in found.items():
        if key == _OWNER_KEY:
            continue
        if key in ("__setattr__", "__delattr__") and guards is not None:
            copy[key] = _CheckedWrite(guards, value, key == "__delattr__")
            continue
        kind = type(value)
        try:
            if kind is staticmethod or kind is classmethod:
                function = judge(value.__func__)
                copy[key] = value if function is value.__func__ else kind(function)
            else:
                copy[key] = judge(value)
        except AttributeError:
            continue
    return types.MappingProxyType(copy)


#: State and hooks a host base documents as its subclasses' own: an enum member's `_name_` and
#: `_value_`, which the member's `__init__` may set and its methods read, and the `_missing_`
#: hook an enum class may define. Enum's code uses them only through operators, builtins,
#: their methods and a call, which act as the snippet's code would.
_SUBCLASS_STATE = frozenset({"_name_", "_value_", "_missing_"})


def _host_code_names(cls: type) -> frozenset[str]:
    """The private names the Python code of a host class uses (its functions, accessors and the
    code nested in them), less the state an enum subclass owns; a C type has none."""
    names: set[str] = set()
    if is_heap_type(cls):  # Python code
        pending: list[Any] = []
        for value in type.__getattribute__(cls, "__dict__").values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if isinstance(value, property):
                pending += [f.__code__ for f in (value.fget, value.fset, value.fdel) if type(f) is types.FunctionType]
            elif type(value) is types.FunctionType:
                pending.append(value.__code__)
        while pending:
            code = pending.pop()
            names.update(n for n in code.co_names if n.startswith("_") and not is_dunder(n))
            pending += [c for c in code.co_consts if type(c) is types.CodeType]
    if enum.Enum in type.__getattribute__(cls, "__mro__"):
        names -= _SUBCLASS_STATE
    return frozenset(names)


def _no_keywords(fn: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise TypeError(f"{fn}() takes no keyword arguments")


def _require_str_name(name: Any) -> None:
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")


def is_snippet_function(obj: Any) -> bool:
    """The run's own function: the snippet's, or a prelude's (compiled under the same policy)."""
    if not isinstance(obj, types.FunctionType):
        return False
    code = obj.__code__
    return code.co_filename == FILENAME or is_prelude_code(code)


def _cpython_no_attribute(obj: Any, name: str) -> AttributeError:
    if isinstance(obj, type):
        return AttributeError(f"type object '{obj.__name__}' has no attribute '{name}'")
    return AttributeError(f"'{type(obj).__name__}' object has no attribute '{name}'")


class RunGuards:
    """Per-run guard state: the classes this run created, and the guards that depend on them.

    What the snippet's own objects may do that host objects may not (the decision, per name):
    - private names (`_x`, `__x` mangled): read and written on the snippet's own classes,
      instances and functions, unless the name resolves to a host base class's attribute
      (`self._munge_whitespace` on a `TextWrapper` subclass stays refused);
    - `__dict__`/`vars()`, `__annotations__`, `__dataclass_fields__`, `__match_args__`,
      `__slots__`, `__init__` (outside `super()`), `__copy__`, `__getattr__` and the
      descriptor methods: only where the snippet's own class (or function) defines them;
    - data-model methods (`__eq__`, `__add__`, `__len__`, ...): on anything; each does what an
      operator does anyway;
    - `__class__` is `type(x)`; `__mro__`/`__bases__` hide what `mro()` hides; exception
      chaining, `__notes__` and typing's `__args__`/`__origin__` are values;
    - `__setattr__`/`__delattr__` come back wrapped, so they apply the write rules;
    - `__wrapped__` only when it is the snippet's own function or object;
    - writes of dunders: `__doc__`, `__name__`, `__qualname__`, `__module__`, `__wrapped__` on
      the snippet's own objects, and exception chaining; nothing else.
    - writes of data-model methods (`C.__call__ = f`, `obj.__getitem__ = None`): on the
      snippet's own classes, as a class body could define them, and on its own instances,
      except the hooks `copy` reads off an instance;
    Every value a dunder read returns is refused if it is a module, frame, code object,
    traceback or cell.
    """

    def __init__(self) -> None:
        self.owned = OwnedClasses()
        self.owner_token = _BuildToken()
        #: `_host_code_names` per class, found once per run: per run, so nothing shared grows
        #: and no run's class is held past its run.
        self._code_names: dict[int, tuple[type, frozenset[str]]] = {}
        #: The same, for all of an own class's host bases together.
        self._state_names: dict[int, tuple[type, frozenset[str]]] = {}
        self.class_factory = _ClassFactory(self.owned, self.owner_token, self.host_state_names, self.code_names,
                                           self.owns_class)
        self._ids: dict[int, int] = {}
        self._judged_patterns: dict[tuple[Any, ...], tuple[type, type]] = {}
        #: The run's `type`: the three-argument form builds classes through `make_class`.
        self.safe_type: type = _TypeMeta(
            "type", (SafeType,), {"__slots__": (), "__module__": "builtins",
                                  "_make_class": staticmethod(self.make_class)}
        )

    def release(self) -> None:
        """A session is over: what the caches keep of its classes goes now (`SessionState.release`)."""
        self._code_names.clear()
        self._state_names.clear()
        self._judged_patterns.clear()
        self.class_factory.release()

    def make_class(self, name: Any, bases: Any, namespace: Any, /, **kwds: Any) -> type:
        """`type(name, bases, ns, **kwds)`: CPython's argument checks, then the run's class
        factory, with the namespace's names checked as a class body's are and the class
        keywords as a class statement's: the class is the snippet's own, like any other."""
        if not isinstance(name, str):
            raise TypeError(f"type.__new__() argument 1 must be str, not {_arg_type(name)}")
        if not isinstance(bases, tuple):
            raise TypeError(f"type.__new__() argument 2 must be tuple, not {_arg_type(bases)}")
        if not isinstance(namespace, dict):
            raise TypeError(f"type.__new__() argument 3 must be dict, not {_arg_type(namespace)}")
        ns = dict(namespace)
        for key in ns:
            if type(key) is not str:
                raise TypeError("type() namespace keys must be plain strings in the sandbox")
            problem = class_name_problem(key)
            if problem:
                raise TypeError(f"type(): {problem}")
        check_class_keywords(kwds, "type()")
        # A class statement's body sets `__module__` from the snippet's globals.
        ns.setdefault("__module__", "__snippet__")
        return self.class_factory(str.__str__(name), tuple(bases), ns, **kwds)

    # -- ownership -------------------------------------------------------------------------
    def owns_class(self, cls: Any) -> bool:
        if cls in self.owned:
            return True
        # A class being built (its `__init_subclass__`/`__set_name__` run before the factory
        # returns) carries this run's token in its dictionary until then.
        try:
            attrs = type.__getattribute__(cls, "__dict__")
        except TypeError:
            return False
        return attrs.get(_OWNER_KEY) is self.owner_token

    def owns(self, obj: Any) -> bool:
        """The snippet made this class, an instance of one, or this function."""
        if isinstance(obj, type):
            return self.owns_class(obj)
        return self.owns_class(type(obj)) or is_snippet_function(obj)

    def _defined_by_snippet(self, obj: Any, name: str) -> bool:
        """Where a read of `name` on `obj` would come from is the snippet's own: its instance
        dictionary, its own class (or a snippet base), its function; not a host base class.
        Private names that host machinery keeps on the snippet's classes (`ABCMeta`'s
        `_abc_impl`, `typing.Protocol`'s flags) are never the snippet's: the stdlib trusts them
        when the host checks `isinstance` against a host ABC."""
        if name.startswith(HOST_MACHINERY_PREFIXES) or name in HOST_MACHINERY_NAMES:
            return False
        if isinstance(obj, super):
            start = obj.__thisclass__
            target = obj.__self_class__
            if target is None:
                return False
            cls = target
            mro = type.__getattribute__(target, "__mro__")
            mro = mro[mro.index(start) + 1 :] if start in mro else ()
        elif isinstance(obj, type):
            if not self.owns_class(obj):
                return False
            cls = obj
            mro = type.__getattribute__(obj, "__mro__")
            # Also a name a host base of a class that inherits from it uses: a property written
            # onto a snippet base is what that host code's native read finds first.
            if name in self.subtree_state_names(obj):
                return False
        else:
            if is_snippet_function(obj):
                # Its attributes and data model; `__init__`/`__init_subclass__` are `object`'s.
                return name not in SUPER_ONLY
            cls = type(obj)
            if not self.owns_class(cls):
                return False
            mro = type.__getattribute__(cls, "__mro__")
        # Never a name a host base's code uses, wherever it is found: its methods trust that
        # state (a review replaced `TopologicalSorter._node2info` in its subclass, and
        # `get_ready` then wrote `npredecessors` onto a class of the host's).
        if name in self.host_state_names(cls):
            return False
        for klass in mro:
            if name in type.__getattribute__(klass, "__dict__"):
                return self.owns_class(klass)
        return not isinstance(obj, super)

    def host_state_names(self, cls: type) -> frozenset[str]:
        """The private names the Python code of `cls`'s host bases (those not the run's own)
        uses: on an instance, state those bases' methods trust, which is the host's, not the
        snippet's, whichever way it is reached (a read, `vars()`, the copy prelude's state)."""
        # Keyed by identity: a metaclass's `__hash__` is never run here.
        known = self._state_names.get(id(cls))
        if known is not None and known[0] is cls:
            return known[1]
        found: frozenset[str] = frozenset()
        for klass in type.__getattribute__(cls, "__mro__"):
            if not self.owns_class(klass):
                found = found | self.code_names(klass)
        if self.owns_class(cls):  # a class being built is not yet in `owned`: not kept
            self._state_names[id(cls)] = (cls, found)
        return found

    def code_names(self, cls: type) -> frozenset[str]:
        """The private names the Python code of `cls` itself uses (`_host_code_names`), found
        once per run."""
        held = self._code_names.get(id(cls))
        if held is None or held[0] is not cls:
            held = self._code_names[id(cls)] = (cls, _host_code_names(cls))
        return held[1]

    def holds_host_state(self, obj: Any) -> bool:
        """`obj`'s instance dictionary holds a name its host bases' code uses."""
        try:
            state = object.__getattribute__(obj, "__dict__")
        except AttributeError:
            return False
        return type(state) is dict and not self.host_state_names(type(obj)).isdisjoint(dict.keys(state))

    # -- reads -----------------------------------------------------------------------------
    def read_problem(self, obj: Any, name: str) -> str | None:
        problem = attribute_problem(name)
        if problem is None or not name.startswith("_") or name in INSPECT_ATTRIBUTES:
            return problem
        if is_dunder(name):
            if name in DATA_MODEL_METHODS and name not in _OWNED_ONLY_DUNDERS:
                return None
            if name in _OWNED_ONLY_DUNDERS:
                return None if self._defined_by_snippet(obj, name) else problem
            if name in INTROSPECTION_DUNDERS:
                return None
            return problem
        return None if self._defined_by_snippet(obj, name) else problem

    def getattr(self, obj: Any, name: Any, default: Any = _MISSING) -> Any:
        """`getattr` and `_getattr_` for this run: `guarded_getattr`, plus what the snippet's
        own objects may read (see the class docstring)."""
        name = plain_name(name)
        if not name.startswith("_") or name in READABLE_PRIVATE:
            return guarded_getattr(obj, name, default)
        problem = self.read_problem(obj, name)
        if problem:
            raise AttributeError(problem)
        try:
            value = self._read_dunder(obj, name) if is_dunder(name) else getattr(obj, name)
        except AttributeError:
            if default is not _MISSING:
                return default
            raise
        if name == "__wrapped__" and not (self.owns(obj) or self.owns(value)):
            # A host wrapper's original is what the wrapper checks for (`re.sub`, `@dataclass`
            # in the shims are wrappers of the real ones); the snippet's own stay readable.
            raise AttributeError(
                'attribute "__wrapped__" is not accessible: it is a host function\'s unchecked original'
            )
        try:
            return judge(value)
        except AttributeError:
            raise AttributeError(f'attribute "{name}" is not accessible: {LEADS_OUTSIDE}') from None

    def _read_dunder(self, obj: Any, name: str) -> Any:
        if name == "__class__":
            return self.safe_type(obj)
        if name == "__dict__":
            refused = self._host_state_dict(obj, "'__dict__'")
            if refused:
                raise AttributeError(refused)
            return _own_dict(obj, self)
        if name in ("__mro__", "__bases__"):
            if not isinstance(obj, type):
                raise _cpython_no_attribute(obj, name)
            found = type.__getattribute__(obj, name)
            return tuple(c for c in found if not hidden_base(c))
        if name in ("__setattr__", "__delattr__"):
            return _CheckedWrite(self, getattr(obj, name), name == "__delattr__")
        if name == "__subclasses__":
            return self._subclasses_of(obj)
        if name in ("__cause__", "__context__", "__suppress_context__", "__notes__"):
            if not isinstance(obj, BaseException):
                raise _cpython_no_attribute(obj, name)
            if name == "__context__" and obj.__suppress_context__:
                # `raise ... from None` in host code hides an internal exception (the bindings'
                # NotJSONError); as in a printed traceback, a suppressed context is not there.
                return None
        value = getattr(obj, name)
        if name == "__wrapped__" and not self.owns(value):
            # A decorator's original: the snippet's own function, or a host object it must not
            # hold as such (a checked wrapper's unchecked original, a cached builtin).
            raise AttributeError(
                'attribute "__wrapped__" is not accessible: it is not the snippet\'s own function'
            )
        return value

    def _subclasses_of(self, cls: Any) -> Callable[[], list[type]]:
        """`cls.__subclasses__` on the snippet's own class: its direct subclasses that are the
        snippet's own too (a host class never subclasses one, and would not be listed)."""
        if not (isinstance(cls, type) and self.owns_class(cls)):
            raise AttributeError(SUBCLASSES_REFUSED)

        def __subclasses__() -> list[type]:
            return [c for c in type.__subclasses__(cls) if self.owns_class(c)]

        __subclasses__.__qualname__ = f"{cls.__qualname__}.__subclasses__"
        return __subclasses__

    def hasattr(self, obj: Any, name: Any) -> bool:
        name = plain_name(name)
        try:
            self.getattr(obj, name)
        except AttributeError:
            return False
        return True

    # -- writes ----------------------------------------------------------------------------
    def write_problem(self, obj: Any, name: str) -> str | None:
        if type(name) is not str:
            return "attribute name must be a plain string"
        if name in INSPECT_ATTRIBUTES or name.endswith("__roles__"):
            return f'attribute "{name}" is not accessible: it exposes interpreter internals'
        if not name.startswith("_") or name == "_":
            return None
        private = f'attribute "{name}" is not accessible: names starting with "_" are private'
        if is_dunder(name):
            if name in _BODY_ONLY and isinstance(obj, type) and self.owns_class(obj):
                return f'attribute "{name}" can be defined only in the class body in the sandbox'
            if name in ASSIGNABLE_DUNDERS and name not in WRITABLE_DUNDERS:
                return None if self._data_model_target(obj, name) else private
            if name not in WRITABLE_DUNDERS:
                return private
            if name in ("__cause__", "__context__", "__suppress_context__", "__notes__"):
                return None if isinstance(obj, BaseException) else private
            # Names and docs of the snippet's own functions and classes (what decorators set).
            writable = is_snippet_function(obj) or (isinstance(obj, type) and self.owns_class(obj))
            return None if writable else private
        if not self._defined_by_snippet(obj, name):
            return private
        if isinstance(obj, type):
            self.class_factory.note_written(obj, name)
        return None

    def _data_model_target(self, obj: Any, name: str) -> bool:
        """A data-model method may be assigned here: the snippet's own class (unless its
        metaclass keeps `name` as data), or an instance of one, except the hooks `copy` looks
        up on instances (`__copy__`, `__deepcopy__`, `__getattr__`): an instance dictionary
        never holds those."""
        if not isinstance(obj, type):
            return name not in _INSTANCE_COPY_HOOKS and self.owns_class(type(obj))
        if not self.owns_class(obj):
            return False
        if name == "__getattr__" and self._serves_host_code(obj):
            return False
        for meta in type(obj).__mro__:
            held = type.__getattribute__(meta, "__dict__").get(name)
            if held is not None and hasattr(type(held), "__set__"):
                return False
        return True

    def _subtree_classes(self, cls: type) -> list[type]:
        """`cls` and the snippet's classes that inherit from it."""
        found: list[type] = []
        pending = [cls]
        seen: set[int] = set()
        while pending:
            klass = pending.pop()
            if id(klass) in seen:
                continue
            seen.add(id(klass))
            found.append(klass)
            pending += [c for c in type.__subclasses__(klass) if self.owns_class(c)]
        return found

    def subtree_state_names(self, cls: type) -> frozenset[str]:
        """The private names the host bases of `cls` and of the snippet's classes that inherit
        from it use."""
        found: frozenset[str] = frozenset()
        for klass in self._subtree_classes(cls):
            found = found | self.host_state_names(klass)
        return found

    def _serves_host_code(self, cls: type) -> bool:
        """`cls`, or a class of the snippet's that inherits from it, has a host base whose code
        uses private names: a `__getattr__` given to it later would answer that code's reads."""
        return any(_host_state_getattr_held(k) or self.host_state_names(k) for k in self._subtree_classes(cls))

    def write(self, obj: Any, name: str | None = None) -> Any:
        """`_write_`: the target of `obj.attr = v` / `del obj.attr`. Returns obj if allowed.
        The policy passes `name` when it starts with "_"."""
        if name is not None:
            problem = self.write_problem(obj, name)
            if problem:
                raise AttributeError(problem)
        cls = type(obj)
        if isinstance(obj, type):
            if self.owns_class(obj):
                return obj
            raise TypeError(
                f"cannot modify class '{obj.__name__}': only classes defined in the snippet can be changed"
            )
        if (self.owns_class(cls) or is_snippet_function(obj) or isinstance(obj, _WRITABLE_INSTANCE_TYPES)
                or cls in _IMMUTABLE_TYPES):
            return obj
        if isinstance(obj, ReadOnly):
            raise TypeError(f"cannot modify {obj!r}")
        raise TypeError(f"cannot modify attributes of a '{cls.__name__}' object in the sandbox")

    def setattr(self, obj: Any, name: Any, value: Any) -> None:
        """`setattr`, and every store of a dunder attribute (`dunder_target`)."""
        name = plain_name(name)
        problem = self.write_problem(obj, name)
        if problem:
            raise AttributeError(problem)
        setattr(self.write(obj), name, stored_value(self, obj, name, value))

    def dunder_target(self, obj: Any) -> _DunderTarget:
        """`_dunder_target_`: what the policy stores a dunder attribute through (`x.__doc__ = v`,
        `x.__doc__ += v`, `for x.__name__ in ...`), so the guard's `setattr` sees the value."""
        return _DunderTarget(self, obj)

    def delattr(self, obj: Any, name: Any) -> None:
        name = plain_name(name)
        problem = self.write_problem(obj, name)
        if problem:
            raise AttributeError(problem)
        delattr(self.write(obj), name)

    def builtin_getattr(self, *args: Any, **kwargs: Any) -> Any:
        _no_keywords("getattr", kwargs)
        if not 2 <= len(args) <= 3:
            few = len(args) < 2
            raise TypeError(
                f"getattr expected at {'least 2' if few else 'most 3'} arguments, got {len(args)}"
            )
        _require_str_name(args[1])
        return self.getattr(*args)

    def builtin_hasattr(self, *args: Any, **kwargs: Any) -> bool:
        _no_keywords("hasattr", kwargs)
        if len(args) != 2:
            raise TypeError(f"hasattr expected 2 arguments, got {len(args)}")
        _require_str_name(args[1])
        return self.hasattr(*args)

    def builtin_setattr(self, *args: Any, **kwargs: Any) -> None:
        _no_keywords("setattr", kwargs)
        if len(args) != 3:
            raise TypeError(f"setattr expected 3 arguments, got {len(args)}")
        _require_str_name(args[1])
        self.setattr(*args)

    def builtin_delattr(self, *args: Any, **kwargs: Any) -> None:
        _no_keywords("delattr", kwargs)
        if len(args) != 2:
            raise TypeError(f"delattr expected 2 arguments, got {len(args)}")
        _require_str_name(args[1])
        self.delattr(*args)

    def require_owned_class(self, cls: Any, what: str) -> None:
        if not (isinstance(cls, type) and self.owns_class(cls)):
            raise TypeError(f"{what} only applies to classes defined in the snippet")

    # -- builtins that depend on the run ---------------------------------------------------
    def _host_state_dict(self, obj: Any, what: str) -> str | None:
        """Why `what` (`vars()`, a `__dict__` read) must not hand out `obj`'s instance
        dictionary, or None. It holds, or will hold, state a host base's code trusts (see
        `_defined_by_snippet`): decided by the class, since a dictionary handed out before that
        state is there could be filled with the snippet's (a review planted `_node2info` that
        way, and `graphlib` wrote onto shared objects; another read `__dict__` through a snippet
        base listed first)."""
        if isinstance(obj, type) or not self.host_state_names(type(obj)):
            return None
        return (f"{what} of a '{type_name(type(obj))}' object is not available in the sandbox "
                "(a class it derives from keeps its own state there)")

    def vars(self, *args: Any) -> Any:
        """`vars(obj)` of the snippet's own objects; `vars()` (the caller's locals) is out."""
        if len(args) != 1:
            if not args:
                raise TypeError("vars() needs an argument in the sandbox (the snippet's own object)")
            raise TypeError(f"vars expected at most 1 argument, got {len(args)}")
        obj = args[0]
        if not self.owns(obj):
            try:
                object.__getattribute__(obj, "__dict__")
            except AttributeError:
                raise TypeError("vars() argument must have __dict__ attribute") from None
            raise TypeError(
                f"vars() of a '{type(obj).__name__}' object is not available in the sandbox "
                "(only the snippet's own objects)"
            )
        refused = self._host_state_dict(obj, "vars()")
        if refused:
            raise TypeError(refused)
        try:
            return _own_dict(obj, self)
        except AttributeError:
            raise TypeError("vars() argument must have __dict__ attribute") from None

    def id(self, *args: Any, **kwargs: Any) -> int:
        """`id()` numbered per run: equal for the same object, distinct for live ones, and
        the same from run to run. It does not hide addresses (`repr()` and `hash()` show them).
        The number is the address's: as in CPython, objects whose lifetimes do not overlap may
        share one (`id([]) == id([])`), and nothing is kept alive for it."""
        _no_keywords("id", kwargs)
        if len(args) != 1:
            raise TypeError(f"id() takes exactly one argument ({len(args)} given)")
        key = _builtins.id(args[0])
        number = self._ids.get(key)
        if number is None:
            number = self._ids[key] = 0x1000 + 16 * len(self._ids)
        return number

    def match_class(self, cls: Any, count: int, routed: tuple[str, ...] = ()) -> Any:
        """`_match_class_`: check the attribute names `case cls(p1, ..., k=...)` will read
        natively. `routed` are the keyword names a source read would judge (`numerator`,
        `copy`: `policy.HOST_METHOD_NAMES`). With those, or with positional sub-patterns, the
        pattern names a stand-in (`crossing.judged_pattern`): CPython then reads the
        `__match_args__` checked here, not whatever the class answers at that moment, and the
        stand-in's instance check decides the judged reads."""
        if not isinstance(cls, type):
            return cls  # CPython reports a non-class
        _refuse_unshared_metaclass(cls)
        names = _match_args(cls) if count else None
        self_matching = bool(count) and names is None and matches_itself(cls)  # reads nothing
        judged = list(routed)
        if names is not None:
            # The snippet's own private names only where the subject is surely its own: a
            # metaclass with its own instance check (a `typing.Protocol` subclass checks
            # structurally) could let a host object match, and CPython would read the name on that.
            owned = self.owns_class(cls) and not any(
                "__instancecheck__" in type.__getattribute__(meta, "__dict__")
                for meta in type(cls).__mro__
                if meta is not type
            )
            for name in names[:count]:
                if type(name) is not str:
                    raise TypeError("__match_args__ elements must be plain strings in the sandbox")
                private = name.startswith("_") and (
                    is_dunder(name) or not owned or not self._defined_by_snippet(cls, name)
                    or forbidden(_class_level(cls, name))
                )
                # The names the guard judges by the value a read returns (`format`, `mro`, ...)
                # would be read natively here, where no judge sees them.
                if private or name in INSPECT_ATTRIBUTES or (
                    name in RUNTIME_CHECKED_ATTRIBUTES and name not in VALUE_JUDGED_ATTRIBUTES
                ):
                    raise TypeError(
                        f"class pattern {cls.__name__}(...) would read attribute {name!r}, which is "
                        "not accessible in the sandbox"
                    )
                if name in HOST_METHOD_NAMES or name in VALUE_JUDGED_ATTRIBUTES or name.startswith("_"):
                    judged.append(name)  # decided again on the subject (`crossing.judged_pattern`)
        if not judged and (self_matching or not count):
            return cls  # reads only public names no judge would change, as source does
        # The names the pattern reads are part of the key, so a stand-in always carries the
        # tuple checked now (not only while snippets cannot rewrite `__match_args__`).
        # Keyed by identity: a dictionary lookup on `cls` would ask its metaclass's `__eq__`.
        read = None if names is None else names[:count]
        key = (_builtins.id(cls), read, *judged)
        cached = self._judged_patterns.get(key)
        if cached is not None and cached[0] is cls:
            return cached[1]
        stand_in = judged_pattern(cls, read, tuple(dict.fromkeys(judged)), self.owns)
        self._judged_patterns[key] = (cls, stand_in)
        return stand_in


def _refuse_unshared_metaclass(cls: type) -> None:
    """A class pattern's class has a metaclass runs share (`shared_metaclass`)."""
    if not shared_metaclass(cls):
        raise TypeError(f"class pattern {cls.__name__}(...): its metaclass is not supported in the sandbox")


def shared_metaclass(cls: type) -> bool:
    """`cls`'s metaclass is `type`, a C metaclass or a frozen shared one (`ABCMeta`, the enum
    shim's). A writable heap metaclass exists only if a snippet built one, which the class
    factory never lets it do; the guards never ask its `__eq__`, `__hash__` or instance check
    (a set lookup would: such a class could claim to be `int`, or any class of the run)."""
    meta = type(cls)
    return meta is type or not is_heap_type(meta) or is_immutable(meta)


def _class_level(cls: type, name: str) -> Any:
    """What the class dictionaries along `cls`'s MRO hold under `name` (None if nothing)."""
    for klass in type.__getattribute__(cls, "__mro__"):
        own = type.__getattribute__(klass, "__dict__")
        if name in own:
            return own[name]
    return None


def _match_args(cls: type) -> tuple[Any, ...] | None:
    """The `__match_args__` CPython will read after the check, found without running snippet
    code: the plain tuple in the first class dictionary of the MRO that holds the name. A
    descriptor there (its `__get__` could answer the check with one tuple and the match with
    another) or on the metaclass is refused; None when the class has none."""
    if "__match_args__" in type.__getattribute__(type(cls), "__dict__") or any(
        "__match_args__" in type.__getattribute__(meta, "__dict__") for meta in type(cls).__mro__[1:]
    ):
        raise TypeError("__match_args__ on a metaclass is not supported in the sandbox")
    for klass in type.__getattribute__(cls, "__mro__"):
        own = type.__getattribute__(klass, "__dict__")
        if "__match_args__" in own:
            names = own["__match_args__"]
            if type(names) is not tuple:
                raise TypeError("__match_args__ must be a plain tuple of names in the sandbox")
            return names
    return None


class OwnedClasses:
    """The classes a run's snippet made, by identity. A `WeakSet` would answer `in` with the
    class's metaclass `__hash__`/`__eq__`, which could claim any class; this compares `id` and
    then `is`, and forgets a class once it is gone."""

    __slots__ = ("_refs", "__weakref__")

    def __init__(self) -> None:
        self._refs: dict[int, weakref.ref[type]] = {}

    def add(self, cls: type) -> None:
        key = _builtins.id(cls)
        mine = weakref.ref(self)

        def forget(ref: weakref.ref[type]) -> None:
            owner = mine()
            if owner is not None and owner._refs.get(key) is ref:
                del owner._refs[key]

        self._refs[key] = weakref.ref(cls, forget)

    def __contains__(self, cls: object) -> bool:
        ref = self._refs.get(_builtins.id(cls))
        return ref is not None and ref() is cls

    def __len__(self) -> int:
        return len(self._refs)


class _DunderTarget:
    """`x` as a store of one of its dunder attributes sees it (`RunGuards.dunder_target`): reads
    (the load of `x.__doc__ += v`), writes and deletes go through the run's guards. Never in the
    snippet's hands: only the compiled store expression holds it."""

    __slots__ = ("_guards", "_obj")

    def __init__(self, guards: RunGuards, obj: Any) -> None:
        object.__setattr__(self, "_guards", guards)
        object.__setattr__(self, "_obj", obj)

    def __getattribute__(self, name: str) -> Any:
        return object.__getattribute__(self, "_guards").getattr(object.__getattribute__(self, "_obj"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__getattribute__(self, "_guards").setattr(object.__getattribute__(self, "_obj"), name, value)

    def __delattr__(self, name: str) -> None:
        object.__getattribute__(self, "_guards").delattr(object.__getattribute__(self, "_obj"), name)


class _CheckedWrite(ReadOnly):
    """`x.__setattr__` / `object.__setattr__` (and the `__delattr__` twins): the real method,
    called only after the write rules accept the target and the name."""

    __slots__ = ("_guards", "_method", "_delete")

    def __init__(self, guards: RunGuards, method: Any, delete: bool) -> None:
        object.__setattr__(self, "_guards", guards)
        object.__setattr__(self, "_method", method)
        object.__setattr__(self, "_delete", delete)

    def __call__(self, *args: Any) -> Any:
        method = self._method
        bound = getattr(method, "__self__", _MISSING)
        target, rest = (bound, args) if bound is not _MISSING else (args[0] if args else None, args[1:])
        if not rest:
            raise TypeError("expected an attribute name")
        name = plain_name(rest[0])
        problem = self._guards.write_problem(target, name)
        if problem:
            raise AttributeError(problem)
        self._guards.write(target)
        # The name checked, never the caller's: a `str` subclass's `__hash__`/`__eq__` would
        # have CPython's lookup find another attribute than the one checked.
        named = (name, *rest[1:])
        if len(named) == 2 and not self._delete:
            named = (name, stored_value(self._guards, target, name, named[1]))
        return method(*named) if bound is not _MISSING else method(target, *named)

    def __repr__(self) -> str:
        return "<method-wrapper '__delattr__'>" if self._delete else "<method-wrapper '__setattr__'>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError("cannot copy a method wrapper")


#: Attribute-read hooks a snippet class never inherits from host Python code: they would serve
#: the snippet's reads of names the guards take for its own instance's with host rights
#: (typing's `_BaseGenericAlias.__getattr__` forwards every such name to another object, and
#: its `__setattr__` writes there: a review read the run's guards and the unchecked
#: `object.__setattr__`). Write hooks alone are allowed: those of the classes a snippet reaches
#: refuse writes (`uuid.UUID`, the run's stop). The sandbox's own (the run's `super`) judge
#: what they serve.
_ATTRIBUTE_HOOKS = ("__getattr__", "__getattribute__")


def _foreign_hook_allowed(hook: Any) -> bool:
    """What a class that is not the run's own may hold as an attribute-access hook and still be
    a base: none, a C class's slot, or the sandbox's own function (which judges what it serves).
    Anything else, a `staticmethod` of the snippet's function too (a review's class still being
    built held one and answered `graphlib`'s reads of its state), is refused."""
    if hook is None or type(hook) in (types.WrapperDescriptorType, types.MethodDescriptorType):
        return True
    return type(hook) is types.FunctionType and hook.__code__.co_filename.startswith(SANDBOX_DIR)


def check_class_keywords(keywords: Iterable[Any], what: str = "class") -> None:
    """Class keywords go to host metaclasses and `__init_subclass__` hooks as they are: plain,
    public names only (`**{"_root": True}` made a snippet subclass of typing's aliases)."""
    for keyword in keywords:
        if type(keyword) is not str or keyword.startswith("_") or keyword == "metaclass":
            shown = repr(str.__str__(keyword)) if isinstance(keyword, str) else "?"
            raise TypeError(f"{what}: class keyword {shown} is not allowed in the sandbox")


def metaclass_for(bases: tuple[Any, ...], owns: Callable[[type], bool] | None = None) -> type:
    """The metaclass of a class the snippet makes with `bases`, after the checks every such
    class passes, whatever builds it (a class statement, `type()`, enum's functional API): no
    base that is a metaclass or has one no run shares (the lookups below would ask its
    `__eq__`/`__hash__`), none of the sandbox's sealed classes or the host classes that cannot
    be subclassed in their MRO, no attribute-access hook in Python code of a class that is not
    the run's own (`owns`; without it, of any class but the builtins), and no conflicting
    metaclasses."""
    meta: type = type
    for base in bases:
        if not isinstance(base, type):
            raise TypeError(f"class bases must be classes, got a '{type(base).__name__}'")
        if not shared_metaclass(base):
            raise TypeError(f"the metaclass of base '{base.__name__}' is not supported in the sandbox")
        if issubclass(base, type) or SafeType in base.__mro__:
            raise TypeError("defining metaclasses is not allowed in the sandbox")
        mro = type.__dict__["__mro__"].__get__(base)  # as stored: `type.mro` computes it again
        for sealed in mro:
            if sealed in SEALED:
                shown = f"{SEALED[sealed]}.{base.__name__}" if SEALED[sealed] else f"'{base.__name__}'"
                raise TypeError(f"{shown} cannot be subclassed in the sandbox")
        for host in UNSUBCLASSABLE:
            if host in mro and not any(c in CHECKED_REPLACEMENTS for c in mro):
                raise TypeError(f"'{host.__name__}' cannot be subclassed in the sandbox")
        for cls in mro:
            if owns is not None and owns(cls) or cls in CHECKED_REPLACEMENTS:
                continue
            held = type.__getattribute__(cls, "__dict__")
            if not all(map(_foreign_hook_allowed, map(held.get, _ATTRIBUTE_HOOKS))):
                raise TypeError(f"'{type.__getattribute__(cls, '__name__')}' cannot be subclassed in the sandbox: "
                                "its code serves attribute access")
        base_meta = type(base)
        if issubclass(base_meta, meta):
            meta = base_meta
        elif not issubclass(meta, base_meta):
            raise TypeError("the bases of this class have conflicting metaclasses")
    return meta


def shared_code_names(bases: tuple[Any, ...], besides: Iterable[type] = ()) -> frozenset[str]:
    """The private names the code of the shared classes in `bases`' MROs (but `besides`) uses:
    state a host base's code trusts (`host_state_names`, for a class the factory does not
    build)."""
    names: frozenset[str] = frozenset()
    skipped = set(besides)
    for base in bases:
        for klass in type.__getattribute__(base, "__mro__"):
            if is_immutable(klass) and klass not in skipped:
                names = names | _host_code_names(klass)
    return names


def unjudged_methods(bases: tuple[Any, ...]) -> list[str]:
    """The comparisons, binary operators and exits a class with `bases` would inherit unjudged:
    what the class factory gives a forwarder (`crossing.judged_methods`). Host code that builds
    a class past the factory (enum's functional API) refuses bases that bring any, since such a
    method may hand what C code gives it to code the snippet controls (an `OrderedDict` mixin's
    `|` gave a member's `_missing_` a mappingproxy's own dictionary)."""
    return sorted(judged_methods(bases, {}, _has_prologue))


class _ClassFactory:
    """What RestrictedPython's class rewrite calls as `__metaclass__`.

    It finds the metaclass the bases imply (so `class Color(Enum)` and `class Row(TypedDict)`
    work), refuses new metaclasses (a base that is itself a metaclass), and records the class as
    snippet-owned.
    """

    __slots__ = ("_owned", "_token", "_host_state_names", "_code_names", "_owns_class", "_body_names", "_written",
                 "_unfinished")

    def __init__(self, owned: OwnedClasses, token: _BuildToken,
                 host_state_names: Callable[[type], frozenset[str]],
                 code_names: Callable[[type], frozenset[str]], owns_class: Callable[[type], bool]) -> None:
        self._owned = owned
        self._token = token
        self._host_state_names = host_state_names
        self._code_names = code_names
        #: `RunGuards.owns_class`: the run's, or being built by this factory.
        self._owns_class = owns_class
        #: The names each class this factory made defined in its body (by identity): what the
        #: snippet put there, not what a host metaclass or `__init_subclass__` added after.
        self._body_names: dict[int, tuple[type, frozenset[str]]] = {}
        #: The private names snippet code wrote onto each of the run's classes (by identity).
        self._written: dict[int, tuple[type, set[str]]] = {}
        #: Classes whose statement failed after CPython had made them (`_disown`).
        self._unfinished = OwnedClasses()

    def release(self) -> None:
        self._body_names.clear()
        self._written.clear()
        self._token.building.clear()

    def note_written(self, cls: type, name: str) -> None:
        """Snippet code writes the private `name` onto its own class `cls` (the write rules
        accepted it): from now on, `cls` defines it for the host-state check."""
        held = self._written.get(id(cls))
        if held is None or held[0] is not cls:
            held = self._written[id(cls)] = (cls, set())
        held[1].add(name)

    def _defined_names(self, cls: type) -> Any:
        """The names the snippet's class `cls` puts on its instances or holds itself: its body's
        (slots mangled), every private name snippet code wrote onto it since (`note_written`:
        `Free._node2info = ...` before a class with a host base inherited `Free`, from a review),
        and a dataclass's fields, which its generated `__init__` (host code) writes natively (a
        review's annotation-only `_node2info` field in a base with no host base of its own).
        Not what a host metaclass or a host `__init_subclass__` added (`typing.Protocol`'s
        flags): a protocol that inherits another must still be possible."""
        attrs = type.__getattribute__(cls, "__dict__")
        held = self._body_names.get(id(cls))
        names = held[1] if held is not None and held[0] is cls else frozenset(k for k in attrs if type(k) is str)
        written = self._written.get(id(cls))
        if written is not None and written[0] is cls:
            names = names | written[1]
        fields = attrs.get("__dataclass_fields__")
        if type(fields) is dict:
            names = names | {k for k in fields if type(k) is str}
        return names

    def __prepare__(self, name: str, bases: tuple[Any, ...], /, **kwds: Any) -> Any:
        check_class_keywords(kwds)
        meta = metaclass_for(bases, self._owns)
        if meta is type:
            return {}
        namespace = meta.__prepare__(name, bases, **kwds)
        if type(namespace) is not dict:
            # The metaclass's own mapping (enum's), which `__call__` cannot rebuild: the token
            # goes in before the body's names.
            namespace[_OWNER_KEY] = self._token
        return namespace

    def _owns(self, cls: type) -> bool:
        return cls in self._owned

    def __call__(self, name: str, bases: tuple[Any, ...], namespace: Any, /, **kwds: Any) -> type:
        check_class_keywords(kwds)
        for base in bases:
            if base in self._unfinished:
                raise TypeError(f"class {name!r} cannot have {base.__name__!r} as a base: its class statement failed")
        meta = metaclass_for(bases, self._owns)
        qualname = namespace.get("__qualname__")
        if isinstance(qualname, str) and qualname.startswith(_SNIPPET_LOCALS):
            # Classes live in the snippet's function; show them as a script would.
            namespace["__qualname__"] = qualname[len(_SNIPPET_LOCALS):]
        if "__slots__" in namespace:
            namespace["__slots__"] = _checked_slots(namespace["__slots__"])
        defined = _names_defined_by(name, namespace)
        holder: list[type] = []
        # C code held as a data-model method runs only in the run's steps (before the host-state
        # check, which wraps `__getattr__` in a guard of its own that calls what it holds).
        for key in STEPPED_METHODS.intersection(namespace):
            if not _snippet_code(namespace[key]):
                namespace[key] = stepping_method(key, namespace[key], holder)
        self._check_host_state(name, bases, namespace, defined)
        for key, forwarder in judged_methods(bases, namespace, _has_prologue, meta, holder).items():
            namespace[key] = forwarder
        if namespace.get("__await__") is not None:
            namespace["__await__"] = delegating_await(namespace["__await__"])
        namespace = self._token_first(name, namespace)
        building = self._token.building
        started = len(building)  # a statement inside this one's hooks records after it
        try:
            cls = meta(name, bases, namespace, **kwds)
        except BaseException:
            self._disown(building[started:])
            raise
        finally:
            del building[started:]
        type.__delattr__(cls, _OWNER_KEY)
        holder.append(cls)
        if isinstance(cls, abc.ABCMeta):
            type.__setattr__(cls, "__subclasshook__", stepping_subclasshook(cls))
        self._body_names[id(cls)] = (cls, defined)
        # What the metaclass put in after the body (`EnumType` adds methods): judged the same.
        for key, value in list(type.__getattribute__(cls, "__dict__").items()):
            if key in _ARGUMENT_JUDGED and not (is_forwarder(value) or _has_prologue(key, value)):
                type.__setattr__(cls, key, judging_method(key, value, cls))
        self._owned.add(cls)
        return cls

    def _token_first(self, name: str, namespace: Any) -> Any:
        """`namespace` with the run's token as its first entry, so its `__set_name__` comes
        before any the snippet's values have (`_BuildToken`)."""
        if type(namespace) is dict:
            namespace.pop(_OWNER_KEY, None)
            return {_OWNER_KEY: self._token, **namespace}
        if namespace.get(_OWNER_KEY) is not self._token:
            namespace[_OWNER_KEY] = self._token
        for key, value in namespace.items():  # the metaclass's own mapping, token from `__prepare__`
            if key == _OWNER_KEY:
                break
            if any("__set_name__" in type.__getattribute__(klass, "__dict__")
                   for klass in type.__dict__["__mro__"].__get__(type(value))):
                raise TypeError(f"class {name!r} cannot be made in the sandbox: its base puts {key!r}, "
                                "an object with __set_name__, before the class body")
        return namespace

    def _disown(self, made: list[type]) -> None:
        """A class statement failed after CPython had made the classes `made` (an
        `__init_subclass__` raised), which a `__set_name__` may have handed to the snippet: each
        stays in its bases' `__subclasses__()`. It is not the run's (no token: never a base,
        never owned), and an ABC's hook answers only inside the run's steps (a review's
        half-built protocol kept typing's raw `_proto_hook` in `Iterable`'s subclasses, which the
        host's own `isinstance` ran, outside the run)."""
        for cls in made:
            if type.__getattribute__(cls, "__dict__").get(_OWNER_KEY) is self._token:
                type.__delattr__(cls, _OWNER_KEY)
            self._unfinished.add(cls)
            if isinstance(cls, abc.ABCMeta):
                type.__setattr__(cls, "__subclasshook__", stepping_subclasshook(cls))

    def _trusted_by_others(self, order: list[type], klass: type, used: frozenset[str]) -> frozenset[str]:
        """The private names the host code in `order` other than `klass`'s own uses (all of
        `used` when `klass` is the run's: its code is not host code). A class host code made
        from the snippet's data (a `namedtuple`) defines the names its own code uses."""
        if self._owns_class(klass):
            return used
        found: frozenset[str] = frozenset()
        for other in order:
            if other is not klass and not self._owns_class(other):
                found = found | self._code_names(other)
        return found

    def _check_host_state(self, name: str, bases: tuple[Any, ...], namespace: Any, defined: frozenset[str]) -> None:
        """Neither the class body (`defined`: its names and `__slots__`) nor a snippet class it
        would inherit from defines a private name a host base's code uses: that code reads it
        natively and would trust the snippet's value (or property) as its own state
        (`graphlib`'s `get_ready` wrote onto the class a planted `_node2info` held, defined in
        the body and, in the next review, as a property of a snippet base listed first). A
        `__getattr__` it would have never answers those names."""
        used: frozenset[str] = frozenset()
        for base in bases:
            if isinstance(base, type):
                used = used | self._host_state_names(base)
        if not used:
            return
        clash = sorted(used.intersection(defined))
        if clash:
            raise TypeError(f"class {name!r} cannot define {clash[0]!r}: {HOST_STATE_CLASH}")
        order = _linearization(tuple(b for b in bases if isinstance(b, type)))
        for klass in order:
            # Every class but the shared ones, which no run changes: not only the run's own, also
            # one being built or one host code makes from the run's (`@dataclass(slots=True)`
            # builds a new class, whose body's `__set_name__` had a review's class with it and
            # `graphlib.TopologicalSorter` as bases accepted, before the shim called it owned).
            if not is_immutable(klass):
                clash = sorted(self._trusted_by_others(order, klass, used).intersection(self._defined_names(klass)))
                if clash:
                    raise TypeError(f"class {name!r} cannot have {klass.__name__!r} as a base, which defines "
                                    f"{clash[0]!r}: {HOST_STATE_CLASH}")
        hook = _inherited_getattr(order, namespace)
        if hook is not None:
            namespace["__getattr__"] = _host_state_getattr(hook, used)


#: Why a snippet class may not define a name (the class factory, `@dataclass`'s fields).
HOST_STATE_CLASH = "the code of a host base class uses that name as its own state"


def _names_defined_by(name: str, namespace: Any) -> frozenset[str]:
    """The names a class body defines: its keys and its `__slots__` (already checked), mangled
    with the class's `name` as CPython does (a slot `__chain_b` in a class named
    `SequenceMatcher` is `_SequenceMatcher__chain_b`)."""
    slots = namespace.get("__slots__", ())
    extra = {slots} if type(slots) is str else set(slots) if type(slots) is tuple else set()
    return frozenset({k for k in namespace if type(k) is str and k != _OWNER_KEY} | {mangle(slot, name) for slot in extra})


def _inherited_getattr(order: list[type], namespace: Any) -> Any:
    """The `__getattr__` a class with `namespace` and the inherited `order` would have: the
    body's, or the first in that order, unless a shared class holds it (a host base never has a
    Python one the factory accepts). A class the run does not own yet counts as the run's."""
    if "__getattr__" in namespace:
        return namespace["__getattr__"]
    for klass in order:
        held = type.__getattribute__(klass, "__dict__").get("__getattr__")
        if held is not None:
            return None if is_immutable(klass) else held
    return None


def _host_state_getattr(hook: Any, used: frozenset[str]) -> Callable[[Any, str], Any]:
    """The snippet's `__getattr__`, except for the private names a host base's code uses: that
    code's own reads of its state (`self._node2info` in `graphlib`, when the snippet's
    `__init__` skipped the base's) fall through to `__getattr__`, and must not get the snippet's
    answer."""
    if type(hook) is not types.FunctionType:
        raise TypeError("__getattr__ must be a plain function in a class with a stdlib base in the sandbox")

    def __getattr__(self: Any, name: str) -> Any:
        if name in used:
            raise _cpython_no_attribute(self, name)
        return hook(self, name)

    __getattr__.__qualname__ = hook.__qualname__
    return __getattr__


def _host_state_getattr_held(cls: type) -> bool:
    """`cls`'s dictionary holds a `_host_state_getattr` guard (which a write must not replace)."""
    held = type.__getattribute__(cls, "__dict__").get("__getattr__")
    return type(held) is types.FunctionType and held.__code__ is _GUARD_CODE


_GUARD_CODE = _host_state_getattr(lambda self, name: None, frozenset()).__code__
_ARGUMENT_JUDGED = OPERAND_METHODS | EXIT_METHODS
#: What the class factory wraps, so a later assignment would skip it: the judged methods, and
#: `__await__` (`crossing.delegating_await`).
_BODY_ONLY = _ARGUMENT_JUDGED | {"__await__"}


def _snippet_code(value: Any) -> bool:
    """`value`, held as a data-model method, is nothing or snippet code (which ticks, so it stops
    outside its run's steps by itself): no `stepping_method` around it."""
    if value is None or is_stepped(value):  # a forwarder too
        return True
    if type(value) in (staticmethod, classmethod):
        value = value.__func__
    return is_snippet_function(value)


def stored_value(guards: RunGuards, obj: Any, name: str, value: Any) -> Any:
    """What a checked write of `name` stores on `obj`: a plain copy of a name or doc (CPython
    formats a function's `__qualname__` into a generator's `repr()` with the value's own
    `__str__`, in the unraisable hook, outside the run), and C code given to one of the
    snippet's classes as a data-model method behind a `stepping_method`, as in a class body."""
    if name in _PLAIN_TEXT_DUNDERS and isinstance(value, str):
        return str.__str__(value)
    if name in STEPPED_METHODS and isinstance(obj, type) and guards.owns_class(obj) and not _snippet_code(value):
        return stepping_method(name, value, obj)
    return value


#: Dunders CPython keeps as text and formats later.
_PLAIN_TEXT_DUNDERS = frozenset({"__name__", "__qualname__", "__module__", "__doc__"})


def _has_prologue(name: str, value: Any) -> bool:
    """`value`, held under a comparison, binary operator or `__exit__` name, judges its argument
    itself: None (no method), or a `def` of such a name, which the policy gave its kind's
    prologue (`policy._judged_arguments`). Anything else gets a forwarder
    (`crossing.judged_methods`), a `classmethod` of such a `def` too: host code that calls
    `type(x).__lt__(x, other)` (`total_ordering`'s) would put the operand where its prologue
    does not look.

    Decided by what the code does, not by the names it mentions: it loads the hook as a global,
    which only the prologue can make it do (the policy refuses `_` names in source), whereas
    `self._operand_ = 0` alone puts the name among `co_names`."""
    if value is None:
        return True
    if not is_snippet_function(value):
        return False
    hooks = OPERAND_HOOKS if name in OPERAND_METHODS else EXIT_HOOKS
    code = value.__code__
    return bool(hooks.intersection(code.co_names)) and any(
        instruction.opname == "LOAD_GLOBAL" and instruction.argval in hooks for instruction in dis.get_instructions(code)
    )


def _checked_slots(slots: Any) -> Any:
    """`__slots__` names become attributes: no dunder but `__dict__`/`__weakref__`. The names are
    read once, and the class gets what was checked (a plain `str`, or a tuple of them): an
    iterable that answers differently the second time would otherwise slip `__getattr__` past
    the check into `type.__new__`."""
    if type(slots) is str:
        names: list[Any] = [slots]
    else:
        try:
            names = list(slots)
        except TypeError:
            return slots  # CPython's own TypeError follows in type.__new__
    for name in names:
        if type(name) is not str:
            raise TypeError("__slots__ items must be plain strings in the sandbox")
        if is_dunder(name) and name not in ("__dict__", "__weakref__"):
            raise TypeError(f"__slots__ name {name!r} is not allowed in the sandbox")
    return slots if type(slots) is str else tuple(names)


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


#: The builtins every run shares, read once: a run's `__builtins__` starts as a copy of them.
_SHARED_BUILTINS: Mapping[str, Any] = MappingProxyType(
    {name: getattr(_builtins, name) for name in SAFE_BUILTIN_NAMES + EXCEPTION_NAMES}
)

_RUN_BUILTIN_TOKEN = object()


class RunBuiltin(ReadOnly):
    """A builtin that needs the run (`print`, `id`, `getattr`, ...): the run's function in a
    private slot, shown and named as CPython's builtin of that name (`<built-in function
    print>`, and `print() argument after ** ...` in messages), never as the sandbox object it
    is bound to."""

    __slots__ = ("_fn", "_name")

    def __init__(self, *args: Any) -> None:
        if len(args) != 3 or args[0] is not _RUN_BUILTIN_TOKEN:
            raise TypeError("builtins cannot be created by a snippet")
        _, name, fn = args
        object.__setattr__(self, "_fn", fn)
        object.__setattr__(self, "_name", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # What CPython's messages read off a callable (`_PyObject_FunctionStr`).
        if name in ("__name__", "__qualname__"):
            return self._name
        raise AttributeError(f"'builtin_function_or_method' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"'builtin_function_or_method' object has no attribute '{name}'")

    def __repr__(self) -> str:
        return f"<built-in function {self._name}>"

    def __copy__(self) -> RunBuiltin:
        return self

    def __deepcopy__(self, memo: Any) -> RunBuiltin:
        return self

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"cannot pickle the sandbox's {self._name}()")


# Named as CPython names builtins: the module decides whether messages say `print()` or
# `sandbox.guards.RunBuiltin.print()`.
RunBuiltin.__module__ = "builtins"
RunBuiltin.__name__ = RunBuiltin.__qualname__ = "builtin_function_or_method"


def build_builtins(
    guards: RunGuards,
    *,
    print_fn: Callable[..., None],
    import_fn: Callable[..., Any],
    extra: Mapping[str, Any] = {},
    budget_iter: Callable[[Iterable[Any]], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The `__builtins__` dict of one run."""
    b = dict(_SHARED_BUILTINS)
    b.update(
        {
            "None": None,
            "True": True,
            "False": False,
            "NotImplemented": NotImplemented,
            "Ellipsis": Ellipsis,
            "type": guards.safe_type,
            "super": _RunSuper,
            "getattr": RunBuiltin(_RUN_BUILTIN_TOKEN, "getattr", guards.builtin_getattr),
            "hasattr": RunBuiltin(_RUN_BUILTIN_TOKEN, "hasattr", guards.builtin_hasattr),
            "setattr": RunBuiltin(_RUN_BUILTIN_TOKEN, "setattr", guards.builtin_setattr),
            "delattr": RunBuiltin(_RUN_BUILTIN_TOKEN, "delattr", guards.builtin_delattr),
            "vars": RunBuiltin(_RUN_BUILTIN_TOKEN, "vars", guards.vars),
            "id": RunBuiltin(_RUN_BUILTIN_TOKEN, "id", guards.id),
            "print": RunBuiltin(_RUN_BUILTIN_TOKEN, "print", print_fn),
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
        "_getattr_": guards.getattr,
        "_write_": guards.write,
        "_match_class_": guards.match_class,
        "_hostattr_": host_attr,
        "_operand_": judged_operand,
        "_operands_": judged_operands,
        "_no_traceback_": no_traceback,
        "_exit_args_": exit_arguments,
        "_yield_from_": yield_from,
        "_dunder_target_": guards.dunder_target,
    }
    g.update(hooks)
    return g
