"""The host enum classes' value-to-member maps, kept free of a run's objects.

A flag class called with a snippet's `int` subclass (`type(re.I)(x)`) caches a pseudo member
under that object in the class's `_value2member_map_`, a table every later run and the host
share: the host's own `RegexFlag(90)` would then hand back the run's object. The maps of the
shared enum classes keep only plain keys (`PlainKeyedMap`, set by the freeze), whenever the
call comes (a review's came late, from a freed generator, after the clean-up); the in-process
clean-up still drops whatever else a run added to any enum's map (`EnumValueMaps`).
"""

from __future__ import annotations

import enum
import sys
import typing

#: The value types a host enum's value-to-member map is keyed on; anything else in it was put
#: there by a run (a flag class called with a snippet's lying `int` subclass caches a pseudo
#: member under that object, `type(re.I)(x)` for example).
_PLAIN_VALUES = frozenset({int, str, bytes, float, bool, type(None)})


class PlainKeyedMap(dict):  # type: ignore[type-arg]
    """A shared enum class's `_value2member_map_`: what enum's own code adds under a key that is
    not plain (`plain_key`) is not kept. `Flag._missing_` then makes the pseudo member anew on
    every call, as it would for a value it has not seen, and hands it back all the same."""

    __slots__ = ()

    def __setitem__(self, key: object, value: object) -> None:
        if plain_key(key):
            dict.__setitem__(self, key, value)

    def setdefault(self, key: object, default: object = None) -> object:
        return dict.setdefault(self, key, default) if plain_key(key) else default


def keep_plain_keys(cls: type) -> None:
    """Give the enum class `cls` a `PlainKeyedMap` (before the freeze makes it immutable)."""
    members = type.__getattribute__(cls, "__dict__").get("_value2member_map_")
    if type(members) is dict and isinstance(cls, enum.EnumType):
        type.__setattr__(cls, "_value2member_map_", PlainKeyedMap(members))


#: Items a key may hold, nested ones included, for `plain_key` to look at before it calls the
#: key not plain (a host enum's values are a few scalars or short tuples).
_KEY_ITEMS = 256


def plain_key(key: object) -> bool:
    """A key hashing and comparing runs no snippet code: a plain scalar, or an exact tuple or
    frozenset of plain keys (read through the base types' own iterators), walked with a stack
    and at most `_KEY_ITEMS` items. A tuple holding a snippet object hashes it: the clean-up
    once ran a sealed run's `__hash__` that way, whose stop then escaped into the host on every
    later run; a tuple nested 3,000 deep once overflowed the host's stack there."""
    pending = [key]
    budget = _KEY_ITEMS
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind in _PLAIN_VALUES:
            continue
        if kind is tuple:
            items: typing.Any = tuple.__iter__(item)  # type: ignore[arg-type]
        elif kind is frozenset:
            items = frozenset.__iter__(item)  # type: ignore[arg-type]
        else:
            return False
        for inner in items:
            budget -= 1
            if budget < 0:
                return False
            pending.append(inner)
    return True


#: The enum types a stdlib enum class derives from directly; a new direct subclass of one of
#: them (a module defining enums, or a snippet's own) makes the next check walk every class.
_ENUM_BASES = (enum.Enum, enum.IntEnum, enum.StrEnum, enum.Flag, enum.IntFlag, enum.ReprEnum)


class EnumValueMaps:
    """Every enum class's value-to-member map, and how many keys each held after the last run.

    Walking all enum classes after every in-process run cost a quarter of a `return 1` run. A
    run can add a key to a map (a flag class called with a snippet's lying `int` subclass caches
    a pseudo member under it) but never remove one, so a map whose length is unchanged gained
    no key. The maps are found again by a walk only when a class may have appeared: a module was
    imported, or an enum base type has another direct subclass.

    Only shared classes' maps are kept (the immutable ones, frozen or C): a run's own enum class
    goes with its run, and a review's stayed alive for good here, its members holding the class
    and everything hanging off it.
    """

    def __init__(self) -> None:
        self.signature: tuple[int, ...] = ()
        self.maps: list[dict[object, object]] = []
        self.lengths: list[int] = []

    def _signature(self) -> tuple[int, ...]:
        return (len(sys.modules), *map(len, map(type.__subclasses__, _ENUM_BASES)))

    def drop_foreign(self) -> int:
        """Remove the keys a run added that are not plain values, so a lying object cannot
        answer the host's later `RegexFlag(...)` lookups; how many maps held any."""
        signature = self._signature()
        if signature == self.signature and list(map(len, self.maps)) == self.lengths:
            return 0
        rebuilt = 0
        maps = []
        pending = [enum.Enum]
        while pending:
            cls = pending.pop()
            pending.extend(type.__subclasses__(cls))
            if not type.__dict__["__flags__"].__get__(cls) & _IMMUTABLE:
                continue  # a run's own (or a host class no run reaches)
            members = cls.__dict__.get("_value2member_map_")
            if isinstance(members, dict):
                maps.append(members)
                if not all(map(plain_key, members)):
                    # Rebuilt, not popped: popping hashes the snippet's key, which runs its code.
                    kept = {k: v for k, v in members.items() if plain_key(k)}
                    members.clear()
                    members.update(kept)
                    rebuilt += 1
        self.signature, self.maps, self.lengths = signature, maps, list(map(len, maps))
        return rebuilt


#: Py_TPFLAGS_IMMUTABLETYPE, the flag of the shared classes (`crossing.make_immutable`): its
#: own copy here, since `crossing` imports this module and no import circle is allowed.
_IMMUTABLE = 1 << 8

#: The process's one record of the enum maps (the in-process clean-up).
ENUM_VALUE_MAPS = EnumValueMaps()
