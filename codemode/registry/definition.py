"""Tool definitions: ``define_tool`` with a small parameters DSL, and the ``@tool`` decorator.

A definition is checked completely when it is made, and every problem is reported at once
(``ToolDefinitionError``), so a broken tool never reaches a model. Schemas are compiled into
validators here, once, because every call pays for validation and every snippet sub-call is a call.

The DSL is a dict of parameter name to field spec with the keys ``type``, ``required``,
``description``, ``enum``, ``items``, ``properties`` and ``default``. It compiles to a JSON Schema
object that rejects unknown keys, because a model's misspelt argument should fail loudly instead
of being ignored.
"""

from __future__ import annotations

import inspect
import keyword
import re
import typing
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import ConfigDict, TypeAdapter, create_model
from pydantic.fields import FieldInfo

from .calls import ExecutionContext
from .content import render_value
from .frozen import freeze, thaw
from .validation import SchemaValidator, check_schema, compile_validator

__all__ = ["ToolDefinition", "compile_parameters", "define_tool", "tool"]

ExecuteFn = Callable[[Mapping[str, Any], ExecutionContext], Awaitable[Any]]
RenderFn = Callable[[Mapping[str, Any], Any], list[dict[str, Any]]]
FinalizeFn = Callable[[Mapping[str, Any], list[dict[str, Any]]], list[dict[str, Any]]]
PresentCallFn = Callable[[Mapping[str, Any]], dict[str, Any]]
PresentResultFn = Callable[[Mapping[str, Any], Any], dict[str, Any]]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_JSON_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")
_FIELD_KEYS = frozenset({"type", "required", "description", "enum", "items", "properties", "default"})
_OUTPUT_KEYS = frozenset({"schema", "render"})
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


@dataclass(frozen=True, slots=True, eq=False)
class ToolDefinition:
    """One tool, ready to register. Build it with ``define_tool`` or ``@tool``, not directly.

    ``parameters_schema`` and ``output_schema`` are frozen JSON Schemas. ``output_schema`` is None
    when ``execute`` returns content blocks itself.
    """

    name: str
    description: str
    parameters_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None
    execute: ExecuteFn = field(repr=False)
    render: RenderFn | None = field(default=None, repr=False)
    finalize_content: FinalizeFn | None = field(default=None, repr=False)
    present_call: PresentCallFn | None = field(default=None, repr=False)
    present_result: PresentResultFn | None = field(default=None, repr=False)
    concurrency_safe: bool | Callable[[Mapping[str, Any]], bool] = field(default=False, repr=False)
    defaults: Mapping[str, Any] = field(default_factory=dict, repr=False)
    arguments_validator: SchemaValidator = field(default=None, repr=False)  # type: ignore[assignment]
    output_validator: SchemaValidator | None = field(default=None, repr=False)
    annotations: Mapping[str, Any] | None = field(default=None, repr=False)
    sdk_note: str = field(default="", repr=False)

    def is_concurrency_safe(self, args: Mapping[str, Any]) -> bool:
        """True when this call may overlap other calls; a failing predicate counts as unsafe."""
        safe = self.concurrency_safe
        if not callable(safe):
            return bool(safe)
        try:
            return bool(safe(args))
        except Exception:
            return False


