"""JSON Schema to typed tree: one converter per tool, total by construction.

Every schema part the converter can't represent (remote refs, cycles through non-objects,
`false`, garbage types, huge enums, too deep or too big) becomes `Any` for that part only and
marks the tool inexact. A tool whose conversion fails anyway is degraded whole by the caller.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from collections.abc import Mapping
from typing import Any

from .names import is_keyword_name
from .tree import (
    ANY,
    ArgsDecl,
    ClassDecl,
    DictT,
    Field,
    ListT,
    Lit,
    MethodDecl,
    Param,
    Prim,
    Ref,
    TupleT,
    TypeNode,
    union,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_ENUM",
    "MAX_NODES",
    "RESERVED_CLASS_NAMES",
    "ClassTable",
    "ToolConverter",
    "degraded_method",
]

#: Nesting deeper than this renders as `Any`; real tool schemas stay far below it.
MAX_DEPTH = 12
#: Enums longer than this render as their base type (with the count in the docstring).
MAX_ENUM = 40
#: Schema nodes visited per tool before the rest degrades to `Any` (bounds time and text size).
MAX_NODES = 4000
#: Longest default value shown in a signature; longer ones become `= None` plus a doc note.
MAX_DEFAULT = 60

_BASE_TYPES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "null": "None",
}
RESERVED_CLASS_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist) | {
    "Any", "Literal", "NotRequired", "Protocol", "TypedDict", "Tools", "ToolCallError", "asyncio",
}  # fmt: skip
_WORD = re.compile(r"[A-Za-z0-9]+")
#: Qualifiers for a class name every better candidate of which is taken.
_SPARE_WORDS = ("Other", "Alt", "Extra", "More")
_ORDINALS = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth")


def pascal(text: object, fallback: str = "Model") -> str:
    """ASCII PascalCase for class names; keeps inner capitals (`userID` -> `UserID`)."""
    words = _WORD.findall(str(text))
    name = "".join(w[0].upper() + w[1:] for w in words) or fallback
    return "T" + name if name[0].isdigit() else name


def one_line(text: object) -> str:
    """Collapse whitespace: per-field docs are a single line."""
    return " ".join(str(text).split()) if isinstance(text, str) else ""


def py_literal(value: Any, depth: int = 0) -> str | None:
    """Python source for a JSON value, or None when it has none (NaN, objects, too deep)."""
    if depth > 4:
        return None
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        return repr(value) if abs(value) < 10**30 else None
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, list):
        items = [py_literal(v, depth + 1) for v in value]
        return None if None in items else "[" + ", ".join(items) + "]"  # type: ignore[arg-type]
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            src = py_literal(item, depth + 1)
            if not isinstance(key, str) or src is None:
                return None
            parts.append(f"{key!r}: {src}")
        return "{" + ", ".join(parts) + "}"
    return None


_NOTES = (
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "min length {}"),
    ("maxLength", "max length {}"),
    ("minItems", "min items {}"),
    ("maxItems", "max items {}"),
    ("minProperties", "min keys {}"),
    ("maxProperties", "max keys {}"),
)


def constraint_note(schema: Mapping[str, Any]) -> str:
    """Constraints the type can't carry, as a short phrase for the docstring."""
    parts = []
    for key, template in _NOTES:
        value = schema.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            parts.append(template.format(value))
    for key in ("format", "pattern"):
        value = schema.get(key)
        if isinstance(value, str) and value and len(value) <= 200:
            parts.append(f"{key} {one_line(value)}")
    if schema.get("uniqueItems") is True:
        parts.append("unique items")
    return "; ".join(parts)


def field_doc(schema: Any, extra: str = "") -> str:
    """One doc line for a field: its description, then constraints in parentheses."""
    if not isinstance(schema, Mapping):
        return extra
    text = one_line(schema.get("description", ""))
    notes = "; ".join(n for n in (constraint_note(schema), extra) if n)
    if notes:
        text = f"{text} ({notes})" if text else f"({notes})"
    return text


