"""Finding tools without reading them all: ``tools.search`` and descriptions that fit a budget.

MCP clients cut tool descriptions and server instructions at 2,048 characters (Claude Code
does), and a prompt budget is a host's to set. So the model-facing text about a tool set is
built in priority order and stops at the budget: how to write the program, how to find tools
(``await tools.search(...)``, ``tools.describe(...)``, ``tools.list()``), then an index of
tool names in the most detailed form that still fits. With the whole SDK inside the budget,
``auto`` gives the whole SDK instead.

Search ranks tools by their names, descriptions, parameter names and parameter descriptions
with a small weighted term scorer (BM25-style saturation and rarity weights), for requests as
people write them: filler words ("a", "the", "my") are ignored, a word also matches its light
synonyms (find/search, person/entity, save/commit, folder/directory, ...) and the vocabulary
words it is a prefix of, at lower weights, and a tool that matches more of the request's words
ranks above one that matches a rare word alone. It is deterministic: ties go to the name that
sorts first.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import sandbox
import sdk_gen

from . import messages as m

__all__ = [
    "DESCRIPTION_BUDGET",
    "DEFAULT_SEARCH_LIMIT",
    "MAX_SEARCH_LIMIT",
    "SDK_MODES",
    "SdkMode",
    "ToolIndex",
    "budgeted_text",
    "search_helper",
    "search_hits",
    "tool_index",
]

#: What Claude Code keeps of an MCP tool description or of server instructions.
DESCRIPTION_BUDGET = 2048
DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 50
SdkMode = Literal["full", "compact", "auto"]
SDK_MODES: tuple[str, ...] = ("full", "compact", "auto")

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WEIGHTS = {"name": 3.0, "params": 1.5, "text": 1.0, "param_text": 0.5}
_PREFIX_WEIGHT = 0.5
_SYNONYM_WEIGHT = 0.7
_EXACT_NAME_BONUS = 5.0
#: Words a request is written with that say nothing about which tool it wants.
_FILLER = frozenset(
    "a an the to in on at of for by from with and or my me i it its is are be this that these "
    "those some any what which whose where how please can could would want need next another "
    "there here".split()
)  # fmt: skip
#: Light synonyms (after stemming): how people ask, against how tools are described. A word
#: matches the others of its groups at ``_SYNONYM_WEIGHT``.
_SYNONYM_GROUPS = (
    "find search look lookup locate grep query match",
    "person people someone somebody entity node user",
    "save commit record",
    "add create make insert new",
    "remove delete forget drop erase",
    "change edit update modify replace",
    "show get read view display open fetch",
    "all list every enumerate",
    "folder directory dir",
    "picture image photo",
    "rename move",
    "history log",
    "stage add",
    "unstage reset",
    "remember observation fact note",
    "connect relation link relate",
    "download export",
    "restore recover undelete bring",
    "status state get show",
    "text content contents",
    "size info metadata",
    "time clock timezone",
)  # fmt: skip


def _synonym_map() -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for group in _SYNONYM_GROUPS:
        words = [_stem(w) for w in group.split()]
        for word in words:
            out.setdefault(word, set()).update(w for w in words if w != word)
    return {w: tuple(sorted(s)) for w, s in out.items()}


def _stem(word: str) -> str:
    """A light English stem: plurals and -ing/-ed, enough to match "files" with "file"."""
    if len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    for suffix in ("ing", "ed"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """Lower-case word stems of ``text``: ``readFile``, ``read_file`` and ``read files`` alike."""
    return [_stem(w.lower()) for w in _WORD.findall(text)]


_SYNONYMS = _synonym_map()


@dataclass(frozen=True, slots=True)
class _Entry:
    method: str
    fields: Mapping[str, tuple[str, ...]]


def _param_names(parameters: Any) -> list[str]:
    if not isinstance(parameters, Mapping):
        return []
    props = parameters.get("properties")
    return [str(k) for k in props] if isinstance(props, Mapping) else []


def _param_texts(parameters: Any) -> list[str]:
    """The parameters' own descriptions (``{"path": {"description": "Folder to list"}}``)."""
    props = parameters.get("properties") if isinstance(parameters, Mapping) else None
    if not isinstance(props, Mapping):
        return []
    return [p["description"] for p in props.values() if isinstance(p, Mapping) and isinstance(p.get("description"), str)]


