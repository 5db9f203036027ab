"""`enum`: memberless subclasses of the enum bases with a checking metaclass, `auto` and `unique`.

The functional API (`Enum("Color", {...})`) builds a class from data, outside the
class-statement checks, so member names starting with "_" (which would define dunders such as
`__reduce_ex__`) are refused, and a mixin given as `type=` passes the checks every base of a
snippet class passes (`guards.metaclass_for`: a review mixed in `dataclasses.Field` this way,
which no class statement may subclass, and `@dataclass` pasted the subclass's `name` into
source it executes), and brings no operator the class factory would have judged
(`guards.unjudged_methods`: an `OrderedDict` mixin's `|` handed a mappingproxy's dictionary to
the enum's `_missing_`), nor, with the enum it is given to, a shared class but the enums whose code uses private names
(the class factory's host-state check never sees the new combination of bases: a review's enum
base held properties named for `graphlib.TopologicalSorter`'s state, and `get_ready` wrote onto
`statistics.mean`; a later one had the sorter in the enum and the properties in the mixin);
a class statement takes such a mixin. `cls.mro()` hides the real memberless bases (see the guards).
"""

from __future__ import annotations

import enum
from typing import Any

from ..guards import metaclass_for, shared_code_names, unjudged_methods
from .base import pick

NAME = "enum"


class _EnumType(enum.EnumType):
    """The metaclass of the snippet's enum classes (see the module docstring)."""

    def __call__(cls, value: Any, names: Any = None, *args: Any, **kwargs: Any) -> Any:
        if names is not None:
            names = _plain_members(names)
            mixin = kwargs.get("type")
            if mixin is not None:
                metaclass_for((mixin, cls))
                enums = [k for k in type.__getattribute__(cls, "__mro__") if isinstance(k, enum.EnumType)]
                if unjudged_methods((mixin,)) or shared_code_names((mixin, cls), enums):
                    raise TypeError(f"an enum with the mixin '{mixin.__name__}' needs a class statement in the sandbox")
            for key in ("module", "qualname"):
                if kwargs.get(key) is not None and type(kwargs[key]) is not str:
                    raise TypeError(f"enum {key} must be a plain string in the sandbox")
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
    classes: dict[str, Any] = {}
    for base in (enum.Enum, enum.IntEnum, enum.StrEnum, enum.Flag, enum.IntFlag):
        classes[base.__name__] = _EnumType(base.__name__, (base,), enum.EnumType.__prepare__(base.__name__, (base,)))
    return classes


def attrs() -> dict[str, Any]:
    return {**_safe_enum_classes(), **pick(enum, ["auto", "unique"])}
