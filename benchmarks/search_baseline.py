"""The search scorer as it was before the plain-language ranking (main at 72706d5), kept so
bench_discovery.py can show both side by side. Not used by codemode."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import sdk_gen

DEFAULT_SEARCH_LIMIT = 5
MAX_SEARCH_LIMIT = 50
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


class BaselineIndex:
    """The old scorer over one SDK."""

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
            raise ValueError("no query")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
            raise ValueError("bad limit")
        return [method for _, method in self.scores(query)[:limit]]


