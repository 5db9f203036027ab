"""Lossless JSON: the only shape of data that crosses between a snippet and its host.

`to_json_value` walks a value once, checks it and returns a plain copy made of dict (str keys),
list, str, int, float, bool and None, every string in it passed through `escape_surrogates`.
Tuples become lists; dict/list/tuple subclasses are read through the base type's own methods,
so a snippet's overridden `__iter__` or `items` never runs here. Anything else raises
`NotJSONError`, whose message names the offending part by path (`$.rows[3].when`) and says what
would work instead.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

MAX_DEPTH = 100
#: How many times its size limit a caller lets a value's walk go before refusing it unseen
#: (`max_bytes`): up to there the value is copied and its exact size reported; past it the
#: message says only "more than". Bounds the host's work to a few times the limit.
SIZE_SPAN = 16
#: Python refuses to turn ints over 4,300 digits into text; stay clear of that.
MAX_INT_BITS = 13_000


def escape_surrogates(text: str) -> str:
    """`text` with every surrogate code point (U+D800-U+DFFF) written as the six characters
    `\\udXXX`, the `backslashreplace` form. Lone surrogates cannot be encoded as UTF-8, so text
    crosses every boundary of a run (source, printed output, exception text, the returned value,
    binding arguments and results, and the worker channel) through this one escape, and a run
    that holds one keeps its kind and its output. The escape is one-way: a snippet that prints
    the six characters itself reads back the same."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class NotJSONError(ValueError):
    """The value is not lossless JSON; `path` locates the offending part."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{problem} at {path}")


class TooLargeError(ValueError):
    """The value's JSON text would be longer than `limit` bytes, found before it was copied:
    its items and its strings' characters, counted where they appear (a list that holds the
    same list, or the same string, twice counts it twice), are more than `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"the value is more than {limit} bytes of JSON")


_TYPE_NAME = type.__dict__["__name__"]


def type_name(kind: type) -> str:
    """A type's name as an exact `str`, for host text: read from its slot (never a metaclass's
    answer), and copied, since a snippet may set its class's `__name__` to a `str` subclass whose
    `__format__` would otherwise run, or raise, wherever the host formats the name."""
    name = _TYPE_NAME.__get__(kind)
    return str.__str__(name) if isinstance(name, str) else "?"


def _type_name(value: Any) -> str:
    # Never call repr() here: a snippet's __repr__ may raise or lie.
    return type_name(type(value))


#: Where a part sits: the root's name, or a (where its container sits, key or index) link,
#: written out only for an error. Text built for every item costs the length of its path each
#: time (a 200,000-item list under a 200,000-character key took seconds of host CPU).
_Where = Any


def _path(where: _Where) -> str:
    steps: list[str] = []
    while type(where) is tuple:
        where, step = where
        steps.append(f"[{step}]" if type(step) is int else f"[{json.dumps(step)}]")
    return where + "".join(reversed(steps))


class _Walk:
    """One `to_json_value` walk: the containers on the current path (a cycle), the containers
    seen so far (sharing), and how many more bytes of JSON it may copy (`room`: each item and
    each character of a string is at least one)."""

    __slots__ = ("active", "seen", "room", "limit", "root", "counted")

    def __init__(self, root: Any, limit: int) -> None:
        self.active: set[int] = set()
        self.seen: set[int] = set()
        self.room = limit
        self.limit = limit
        self.root = root
        self.counted = False

    def enter(self, container: Any, where: _Where, items: int) -> int:
        """Start copying `container`, which holds `items` items; its id, for `active`."""
        key = id(container)
        if key in self.active:
            raise NotJSONError(_path(where), "value contains a cycle (it refers to itself)")
        self.room -= items
        if self.room < 0:
            raise TooLargeError(self.limit)
        if key in self.seen and not self.counted:
            # Shared: a list that holds the same list twice, forty levels deep, is 2**40 items
            # to copy, so count them all first (each shared container once) and refuse at once.
            self.counted = True
            if _expanded(self.root, {}, 0) > self.limit:
                raise TooLargeError(self.limit)
        self.seen.add(key)
        self.active.add(key)
        return key

    def take(self, size: int) -> None:
        self.room -= size
        if self.room < 0:
            raise TooLargeError(self.limit)


def _children(value: Any) -> Any:
    """The items of a dict, list or tuple (subclasses too), through the base type's own
    methods, so no snippet code runs; None for anything else."""
    if isinstance(value, dict):
        return dict.values(value)
    if isinstance(value, list):
        return list.__iter__(value)
    if isinstance(value, tuple):
        return tuple.__iter__(value)
    return None


def _expanded(value: Any, memo: dict[int, int], depth: int) -> int:
    """How many items copying `value` would take, each shared container counted where it
    appears but walked once (a cycle, or nesting past `MAX_DEPTH`, counts nothing: the copy
    refuses it itself)."""
    children = _children(value)
    if children is None or depth >= MAX_DEPTH:
        return 0
    key = id(value)
    if key in memo:
        return memo[key]
    memo[key] = 0
    total = 0
    for child in children:
        total += 1 + _expanded(child, memo, depth + 1)
    memo[key] = total
    return total


def _convert(value: Any, where: _Where, depth: int, walk: _Walk) -> Any:
    t = type(value)
    if t is str:
        # Charged before it is escaped (a copy, for text with a lone surrogate): a list of one
        # long string a hundred thousand times took gigabytes before the size was checked.
        walk.take(len(value))
        return escape_surrogates(value)
    if value is None or t is bool:
        return value
    if t is int:
        bits = value.bit_length()
        if bits > MAX_INT_BITS:
            raise NotJSONError(_path(where), "integer has more than 4000 digits; return it as a string")
        if bits > 64:
            walk.take(bits >> 2)  # fewer than its digits: a digit holds under four bits
        return value  # 21 characters at most: a bound on copying, not the text's exact length
    if t is float:
        if math.isnan(value) or math.isinf(value):
            raise NotJSONError(_path(where), f"{value} is not JSON (NaN and infinity have no JSON form)")
        return value
    if depth >= MAX_DEPTH:
        raise NotJSONError(_path(where), f"value is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        key = walk.enter(value, where, dict.__len__(value))
        out = {}
        for k, v in dict.items(value):
            if type(k) is not str:
                raise NotJSONError(
                    _path(where), f"dict key of type {_type_name(k)} is not JSON (keys must be str)"
                )
            walk.take(len(k))
            out[escape_surrogates(k)] = _convert(v, (where, k), depth + 1, walk)
        walk.active.discard(key)
        return out
    if isinstance(value, (list, tuple)):
        if isinstance(value, list):
            key = walk.enter(value, where, list.__len__(value))
            items = list.__iter__(value)
        else:
            key = walk.enter(value, where, tuple.__len__(value))
            items = tuple.__iter__(value)
        out_list = [_convert(v, (where, i), depth + 1, walk) for i, v in enumerate(items)]
        walk.active.discard(key)
        return out_list
    if isinstance(value, str):
        plain = str.__str__(value)
        walk.take(len(plain))
        return escape_surrogates(plain)
    if isinstance(value, (set, frozenset)):
        raise NotJSONError(_path(where), f"{_type_name(value)} is not JSON; convert it with sorted(...)")
    if isinstance(value, (bytes, bytearray)):
        raise NotJSONError(_path(where), f"{_type_name(value)} is not JSON; decode it to str first")
    if isinstance(value, bool) or isinstance(value, (int, float)):
        raise NotJSONError(_path(where), f"{_type_name(value)} is not JSON; convert it with int() or float()")
    if callable(value):
        raise NotJSONError(_path(where), f"{_type_name(value)} is not JSON (functions cannot be returned)")
    raise NotJSONError(
        _path(where), f"{_type_name(value)} is not JSON; convert it to dict, list, str or a number"
    )


def to_json_value(value: Any, path: str = "$", max_bytes: int | None = None) -> Any:
    """A plain lossless-JSON copy of `value`, or `NotJSONError` naming what is wrong and where.

    max_bytes: refuse (`TooLargeError`) a value whose JSON text would be longer, before copying
    past it: its items, its strings' characters and its long integers' digits are counted as
    copying meets them (each is at least a byte of the text), a shared container or string
    wherever it appears."""
    t = type(value)
    if value is None or t is bool or (t is int and value.bit_length() <= 64 and (max_bytes is None or max_bytes >= 21)):
        return value  # a scalar that fits any limit (the common tool result): no walk to set up
    return _convert(value, path, 0, _Walk(value, sys.maxsize if max_bytes is None else max_bytes))


def dumps(value: Any) -> str:
    """Compact JSON text of a value already checked by `to_json_value`."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