def define_tool(
    *,
    name: str,
    description: str,
    execute: ExecuteFn,
    parameters: Mapping[str, Mapping[str, Any]] | None = None,
    parameters_schema: Mapping[str, Any] | None = None,
    output: Mapping[str, Any] | None = None,
    is_concurrency_safe: bool | Callable[[Mapping[str, Any]], bool] = False,
    present_call: PresentCallFn | None = None,
    present_result: PresentResultFn | None = None,
    finalize_content: FinalizeFn | None = None,
    annotations: Mapping[str, Any] | None = None,
    sdk_note: str = "",
) -> ToolDefinition:
    """Check and build a tool definition; raise ``ToolDefinitionError`` listing every problem.

    ``execute(args, ctx)`` is an ``async def``. With ``output={"schema": ..., "render": ...}`` it
    returns the canonical JSON value and ``render(args, value)`` makes the content blocks (a default
    renderer shows strings as text and anything else as JSON). Without ``output`` it returns the
    content blocks itself. ``annotations`` are MCP tool annotations (``readOnlyHint``,
    ``title``, ...): hints for clients, carried by the MCP export. ``sdk_note`` is one short
    sentence the SDK's instructions carry while the tool is visible (``sdk_gen.ToolSpec.note``).
    """
    problems: list[str] = []
    _check_name(name, problems)
    if annotations is not None and not (
        isinstance(annotations, Mapping) and all(isinstance(k, str) for k in annotations)
    ):
        problems.append("annotations must be a mapping of MCP annotation names to values")
    if not isinstance(sdk_note, str) or "\n" in sdk_note:
        problems.append("sdk_note must be one line of text")
    if not isinstance(description, str) or not description.strip():
        problems.append("description must be a non-empty string (the model reads it)")
    if not inspect.iscoroutinefunction(execute) and not _is_async_callable(execute):
        problems.append("execute must be an async function: async def execute(args, ctx)")
    if parameters is not None and parameters_schema is not None:
        problems.append("give parameters= (the DSL) or parameters_schema= (JSON Schema), not both")
    if parameters_schema is not None:
        schema = _plain(parameters_schema, "parameters_schema", problems)
        if isinstance(schema, dict):
            problems.extend(f"parameters_schema {p}" for p in check_schema(schema))
            if schema.get("type") != "object":
                problems.append("parameters_schema must have \"type\": \"object\"")
    elif parameters is not None:
        schema = compile_parameters(parameters, problems)
    else:
        schema = dict(EMPTY_PARAMETERS)
    output_schema = None
    render: RenderFn | None = None
    if output is not None:
        output_schema, render = _check_output(output, problems)
    for label, fn in (
        ("present_call", present_call),
        ("present_result", present_result),
        ("finalize_content", finalize_content),
    ):
        if fn is not None and not callable(fn):
            problems.append(f"{label} must be callable")
    if not (isinstance(is_concurrency_safe, bool) or callable(is_concurrency_safe)):
        problems.append("is_concurrency_safe must be a bool or a function of the arguments")
    if problems:
        from .errors import ToolDefinitionError

        raise ToolDefinitionError(str(name), problems)
    if output_schema is not None and render is None:
        render = _default_render
    return ToolDefinition(
        name=name,
        description=description.strip(),
        parameters_schema=freeze(schema),
        output_schema=None if output_schema is None else freeze(output_schema),
        execute=execute,
        render=render,
        finalize_content=finalize_content,
        present_call=present_call,
        present_result=present_result,
        concurrency_safe=is_concurrency_safe,
        defaults=freeze(_top_level_defaults(schema)),
        arguments_validator=compile_validator(schema),
        output_validator=None if output_schema is None else compile_validator(output_schema),
        annotations=None if annotations is None else freeze(dict(annotations)),
        sdk_note=sdk_note.strip(),
    )


def _default_render(args: Mapping[str, Any], value: Any) -> list[dict[str, Any]]:
    return render_value(value)


def _is_async_callable(fn: Any) -> bool:
    return callable(fn) and inspect.iscoroutinefunction(type(fn).__call__)


def _check_name(name: Any, problems: list[str]) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name) or keyword.iskeyword(name):
        problems.append(
            f"name {name!r} must be a Python identifier of at most 64 characters and not a keyword"
            " (snippets call tools as tools.<name>)"
        )


def _plain(value: Any, label: str, problems: list[str]) -> Any:
    try:
        return thaw(freeze(value))
    except TypeError as exc:
        problems.append(f"{label} is not JSON: {exc}")
        return None


