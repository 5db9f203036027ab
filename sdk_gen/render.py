"""Typed tree to SDK text: the one place that decides layout, quoting and escaping."""

from __future__ import annotations

import inspect
import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence

from .names import is_keyword_name
from .text import (
    ARGS_FORM_NOTE,
    COMPACT_HEADER,
    EXTRA_KWARGS_NOTE,
    HEADER,
    INSTRUCTIONS,
    NO_IMPORTS,
    TOOL_CALL_ERROR,
)
from .tree import (
    ClassDecl,
    DictT,
    ListT,
    Lit,
    MethodDecl,
    Prim,
    Ref,
    TupleT,
    TypeNode,
    UnionT,
    ordered_refs,
    refs_of,
)

__all__ = [
    "order_classes",
    "render_class",
    "render_classes",
    "render_compact",
    "render_full",
    "render_method",
    "render_type",
    "summary",
]

INDENT = "    "
#: Longest one-line summary in the compact index.
MAX_SUMMARY = 100


def render_type(node: TypeNode) -> str:
    if isinstance(node, Prim):
        return node.name
    if isinstance(node, Lit):
        return "Literal[" + ", ".join(repr(v) for v in node.values) + "]"
    if isinstance(node, UnionT):
        return " | ".join(render_type(m) for m in node.members)
    if isinstance(node, ListT):
        return f"list[{render_type(node.item)}]"
    if isinstance(node, TupleT):
        return "tuple[" + ", ".join(render_type(i) for i in node.items) + "]"
    if isinstance(node, DictT):
        return f"dict[str, {render_type(node.value)}]"
    if isinstance(node, Ref):
        return node.name
    raise TypeError(f"not a type node: {node!r}")


def _needs_escape(ch: str) -> bool:
    if ch in "\n\t":
        return False
    return unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp", "Cf") and ch != "\u200d"


def docstring(text: str, indent: str) -> str:
    """A docstring literal that is valid Python for any text.

    Raw when the text has backslashes but nothing else awkward, so a regex reads as written;
    otherwise escaped (control characters, surrogates, quote runs, a trailing quote).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    body = "\n".join([lines[0]] + [(indent + line) if line else "" for line in lines[1:]])
    awkward = '"""' in body or body.endswith(("\\", '"')) or any(_needs_escape(c) for c in body)
    if not awkward:
        return f'{indent}{"r" if chr(92) in body else ""}"""{body}"""'
    out = []
    for ch in body:
        if ch == "\\":
            out.append("\\\\")
        elif _needs_escape(ch):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    escaped = "".join(out).replace('"""', '""\\"')
    if escaped.endswith('"'):
        escaped = escaped[:-1] + '\\"'
    return f'{indent}"""{escaped}"""'


def _comment(text: str) -> str:
    """A one-line comment; characters that could end or break the line become spaces."""
    return "# " + " ".join("".join(" " if _needs_escape(c) else c for c in text).split())


def _key(key: str) -> str:
    return key if is_keyword_name(key) else repr(key)


def _annotation(node: TypeNode, defined: Collection[str], required: bool = True) -> str:
    """A field type; quoted when it names a class defined later (annotations run eagerly)."""
    text = render_type(node)
    if not refs_of(node) <= set(defined):
        text = repr(text)
    return text if required else f"NotRequired[{text}]"


def render_class(decl: ClassDecl, defined: Collection[str]) -> str:
    """One TypedDict; `defined` holds the classes declared above it."""
    if decl.functional:
        notes = [f for f in decl.fields if f.doc and decl.field_notes]
        comments = [_comment(f"{_key(f.key)}: {f.doc}") for f in notes]
        entries = [f"{f.key!r}: {_annotation(f.type, defined, f.required)}" for f in decl.fields]
        doc = [_comment(decl.doc)] if decl.doc else []
        line = f"{decl.name} = TypedDict({decl.name!r}, {{" + ", ".join(entries) + "})"
        return "\n".join(doc + comments + [line])
    lines = [f"class {decl.name}(TypedDict):"]
    doc_lines = [decl.doc] if decl.doc else []
    field_lines = [f"{f.key}: {f.doc}" for f in decl.fields if f.doc]
    if field_lines:
        doc_lines += field_lines
    if doc_lines:
        lines.append(docstring("\n".join(doc_lines), INDENT))
    for f in decl.fields:
        lines.append(f"{INDENT}{f.key}: {_annotation(f.type, defined, f.required)}")
    return "\n".join(lines)