class ToolIndex:
    """The search index of one SDK; build it with ``tool_index(sdk)`` (cached per SDK text)."""

    def __init__(self, sdk: sdk_gen.SDK) -> None:
        self.sdk = sdk
        entries = []
        for method in sdk.names():
            spec = sdk.specs[sdk.method_names[method]]
            description = spec.description if isinstance(spec.description, str) else ""
            fields = {
                "name": tuple(terms(method) + terms(spec.name)),
                "params": tuple(t for p in _param_names(spec.parameters) for t in terms(p)),
                "text": tuple(terms(description)),
                "param_text": tuple(t for p in _param_texts(spec.parameters) for t in terms(p)),
            }
            entries.append(_Entry(method, fields))
        self._entries = entries
        vocab: dict[str, int] = {}
        for entry in entries:
            for term in {t for ts in entry.fields.values() for t in ts}:
                vocab[term] = vocab.get(term, 0) + 1
        self._df = vocab
        self._vocab = sorted(vocab)

    def _idf(self, term: str) -> float:
        n = len(self._entries)
        return math.log(1 + (n + 1) / (self._df.get(term, 0) + 0.5))

    def _expand(self, term: str) -> list[tuple[str, float]]:
        """The term itself, its synonyms, and vocabulary words it is a prefix of."""
        out = {term: 1.0}
        for word in _SYNONYMS.get(term, ()):
            out.setdefault(word, _SYNONYM_WEIGHT)
        if len(term) >= 3:
            for word in self._vocab:
                if word != term and word.startswith(term):
                    out.setdefault(word, _PREFIX_WEIGHT)
        return list(out.items())

    def scores(self, query: str) -> list[tuple[float, str]]:
        """(score, method) for every tool that matches at least one query word, best first."""
        wanted = terms(query)
        joined = "_".join(wanted)
        asked = [t for t in dict.fromkeys(wanted) if t not in _FILLER] or list(dict.fromkeys(wanted))
        expanded = [(term, self._expand(term)) for term in asked]
        ranked = []
        for entry in self._entries:
            score = 0.0
            matched = 0
            for _term, words in expanded:
                best = 0.0
                for word, weight in words:
                    tf = sum(_WEIGHTS[f] * ts.count(word) for f, ts in entry.fields.items())
                    if tf:
                        best = max(best, weight * self._idf(word) * tf / (tf + 1.0))
                score += best
                matched += best > 0
            if score:
                score *= 0.5 + 0.5 * matched / len(expanded)  # more of the request beats one rare word
            if score and "_".join(terms(entry.method)) == joined:
                score += _EXACT_NAME_BONUS
            if score:
                ranked.append((score, entry.method))
        ranked.sort(key=lambda pair: (-pair[0], pair[1]))
        return ranked

    def search(self, query: str, limit: int = DEFAULT_SEARCH_LIMIT) -> list[str]:
        """The method names of the best ``limit`` matches. Raises ``ValueError`` for a query
        without a word or a limit outside 1..MAX_SEARCH_LIMIT."""
        if not isinstance(query, str) or not terms(query):
            raise ValueError(m.SEARCH_NO_QUERY)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ValueError(m.SEARCH_BAD_LIMIT.format(max=MAX_SEARCH_LIMIT, got=limit))
        return [method for _, method in self.scores(query)[:limit]]


