"""Pre-flight: find certain mistakes in a snippet before anything runs.

Only what is decidable from the text is reported; anything else passes, because a false alarm
blocks a valid run while a miss costs only a runtime error the sandbox reports anyway. A
snippet that doesn't parse yields no diagnostics: the sandbox reports syntax errors itself.
That includes a snippet nested too deeply for the parser (CPython raises MemoryError or
RecursionError for `-` * 30000 + `1`): `check` never raises for anything in the snippet.
"""

from __future__ import annotations

import ast
import difflib
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .names import AWAITED_HELPERS, RESERVED_METHODS
from .schema import object_schema_at_root, resolve_pointer
from .sdk import SDK

__all__ = ["Diagnostic", "check"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MAX_DEPTH = 16
_MISSING = object()


@dataclass(frozen=True)
class Diagnostic:
    """One problem at a 1-based line and column of the snippet; `code` is a stable slug."""

    line: int
    col: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}, col {self.col}: {self.message}"


def _hint(name: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def check(snippet: str, sdk: SDK) -> list[Diagnostic]:
    """Diagnostics for a snippet (the body of an async function), sorted by position.

    Reports imports of modules the SDK does not allow (`sdk.imports`), unknown tools, unknown
    or missing arguments, literal values of the wrong type or outside an enum, tool calls and
    `asyncio.gather(...)` whose result is dropped without `await`, and those whose un-awaited
    result is then used as a value (subscripted, iterated, measured, printed, formatted,
    returned, ...), directly or through the name it was assigned to.
    """
    try:
        tree = compile(
            snippet, "<snippet>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    checker = _Checker(sdk, _LINE_BREAK.split(snippet))
    checker.check_imports(tree)
    if sdk.namespace in snippet or "gather" in snippet:
        found = list(checker.found)
        if checker.run(tree):
            checker.check_used(tree)
        else:  # the snippet rebinds the namespace: only the imports are decidable
            checker.found = found
    return sorted(set(checker.found), key=lambda d: (d.line, d.col, d.code, d.message))


class _Checker:
    def __init__(self, sdk: SDK, lines: list[str]) -> None:
        self.sdk = sdk
        self.ns = sdk.namespace
        self.lines = lines
        self.found: list[Diagnostic] = []

    def run(self, tree: ast.AST) -> bool:
        """Check every tool call in one walk; False when the snippet rebinds the namespace."""
        ns = self.ns
        for node in _walk(tree):
            kind = type(node)
            if kind is ast.Call:
                target = self._tool_target(node)  # type: ignore[arg-type]
                if target is not None:
                    self._check_call(node, *target)  # type: ignore[arg-type]
            elif kind is ast.Expr:
                self._check_dropped(node)  # type: ignore[arg-type]
            elif kind is ast.Name:
                if node.id == ns and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                    return False
            elif kind is ast.arg:
                if node.arg == ns:  # type: ignore[attr-defined]
                    return False
            elif kind is ast.alias:
                if (node.asname or node.name.split(".")[0]) == ns:  # type: ignore[attr-defined]
                    return False
            elif kind in (ast.Global, ast.Nonlocal):
                if ns in node.names:  # type: ignore[attr-defined]
                    return False
            elif kind in (
                ast.FunctionDef,
                ast.AsyncFunctionDef,
                ast.ClassDef,
                ast.MatchAs,
                ast.MatchStar,
            ):
                if getattr(node, "name", None) == ns:
                    return False
        return True

    def check_imports(self, tree: ast.AST) -> None:
        """An import of a module the sandbox does not offer always fails: report it first."""
        allowed = set(self.sdk.imports)
        listed = ", ".join(self.sdk.imports) or "none"
        for node in _walk(tree):
            names: list[str] = []
            if type(node) is ast.Import:
                names = [a.name for a in node.names]  # type: ignore[attr-defined]
            elif type(node) is ast.ImportFrom and node.level == 0 and node.module:  # type: ignore[attr-defined]
                names = [node.module]  # type: ignore[attr-defined]
            for name in names:
                if name not in allowed:
                    self._report(
                        node,
                        "import-not-allowed",
                        f"module {name!r} is not available in the sandbox; use the tools for what it "
                        f"would do, or one of the allowed modules: {listed}",
                    )

    def _report(self, node: ast.AST, code: str, message: str) -> None:
        line = getattr(node, "lineno", 1)
        offset = getattr(node, "col_offset", 0)
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = len(text.encode("utf-8")[:offset].decode("utf-8", "replace")) + 1
        self.found.append(Diagnostic(line, col, code, message))

    # -- which calls are tool calls -------------------------------------------
    def _tool_target(self, call: ast.Call) -> tuple[str, bool] | None:
        """(name as written, written as attribute) for `ns.x(...)` or `ns["x"](...)`."""
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == self.ns
        ):
            return func.attr, True
        if (
            isinstance(func, ast.Subscript)
            and isinstance(func.value, ast.Name)
            and func.value.id == self.ns
            and isinstance(func.slice, ast.Constant)
            and isinstance(func.slice.value, str)
        ):
            return func.slice.value, False
        return None

    def _check_dropped(self, node: ast.Expr) -> None:
        """A tool call as a bare statement (or in a dropped display) is never awaited."""
        value = node.value
        if isinstance(value, ast.Call) and _is_gather(value.func):
            self._report(value, "not-awaited", f"{_GATHER}(...) is never awaited; write `await {_GATHER}(...)`")
            return
        calls = [value] if isinstance(value, ast.Call) else []
        if isinstance(value, ast.List | ast.Tuple | ast.Set):
            calls = [e for e in value.elts if isinstance(e, ast.Call)]
        elif isinstance(value, ast.ListComp | ast.SetComp | ast.GeneratorExp) and isinstance(
            value.elt, ast.Call
        ):
            calls = [value.elt]
        for call in calls:
            target = self._tool_target(call)
            if target is None:
                continue
            if target[1] and target[0] in RESERVED_METHODS:
                if target[0] in AWAITED_HELPERS:
                    self._report(
                        call,
                        "not-awaited",
                        f"{self.ns}.{target[0]}() is never awaited; write `await {self.ns}.{target[0]}(...)`",
                    )
                continue
            method = self.sdk.resolve(target[0])
            if method is not None:
                self._report(
                    call,
                    "not-awaited",
                    f"call to tool {method!r} is never awaited; write `await {self.ns}.{method}(...)`",
                )

    # -- an un-awaited result used as a value ----------------------------------
    def _unawaited(self, node: ast.AST, awaited: set[int]) -> str | None:
        """What to call `node` in a message, when it is an un-awaited tool call or gather."""
        if type(node) is not ast.Call or id(node) in awaited:
            return None
        if _is_gather(node.func):  # type: ignore[attr-defined]
            return f"{_GATHER}(...)"
        target = self._tool_target(node)  # type: ignore[arg-type]
        if target is None or (target[1] and target[0] in RESERVED_METHODS):
            return None
        method = self.sdk.resolve(target[0])
        return None if method is None else f"call to tool {method!r}"

    def check_used(self, tree: ast.AST) -> None:
        """Report an un-awaited tool call or gather whose value is used: `tools.grep(...)["x"]`,
        or `r = tools.grep(...)` whose first later use is `r["x"]`. Awaiting, passing it on
        (`await asyncio.gather(r)`, `tasks.append(r)`) or rebinding the name is never reported."""
        awaited = {id(n.value) for n in _walk(tree) if type(n) is ast.Await}  # type: ignore[attr-defined]
        for node in _walk(tree):
            for used in _value_operands(node):
                what = self._unawaited(used, awaited)
                if what is not None:
                    self._report_used(used, what, getattr(node, "lineno", used.lineno))  # type: ignore[attr-defined]
        for body in _scopes(tree):
            self._flow(body, {}, awaited)

    def _report_used(self, call: ast.AST, what: str, line: int) -> None:
        shown = what if what.endswith("(...)") else what.split(" ")[-1].strip("'")
        fix = f"await {_GATHER}(...)" if what.endswith("(...)") else f"await {self.ns}.{shown}(...)"
        self._report(
            call, "not-awaited", f"{what} is not awaited but its result is used on line {line}; write `{fix}`"
        )

    def _flow(self, stmts: list[ast.stmt], pending: dict[str, tuple[ast.AST, str]], awaited: set[int]) -> None:
        """Follow one scope's statements in order; ``pending`` maps a name to the un-awaited
        call it holds until its first use decides (a value use is reported)."""
        for stmt in stmts:
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                for node in _walk(stmt):  # a closure may use it later: not decidable here
                    if type(node) is ast.Name:
                        pending.pop(node.id, None)  # type: ignore[attr-defined]
                continue
            assign = isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign)
            bodies: list[list[ast.stmt]] = []
            header: list[ast.AST] = []
            for name, value in ast.iter_fields(stmt):
                if name in ("body", "orelse", "finalbody"):
                    bodies.append(value)
                elif name in ("handlers", "cases"):
                    bodies.extend(h.body for h in value)
                elif not (assign and name in ("targets", "target")):
                    header.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.AST))
            targets: list[ast.AST] = []
            if assign:
                targets = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]  # type: ignore[union-attr]
            for part in [*header, *targets]:  # the value is evaluated before the targets bind
                self._loads(part, pending, stmt)
            for part in [*header, *targets]:
                for node in _walk(part):
                    if type(node) is ast.Name and type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                        pending.pop(node.id, None)  # type: ignore[attr-defined]
            if assign and not isinstance(stmt, ast.AugAssign) and len(targets) == 1 and type(targets[0]) is ast.Name:
                value = stmt.value  # type: ignore[union-attr]
                what = self._unawaited(value, awaited) if value is not None else None
                if what is not None:
                    pending[targets[0].id] = (value, what)  # type: ignore[attr-defined]
            for body in bodies:
                self._flow(body, pending, awaited)

    def _loads(self, expr: ast.AST, pending: dict[str, tuple[ast.AST, str]], stmt: ast.stmt) -> None:
        """Decide every pending name ``expr`` reads (``stmt`` is the statement it belongs to)."""
        if not pending:
            return
        for parent in _walk(expr):
            for child in ast.iter_child_nodes(parent):
                if type(child) is not ast.Name or child.id not in pending:  # type: ignore[attr-defined]
                    continue
                call, what = pending.pop(child.id)  # type: ignore[attr-defined]
                if any(used is child for used in _value_operands(parent)):
                    self._report_used(call, what, child.lineno)  # type: ignore[attr-defined]
        if type(expr) is ast.Name and expr.id in pending and type(expr.ctx) is ast.Load:  # type: ignore[attr-defined]
            call, what = pending.pop(expr.id)  # type: ignore[attr-defined]
            if any(used is expr for used in _value_operands(stmt)):
                self._report_used(call, what, expr.lineno)  # type: ignore[attr-defined]

    # -- one call ---------------------------------------------------------------
    def _check_call(self, call: ast.Call, written: str, as_attribute: bool) -> None:
        if as_attribute and written in RESERVED_METHODS:
            return
        method = self.sdk.resolve(written)
        if method is None:
            choices = self.sdk.names() if as_attribute else sorted(self.sdk.wire_names)
            self._report(call, "unknown-tool", f"unknown tool {written!r}{_hint(written, choices)}")
            return
        spec = self.sdk.specs[self.sdk.method_names[method]]
        schema = _params_object(spec.parameters)
        if schema is None:
            return
        given: dict[str, tuple[ast.AST, ast.expr]] = {}
        complete = True
        if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > 1:
            return
        if call.args:
            arg = call.args[0]
            if not isinstance(arg, ast.Dict):
                if isinstance(arg, ast.Constant | ast.List | ast.Tuple | ast.Set | ast.JoinedStr):
                    self._report(
                        arg,
                        "positional-argument",
                        f"tool {method!r} takes keyword arguments or one dict, not a positional value",
                    )
                return
            for key, value in zip(arg.keys, arg.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    given[key.value] = (key, value)
                else:
                    complete = False
        for kw in call.keywords:
            if kw.arg is None:
                complete = False
            else:
                given[kw.arg] = (kw, kw.value)
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        closed = (
            schema.get("additionalProperties", False) is False and "patternProperties" not in schema
        )
        for name, (where, value) in given.items():
            if name not in props:
                if closed:
                    hint = _hint(name, [k for k in props if isinstance(k, str)])
                    self._report(
                        where,
                        "unknown-argument",
                        f"unknown argument {name!r} for tool {method!r}{hint}",
                    )
                continue
            self._check_value(where, method, name, props[name], value, spec.parameters)
        required = schema.get("required")
        if complete and isinstance(required, list):
            for name in required:
                if isinstance(name, str) and name not in given:
                    self._report(
                        call,
                        "missing-argument",
                        f"missing required argument {name!r} for tool {method!r}",
                    )

    def _check_value(
        self, where: ast.AST, method: str, name: str, schema: Any, value: ast.expr, root: Any
    ) -> None:
        literal = _literal(value)
        if literal is _MISSING:
            return
        if literal is None and not _schema_allows_null(schema, root):
            return  # None means "not sent" for an optional argument; a required one is the tool's call
        problem = _violation(schema, literal, root, 0)
        if problem:
            self._report(where, "bad-value", f"argument {name!r} of tool {method!r}: {problem}")


_GATHER = "asyncio.gather"
#: Builtins whose arguments are used as values (a coroutine in them is a mistake).
_VALUE_FUNCTIONS = frozenset(
    {"len", "list", "sorted", "sum", "min", "max", "set", "tuple", "dict", "enumerate", "zip",
     "any", "all", "iter", "next", "reversed", "print", "str", "repr", "format"}
)


def _is_json_dumps(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr in ("dumps", "dump")
        and isinstance(func.value, ast.Name)
        and func.value.id == "json"
    )


def _is_gather(func: ast.expr) -> bool:
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "gather"
        and isinstance(func.value, ast.Name)
        and func.value.id == "asyncio"
    )