def order_classes(classes: Mapping[str, ClassDecl]) -> list[ClassDecl]:
    """Dependencies first (depth-first, in field order), so only cycles need quoting."""
    out: list[ClassDecl] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in classes:
            return
        seen.add(name)
        for f in classes[name].fields:
            for dep in ordered_refs(f.type):
                visit(dep)
        out.append(classes[name])

    for name in classes:
        visit(name)
    return out


def render_classes(ordered: Sequence[ClassDecl]) -> dict[str, str]:
    """Each class's text, given the declaration order."""
    defined: set[str] = set()
    texts = {}
    for decl in ordered:
        texts[decl.name] = render_class(decl, defined)
        defined.add(decl.name)
    return texts


def render_method(decl: MethodDecl, *, standalone: bool = False) -> str:
    """One tool as `async def`: a protocol method, or a top-level function for describe."""
    indent = "" if standalone else INDENT
    parts = [] if standalone else ["self"]
    if decl.args is not None:
        parts += [f"args: {decl.args.decl.name}", "/"]
    elif decl.params:
        parts.append("*")
        for p in decl.params:
            text = f"{p.name}: {render_type(p.type)}"
            if not p.required:
                text += f" = {p.default if p.default is not None else 'None'}"
            parts.append(text)
    if decl.extra is not None:
        parts.append(f"**{decl.extra_name}: {render_type(decl.extra)}")
    head = f"{indent}async def {decl.method}({', '.join(parts)}) -> {render_type(decl.returns)}:"
    doc = _method_doc(decl)
    if not doc:
        return head + " ..."
    return head + "\n" + docstring(doc, indent + INDENT)


def _method_doc(decl: MethodDecl) -> str:
    text = inspect.cleandoc(decl.description) if decl.description.strip() else ""
    notes = []
    if decl.args is not None:
        notes.append(ARGS_FORM_NOTE)
        notes += [f"{_key(f.key)}: {f.doc}" for f in decl.args.decl.fields if f.doc]
    notes += [f"{p.name}: {p.doc}" for p in decl.params if p.doc]
    if decl.extra is not None and (decl.params or decl.args is not None):
        notes.append(EXTRA_KWARGS_NOTE)
    if notes:
        text = (text + "\n" if text else "") + "\n".join(notes)
    return text


def _instructions(namespace: str, imports: Sequence[str], notes: Sequence[str] = ()) -> str:
    listed = ", ".join(imports) if imports else NO_IMPORTS
    return "\n".join([INSTRUCTIONS.format(ns=namespace, imports=listed), *notes])


def render_full(
    methods: Iterable[MethodDecl],
    class_texts: Iterable[str],
    *,
    namespace: str,
    imports: Sequence[str],
    notes: Sequence[str] = (),
) -> str:
    """The whole SDK: instructions (and the tools' notes), then one Python block with every
    type and method."""
    blocks = [HEADER, TOOL_CALL_ERROR, *class_texts]
    body = [render_method(m) for m in methods]
    blocks.append("class Tools(Protocol):\n" + ("\n\n".join(body) if body else INDENT + "pass"))
    blocks.append(f"{namespace}: Tools")
    code = "\n\n".join(blocks)
    return f"{_instructions(namespace, imports, notes)}\n\n```python\n{code}\n```\n"


def summary(description: str) -> str:
    """First sentence of the first paragraph, on one line, capped at MAX_SUMMARY characters."""
    first = " ".join(description.strip().split("\n\n")[0].split())
    first = "".join(" " if _needs_escape(c) else c for c in first)
    for stop in (". ", "? ", "! "):
        if stop in first:
            first = first[: first.index(stop) + 1]
    if len(first) > MAX_SUMMARY:
        first = first[: MAX_SUMMARY - 3].rstrip() + "..."
    return first


def render_compact(
    methods: Sequence[MethodDecl], *, namespace: str, imports: Sequence[str], notes: Sequence[str] = ()
) -> str:
    """The index form for large tool sets: instructions, then `- name: summary` lines."""
    head = COMPACT_HEADER.format(count=len(methods), ns=namespace)
    lines = []
    for m in methods:
        text = summary(m.description)
        lines.append(f"- {m.method}: {text}" if text else f"- {m.method}")
    return f"{_instructions(namespace, imports, notes)}\n{head}\n\n" + "\n".join(lines) + "\n"