def resolve_pointer(root: Any, ref: str) -> tuple[bool, Any]:
    """Follow a local `#/...` JSON pointer; (False, None) when it doesn't resolve."""
    if not ref.startswith("#"):
        return False, None
    pointer = ref[1:]
    node = root
    if not pointer:
        return True, node
    if not pointer.startswith("/"):
        return False, None
    from urllib.parse import unquote

    for raw in pointer[1:].split("/"):
        part = unquote(raw).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def object_schema_at_root(params: Any) -> Mapping[str, Any] | None:
    """`params` after following a chain of root `$ref`s (at most 8), if it is an object-typed
    schema; else None. Shared by SDK generation and the pre-flight check."""
    schema = params
    for _ in range(8):
        if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
            schema = resolve_pointer(params, schema["$ref"])[1]
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return None
    return schema


def _is_plain_object(schema: Any) -> bool:
    """An object schema that can be a TypedDict as a whole (no combinators beside it)."""
    return (
        isinstance(schema, Mapping)
        and schema.get("type", "object") == "object"
        and isinstance(schema.get("properties"), Mapping)
        and bool(schema["properties"])
        and not any(k in schema for k in ("$ref", "anyOf", "oneOf", "allOf", "enum", "const"))
    )


class ClassTable:
    """All TypedDict declarations of one SDK, with unique names across tools."""

    def __init__(self, reserved: frozenset[str] = frozenset()) -> None:
        self.decls: dict[str, ClassDecl] = {}
        self.reserved = RESERVED_CLASS_NAMES | reserved
        #: class name -> (method, the rest of the name) for classes named after their tool
        #: (`FsReadFileResult` is `fs__read_file`'s `Result`): a structure several tools share
        #: gets a neutral name instead of the first tool's.
        self.owned: dict[str, tuple[str, str]] = {}

    def taken(self, name: str) -> bool:
        return name in self.decls or name in self.reserved


