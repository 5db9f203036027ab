"""The small typed tree the SDK text is rendered from.

The schema converter builds these nodes and `render` turns them into text in one place, so
wording and layout never depend on how a schema was spelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .names import is_keyword_name

__all__ = [
    "ANY",
    "ArgsDecl",
    "ClassDecl",
    "DictT",
    "Field",
    "ListT",
    "Lit",
    "MethodDecl",
    "Param",
    "Prim",
    "Ref",
    "TupleT",
    "TypeNode",
    "UnionT",
    "ordered_refs",
    "refs_of",
    "rename_refs",
    "union",
]


@dataclass(frozen=True, slots=True)
class Prim:
    """A builtin type by name: `str`, `int`, `float`, `bool`, `None` or `Any`."""

    name: str


ANY = Prim("Any")


@dataclass(frozen=True, slots=True)
class Lit:
    """`Literal[...]` over JSON scalars (str, int, bool, None)."""

    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class UnionT:
    members: tuple[TypeNode, ...]


@dataclass(frozen=True, slots=True)
class ListT:
    item: TypeNode


@dataclass(frozen=True, slots=True)
class TupleT:
    items: tuple[TypeNode, ...]


@dataclass(frozen=True, slots=True)
class DictT:
    value: TypeNode


@dataclass(frozen=True, slots=True)
class Ref:
    """A named class declared elsewhere in the SDK text."""

    name: str


TypeNode = Prim | Lit | UnionT | ListT | TupleT | DictT | Ref


def _lit_key(value: Any) -> tuple[str, Any]:
    return (type(value).__name__, value)


def union(members: list[TypeNode] | tuple[TypeNode, ...]) -> TypeNode:
    """Flatten, de-duplicate and merge literals; `Any` absorbs everything, `None` goes last."""
    flat: list[TypeNode] = []
    for member in members:
        flat.extend(member.members if isinstance(member, UnionT) else (member,))
    if any(m == ANY for m in flat):
        return ANY
    out: list[TypeNode] = []
    literals: list[Any] = []
    seen_lits: set[tuple[str, Any]] = set()
    lit_at = -1
    for member in flat:
        if isinstance(member, Lit):
            if lit_at < 0:
                lit_at = len(out)
                out.append(member)
            for value in member.values:
                if _lit_key(value) not in seen_lits:
                    seen_lits.add(_lit_key(value))
                    literals.append(value)
        elif member not in out:
            out.append(member)
    if lit_at >= 0:
        out[lit_at] = Lit(tuple(literals))
    none = Prim("None")
    if none in out:
        out.remove(none)
        out.append(none)
    if len(out) == 1:
        return out[0]
    return UnionT(tuple(out))


def ordered_refs(node: TypeNode) -> list[str]:
    """Class names a type mentions, in reading order, without repeats."""
    if isinstance(node, Ref):
        return [node.name]
    parts: tuple[TypeNode, ...] = ()
    if isinstance(node, UnionT):
        parts = node.members
    elif isinstance(node, TupleT):
        parts = node.items
    elif isinstance(node, ListT):
        parts = (node.item,)
    elif isinstance(node, DictT):
        parts = (node.value,)
    return list(dict.fromkeys(name for part in parts for name in ordered_refs(part)))


def rename_refs(node: TypeNode, names: Mapping[str, str]) -> TypeNode:
    """The same type with class references renamed (used when merging duplicate classes)."""
    if isinstance(node, Ref):
        return Ref(names.get(node.name, node.name))
    if isinstance(node, UnionT):
        return UnionT(tuple(rename_refs(m, names) for m in node.members))
    if isinstance(node, TupleT):
        return TupleT(tuple(rename_refs(m, names) for m in node.items))
    if isinstance(node, ListT):
        return ListT(rename_refs(node.item, names))
    if isinstance(node, DictT):
        return DictT(rename_refs(node.value, names))
    return node


def refs_of(node: TypeNode) -> set[str]:
    """Class names a type mentions directly."""
    if isinstance(node, Ref):
        return {node.name}
    if isinstance(node, UnionT | TupleT):
        parts = node.members if isinstance(node, UnionT) else node.items
        return set().union(*(refs_of(p) for p in parts)) if parts else set()
    if isinstance(node, ListT):
        return refs_of(node.item)
    if isinstance(node, DictT):
        return refs_of(node.value)
    return set()


@dataclass(frozen=True, slots=True)
class Field:
    """One key of an object: its type, whether required, and its doc line (may be empty)."""

    key: str
    type: TypeNode
    required: bool
    doc: str = ""


@dataclass(frozen=True, slots=True)
class ClassDecl:
    """A `TypedDict`; functional syntax when a key is not a Python name."""

    name: str
    fields: tuple[Field, ...]
    doc: str = ""
    #: False for a method's argument dict, whose field docs are in the method docstring.
    field_notes: bool = True

    @property
    def functional(self) -> bool:
        return not all(is_keyword_name(f.key) for f in self.fields)

    def refs(self) -> set[str]:
        return set().union(*(refs_of(f.type) for f in self.fields)) if self.fields else set()


@dataclass(frozen=True, slots=True)
class Param:
    """A keyword-only parameter; `default` is Python source text or None for `= None`."""

    name: str
    type: TypeNode
    required: bool
    default: str | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class ArgsDecl:
    """The one-dict argument form, used when some argument name is not a Python name."""

    decl: ClassDecl


@dataclass(frozen=True, slots=True)
class MethodDecl:
    """One tool as a method of the `Tools` protocol."""

    method: str
    wire: str
    description: str
    params: tuple[Param, ...] = ()
    args: ArgsDecl | None = None
    extra: TypeNode | None = None
    extra_name: str = "kwargs"
    returns: TypeNode = ANY
    classes: tuple[str, ...] = field(default=())

    def refs(self) -> set[str]:
        names: set[str] = set()
        for param in self.params:
            names |= refs_of(param.type)
        if self.args is not None:
            names |= {self.args.decl.name}
        if self.extra is not None:
            names |= refs_of(self.extra)
        return names | refs_of(self.returns)
