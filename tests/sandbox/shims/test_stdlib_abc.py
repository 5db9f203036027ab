"""`abc` and `typing.runtime_checkable` in the sandbox: abstract classes refuse instantiation as
CPython does, `abstractmethod` marks only the snippet's own functions, and runtime protocols
check structurally, on both backends."""

from __future__ import annotations

from sandbox_helpers import run

ABC_CODE = """
from abc import ABC, abstractmethod
out = []
class Store(ABC):
    @abstractmethod
    def get(self, key): ...
    @property
    @abstractmethod
    def name(self): ...
    @classmethod
    @abstractmethod
    def make(cls): ...
    def describe(self):
        return f"{self.name}: {self.get('a')}"
for cls in (Store,):
    try:
        cls()
    except TypeError as e:
        out.append(str(e))
class Half(Store):
    def get(self, key):
        return key.upper()
try:
    Half()
except TypeError as e:
    out.append(str(e))
class Mem(Half):
    name = "mem"
    @classmethod
    def make(cls):
        return cls()
m = Mem.make()
out.append(m.describe())
out.append([isinstance(m, Store), issubclass(Mem, ABC), isinstance(1, Store)])
for bad in (print, len, 1):
    try:
        abstractmethod(bad)
    except TypeError as e:
        out.append(str(e))
return out
"""


def test_abstract_classes_behave_as_in_cpython(backend: str) -> None:
    result = run(ABC_CODE, backend)
    assert result.error is None, result.error
    assert result.value == [
        "Can't instantiate abstract class Store with abstract methods get, make, name",
        "Can't instantiate abstract class Half with abstract methods make, name",
        "mem: A",
        [True, True, False],
        *["abstractmethod() only applies to the snippet's own functions"] * 3,
    ]


RUNTIME_CHECKABLE_CODE = """
import typing
from typing import Protocol, runtime_checkable
@runtime_checkable
class Closer(Protocol):
    def close(self): ...
class Plain(Protocol):
    def close(self): ...
class File:
    def close(self):
        pass
out = [isinstance(File(), Closer), isinstance(1, Closer), issubclass(File, Closer)]
try:
    isinstance(File(), Plain)
except TypeError as e:
    out.append("not runtime")
for host in (typing.Protocol, typing.Mapping, int):
    try:
        runtime_checkable(host)
    except TypeError as e:
        out.append(str(e))
try:
    @runtime_checkable
    class NotAProtocol:
        pass
except TypeError as e:
    out.append(str(e).split(",")[0])
return out
"""


def test_runtime_checkable_protocols_of_the_snippets_own(backend: str) -> None:
    result = run(RUNTIME_CHECKABLE_CODE, backend)
    assert result.error is None, result.error
    assert result.value == [
        True, False, True, "not runtime",
        *["runtime_checkable only applies to classes defined in the snippet"] * 3,
        "@runtime_checkable can be only applied to protocol classes",
    ]
