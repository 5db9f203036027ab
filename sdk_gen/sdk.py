"""Tool specs in, SDK out: the `generate` entry point and the immutable `SDK` it returns.

Generation is total over schemas (a broken one degrades to `Any`, for that part or that tool)
and deterministic over tool sets (tools are sorted by wire name before anything is named or
rendered). Results are cached by content, so regenerating for an unchanged set is cheap.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from .names import map_names
from .render import (
    order_classes,
    render_classes,
    render_compact,
    render_full,
    render_method,
    render_type,
    summary,
)
from .schema import RESERVED_CLASS_NAMES, ClassTable, ToolConverter, degraded_method, pascal
from .tree import ArgsDecl, ClassDecl, MethodDecl, rename_refs

__all__ = ["DEFAULT_BUDGET", "SDK", "ToolSpec", "generate"]

#: Full SDK text longer than this (in characters) is replaced by the compact index.
#: About 8k tokens: room for a few dozen typical tools before discovery pays off.
DEFAULT_BUDGET = 32_000

_CACHE_SIZE = 64
_cache: OrderedDict[tuple[Any, ...], SDK] = OrderedDict()
_cache_lock = threading.Lock()
_DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


@dataclass(frozen=True)
class ToolSpec:
    """One tool as plain data: the wire name, a description and JSON Schemas.

    `parameters` and `output` may be any value; parts that aren't usable JSON Schema are
    rendered as `Any` rather than rejected, because tool servers ship imperfect schemas.
    `note` is one sentence the SDK's instructions carry while this tool is in the set (how a
    family of tools is used, say); equal notes are shown once.
    """

    name: str
    description: str
    parameters: Any
    output: Any = None
    note: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise TypeError(f"ToolSpec.name must be a str, got {type(self.name).__name__}")


def _did_you_mean(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


@dataclass(frozen=True, eq=False, repr=False)
class SDK:
    """The model-facing SDK text plus what the bridge and `check` need to act on it.

    `method_names` maps method -> wire name and `wire_names` the reverse; `specs` holds each
    tool's `ToolSpec` by wire name. `exact_tools` lists the methods whose types say exactly
    what their parameter schema says (no `Any`, nothing widened).
    """

    text: str
    sdk_hash: str
    compact: bool
    namespace: str
    method_names: Mapping[str, str]
    wire_names: Mapping[str, str]
    specs: Mapping[str, ToolSpec]
    exact_tools: frozenset[str]
    _describe: Mapping[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    #: The modules the text says a program may import (sorted); pre-flight refuses others.
    imports: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"SDK(tools={len(self.method_names)}, compact={self.compact}, sdk_hash={self.sdk_hash[:12]!r})"

    def names(self) -> list[str]:
        """Method names, sorted: what `tools.list()` shows."""
        return sorted(self.method_names)

    def resolve(self, name: str) -> str | None:
        """Method name for a method or wire name, or None when neither is known."""
        if name in self.method_names:
            return name
        return self.wire_names.get(name)

    def summary(self, name: str) -> str:
        """One tool's one-line summary, as the compact index shows it (KeyError as `describe`)."""
        self.describe(name)
        method = self.resolve(name)
        description = self.specs[self.method_names[method]].description  # type: ignore[index]
        return summary(description if isinstance(description, str) else "")

    def describe(self, name: str) -> str:
        """One tool's full text (types it uses, then its signature and docstring).

        Raises KeyError, with a did-you-mean, for a name that is neither a method nor a wire name.
        """
        method = self.resolve(name)
        if method is None:
            choices = set(self.method_names) | set(self.wire_names)
            raise KeyError(f"unknown tool {name!r}{_did_you_mean(name, choices)}")
        return self._describe[method]


def _fingerprint(spec: ToolSpec) -> tuple[str, ...] | None:
    """Content key for caching; None (no caching) when repr can't pin the content down."""
    try:
        parts = (spec.name, repr(spec.description), repr(spec.parameters), repr(spec.output), repr(spec.note))
    except Exception:
        return None
    if any("{...}" in p or "[...]" in p or " at 0x" in p for p in parts[2:4]):
        return None
    return parts