_INDEX_CACHE: OrderedDict[str, ToolIndex] = OrderedDict()
_INDEX_LOCK = threading.Lock()
_INDEX_CACHE_SIZE = 16


def tool_index(sdk: sdk_gen.SDK) -> ToolIndex:
    """The (cached) search index of ``sdk``; the same tools give the same SDK hash."""
    key = sdk.sdk_hash + "/" + ",".join(sorted(sdk.wire_names))
    with _INDEX_LOCK:
        hit = _INDEX_CACHE.get(key)
        if hit is not None:
            _INDEX_CACHE.move_to_end(key)
            return hit
    index = ToolIndex(sdk)
    with _INDEX_LOCK:
        _INDEX_CACHE[key] = index
        while len(_INDEX_CACHE) > _INDEX_CACHE_SIZE:
            _INDEX_CACHE.popitem(last=False)
    return index


def search_hits(sdk: sdk_gen.SDK, query: str, limit: int = DEFAULT_SEARCH_LIMIT) -> list[dict[str, str]]:
    """What ``await tools.search(query)`` returns: ``{"name", "summary", "sdk"}`` per hit,
    best first, where ``sdk`` is the tool's full text (types, signature, docstring)."""
    methods = tool_index(sdk).search(query, limit)
    return [{"name": n, "summary": sdk.summary(n), "sdk": sdk.describe(n)} for n in methods]


# --- text within a budget -----------------------------------------------------------------------


def _groups(names: Sequence[str]) -> dict[str, list[str]]:
    """Tool names by their ``<server>__`` prefix ("" for names without one), in order."""
    out: dict[str, list[str]] = {}
    for name in names:
        head, sep, tail = name.partition("__")
        out.setdefault(head + sep if sep and tail else "", []).append(tail if sep and tail else name)
    return out


def _shared_word(members: Sequence[str]) -> str:
    """The ``word_`` every member of a group of three or more starts with (``git_`` of
    ``git_add, git_log, ...``), so the index need not repeat it; "" when there is none."""
    if len(members) < 3:
        return ""
    head = members[0].split("_", 1)[0] + "_"
    if len(head) < 3 or not all(n.startswith(head) and len(n) > len(head) for n in members):
        return ""
    return head


#: Verbs that make a tool a likely first call; earlier is more useful. The index shows these
#: first when a group's names do not all fit.
_USEFUL_VERBS = (
    "search", "find", "list", "read", "get", "grep", "glob", "query", "show", "status", "open",
    "create", "write", "add", "edit", "update", "run", "fetch", "diff", "log", "stat",
)  # fmt: skip


def _usefulness(name: str, description: str) -> tuple[int, int, int, int, str]:
    """Sort key, most useful first: a tool not marked deprecated, then one whose name leads
    with a common verb, then the one with fewer words and letters (the general tool before its
    variants)."""
    words = terms(name)
    verbs = [_USEFUL_VERBS.index(w) for w in words if w in _USEFUL_VERBS]
    deprecated = "deprecated" in description.lower()
    return (int(deprecated), min(verbs, default=len(_USEFUL_VERBS)), len(words), len(name), name)


def _interleaved(ranked: list[str]) -> list[str]:
    """``ranked`` taking one name per leading word in turn, so a short list of a large flat
    catalogue shows ``create_``, ``get_``, ``list_``, ... rather than forty ``search_`` tools."""
    buckets: dict[str, list[str]] = {}
    for name in ranked:
        buckets.setdefault(name.split("_", 1)[0], []).append(name)
    out: list[str] = []
    while len(out) < len(ranked):
        for bucket in buckets.values():
            if bucket:
                out.append(bucket.pop(0))
    return out


