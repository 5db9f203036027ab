"""`copy`: `copy`, `deepcopy` and `Error`, after a check of what the copy will touch.

`copy` looks hooks up on instances and classes and drives `setattr` with whatever names their
results give, on whatever object a reduce callable returns: objects whose instance dictionaries
hold those hooks, or whose classes hold a hook that no class statement defined (a class built
from data), are refused. `deepcopy` accepts no `memo` of the caller's (a memo decides what every
copy is) but the opaque token a snippet's `__deepcopy__` gets for it (`guards.MemoToken`).
"""

from __future__ import annotations

import collections
import copy
import types
from typing import Any

from ..guards import DeepcopyHook, DeepcopyMemo, is_snippet_function, memo_of
from .base import ModuleShim

NAME = "copy"


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

#: Hooks whose result is the copy itself, so a snippet-defined one is trusted.
_RESULT_ONLY_HOOKS = frozenset({"__copy__", "__deepcopy__"})

#: Objects a copy check walks before giving up (a copy that large is not a snippet's business).
_MAX_COPY_WALK = 200_000


def _trusted_hook(cls: type, name: str, value: Any) -> bool:
    """A copy hook defined by host code: a Python function compiled from a host file, or the
    class's own C method. Anything else in a class dictionary (a snippet function, a bound
    method, a partial) came from data: a class-building API that took names as data, such as
    an enum functional API."""
    if value is None:
        return True  # `__copy__ = None` switches a hook off
    if isinstance(value, DeepcopyHook):
        return name == "__deepcopy__"  # a class statement's own, called with the memo hidden
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, types.FunctionType):
        # `__copy__`/`__deepcopy__` only hand their result back to the caller (no `setattr`
        # follows), so the snippet's own are fine; the reduce family's results drive `setattr`.
        # A prelude's function is the run's own code too (`is_snippet_function`).
        return not is_snippet_function(value) or name in _RESULT_ONLY_HOOKS
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


def copy_problem(obj: Any, deep: bool) -> None:
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
    copy_problem(x, deep=False)
    return copy.copy(x)


def _checked_deepcopy(x: Any, memo: Any = None) -> Any:
    # A memo decides what each object's copy is (and keeps the originals): the only one
    # accepted is the token a snippet's `__deepcopy__` was given, which continues that copy.
    real = DeepcopyMemo() if memo is None else memo_of(memo)
    copy_problem(x, deep=True)
    return copy.deepcopy(x, real)


def attrs() -> dict[str, Any]:
    return {"copy": _checked_copy, "deepcopy": _checked_deepcopy, "Error": copy.Error}
