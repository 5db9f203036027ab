"""The data model of the snippet's own classes, as Python runs it: `__subclasses__()`,
`TypedDict` key sets, enum's `_missing_`/`_generate_next_value_` hooks, `__init_subclass__` with
class keywords, `__class_getitem__` on its own generics, and CPython's qualified names. What
would reach host classes is refused with a sentence that names the alternative."""

from __future__ import annotations

import anyio
import pytest
from sandbox_helpers import run

import sandbox

CASES = {
    "subclasses": ("""
class Shape: pass
class Circle(Shape): pass
class Square(Shape): pass
class Tiny(Circle): pass
return [[c.__name__ for c in Shape.__subclasses__()], [c.__name__ for c in Circle.__subclasses__()],
        Tiny.__subclasses__(), [c.__name__ for c in getattr(Shape, "__subclasses__")()]]
""", [["Circle", "Square"], ["Tiny"], [], ["Circle", "Square"]]),
    "subclasses-registry-walk": ("""
class Plugin:
    name = "base"
class A(Plugin):
    name = "a"
class B(A):
    name = "b"
def walk(cls):
    for sub in cls.__subclasses__():
        yield sub.name
        yield from walk(sub)
return list(walk(Plugin))
""", ["a", "b"]),
    "subclasses-of-own-exception-dataclass-enum": ("""
import dataclasses, enum
class AppError(Exception): pass
class NotFound(AppError): pass
@dataclasses.dataclass
class Base:
    x: int = 0
@dataclasses.dataclass
class Child(Base):
    y: int = 1
class Kind(enum.Enum):
    pass
class Color(Kind):
    RED = 1
return [[c.__name__ for c in k.__subclasses__()] for k in (AppError, Base, Kind)]
""", [["NotFound"], ["Child"], ["Color"]]),
    "typeddict-keys": ("""
from typing import TypedDict, NotRequired, Required
class Movie(TypedDict):
    title: str
    year: NotRequired[int]
class Extra(Movie, total=False):
    rating: float
    id: Required[str]
return [sorted(Movie.__required_keys__), sorted(Movie.__optional_keys__),
        sorted(Extra.__required_keys__), sorted(Extra.__optional_keys__), Movie.__total__]
""", [["title"], ["year"], ["id", "title"], ["rating", "year"], True]),
    "enum-missing": ("""
import enum
class Status(enum.Enum):
    OPEN = "open"
    CLOSED = "closed"
    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            for member in cls:
                if member.value == value.lower():
                    return member
        return None
out = [Status("OPEN").name, Status("Closed").name]
try:
    Status(3)
except ValueError as e:
    out.append(str(e))
return out
""", ["OPEN", "CLOSED", "3 is not a valid Status"]),
    "enum-generate-next-value": ("""
import enum
class Level(enum.StrEnum):
    @staticmethod
    def _generate_next_value_(name, start, count, last_values):
        return f"{name.lower()}-{count}"
    LOW = enum.auto()
    HIGH = enum.auto()
class Num(enum.Enum):
    def _generate_next_value_(name, start, count, last_values):
        return (last_values[-1] * 10) if last_values else start
    A = enum.auto()
    B = enum.auto()
    C = enum.auto()
return [Level.LOW.value, Level.HIGH.value, [m.value for m in Num]]
""", ["low-0", "high-1", [1, 10, 100]]),
    # `_name_` and `_value_` are an enum member's own state, as the enum docs describe: a member's
    # `__init__` may set `_value_` and its methods read both.
    "enum-member-state": ("""
import enum
class Planet(enum.Enum):
    MERCURY = (3.303e+23, 2.4397e6)
    EARTH = (5.976e+24, 6.37814e6)
    def __init__(self, mass, radius):
        self.mass = mass
        self._value_ = radius
    def describe(self):
        return f"{self._name_}={self._value_}"
return [Planet.EARTH.mass, Planet.EARTH.describe(), Planet.MERCURY.value]
""", [5.976e+24, "EARTH=6378140.0", 2439700.0]),
    "init-subclass-keywords": ("""
class Base:
    registry = {}
    def __init_subclass__(cls, /, kind="plain", *, tags=(), **kwargs):
        super().__init_subclass__(**kwargs)
        cls.kind = kind
        cls.tags = list(tags)
        Base.registry[cls.__name__] = kind
class A(Base, kind="fancy", tags=("x",)):
    pass
class B(Base):
    pass
class C(A, kind="deep"):
    pass
return [A.kind, A.tags, B.kind, C.kind, Base.registry]
""", ["fancy", ["x"], "plain", "deep", {"A": "fancy", "B": "plain", "C": "deep"}]),
    "init-subclass-unknown-keyword": ("""
class Base:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
try:
    class A(Base, colour="red"):
        pass
except TypeError as e:
    return str(e)
""", "A.__init_subclass__() takes no keyword arguments"),
    "class-getitem": ("""
class Box:
    def __class_getitem__(cls, item):
        return f"{cls.__name__}[{getattr(item, '__name__', item)}]"
class Pair:
    def __class_getitem__(cls, params):
        return [cls.__name__, [p.__name__ for p in params]]
return [Box[int], Pair[str, float]]
""", ["Box[int]", ["Pair", ["str", "float"]]]),
    "own-generics": ("""
from typing import Generic, TypeVar
T = TypeVar("T")
class Stack(Generic[T]):
    def __init__(self):
        self.items: list[T] = []
    def push(self, x: T) -> None:
        self.items.append(x)
class IntStack(Stack[int]):
    pass
s = Stack[int]()
s.push(1)
alias = Stack[str]
return [s.items, alias.__origin__ is Stack, [a.__name__ for a in alias.__args__],
        [c.__name__ for c in Stack.__subclasses__()]]
""", [[1], True, ["str"], ["IntStack"]]),
    "qualnames": ("""
class Row:
    class Cell:
        def show(self): pass
    def total(self):
        def helper(): pass
        return helper
def top(): pass
async def work(): pass
c = work()
coro = repr(c).split(" at ")[0]
await c
return [top.__qualname__, Row.__qualname__, Row.Cell.show.__qualname__, Row.total.__qualname__,
        Row().total().__qualname__, (lambda: 0).__qualname__, repr(top).split(" at ")[0], coro]
""", ["top", "Row", "Row.Cell.show", "Row.total", "Row.total.<locals>.helper", "<lambda>",
      "<function top", "<coroutine object work"]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_own_class_data_model(name: str, backend: str) -> None:
    code, value = CASES[name]
    result = run(code, backend)
    assert result.error is None, result.error
    assert result.value == value


@pytest.mark.parametrize(
    ("code", "first_line"),
    [
        pytest.param("def fetch(url, *, retries): pass\nfetch('u')",
                     "TypeError: fetch() missing 1 required keyword-only argument: 'retries'", id="function"),
        pytest.param("class Client:\n    def get(self, path): pass\nClient().get()",
                     "TypeError: Client.get() missing 1 required positional argument: 'path'", id="method"),
        pytest.param("def outer():\n    def inner(x): pass\n    inner(1, 2)\nouter()",
                     "TypeError: outer.<locals>.inner() takes 1 positional argument but 2 were given", id="nested"),
    ],
)
def test_messages_name_functions_as_cpython_does(code: str, first_line: str, backend: str) -> None:
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.splitlines()[0] == first_line


def test_an_enum_missing_hook_that_returns_a_non_member_is_a_python_error(backend: str) -> None:
    code = ("import enum\nclass E(enum.Enum):\n    A = 1\n    @classmethod\n    def _missing_(cls, value):\n"
            "        return 'not a member'\nE(2)")
    result = run(code, backend)
    assert result.error is not None and result.error.kind == "exception"
    assert result.error.message.splitlines()[0] == (
        "TypeError: error in E._missing_: returned 'not a member' instead of None or a valid member")


@pytest.mark.parametrize(
    ("code", "message"),
    [
        pytest.param("_missing_ = 1", 'line 1: name "_missing_" is not allowed: names that start and end with "_" are reserved',
                     id="hook-name-outside-a-class"),
        pytest.param("def _generate_next_value_():\n    pass",
                     'line 1: name "_generate_next_value_" is not allowed: names that start and end with "_" are reserved',
                     id="hook-function-outside-a-class"),
        pytest.param("class A:\n    def _other_(self):\n        pass",
                     'line 2: name "_other_" is not allowed: names that start and end with "_" are reserved',
                     id="other-reserved-method"),
    ],
)
def test_only_the_enum_hooks_are_definable_reserved_names(code: str, message: str) -> None:
    result = run(code)
    assert result.error is not None and result.error.kind == "syntax"
    assert result.error.message == message


def test_the_data_model_and_except_star_in_a_session(backend: str) -> None:
    # A session's globals persist: classes from one run are the snippet's own in the next.
    first_code = ("class Base:\n    def __init_subclass__(cls, /, tag='-', **kw):\n"
                  "        super().__init_subclass__(**kw)\n        cls.tag = tag\n"
                  "class A(Base, tag='a'):\n    pass\n"
                  "def need(x: type[int]):\n    pass")
    second_code = ("class B(Base, tag='b'):\n    pass\nout = [[c.tag for c in Base.__subclasses__()]]\n"
                   "try:\n    raise ExceptionGroup('g', [KeyError('k'), ValueError(1)])\nexcept* KeyError as e:\n"
                   "    out.append(len(e.exceptions))\nexcept* ValueError:\n    out.append('v')\n"
                   "try:\n    need()\nexcept TypeError as e:\n    out.append(str(e))\nreturn out")

    async def go() -> list[sandbox.RunResult]:
        async with sandbox.open_session(backend) as session:
            limits = sandbox.Limits(wall_time=30, cpu_time=30)
            return [await session.run(first_code, limits=limits), await session.run(second_code, limits=limits)]

    first, second = anyio.run(go)
    assert first.error is None and second.error is None, (first, second)
    assert second.value == [["a", "b"], 1, "v", "need() missing 1 required positional argument: 'x'"]