def _closure(start: set[str], classes: Mapping[str, ClassDecl]) -> set[str]:
    seen: set[str] = set()
    todo = list(start)
    while todo:
        name = todo.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        todo.extend(classes[name].refs())
    return seen


def _check_options(
    namespace: str, allowed_imports: Sequence[str], budget: int | None
) -> tuple[str, ...]:
    if not (isinstance(namespace, str) and namespace.isascii() and namespace.isidentifier()):
        raise ValueError(f"namespace must be an ASCII identifier, got {namespace!r}")
    if namespace in RESERVED_CLASS_NAMES:
        raise ValueError(f"namespace {namespace!r} would shadow a name the SDK text uses")
    if budget is not None and (
        not isinstance(budget, int) or isinstance(budget, bool) or budget < 0
    ):
        raise ValueError(f"budget must be None or an int >= 0, got {budget!r}")
    if isinstance(allowed_imports, str):
        raise TypeError("allowed_imports must be a sequence of module names, not one str")
    bad = [m for m in allowed_imports if not (isinstance(m, str) and _DOTTED.match(m))]
    if bad:
        raise ValueError(f"allowed_imports must be dotted module names; bad: {bad!r}")
    return tuple(sorted(set(allowed_imports)))


def generate(
    tools: Iterable[ToolSpec],
    *,
    allowed_imports: Sequence[str] = (),
    budget: int | None = DEFAULT_BUDGET,
    namespace: str = "tools",
) -> SDK:
    """Build the SDK for a tool set; the same set in any order gives the same text.

    Raises TypeError for an item that isn't a ToolSpec, and ValueError for duplicate tool
    names or bad options (each naming the culprit). Never raises because of a schema.
    """
    specs = list(tools)
    wrong = [type(s).__name__ for s in specs if not isinstance(s, ToolSpec)]
    if wrong:
        raise TypeError(f"generate() takes ToolSpec items; got {', '.join(sorted(set(wrong)))}")
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    duplicates = sorted(n for n, c in counts.items() if c > 1)
    if duplicates:
        raise ValueError(f"duplicate tool names: {', '.join(map(repr, duplicates))}")
    imports = _check_options(namespace, allowed_imports, budget)
    prints = [_fingerprint(s) for s in specs]
    key = None if None in prints else (tuple(sorted(prints)), imports, budget, namespace)  # type: ignore[type-var]
    if key is not None:
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
                return hit
    sdk = _build(specs, imports, budget, namespace)
    if key is not None:
        with _cache_lock:
            _cache[key] = sdk
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return sdk


def clear_cache() -> None:
    """Forget cached SDKs (benchmarks use it to measure cold generation)."""
    with _cache_lock:
        _cache.clear()


def _rename_class(decl: ClassDecl, names: Mapping[str, str]) -> ClassDecl:
    fields = tuple(replace(f, type=rename_refs(f.type, names)) for f in decl.fields)
    return replace(decl, fields=fields)


def _shape_key(name: str, decl: ClassDecl) -> tuple[Any, ...]:
    return (
        decl.doc,
        tuple(
            (f.key, f.required, f.doc, render_type(rename_refs(f.type, {name: "<self>"})))
            for f in decl.fields
        ),
    )


def _neutral_name(
    group: list[str], decl: ClassDecl, owned: Mapping[str, tuple[str, str]], taken: set[str]
) -> str:
    """The one name a structure several tools share goes by.

    A name that is not a tool's own (a schema title, a field's name) is kept. Tool-named ones
    (`FsReadFileResult`, `FsWriteFileResult`) would lie for all tools but the first, so the
    structure names it (`ContentResult`, from its fields), else the server (`FsResult`), else
    the tool names stay apart: each tool keeps its own class.
    """
    plain = [n for n in group if n not in owned]
    if plain:
        return plain[0]
    rests = {owned[n][1] for n in group}
    rest = min(rests) if len(rests) == 1 else ""
    keys = [f.key for f in decl.fields if f.required] or [f.key for f in decl.fields]
    candidates = []
    if rest and keys and len(keys) <= 2:
        candidates.append("".join(pascal(k) for k in keys) + rest)
    servers = {owned[n][0].split("__", 1)[0] if "__" in owned[n][0] else "" for n in group}
    if rest and len(servers) == 1 and "" not in servers:
        candidates.append(pascal(servers.pop()) + rest)
    for candidate in candidates:
        if candidate not in taken and candidate not in RESERVED_CLASS_NAMES:
            return candidate
    return ""


