"""Schema checks for arguments and values: a compiled fast path, jsonschema for the verdict.

jsonschema walks its keyword table on every call, which costs about 12 µs for a two-field object,
and every sub-call from a snippet pays it twice (arguments and output). Most tool schemas use a
small subset of keywords, so ``compile_validator`` turns that subset into plain closures. The fast
check is *sound*: when it says "valid", jsonschema would too. When it says "invalid", or the schema
uses anything outside the subset, jsonschema decides and lists every violation with its path. Both
treat tuples (``FrozenList``) as JSON arrays so frozen values validate like plain ones.

The model controls every argument, so the work is bounded by the value's size: ``uniqueItems``
compares canonical keys in one pass on both paths (jsonschema's own check falls back to
comparing every pair when the items do not sort, which took 21 s for 20,000 strings and one
``0``), ``anyOf``/``oneOf`` ask each branch only whether it holds, and at most
``MAX_VIOLATIONS`` violations are collected (half a million wrong items once made a 22 MB
message and 1.9 GB of error objects).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError, ValidationError

from .frozen import thaw

__all__ = ["MAX_VIOLATIONS", "SchemaValidator", "Violation", "check_schema", "compile_validator"]

_MAX_MESSAGE = 200
#: Violations listed for one value; past this, one more entry says that more were left out.
MAX_VIOLATIONS = 20
#: The entry that stands for the violations not listed.
MORE_VIOLATIONS = "more violations not listed"

_TYPE_CHECKER = Draft202012Validator.TYPE_CHECKER.redefine(
    "array", lambda _checker, instance: isinstance(instance, (list, tuple))
)


def _json_key(value: Any) -> Any:
    """A hashable key that is equal for two values exactly when JSON Schema calls them equal
    (``1 == 1.0``, ``true != 1``, objects by their items, arrays in order)."""
    kind = type(value)
    if kind is bool:
        return (0, value)
    if kind is int or kind is float:
        return (1, value)
    if kind is str:
        return (2, value)
    if value is None:
        return (3,)
    if isinstance(value, (list, tuple)):
        return (4, tuple(map(_json_key, value)))
    if isinstance(value, Mapping):
        return (5, frozenset((key, _json_key(item)) for key, item in value.items()))
    return (6, id(value))


def _unique(items: Any) -> bool:
    return len(set(map(_json_key, items))) == len(items)


def _shown(instance: Any) -> str:
    shown = repr(instance)
    return shown if len(shown) <= _MAX_MESSAGE // 2 else shown[: _MAX_MESSAGE // 2 - 1] + "…"


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's ``uniqueItems``, in one pass."""
    if unique and validator.is_type(instance, "array") and not _unique(instance):
        yield ValidationError(f"{_shown(instance)} has non-unique elements")