@dataclass(frozen=True, slots=True)
class _Group:
    prefix: str  # what every name of the group starts with ("" for unprefixed names)
    members: tuple[str, ...]  # the rest of each name, sorted
    ranked: tuple[str, ...]  # the same, most useful first

    def line(self, shown: int) -> str:
        """The group's index line naming its ``shown`` most useful members (sorted)."""
        names = sorted(self.ranked[:shown]) if shown < len(self.members) else list(self.members)
        rest = len(self.members) - len(names)
        text = ", ".join(names)
        if not names:
            text = m.INDEX_COUNT.format(count=rest)
        elif rest:
            text = f"{text}, {m.INDEX_MORE.format(count=rest)}"
        return f"- {self.prefix}: {text}" if self.prefix else f"- {text}"


def _description(sdk: sdk_gen.SDK, method: str) -> str:
    text = sdk.specs[sdk.method_names[method]].description
    return text if isinstance(text, str) else ""


def _index_groups(sdk: sdk_gen.SDK) -> list[_Group]:
    groups = []
    for prefix, members in _groups(sdk.names()).items():
        shared = _shared_word(members)
        rest = [n[len(shared):] for n in members]
        full = {r: prefix + shared + r for r in rest}
        ranked = _interleaved(sorted(rest, key=lambda r: _usefulness(full[r], _description(sdk, full[r]))))
        groups.append(_Group(prefix + shared, tuple(sorted(rest)), tuple(ranked)))
    return groups


def _names_index(groups: list[_Group], room: int | None, ns: str) -> str | None:
    """The names index within ``room``: every name when they fit, else the most useful names
    of each group (one more per group in turn, while the text fits) and "+N more"."""
    head = _names_head(groups, ns)

    def text(counts: list[int]) -> str:
        return head + "\n" + "\n".join(g.line(c) for g, c in zip(groups, counts, strict=True))

    counts = [len(g.members) for g in groups]
    if room is None or len(text(counts)) <= room:
        return text(counts)
    counts = [0] * len(groups)
    if len(text(counts)) > room:
        return None
    grown = True
    while grown:
        grown = False
        for i, group in enumerate(groups):
            if counts[i] < len(group.members):
                counts[i] += 1
                if len(text(counts)) <= room:
                    grown = True
                else:
                    counts[i] -= 1
    return text(counts)


def _index(sdk: sdk_gen.SDK, room: int | None) -> str:
    """The tool index, in the most detailed form that fits ``room``: names with summaries,
    then every name grouped by server prefix, then the most useful names of each group,
    then the groups cut at a line. Never empty while there are tools."""
    names = sdk.names()
    if not names:
        return m.INDEX_EMPTY
    lines = []
    for name in names:
        summary_text = sdk.summary(name)
        lines.append(f"- {name}: {summary_text}" if summary_text else f"- {name}")
    detailed = m.INDEX_HEAD + "\n" + "\n".join(lines)
    if room is None or len(detailed) <= room:
        return detailed
    groups = _index_groups(sdk)
    named = _names_index(groups, room, sdk.namespace)
    if named is not None:
        return named
    return _cut(_names_head(groups, sdk.namespace) + "\n" + "\n".join(g.line(0) for g in groups), room)


def _names_head(groups: list[_Group], ns: str) -> str:
    """The names index's first line; with prefixes, how a line reads as method names."""
    examples = [(len(g.prefix + n), g.prefix, n) for g in groups if g.prefix.endswith("__") for n in g.members]
    if not examples:
        return m.INDEX_HEAD_NAMES
    _, prefix, name = min(examples)
    return m.INDEX_HEAD_GROUPED.format(prefix=prefix, name=name, ns=ns)


#: The modules a discovery text names when it shortens the import list; an import outside the
#: list fails with a message that names every allowed module, so the rest can be found.
COMMON_IMPORTS = ("asyncio", "collections", "datetime", "itertools", "json", "math", "re", "statistics")


def _imports_line(line: str) -> str:
    """``Allowed imports: a, b, ...`` shortened to the common modules and a count of the rest."""
    names = [n.strip() for n in line[len("Allowed imports:"):].strip().rstrip(".").split(",")]
    common = [n for n in COMMON_IMPORTS if n in names]
    rest = len(names) - len(common)
    if rest <= 0:
        return line
    return m.IMPORTS_SHORT.format(common=", ".join(common), rest=rest)