def _value_operands(node: ast.AST) -> list[ast.AST]:
    """The sub-expressions ``node`` uses as values: what a coroutine cannot stand in for."""
    kind = type(node)
    if kind is ast.Subscript or kind is ast.Attribute:
        return [node.value]  # type: ignore[attr-defined]
    if kind is ast.For or kind is ast.comprehension:
        return [node.iter]  # type: ignore[attr-defined]
    if kind is ast.BinOp:
        return [node.left, node.right]  # type: ignore[attr-defined]
    if kind is ast.Compare:
        return [node.left, *node.comparators]  # type: ignore[attr-defined]
    if kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id in _VALUE_FUNCTIONS:  # type: ignore[attr-defined]
        return list(node.args)  # type: ignore[attr-defined]
    if kind is ast.Call and _is_json_dumps(node.func):  # type: ignore[attr-defined]
        return list(node.args)  # type: ignore[attr-defined]
    if kind is ast.FormattedValue or kind is ast.Return:
        return [node.value] if node.value is not None else []  # type: ignore[attr-defined]
    if kind is ast.Assign and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple | ast.List):  # type: ignore[attr-defined]
        return [node.value]  # type: ignore[attr-defined]
    return []


def _scopes(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    """The statement list of the snippet and of every function in it."""
    yield tree.body  # type: ignore[attr-defined]
    for node in _walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.body


_FIELDS: dict[type, tuple[str, ...]] = {}
_SKIP_FIELDS = frozenset({"ctx", "op", "type_comment"})


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, in no particular order; leaner than `ast.walk` (pre-flight's hot loop)."""
    stack = [tree]
    pop, push, extend = stack.pop, stack.append, stack.extend
    AST = ast.AST
    while stack:
        node = pop()
        yield node
        kind = type(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIP_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                extend(v for v in value if isinstance(v, AST))
            elif isinstance(value, AST):
                push(value)


def _params_object(params: Any) -> Mapping[str, Any] | None:
    """The parameter schema when it is a plain object schema, else None (check nothing)."""
    schema = object_schema_at_root(params)
    if schema is None:
        return None
    if any(
        k in schema for k in ("allOf", "anyOf", "oneOf", "$ref", "not", "if", "dependentSchemas")
    ):
        return None
    return schema


def _literal(node: ast.expr) -> Any:
    """The JSON value of a literal expression, or _MISSING when it isn't one."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _MISSING
    return value if _is_json(value, 0) else _MISSING


def _is_json(value: Any, depth: int) -> bool:
    if depth > _MAX_DEPTH:
        return False
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list | tuple):
        return all(_is_json(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v, depth + 1) for k, v in value.items())
    return False


def _schema_allows_null(schema: Any, root: Any) -> bool:
    return _violation(schema, None, root, 0) is None


_JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object"


def _is_type(value: Any, kind: str) -> bool:
    actual = _json_type(value)
    if kind == "number":
        return actual in ("integer", "number")
    if kind == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    return actual == kind


def _json_eq(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_eq(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_eq(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _show(values: list[Any]) -> str:
    shown = ", ".join(repr(v) for v in values[:8])
    return shown + (", ..." if len(values) > 8 else "")


def _violation(schema: Any, value: Any, root: Any, depth: int) -> str | None:
    """Why `value` certainly breaks `schema` (type, enum, const), or None when unsure or fine."""
    if depth > _MAX_DEPTH or not isinstance(schema, Mapping):
        return "no value is allowed" if schema is False else None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        found, target = resolve_pointer(root, ref)
        return _violation(target, value, root, depth + 1) if found else None
    if value is None and schema.get("nullable") is True:
        return None
    if "const" in schema and not _json_eq(value, schema["const"]):
        return f"must be {schema['const']!r}, got {value!r}"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and not any(_json_eq(value, e) for e in enum):
        hint = (
            _hint(value, [e for e in enum if isinstance(e, str)]) if isinstance(value, str) else ""
        )
        return f"{value!r} is not one of {_show(enum)}{hint}"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            problems = [_violation(o, value, root, depth + 1) for o in options]
            if all(problems):
                return (
                    problems[0]
                    if len(options) == 1
                    else f"{value!r} matches none of the allowed types"
                )
    parts = schema.get("allOf")
    if isinstance(parts, list):
        for part in parts:
            problem = _violation(part, value, root, depth + 1)
            if problem:
                return problem
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else None
    if (
        kinds
        and all(k in _JSON_TYPES for k in kinds)
        and not any(_is_type(value, k) for k in kinds)
    ):
        return f"expected {' or '.join(kinds)}, got {_json_type(value)}"
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        for key, item in value.items():
            if key in schema["properties"]:
                problem = _violation(schema["properties"][key], item, root, depth + 1)
                if problem:
                    return f"in {key!r}: {problem}"
    if isinstance(value, list | tuple) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            problem = _violation(schema["items"], item, root, depth + 1)
            if problem:
                return f"item {i}: {problem}"
    return None