def _any_of(validator: Any, any_of: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's ``anyOf``, asking each branch only whether it holds: jsonschema's own
    keeps every error of every branch (an optional array of half a million wrong items built
    1.5 GB of them before the violations were cut)."""
    if not any(validator.evolve(schema=sub).is_valid(instance) for sub in any_of):
        yield ValidationError(f"{_shown(instance)} is not valid under any of the given schemas")


def _one_of(validator: Any, one_of: Any, instance: Any, schema: Any) -> Iterator[ValidationError]:
    """jsonschema's ``oneOf``, the same way as ``_any_of``."""
    valid = [sub for sub in one_of if validator.evolve(schema=sub).is_valid(instance)]
    if not valid:
        yield ValidationError(f"{_shown(instance)} is not valid under any of the given schemas")
    elif len(valid) > 1:
        yield ValidationError(f"{_shown(instance)} is valid under more than one of the given schemas")


_JsonValidator = validators.extend(
    Draft202012Validator, validators={"uniqueItems": _unique_items, "anyOf": _any_of, "oneOf": _one_of},
    type_checker=_TYPE_CHECKER,
)

Check = Callable[[Any], bool]


@dataclass(frozen=True, slots=True)
class Violation:
    """One reason a value does not match its schema, at a JSON path such as ``$.items[0].name``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def check_schema(schema: Any) -> list[str]:
    """Return the problems that make ``schema`` an invalid JSON Schema (empty when it is fine)."""
    try:
        _JsonValidator.check_schema(schema)
    except SchemaError as exc:
        where = _format_path(exc.path)
        return [f"{where}: {_shorten(exc.message)}"]
    return []


class SchemaValidator:
    """A schema compiled once: ``violations(value)`` is empty when the value is valid."""

    __slots__ = ("schema", "_fast", "_full")

    def __init__(self, schema: Mapping[str, Any] | bool) -> None:
        self.schema = schema
        self._full = _JsonValidator(schema)
        self._fast: Check | None = _compile(schema)

    @property
    def compiled(self) -> bool:
        """True when the fast path covers this schema (no jsonschema on the happy path)."""
        return self._fast is not None

    def violations(self, value: Any) -> list[Violation]:
        fast = self._fast
        if fast is not None and fast(value):
            return []
        # Errors are rare: thaw so messages show JSON-like reprs ([] not (), {} not FrozenDict).
        found = list(itertools.islice(self._full.iter_errors(thaw(value)), MAX_VIOLATIONS + 1))
        errors = sorted(found[:MAX_VIOLATIONS], key=lambda e: (list(map(str, e.path)), e.message))
        listed = [Violation(_format_path(e.path), _shorten(e.message)) for e in errors]
        if len(found) > MAX_VIOLATIONS:
            listed.append(Violation("$", MORE_VIOLATIONS))
        return listed


def compile_validator(schema: Mapping[str, Any] | bool) -> SchemaValidator:
    return SchemaValidator(schema)


def _format_path(parts: Any) -> str:
    out = "$"
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"


# --- the fast path -----------------------------------------------------------------------------

_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$comment", "deprecated", "readOnly",
     "writeOnly", "format", "$schema", "$id"}
)
_SCALAR_TYPES = (str, int, float, bool, type(None))


def _is_integer(v: Any) -> bool:
    t = type(v)
    return t is int or (t is float and v.is_integer())


def _is_number(v: Any) -> bool:
    t = type(v)
    return t is int or t is float


_TYPE_CHECKS: dict[str, Check] = {
    "string": lambda v: type(v) is str,
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, (list, tuple)),
}


def _compile(schema: Any) -> Check | None:
    """Compile a schema into one predicate, or return None when it leaves the supported subset."""
    if schema is True:
        return lambda v: True
    if not isinstance(schema, Mapping):
        return None
    checks: list[Check] = []
    for key in schema:
        if key in _ANNOTATIONS or key in _KEYWORDS:
            continue
        return None
    for key, build in _KEYWORDS.items():
        if key in schema:
            check = build(schema)
            if check is None:
                return None
            if check is not _SKIP:
                checks.append(check)
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)
    frozen = tuple(checks)
    return lambda v: all(c(v) for c in frozen)


def _skip(v: Any) -> bool:
    return True


_SKIP: Check = _skip


def _type(schema: Mapping[str, Any]) -> Check | None:
    names = schema["type"]
    if isinstance(names, str):
        return _TYPE_CHECKS.get(names)
    if not isinstance(names, (list, tuple)) or not all(n in _TYPE_CHECKS for n in names):
        return None
    fns = tuple(_TYPE_CHECKS[n] for n in names)
    return lambda v: any(f(v) for f in fns)


def _properties(schema: Mapping[str, Any]) -> Check | None:
    props = schema["properties"]
    if not isinstance(props, Mapping):
        return None
    compiled: dict[str, Check] = {}
    for name, sub in props.items():
        check = _compile(sub)
        if check is None:
            return None
        compiled[name] = check
    required = schema.get("required", ())
    extra = schema.get("additionalProperties", True)
    if not isinstance(required, (list, tuple)) or not all(isinstance(r, str) for r in required):
        return None
    required_t = tuple(required)
    if extra is False:
        allowed = frozenset(compiled)

        def check_closed(v: Any) -> bool:
            if not isinstance(v, dict):
                return True
            for r in required_t:
                if r not in v:
                    return False
            for key, item in v.items():
                if key not in allowed or not compiled[key](item):
                    return False
            return True

        return check_closed
    extra_check = _compile(extra)
    if extra_check is None:
        return None

    def check_open(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for r in required_t:
            if r not in v:
                return False
        for key, item in v.items():
            c = compiled.get(key)
            if not (c(item) if c is not None else extra_check(item)):
                return False
        return True

    return check_open


def _required(schema: Mapping[str, Any]) -> Check | None:
    if "properties" in schema:
        return _SKIP  # folded into _properties
    required = schema["required"]
    if not isinstance(required, (list, tuple)):
        return None
    names = tuple(required)
    return lambda v: not isinstance(v, dict) or all(r in v for r in names)


def _additional(schema: Mapping[str, Any]) -> Check | None:
    if "properties" in schema:
        return _SKIP
    extra = _compile(schema["additionalProperties"]) if schema["additionalProperties"] is not False else None
    if schema["additionalProperties"] is False:
        return lambda v: not isinstance(v, dict) or not v
    if extra is None:
        return None
    return lambda v: not isinstance(v, dict) or all(extra(i) for i in v.values())


def _items(schema: Mapping[str, Any]) -> Check | None:
    sub = _compile(schema["items"])
    if sub is None:
        return None
    return lambda v: not isinstance(v, (list, tuple)) or all(sub(i) for i in v)


def _enum_of(values: Any) -> Check | None:
    if not isinstance(values, (list, tuple)) or not all(isinstance(e, _SCALAR_TYPES) for e in values):
        return None
    pairs = tuple((type(e), e) for e in values)
    return lambda v: any(type(v) is t and v == e for t, e in pairs)


def _enum(schema: Mapping[str, Any]) -> Check | None:
    return _enum_of(schema["enum"])


def _const(schema: Mapping[str, Any]) -> Check | None:
    return _enum_of([schema["const"]])


def _bound(key: str, test: Callable[[Any, Any], bool], applies: Check) -> Callable[[Mapping[str, Any]], Check | None]:
    def build(schema: Mapping[str, Any]) -> Check | None:
        limit = schema[key]
        if type(limit) not in (int, float):
            return None
        return lambda v: not applies(v) or test(v, limit)

    return build


def _sized(v: Any) -> bool:
    return type(v) is str


def _seq(v: Any) -> bool:
    return isinstance(v, (list, tuple))


def _any_of(schema: Mapping[str, Any]) -> Check | None:
    subs = schema["anyOf"]
    if not isinstance(subs, (list, tuple)) or not subs:
        return None
    compiled = [_compile(s) for s in subs]
    if any(c is None for c in compiled):
        return None
    fns = tuple(compiled)
    return lambda v: any(f(v) for f in fns)  # type: ignore[misc]


def _unique_keyword(schema: Mapping[str, Any]) -> Check | None:
    if schema["uniqueItems"] is False:
        return _SKIP
    if schema["uniqueItems"] is not True:
        return None
    return lambda v: not _seq(v) or _unique(v)


_KEYWORDS: dict[str, Callable[[Mapping[str, Any]], Check | None]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "required": _required,
    "additionalProperties": _additional,
    "items": _items,
    "anyOf": _any_of,
    "minimum": _bound("minimum", lambda v, n: v >= n, _is_number),
    "maximum": _bound("maximum", lambda v, n: v <= n, _is_number),
    "exclusiveMinimum": _bound("exclusiveMinimum", lambda v, n: v > n, _is_number),
    "exclusiveMaximum": _bound("exclusiveMaximum", lambda v, n: v < n, _is_number),
    "minLength": _bound("minLength", lambda v, n: len(v) >= n, _sized),
    "maxLength": _bound("maxLength", lambda v, n: len(v) <= n, _sized),
    "minItems": _bound("minItems", lambda v, n: len(v) >= n, _seq),
    "maxItems": _bound("maxItems", lambda v, n: len(v) <= n, _seq),
    "uniqueItems": _unique_keyword,
}
