"""`typing`: the names models use in hints. `get_type_hints` and `ForwardRef` are left out: they
`eval` strings."""

from __future__ import annotations

import typing
from typing import Any

from .base import pick

NAME = "typing"


def attrs() -> dict[str, Any]:
    return pick(
        typing,
        [
            "Any", "Optional", "Union", "List", "Dict", "Set", "FrozenSet", "Tuple", "Callable",
            "Iterable", "Iterator", "Sequence", "Mapping", "MutableMapping", "Literal",
            "TypedDict", "NamedTuple", "cast", "Final", "ClassVar", "TYPE_CHECKING", "Generic",
            "TypeVar", "Protocol", "Awaitable", "AsyncIterator", "NotRequired", "Required",
            "Self", "Annotated", "Coroutine", "Type", "DefaultDict", "Counter", "Deque",
            "OrderedDict", "AnyStr", "NoReturn", "Never",
        ],
    )
