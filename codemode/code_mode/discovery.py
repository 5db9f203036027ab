"""Finding tools without reading them all: ``tools.search`` and descriptions that fit a budget.

MCP clients cut tool descriptions and server instructions at 2,048 characters (Claude Code
does), and a prompt budget is a host's to set. So the model-facing text about a tool set is
built in priority order and stops at the budget: how to write the program, how to find tools
(``await tools.search(...)``, ``tools.describe(...)``, ``tools.list()``), then an index of
tool names in the most detailed form that still fits. With the whole SDK inside the budget,
``auto`` gives the whole SDK instead.

Search ranks tools by their names, descriptions and parameter names with a small weighted
term scorer (BM25-style saturation and rarity weights, prefix matches at half weight). It is
deterministic: ties go to the name that sorts first.
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
_WEIGHTS = {"name": 3.0, "params": 1.5, "text": 1.0}
_PREFIX_WEIGHT = 0.5
_EXACT_NAME_BONUS = 5.0


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


@dataclass(frozen=True, slots=True)
class _Entry:
    method: str
    fields: Mapping[str, tuple[str, ...]]


def _param_names(parameters: Any) -> list[str]:
    if not isinstance(parameters, Mapping):
        return []
    props = parameters.get("properties")
    return [str(k) for k in props] if isinstance(props, Mapping) else []


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
        """The term itself, and vocabulary words it is a prefix of (at half weight)."""
        out = [(term, 1.0)]
        if len(term) >= 3:
            out.extend((w, _PREFIX_WEIGHT) for w in self._vocab if w != term and w.startswith(term))
        return out

    def scores(self, query: str) -> list[tuple[float, str]]:
        """(score, method) for every tool that matches at least one query word, best first."""
        wanted = terms(query)
        joined = "_".join(wanted)
        ranked = []
        for entry in self._entries:
            score = 0.0
            for term in dict.fromkeys(wanted):
                best = 0.0
                for word, weight in self._expand(term):
                    tf = sum(_WEIGHTS[f] * ts.count(word) for f, ts in entry.fields.items())
                    if tf:
                        best = max(best, weight * self._idf(word) * tf / (tf + 1.0))
                score += best
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


def _index_forms(sdk: sdk_gen.SDK) -> list[str]:
    """The tool index, most detailed form first: names with summaries, names grouped by
    server prefix, then only the prefixes with their counts."""
    names = sdk.names()
    if not names:
        return [m.INDEX_EMPTY]
    lines = []
    for name in names:
        text = sdk.summary(name)
        lines.append(f"- {name}: {text}" if text else f"- {name}")
    forms = [m.INDEX_HEAD + "\n" + "\n".join(lines)]
    groups = _groups(names)
    grouped = []
    for prefix, members in groups.items():
        if prefix:
            grouped.append(f"- {prefix}: {', '.join(members)}")
        else:
            grouped.append(f"- {', '.join(members)}")
    forms.append(m.INDEX_HEAD_NAMES + "\n" + "\n".join(grouped))
    if len(groups) > 1 or "" not in groups:
        counts = ", ".join(f"{p or '(no prefix)'} ({len(v)})" for p, v in groups.items())
        forms.append(m.INDEX_HEAD_PREFIXES.format(groups=counts))
    return forms


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
    forms = _index_forms(sdk)
    for form in forms:
        if room is None or len(form) <= room:
            return f"{head}\n\n{form}"
    cut = _cut(forms[-1], room or 0)
    return f"{head}\n\n{cut}" if cut else head


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