def _instructions(sdk: sdk_gen.SDK) -> str:
    """The SDK's own instruction lines (how to write a program), through ``Allowed imports``
    (shortened: the discovery text has a budget), and the tools' notes after them."""
    lines = []
    for line in sdk.text.splitlines():
        if not line.strip():
            break
        if line.startswith("Allowed imports:"):
            lines.append(_imports_line(line))
            break
        lines.append(line)
    return "\n".join([*lines, *sdk.notes])


def _cut(text: str, room: int) -> str:
    """``text`` cut at a line (or word) boundary so it and the marker fit in ``room``."""
    if len(text) <= room:
        return text
    marker = m.INDEX_CUT
    keep = text[: max(0, room - len(marker))]
    at = max(keep.rfind("\n"), keep.rfind(", "))  # the last whole entry
    if at <= 0:
        at = keep.rfind(" ")
    keep = keep[:at] if at > 0 else ""
    return keep + marker if keep and len(keep) + len(marker) <= room else ""


def budgeted_text(
    sdk: sdk_gen.SDK,
    *,
    lead: str,
    budget: int | None = DESCRIPTION_BUDGET,
    mode: SdkMode = "auto",
) -> str:
    """``lead`` and then the SDK (``full``), or the discovery text (``compact``), or the SDK when
    the whole text fits ``budget`` and the discovery text otherwise (``auto``).

    The discovery text always fits ``budget`` (``None`` means no limit): the lead and how to
    find tools come first, then the most detailed tool index that fits, cut at a line if even
    the shortest form does not. Raises ``ValueError`` for an unknown mode or a budget too small
    for the lead and the discovery sentence.
    """
    if mode not in SDK_MODES:
        raise ValueError(f"sdk mode must be one of {', '.join(SDK_MODES)}, got {mode!r}")
    full = f"{lead}\n\n{sdk.text}"
    if mode == "full" or (mode == "auto" and (budget is None or len(full) <= budget)):
        return full
    rules = _instructions(sdk)
    discovery = m.DISCOVERY.format(count=len(sdk.method_names), ns=sdk.namespace)
    head = "\n\n".join(p for p in (lead, rules, discovery) if p)
    if budget is not None and len(head) > budget:
        raise ValueError(f"a budget of {budget} characters cannot hold the discovery text ({len(head)})")
    room = None if budget is None else budget - len(head) - 2
    index = _index(sdk, room)
    return f"{head}\n\n{index}" if index else head


def search_helper(sdk: sdk_gen.SDK) -> dict[str, Callable[..., Awaitable[Any]]]:
    """The ``search`` binding a run gets next to its tools: a host call that reads only
    ``sdk`` (no tool runs, nothing is logged), answering ``await tools.search(query, limit=5)``.
    A bad query or limit raises ``ToolCallError`` in the snippet."""

    async def search(*args: Any, **kwargs: Any) -> list[dict[str, str]]:
        query, limit = _search_arguments(args, kwargs)
        try:
            return search_hits(sdk, query, limit)
        except ValueError as exc:
            raise sandbox.BindingError(str(exc)) from None

    return {"search": search}


def _search_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    params = dict(kwargs)
    if len(args) > 2 or set(params) - {"query", "limit"}:
        raise sandbox.BindingError(m.SEARCH_ARGS)
    names = ("query", "limit")
    for name, value in zip(names, args, strict=False):
        if name in params:
            raise sandbox.BindingError(m.SEARCH_ARGS)
        params[name] = value
    if "query" not in params:
        raise sandbox.BindingError(m.SEARCH_NO_QUERY)
    return params["query"], params.get("limit", DEFAULT_SEARCH_LIMIT)