def _merge_duplicates(
    classes: Mapping[str, ClassDecl], methods: list[MethodDecl], owned: Mapping[str, tuple[str, str]]
) -> tuple[dict[str, ClassDecl], list[MethodDecl]]:
    """Merge structurally identical classes (tools often share `$defs` and result shapes).

    Repeated until nothing changes, since merging children can make parents identical. A
    method's own argument dict is never merged away: its name is part of its signature. The
    merged class keeps a name none of its tools would misread (`_neutral_name`); when there is
    none, the classes stay apart.
    """
    current = dict(classes)
    keep = {m.args.decl.name for m in methods if m.args is not None}
    total: dict[str, str] = {}
    apart: set[tuple[Any, ...]] = set()
    while True:
        groups: dict[tuple[Any, ...], list[str]] = {}
        for name, decl in current.items():
            key = _shape_key(name, decl)
            if name in keep or key in apart:
                continue
            groups.setdefault(key, []).append(name)
        names: dict[str, str] = {}
        for key, group in groups.items():
            if len(group) < 2:
                continue
            target = _neutral_name(group, current[group[0]], owned, set(current) - set(group))
            if not target:
                apart.add(key)
                continue
            names.update({n: target for n in group if n != target})
        if not names:
            break
        total = {old: names.get(new, new) for old, new in total.items()} | names
        renamed: dict[str, ClassDecl] = {}
        for n, d in current.items():
            target = names.get(n, n)
            if target not in renamed:
                renamed[target] = replace(_rename_class(d, names), name=target)
        current = renamed
    if not total:
        return current, methods
    out = []
    for m in methods:
        out.append(
            replace(
                m,
                params=tuple(replace(p, type=rename_refs(p.type, total)) for p in m.params),
                args=None if m.args is None else ArgsDecl(current[m.args.decl.name]),
                extra=None if m.extra is None else rename_refs(m.extra, total),
                returns=rename_refs(m.returns, total),
            )
        )
    return current, out


def _build(
    specs: list[ToolSpec], imports: tuple[str, ...], budget: int | None, namespace: str
) -> SDK:
    names = map_names(s.name for s in specs)
    table = ClassTable(frozenset({namespace}))
    methods: list[MethodDecl] = []
    exact: set[str] = set()
    for spec in sorted(specs, key=lambda s: s.name):
        method = names[spec.name]
        description = spec.description if isinstance(spec.description, str) else ""
        converter = ToolConverter(table, pascal(method, "Tool"))
        try:
            decl = converter.method(method, spec.name, description, spec.parameters, spec.output)
        except Exception:  # totality: a bug or a hostile schema costs this tool its types only
            decl = degraded_method(method, spec.name, description)
        else:
            converter.commit()
            if converter.exact:
                exact.add(method)
        methods.append(decl)
    classes, methods = _merge_duplicates(table.decls, methods, table.owned)
    ordered = order_classes(classes)
    class_texts = render_classes(ordered)
    describe = {}
    for decl in methods:
        needed = _closure(decl.refs(), classes)
        blocks = [class_texts[c.name] for c in ordered if c.name in needed]
        describe[decl.method] = "\n\n".join([*blocks, render_method(decl, standalone=True)]) + "\n"
    notes = tuple(sorted({s.note.strip() for s in specs if isinstance(s.note, str) and s.note.strip()}))
    full = render_full(methods, class_texts.values(), namespace=namespace, imports=imports, notes=notes)
    compact = budget is not None and len(full) > budget
    text = render_compact(methods, namespace=namespace, imports=imports, notes=notes) if compact else full
    return SDK(
        text=text,
        sdk_hash=hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        compact=compact,
        namespace=namespace,
        method_names=MappingProxyType({m: w for w, m in names.items()}),
        wire_names=MappingProxyType(dict(names)),
        specs=MappingProxyType({s.name: s for s in sorted(specs, key=lambda s: s.name)}),
        exact_tools=frozenset(exact),
        _describe=MappingProxyType(describe),
        notes=notes,
        imports=imports,
    )