class ToolConverter:
    """Converts one tool's parameter and output schemas; commits classes only on success."""

    def __init__(self, table: ClassTable, owner: str) -> None:
        self.table = table
        self.owner = owner
        self.exact = True
        self.new: dict[str, ClassDecl | None] = {}
        self._nodes = 0
        self._root: Any = None
        self._ref_names: dict[tuple[int, str], str] = {}
        self._ref_active: set[tuple[int, str]] = set()
        self._context = ""  # the class whose fields are being converted
        self.method_name = ""

    # -- naming ---------------------------------------------------------------
    def _allocate(self, preferred: str, context: str = "") -> str:
        """A free class name: ``preferred``, else qualified by the class it sits in, else by
        the tool. Never a numbered suffix (``ContentItem2`` tells a model nothing)."""

        def free(name: str) -> bool:
            return not self.table.taken(name) and name not in self.new

        candidates = [preferred]
        if context and not preferred.startswith(context):
            candidates.append(context + preferred)
        if not preferred.startswith(self.owner):
            candidates.append(self.owner + preferred)
        candidates.extend(candidates[-1] + word for word in _SPARE_WORDS)
        base = candidates[-1]
        while not free(candidates[-1]):  # only a hostile schema gets this far
            candidates.append(candidates[-1] + base)
        name = next(c for c in candidates if free(c))
        self.new[name] = None
        return name

    def _degrade(self) -> TypeNode:
        self.exact = False
        return ANY

    # -- schemas --------------------------------------------------------------
    def convert(self, schema: Any, hint: str, depth: int = 0) -> TypeNode:
        """Type for a schema; `hint` names any class it needs."""
        self._nodes += 1
        if depth > MAX_DEPTH or self._nodes > MAX_NODES:
            return self._degrade()
        if schema is True:
            return ANY
        if not isinstance(schema, Mapping):
            return self._degrade()
        if not schema:
            return ANY
        node = self._convert(schema, hint, depth)
        if schema.get("nullable") is True:
            node = union([node, Prim("None")])
        return node

    def _convert(self, schema: Mapping[str, Any], hint: str, depth: int) -> TypeNode:
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self._ref(ref, depth)
        if "const" in schema:
            return self._enum([schema["const"]], schema)
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self._enum(schema["enum"], schema)
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                hints = variant_hints(options, hint)
                return union([self.convert(o, h, depth + 1) for o, h in zip(options, hints, strict=True)])
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self._all_of(schema, hint, depth)
        kind = schema.get("type")
        if isinstance(kind, list) and kind and all(isinstance(k, str) for k in kind):
            return union([self._typed(schema, k, hint, depth) for k in dict.fromkeys(kind)])
        if isinstance(kind, str):
            return self._typed(schema, kind, hint, depth)
        if kind is None:
            if isinstance(schema.get("properties"), Mapping) or "additionalProperties" in schema:
                self.exact = False  # untyped but object-shaped: treated as an object
                return self._object(schema, hint, depth)
            return ANY
        return self._degrade()

    def _typed(self, schema: Mapping[str, Any], kind: str, hint: str, depth: int) -> TypeNode:
        if kind in _BASE_TYPES:
            return Prim(_BASE_TYPES[kind])
        if kind == "array":
            return self._array(schema, hint, depth)
        if kind == "object":
            return self._object(schema, hint, depth)
        return self._degrade()

    def _enum(self, values: list[Any], schema: Mapping[str, Any]) -> TypeNode:
        if len(values) > MAX_ENUM:
            self.exact = False
            kinds = {type(v) for v in values}
            simple = {str: "str", int: "int", bool: "bool", float: "float", type(None): "None"}
            if kinds <= set(simple):
                return union([Prim(simple[k]) for k in sorted(kinds, key=lambda k: simple[k])])
            return ANY
        members: list[TypeNode] = []
        for value in values:
            if (
                value is None
                or isinstance(value, str | bool)
                or (isinstance(value, int) and abs(value) < 10**30)
            ):
                members.append(Lit((value,)))
            elif isinstance(value, float):
                self.exact = False
                members.append(Prim("float"))
            elif isinstance(value, list):
                self.exact = False
                members.append(ListT(ANY))
            elif isinstance(value, Mapping):
                self.exact = False
                members.append(DictT(ANY))
            else:
                return self._degrade()
        return union(members)

    def _ref(self, ref: str, depth: int) -> TypeNode:
        found, target = resolve_pointer(self._root, ref)
        if not found:
            return self._degrade()
        key = (id(self._root), ref)
        if key in self._ref_names:
            return Ref(self._ref_names[key])
        last = ref.rstrip("/").rsplit("/", 1)[-1] if "/" in ref else self.owner
        if _is_plain_object(target):
            title = target.get("title")
            name = self._allocate(pascal(title if isinstance(title, str) and title else last))
            self._ref_names[key] = name
            return self._object(target, name, depth + 1, name=name)
        if key in self._ref_active:
            return self._degrade()
        self._ref_active.add(key)
        try:
            return self.convert(target, pascal(last), depth + 1)
        finally:
            self._ref_active.discard(key)

    def _all_of(self, schema: Mapping[str, Any], hint: str, depth: int) -> TypeNode:
        """Merge object members into one TypedDict; otherwise any single member is sound."""
        self.exact = False
        merged = self._merge_all_of(schema["allOf"])
        if merged is not None:
            return self._object(merged, hint, depth)
        return self.convert(schema["allOf"][0], hint, depth + 1)

    def _array(self, schema: Mapping[str, Any], hint: str, depth: int) -> TypeNode:
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4-2019 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        if isinstance(prefix, list) and prefix:
            types = [self.convert(p, f"{hint}{_ordinal(i)}Item", depth + 1) for i, p in enumerate(prefix)]
            min_items = schema.get("minItems", 0)
            if items is False and isinstance(min_items, int) and min_items >= len(types):
                return TupleT(tuple(types))
            self.exact = False
            if items is not False:
                types.append(self.convert(items, f"{hint}Item", depth + 1))
            return ListT(union(types))
        if items is False:
            return ListT(ANY)
        return ListT(self.convert(items, f"{hint}Item", depth + 1))

    def _object(
        self, schema: Mapping[str, Any], hint: str, depth: int, name: str | None = None
    ) -> TypeNode:
        props = schema.get("properties")
        if not isinstance(props, Mapping) or not props:
            extra = schema.get("additionalProperties", True)
            if isinstance(schema.get("patternProperties"), Mapping) or extra is True:
                return DictT(ANY)
            if extra is False:
                return DictT(ANY)  # an empty object; `dict` keeps the shape readable
            return DictT(self.convert(extra, f"{hint}Value", depth + 1))
        if name is None:
            title = schema.get("title")
            name = self._allocate(pascal(title) if isinstance(title, str) and title else hint, self._context)
        outer, self._context = self._context, name
        try:
            fields = self.fields(schema, name, depth)
        finally:
            self._context = outer
        self.new[name] = ClassDecl(name, tuple(fields), one_line(schema.get("description", "")))
        return Ref(name)

    def fields(self, schema: Mapping[str, Any], owner: str, depth: int) -> list[Field]:
        """Fields of an object schema, required first, each in schema order."""
        props = schema.get("properties")
        required = schema.get("required")
        required_set = (
            {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
        )
        out: list[Field] = []
        for key, sub in props.items() if isinstance(props, Mapping) else ():
            if not isinstance(key, str):
                continue
            node = self.convert(sub, pascal(key, "Field"), depth + 1)
            out.append(Field(key, node, key in required_set, field_doc(sub)))
        return [f for f in out if f.required] + [f for f in out if not f.required]

    # -- tools ----------------------------------------------------------------
    def method(
        self, method: str, wire: str, description: str, params: Any, output: Any
    ) -> MethodDecl:
        """Build one tool's method; raises only on bugs, which the caller turns into `Any`."""
        self.method_name = method
        self._root = params
        schema = self._object_root(params)
        decl = MethodDecl(method=method, wire=wire, description=description)
        if schema is None:
            if params not in ({}, True, {"type": "object"}):
                self.exact = False
            return self._finish(decl, extra=ANY, output=output)
        fields = self.fields(schema, pascal(method), 0)
        extra_schema = schema.get("additionalProperties")
        extra: TypeNode | None = None
        if extra_schema is True or isinstance(schema.get("patternProperties"), Mapping):
            extra = ANY
        elif isinstance(extra_schema, Mapping):
            extra = self.convert(extra_schema, pascal(method) + "Extra", 1)
        if all(is_keyword_name(f.key) for f in fields):
            props = schema.get("properties")
            props = props if isinstance(props, Mapping) else {}
            taken = {f.key for f in fields}
            extra_name = "kwargs"
            while extra_name in taken:
                extra_name = "_" + extra_name
            decl = MethodDecl(
                method=method,
                wire=wire,
                description=description,
                params=tuple(self._param(f, props.get(f.key)) for f in fields),
                extra_name=extra_name,
            )
            return self._finish(decl, extra=extra, output=output)
        args_name = self._allocate(pascal(method) + "Args")
        self.new[args_name] = args = ClassDecl(args_name, tuple(fields), field_notes=False)
        if extra is not None:
            self.exact = False  # extra keys ride along in the dict, untyped
        decl = MethodDecl(method=method, wire=wire, description=description, args=ArgsDecl(args))
        return self._finish(decl, extra=None, output=output)

    def _object_root(self, params: Any) -> Mapping[str, Any] | None:
        """The parameters as one object schema (following a root `$ref` or `allOf`), or None."""
        schema = object_schema_at_root(params)
        if schema is None:
            return None
        if isinstance(schema.get("allOf"), list):
            merged = self._merge_all_of(schema["allOf"])
            if merged is None:
                return None
            self.exact = False
            return merged
        if any(k in schema for k in ("anyOf", "oneOf", "enum", "const")):
            return None
        return schema

    def _merge_all_of(self, parts: list[Any]) -> dict[str, Any] | None:
        merged: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in parts:
            for _ in range(8):
                if isinstance(part, Mapping) and isinstance(part.get("$ref"), str):
                    part = resolve_pointer(self._root, part["$ref"])[1]
            if not _is_plain_object(part):
                return None
            merged["properties"].update(part["properties"])
            if isinstance(part.get("required"), list):
                merged["required"] += part["required"]
        return merged

    def _param(self, field: Field, schema: Any) -> Param:
        if field.required:
            return Param(field.key, field.type, True, doc=field.doc)
        default = schema.get("default", ...) if isinstance(schema, Mapping) else ...
        if default is not ...:
            src = py_literal(default)
            if src is not None and len(src) <= MAX_DEFAULT:
                node = union([field.type, Prim("None")]) if default is None else field.type
                return Param(field.key, node, False, src, field.doc)
            short = src if src is not None and len(src) <= 200 else "see tool description"
            doc = f"{field.doc} (default {short})" if field.doc else f"(default {short})"
            return Param(field.key, union([field.type, Prim("None")]), False, None, doc)
        return Param(field.key, union([field.type, Prim("None")]), False, None, field.doc)

    def _finish(self, decl: MethodDecl, *, extra: TypeNode | None, output: Any) -> MethodDecl:
        returns: TypeNode = ANY
        if output is not None:
            self._root = output
            self._ref_names.clear()
            returns = self.convert(output, pascal(decl.method) + "Result")
        return MethodDecl(
            method=decl.method,
            wire=decl.wire,
            description=decl.description,
            params=decl.params,
            args=decl.args,
            extra=extra,
            extra_name=decl.extra_name,
            returns=returns,
        )

    def commit(self) -> None:
        """Publish this tool's classes to the shared table."""
        for name, decl in self.new.items():
            if decl is not None:
                self.table.decls[name] = decl
                if name.startswith(self.owner) and len(name) > len(self.owner):
                    self.table.owned[name] = (self.method_name, name[len(self.owner):])


def _ordinal(i: int) -> str:
    return _ORDINALS[i] if i < len(_ORDINALS) else "Later"


def _literal_values(schema: Any) -> list[str] | None:
    """The string values a discriminator field allows (`const` or a short `enum`), or None."""
    if not isinstance(schema, Mapping):
        return None
    if isinstance(schema.get("const"), str):
        return [schema["const"]]
    values = schema.get("enum")
    if isinstance(values, list) and 0 < len(values) <= 3 and all(isinstance(v, str) for v in values):
        return list(values)
    return None


def variant_hints(options: list[Any], hint: str) -> list[str]:
    """Class names for the members of an `anyOf`/`oneOf`, from what tells them apart.

    Object members that share a field of literal strings (`type: "text"` / `type: "image"`)
    are named by those values (`TextContentItem`, `ImageOrAudioContentItem`); otherwise by a
    required field only that member has (`ContentItemWithUri`). What is left keeps `hint`
    (a class name the table then qualifies), so no name is numbered.
    """
    props = [o.get("properties") if isinstance(o, Mapping) else None for o in options]
    objects = [p if isinstance(p, Mapping) else None for p in props]
    shared = None
    present = [p for p in objects if p]
    if len(present) >= 2:
        common = set.intersection(*(set(p) for p in present))
        for key in sorted(k for k in common if isinstance(k, str)):
            if all(_literal_values(p[key]) for p in present):
                shared = key
                break
    out = []
    for i, (option, fields) in enumerate(zip(options, objects, strict=True)):
        if not fields:
            out.append(hint)
            continue
        if shared is not None:
            values = _literal_values(fields[shared]) or []
            out.append("Or".join(pascal(v) for v in values) + hint)
            continue
        others = set().union(*(set(p) for j, p in enumerate(objects) if p and j != i))
        required = option.get("required") if isinstance(option.get("required"), list) else []
        own = [k for k in [*required, *fields] if isinstance(k, str) and k not in others]
        out.append(f"{hint}With{pascal(own[0])}" if own else hint)
    return out


def degraded_method(method: str, wire: str, description: str) -> MethodDecl:
    """The fallback for a tool whose conversion failed: any keywords, any result."""
    return MethodDecl(method=method, wire=wire, description=description, extra=ANY)