def _check_output(output: Any, problems: list[str]) -> tuple[dict[str, Any] | None, RenderFn | None]:
    if not isinstance(output, Mapping):
        problems.append("output must be a dict with 'schema' and optionally 'render'")
        return None, None
    unknown = sorted(set(output) - _OUTPUT_KEYS)
    if unknown:
        problems.append(f"output has unknown keys {unknown}; allowed: schema, render")
    render = output.get("render")
    if render is not None and not callable(render):
        problems.append("output.render must be a function render(args, value) -> content blocks")
    if "schema" not in output:
        problems.append("output needs a 'schema' (JSON Schema of the value execute returns)")
        return None, render
    schema = _plain(output["schema"], "output.schema", problems)
    if schema is not None:
        problems.extend(f"output.schema {p}" for p in check_schema(schema))
    return schema, render


def _top_level_defaults(schema: Mapping[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return {}
    return {k: v["default"] for k, v in props.items() if isinstance(v, Mapping) and "default" in v}


# --- the parameters DSL ------------------------------------------------------------------------


def compile_parameters(
    parameters: Mapping[str, Mapping[str, Any]], problems: list[str] | None = None
) -> dict[str, Any]:
    """Compile the parameters DSL to a JSON Schema object.

    With ``problems`` given, problems are appended there; otherwise the first batch raises
    ``ToolDefinitionError``.
    """
    collected: list[str] = [] if problems is None else problems
    schema = _compile_object(parameters, "parameters", collected)
    if problems is None and collected:
        from .errors import ToolDefinitionError

        raise ToolDefinitionError("<parameters>", collected)
    return schema


def _compile_object(props: Any, path: str, problems: list[str]) -> dict[str, Any]:
    if not isinstance(props, Mapping):
        problems.append(f"{path} must be a dict of name -> field spec")
        return {"type": "object"}
    properties: dict[str, Any] = {}
    required: list[str] = []
    for key, spec in props.items():
        where = f"{path}.{key}"
        if not isinstance(key, str) or not key:
            problems.append(f"{path}: parameter names must be non-empty strings, got {key!r}")
            continue
        properties[key] = _compile_field(spec, where, problems)
        if isinstance(spec, Mapping) and spec.get("required") is True:
            required.append(key)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    return schema


def _compile_field(spec: Any, path: str, problems: list[str], in_items: bool = False) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        problems.append(f"{path} must be a field spec dict such as {{'type': 'string'}}")
        return {}
    unknown = sorted(set(spec) - _FIELD_KEYS)
    if unknown:
        problems.append(f"{path} has unknown keys {unknown}; allowed: {', '.join(sorted(_FIELD_KEYS))}")
    out: dict[str, Any] = {}
    kind = spec.get("type")
    if kind is None and "enum" not in spec:
        problems.append(f"{path} needs a 'type' (one of {', '.join(_JSON_TYPES)}) or an 'enum'")
    elif kind is not None:
        if kind not in _JSON_TYPES:
            problems.append(f"{path}.type {kind!r} is not one of {', '.join(_JSON_TYPES)}")
        else:
            out["type"] = kind
    if "description" in spec:
        if isinstance(spec["description"], str):
            out["description"] = spec["description"]
        else:
            problems.append(f"{path}.description must be a string")
    if "required" in spec:
        if in_items:
            problems.append(f"{path}.required has no meaning for array items")
        elif not isinstance(spec["required"], bool):
            problems.append(f"{path}.required must be true or false")
    if "enum" in spec:
        enum = spec["enum"]
        if not isinstance(enum, (list, tuple)) or not enum:
            problems.append(f"{path}.enum must be a non-empty list")
        else:
            out["enum"] = list(enum)
    if "items" in spec:
        if kind != "array":
            problems.append(f"{path}.items needs type 'array'")
        out["items"] = _compile_field(spec["items"], f"{path}.items", problems, in_items=True)
    if "properties" in spec:
        if kind != "object":
            problems.append(f"{path}.properties needs type 'object'")
        nested = _compile_object(spec["properties"], f"{path}.properties", problems)
        out.update({k: v for k, v in nested.items() if k != "type"})
    if "default" in spec:
        out["default"] = spec["default"]
        default_problems = compile_validator({k: v for k, v in out.items() if k != "default"}).violations(
            spec["default"]
        ) if not problems else []
        if default_problems:
            problems.append(f"{path}.default {spec['default']!r} does not match: {default_problems[0].message}")
    return out


# --- the @tool decorator -----------------------------------------------------------------------

_SECTION = re.compile(r"^(Args|Arguments|Parameters|Params):\s*$")
_SECTION_END = re.compile(r"^(Returns|Return|Raises|Yields|Examples?|Notes?):\s*$")
_PARAM_LINE = re.compile(r"^(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_PASSTHROUGH = (str, bool, type(None))


def tool(
    fn: Callable[..., Awaitable[Any]] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    render: RenderFn | None = None,
    is_concurrency_safe: bool | Callable[[Mapping[str, Any]], bool] = False,
    present_call: PresentCallFn | None = None,
    present_result: PresentResultFn | None = None,
    finalize_content: FinalizeFn | None = None,
) -> Any:
    """Turn an ``async def`` into a ``ToolDefinition`` (usable bare or with options).

    Parameters come from the signature: types from hints, descriptions from ``Annotated[T, "..."]``,
    ``Annotated[T, Field(description=...)]``, a ``Field(...)`` default or the docstring's ``Args:``
    section. A parameter annotated ``ExecutionContext`` receives the context and is not shown to the
    model. The description is the docstring's first paragraph; the output schema comes from the
    return annotation (any JSON when there is none). The original function stays reachable as
    ``definition.execute.__wrapped__``.
    """

    def build(func: Callable[..., Awaitable[Any]]) -> ToolDefinition:
        return _definition_from_function(
            func,
            name=name,
            description=description,
            render=render,
            is_concurrency_safe=is_concurrency_safe,
            present_call=present_call,
            present_result=present_result,
            finalize_content=finalize_content,
        )

    return build(fn) if fn is not None else build


def _definition_from_function(func: Callable[..., Awaitable[Any]], **options: Any) -> ToolDefinition:
    tool_name = options.pop("name") or getattr(func, "__name__", "")
    problems: list[str] = []
    if not inspect.iscoroutinefunction(func):
        problems.append("@tool needs an async def")
    summary, param_docs = _parse_docstring(inspect.getdoc(func) or "")
    description = options.pop("description") or summary
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception as exc:  # unresolvable forward references
        problems.append(f"type hints cannot be resolved: {exc}")
        hints = {}
    fields: dict[str, Any] = {}
    converters: dict[str, Callable[[Any], Any]] = {}
    context_param: str | None = None
    for param in inspect.signature(func).parameters.values():
        annotation = hints.get(param.name, Any)
        if _is_context(annotation):
            context_param = param.name
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD, param.POSITIONAL_ONLY):
            problems.append(f"parameter {param.name!r}: *args, **kwargs and positional-only are not supported")
            continue
        if param.name.startswith("_"):
            problems.append(f"parameter {param.name!r}: names starting with '_' cannot be arguments")
            continue
        annotation, text = _split_description(annotation)
        default = param.default if param.default is not inspect.Parameter.empty else ...
        text = text or param_docs.get(param.name)
        if text is not None:
            if isinstance(default, FieldInfo):
                if default.description is None:
                    default.description = text
            else:
                default = _field(default, text)
        fields[param.name] = (annotation, default)
        converter = _converter(annotation)
        if converter is not None:
            converters[param.name] = converter
    schema: dict[str, Any] = dict(EMPTY_PARAMETERS)
    if not problems:
        try:
            model = create_model(  # type: ignore[call-overload]
                f"{tool_name}_arguments", __config__=ConfigDict(extra="forbid"), **fields
            )
            schema = _strip_titles(model.model_json_schema())
        except Exception as exc:
            problems.append(f"parameters cannot be turned into a JSON Schema: {exc}")
    returns = hints.get("return", inspect.Signature.empty)
    output_schema: dict[str, Any] = {}
    dump: Callable[[Any], Any] | None = None
    if returns is not inspect.Signature.empty:
        returns = type(None) if returns is None else returns
        try:
            adapter = TypeAdapter(returns)
            output_schema = _strip_titles(adapter.json_schema(mode="serialization"))
            if _strip_annotated(returns) not in (str, int, float, bool, type(None), Any):
                def dump(value: Any, _a: TypeAdapter[Any] = adapter) -> Any:
                    return _a.dump_python(value, mode="json")
        except Exception as exc:
            problems.append(f"return annotation cannot be turned into a JSON Schema: {exc}")
    if problems:
        from .errors import ToolDefinitionError

        raise ToolDefinitionError(tool_name, problems)

    async def execute(args: Mapping[str, Any], ctx: ExecutionContext) -> Any:
        kwargs = dict(args)
        for key, convert in converters.items():
            if key in kwargs:
                kwargs[key] = convert(kwargs[key])
        if context_param is not None:
            kwargs[context_param] = ctx
        value = await func(**kwargs)
        return dump(value) if dump is not None else value

    execute.__wrapped__ = func  # type: ignore[attr-defined]
    render = options.pop("render")
    return define_tool(
        name=tool_name,
        description=description,
        execute=execute,
        parameters_schema=schema,
        output={"schema": output_schema, "render": render},
        **options,
    )


def _field(default: Any, text: str) -> Any:
    from pydantic import Field

    return Field(default, description=text)


def _strip_annotated(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = annotation.__origin__
    return annotation


def _is_context(annotation: Any) -> bool:
    """True for ``ExecutionContext`` and ``ExecutionContext | None``."""
    base = _strip_annotated(annotation)
    return base is ExecutionContext or ExecutionContext in typing.get_args(base)


def _split_description(annotation: Any) -> tuple[Any, str | None]:
    """Take a plain-string ``Annotated`` note out as the description; keep other metadata."""
    if typing.get_origin(annotation) is not Annotated:
        return annotation, None
    base, *meta = typing.get_args(annotation)
    texts = [m for m in meta if isinstance(m, str)]
    rest = [m for m in meta if not isinstance(m, str)]
    rebuilt = Annotated[(base, *rest)] if rest else base  # type: ignore[valid-type]
    return rebuilt, (texts[0] if texts else None)


def _converter(annotation: Any) -> Callable[[Any], Any] | None:
    """How to turn a frozen JSON argument into what the annotation promises (None: as it is)."""
    base = _strip_annotated(annotation)
    if base is Any or base in _PASSTHROUGH:
        return None
    if base is int:
        return lambda v: int(v) if type(v) is float else v
    if base is float:
        return lambda v: float(v) if type(v) is int else v
    adapter = TypeAdapter(annotation)
    return lambda v: adapter.validate_python(thaw(v))


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into its first paragraph and the ``Args:`` descriptions."""
    lines = doc.splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or _SECTION.match(line.strip()):
            break
        summary.append(line.strip())
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    base_indent = 0
    for line in lines:
        stripped = line.strip()
        if _SECTION.match(stripped):
            in_args, current = True, None
            continue
        if not in_args:
            continue
        if _SECTION_END.match(stripped) or (stripped and not line.startswith(" ")):
            in_args = False
            continue
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip())
        match = _PARAM_LINE.match(stripped)
        if match and (current is None or indent <= base_indent):
            current, base_indent = match.group(1).lstrip("*"), indent
            params[current] = match.group(3).strip()
        elif current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return " ".join(summary), params


_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "contains")


def _strip_titles(schema: Any) -> Any:
    """Drop pydantic's generated ``title``s: noise in model-facing schemas and SDK text."""
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k != "title"}
    for key in _SUBSCHEMA_MAPS:
        if isinstance(out.get(key), dict):
            out[key] = {k: _strip_titles(v) for k, v in out[key].items()}
    for key in _SUBSCHEMA_LISTS:
        if isinstance(out.get(key), list):
            out[key] = [_strip_titles(v) for v in out[key]]
    for key in _SUBSCHEMA_ONE:
        if isinstance(out.get(key), dict):
            out[key] = _strip_titles(out[key])
    return out
