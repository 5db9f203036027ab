"""The hostile zoo: snippet-made objects that lie, and recorders that keep what host code hands them.

Every shim function is host code acting on whatever a snippet passes it. The zoo is the set of
arguments a hostile snippet would pass: builtin subclasses that lie in their data-model methods
(`__eq__`, `__hash__`, `__bytes__`, `__format__`, `__index__`, `encode`, `translate`), an object
whose `__getattr__` answers every name, a class with a planted `__dataclass_fields__` naming
`__setattr__`/`__class__`/`__traceback__`/`__reduce_ex__`, classes with copy hooks
(`__reduce_ex__`, `__copy__`, `__deepcopy__`, `__getstate__`/`__setstate__`), properties,
descriptors, and recorder callbacks.

Everything here is *snippet code*: `ZOO_SOURCE` is compiled and run under the sandbox's policy
(`run_snippet`), so each zoo object has exactly the rights a snippet's object has. Every hook
appends what it received to the run's `LOG` (`rec`), and answers with a small value (2, a
one-letter text), so a host loop driven by a lying `__index__` stays short.

`forbidden_reason` (host side) is the oracle: by identity and exact type, never by name, it says
why a snippet must never hold an object (a real module, frame, code object, traceback, the real
`getattr`, a sandbox-internal object, a raw method of a checked sandbox class, ...: the
reachability crawl's oracle, `test_reachability.forbidden_reason`), plus what only matters when
host code hands it over: a host-shared mutable container.
"""

from __future__ import annotations

import functools
import gc
import sys
import types
from typing import Any

import sandbox
from sandbox import crossing, guards, shims
from sandbox.execution import Execution
from sandbox.policy import HOST_METHOD_NAMES, RUNTIME_CHECKED_ATTRIBUTES

#: The zoo itself, as a snippet prologue. `ZOO` maps a name to a zoo value; `LOG` is the
#: recorder log; `BUILT` lists the members that could be built (the rest were refused by the
#: policy or the guards, and are reported by `test_zoo_is_built`).
ZOO_SOURCE = '''
import dataclasses
LOG = []
ZOO = {}
REFUSED = {}
def rec(tag, *args, **kwargs):
    LOG.append((tag, args, kwargs))

def add(name, make):
    try:
        ZOO[name] = make()
    except Exception as e:
        REFUSED[name] = repr(e)

class LyingStr(str):
    def __eq__(self, other):
        rec('LyingStr.__eq__', other)
        return True
    def __ne__(self, other):
        rec('LyingStr.__ne__', other)
        return False
    def __hash__(self):
        rec('LyingStr.__hash__')
        return 0
    def __format__(self, spec):
        rec('LyingStr.__format__', spec)
        return 'f'
    def __str__(self):
        rec('LyingStr.__str__')
        return 's'
    def encode(self, *args, **kwargs):
        rec('LyingStr.encode', *args, **kwargs)
        return b'e'
    def translate(self, table):
        rec('LyingStr.translate', table)
        return 't'
    def __getitem__(self, key):
        # Lies about the content, not about the length: a host loop that reads until
        # IndexError (a parser) still ends.
        rec('LyingStr.__getitem__', key)
        if type(key) is int and not -2 <= key < 2:
            raise IndexError('string index out of range')
        return 'g'
    def __iter__(self):
        rec('LyingStr.__iter__')
        return iter(['i'])
    def __len__(self):
        rec('LyingStr.__len__')
        return 2
    def __mod__(self, other):
        rec('LyingStr.__mod__', other)
        return 'm'
    def join(self, items):
        rec('LyingStr.join', items)
        return 'j'
    def split(self, *args, **kwargs):
        rec('LyingStr.split', *args, **kwargs)
        return ['a']
    def replace(self, *args):
        rec('LyingStr.replace', *args)
        return 'r'
    def startswith(self, *args):
        rec('LyingStr.startswith', *args)
        return True
    def lower(self):
        rec('LyingStr.lower')
        return 'l'
    def expandtabs(self, *args):
        rec('LyingStr.expandtabs', *args)
        return self
    def strip(self, *args):
        rec('LyingStr.strip', *args)
        return self

class LyingStrSelf(str):
    """`str()` and `repr()` of it give a lying `str` back, not a plain one."""
    def __str__(self):
        rec('LyingStrSelf.__str__')
        return LyingStr('s')
    def __repr__(self):
        rec('LyingStrSelf.__repr__')
        return LyingStr('r')
    def __eq__(self, other):
        rec('LyingStrSelf.__eq__', other)
        return True
    def __hash__(self):
        rec('LyingStrSelf.__hash__')
        return 0

class LyingBytes(bytes):
    def __bytes__(self):
        rec('LyingBytes.__bytes__')
        return b'lie'
    def __eq__(self, other):
        rec('LyingBytes.__eq__', other)
        return True
    def __hash__(self):
        rec('LyingBytes.__hash__')
        return 0
    def __iter__(self):
        rec('LyingBytes.__iter__')
        return iter([LyingInt(1)])
    def decode(self, *args, **kwargs):
        rec('LyingBytes.decode', *args, **kwargs)
        return LyingStr('d')
    def rstrip(self, *args):
        rec('LyingBytes.rstrip', *args)
        return self
    def __len__(self):
        rec('LyingBytes.__len__')
        return 1

class LyingInt(int):
    def __index__(self):
        rec('LyingInt.__index__')
        return 2
    def __int__(self):
        rec('LyingInt.__int__')
        return 2
    def __float__(self):
        rec('LyingInt.__float__')
        return 2.0
    def __eq__(self, other):
        rec('LyingInt.__eq__', other)
        return True
    def __hash__(self):
        rec('LyingInt.__hash__')
        return 0
    def __lt__(self, other):
        rec('LyingInt.__lt__', other)
        return True
    def __format__(self, spec):
        rec('LyingInt.__format__', spec)
        return 'f'
    def as_integer_ratio(self):
        rec('LyingInt.as_integer_ratio')
        return (LyingInt(1), LyingInt(1))

class LyingFloat(float):
    def __float__(self):
        rec('LyingFloat.__float__')
        return 2.0
    def __eq__(self, other):
        rec('LyingFloat.__eq__', other)
        return True
    def __hash__(self):
        rec('LyingFloat.__hash__')
        return 0
    def as_integer_ratio(self):
        rec('LyingFloat.as_integer_ratio')
        return (LyingInt(2), LyingInt(1))

class LyingDict(dict):
    def keys(self):
        rec('LyingDict.keys')
        return [LyingStr('k')]
    def items(self):
        rec('LyingDict.items')
        return [(LyingStr('k'), Everything())]
    def __getitem__(self, key):
        rec('LyingDict.__getitem__', key)
        return Everything()
    def get(self, key, default=None):
        rec('LyingDict.get', key, default)
        return Everything()
    def __iter__(self):
        rec('LyingDict.__iter__')
        return iter([LyingStr('k')])
    def __contains__(self, key):
        rec('LyingDict.__contains__', key)
        return True

class LyingList(list):
    def __iter__(self):
        rec('LyingList.__iter__')
        return iter([LyingStr('x'), LyingInt(1)])
    def __len__(self):
        rec('LyingList.__len__')
        return 2
    def __getitem__(self, index):
        rec('LyingList.__getitem__', index)
        if type(index) is int and not -2 <= index < 2:
            raise IndexError('list index out of range')
        return LyingStr('x')

class Everything:
    """Answers every attribute name with a recorder, and every data-model question."""
    def __getattr__(self, name):
        rec('Everything.__getattr__', name)
        return recorder
    def __eq__(self, other):
        rec('Everything.__eq__', other)
        return True
    def __hash__(self):
        rec('Everything.__hash__')
        return 0
    def __lt__(self, other):
        rec('Everything.__lt__', other)
        return True
    def __format__(self, spec):
        rec('Everything.__format__', spec)
        return 'f'
    def __index__(self):
        rec('Everything.__index__')
        return 2
    def __iter__(self):
        rec('Everything.__iter__')
        return iter([LyingStr('x')])
    def __len__(self):
        rec('Everything.__len__')
        return 1
    def __getitem__(self, key):
        rec('Everything.__getitem__', key)
        if type(key) is int and not -1 <= key < 1:
            raise IndexError('index out of range')
        return LyingStr('v')
    def __call__(self, *args, **kwargs):
        rec('Everything.__call__', *args, **kwargs)
        return LyingStr('c')
    def __bool__(self):
        rec('Everything.__bool__')
        return True
    def __enter__(self):
        rec('Everything.__enter__')
        return self
    def __exit__(self, *args):
        rec('Everything.__exit__', *args)
        return False
    def __fspath__(self):
        rec('Everything.__fspath__')
        return 'p'
    def __repr__(self):
        rec('Everything.__repr__')
        return 'Everything()'
    def __contains__(self, item):
        rec('Everything.__contains__', item)
        return True

class CopyHooks:
    """Copy hooks that record what the copy machinery hands them. The pickle hooks
    (`__reduce_ex__`, `__reduce__`, `__getstate__`, `__setstate__`) cannot be written in a class
    body (the policy reserves them); `plant` tries the other ways in (below)."""
    def __init__(self, *args, **kwargs):
        rec('CopyHooks.__init__', *args, **kwargs)
        self.x = [1]
    def __copy__(self):
        rec('CopyHooks.__copy__')
        return self
    def __deepcopy__(self, memo):
        rec('CopyHooks.__deepcopy__', memo)
        return self

def reduce_hook(self, *args):
    rec('reduce_hook', self, *args)
    return (recorder, (LyingStr('r'),), {'a': LyingStr('a')}, iter([LyingInt(1)]), iter([(LyingStr('k'), 1)]))

def state_hook(self, *args):
    rec('state_hook', self, *args)
    return {'x': LyingStr('s')}

class ReducesOnly:
    """No copy hooks: copy falls back to the reduce protocol, where the snippet plants one."""
    def __init__(self):
        self.x = LyingStr('x')

#: The pickle hooks a snippet tries to plant after the class body (each refusal is expected).
PLANTS = {}
for cls in (CopyHooks, ReducesOnly):
    for hook, fn in (('__reduce_ex__', reduce_hook), ('__reduce__', reduce_hook),
                     ('__getstate__', state_hook), ('__setstate__', state_hook)):
        try:
            setattr(cls, hook, fn)
            PLANTS[cls.__name__ + '.' + hook] = 'planted'
        except Exception as e:
            PLANTS[cls.__name__ + '.' + hook] = 'refused: ' + repr(e)

class FakeField:
    def __init__(self, name):
        self.name = name
        self.init = True
        self.repr = True
        self.compare = True
        self.hash = None
        self.default = None
        self.default_factory = None
        self.kw_only = False
        self.type = int
        self._field_type = None

PLANTED = ('__setattr__', '__class__', '__reduce_ex__', '__init__', '__dict__', '__getattribute__')

def planted_fields(*extra):
    return {n: FakeField(n) for n in PLANTED + extra}

class PlantedFields:
    """A class body that plants the dataclass marker: host helpers then read every name it lists."""
    __dataclass_fields__ = planted_fields()
    __dataclass_params__ = None
    __match_args__ = PLANTED
    def __init__(self, *args, **kwargs):
        rec('PlantedFields.__init__', *args, **kwargs)

class PlantedError(Exception):
    """The planted marker on an exception class: its instances have a `__traceback__`."""
    __dataclass_fields__ = planted_fields('__traceback__', '__context__')
    __dataclass_params__ = None
    def __init__(self, *args, **kwargs):
        rec('PlantedError.__init__', *args, **kwargs)

@dataclasses.dataclass
class RealDataclass:
    x: object = None
    y: object = None
    def __post_init__(self):
        rec('RealDataclass.__post_init__', self.x, self.y)

class Described:
    """A descriptor: records the instance and owner host code reads it with."""
    def __get__(self, instance, owner=None):
        rec('Described.__get__', instance, owner)
        return LyingStr('got')
    def __set__(self, instance, value):
        rec('Described.__set__', instance, value)
    def __delete__(self, instance):
        rec('Described.__delete__', instance)
    def __set_name__(self, owner, name):
        rec('Described.__set_name__', owner, name)

class WithProperties:
    """Properties and descriptors on the public names host code likes to read."""
    def _get(self):
        rec('WithProperties.property-get')
        return Everything()
    def _set(self, value):
        rec('WithProperties.property-set', value)
    name = property(_get, _set)
    value = property(_get, _set)
    args = property(_get, _set)
    items = Described()
    keys = Described()
    real = property(_get)
    numerator = property(_get)
    denominator = property(_get)
    tzinfo = property(_get)
    def __init_subclass__(cls, **kwargs):
        rec('WithProperties.__init_subclass__', cls, kwargs)
    def __class_getitem__(cls, item):
        rec('WithProperties.__class_getitem__', item)
        return cls

class HostileError(Exception):
    def __str__(self):
        rec('HostileError.__str__')
        return LyingStr('boom')
    def __eq__(self, other):
        rec('HostileError.__eq__', other)
        return True
    __hash__ = Exception.__hash__

def recorder(*args, **kwargs):
    rec('recorder', *args, **kwargs)
    return LyingStr('r')

def recorder_zero(*args, **kwargs):
    rec('recorder_zero', *args, **kwargs)
    return 0

def recorder_true(*args, **kwargs):
    rec('recorder_true', *args, **kwargs)
    return True

def recorder_echo(*args, **kwargs):
    rec('recorder_echo', *args, **kwargs)
    return args[0] if args else None

def recorder_raises(*args, **kwargs):
    rec('recorder_raises', *args, **kwargs)
    raise HostileError('raised by a recorder')

async def recorder_async(*args, **kwargs):
    rec('recorder_async', *args, **kwargs)
    return 1

def recorder_gen(*args, **kwargs):
    rec('recorder_gen', *args, **kwargs)
    yield LyingStr('y')

add('lying_str', lambda: LyingStr('ab'))
add('lying_str_pattern', lambda: LyingStr('*.py'))
add('lying_str_self', lambda: LyingStrSelf('ab'))
add('lying_bytes', lambda: LyingBytes(b'ab'))
add('bytes_keyed', lambda: {LyingBytes(b'k'): LyingBytes(b'v'), b'a': [LyingBytes(b'w')]})
add('str_keyed', lambda: {LyingStrSelf('k'): LyingStrSelf('v'), 'a': [LyingStrSelf('w')]})
add('lying_int', lambda: LyingInt(3))
add('lying_float', lambda: LyingFloat(1.5))
add('lying_dict', lambda: LyingDict(a=1))
add('lying_list', lambda: LyingList([1, 2]))
add('everything', lambda: Everything())
add('copy_hooks', lambda: CopyHooks())
add('reduces_only', lambda: ReducesOnly())
add('planted_fields', lambda: PlantedFields())
add('planted_fields_cls', lambda: PlantedFields)
add('planted_error', lambda: PlantedError())
add('real_dataclass', lambda: RealDataclass(LyingStr('x'), Everything()))
add('real_dataclass_cls', lambda: RealDataclass)
add('with_properties', lambda: WithProperties())
add('with_properties_cls', lambda: WithProperties)
add('descriptor', lambda: Described())
add('hostile_error', lambda: HostileError(LyingStr('e')))
add('recorder', lambda: recorder)
add('recorder_zero', lambda: recorder_zero)
add('recorder_true', lambda: recorder_true)
add('recorder_echo', lambda: recorder_echo)
add('recorder_raises', lambda: recorder_raises)
add('recorder_async', lambda: recorder_async)
add('recorder_gen', lambda: recorder_gen)
add('everything_cls', lambda: Everything)
add('nested', lambda: {LyingStr('k'): [Everything(), (LyingInt(1), LyingBytes(b'x'))]})
add('tuple_of_lies', lambda: (LyingStr('a'), LyingInt(1), LyingFloat(1.0)))
'''

#: Plain values the fuzz mixes with the zoo: most host functions need a plain argument in one
#: position to reach the code that handles a zoo value in another. Ints stay small, so that a
#: count or a size never makes a call slow.
PLAIN_SOURCE = '''
PLAIN = {
    'p:0': 0, 'p:1': 1, 'p:2': 2, 'p:-1': -1, 'p:1.5': 1.5, 'p:none': None, 'p:true': True,
    'p:str': 'ab', 'p:pat': '*.py', 'p:fmt': '%Y', 'p:bytes': b'ab', 'p:list': [3, 1, 2],
    'p:tuple': ('a', 'b'), 'p:dict': {'a': 1}, 'p:set': {1, 2}, 'p:empty': '',
}
'''

#: The zoo members each fuzz call may use (the plain values are listed in PLAIN_SOURCE).
ZOO_NAMES: tuple[str, ...] = (
    "lying_str", "lying_str_pattern", "lying_str_self", "lying_bytes", "bytes_keyed", "str_keyed", "lying_int", "lying_float", "lying_dict",
    "lying_list", "everything", "copy_hooks", "reduces_only", "planted_fields",
    "planted_fields_cls", "planted_error", "real_dataclass", "real_dataclass_cls", "with_properties",
    "with_properties_cls", "descriptor", "hostile_error", "recorder", "recorder_zero",
    "recorder_true", "recorder_echo", "recorder_raises", "recorder_async", "recorder_gen",
    "everything_cls", "nested", "tuple_of_lies",
)
PLAIN_NAMES: tuple[str, ...] = (
    "p:0", "p:1", "p:2", "p:-1", "p:1.5", "p:none", "p:true", "p:str", "p:pat", "p:fmt",
    "p:bytes", "p:list", "p:tuple", "p:dict", "p:set", "p:empty",
)


def run_snippet(code: str, *, budget: bool = True) -> tuple[Any, Execution]:
    """Run a snippet that makes no host call to completion in this process and return the raw
    object it returned (exactly as the snippet held it) with its `Execution`."""
    limits = sandbox.Limits(wall_time=60.0, cpu_time=60.0, max_output=1_000_000)
    ex = Execution(code, ["f"], limits, docs={"f": "doc"}, budget=budget)
    ex.start()
    ex.step()
    main = ex.scheduler.main
    assert main is not None and main.done, "the snippet did not finish (it awaited a host call?)"
    if main.error is not None:
        raise main.error
    return main.value, ex


# -- the oracle ---------------------------------------------------------------------------------
@functools.cache
def _crawl_oracle() -> Any:
    """The reachability crawl's oracle (`test_reachability.forbidden_reason`), imported lazily:
    it is a test module, and importing it builds nothing until asked."""
    import test_reachability

    return test_reachability


@functools.cache
def _exposed_classes() -> tuple[type, ...]:
    """Every class the shims expose that every run shares, and every class in their MROs
    (classes a per-run shim makes afresh for each run are the run's own)."""
    from sandbox.aio import ASYNCIO_SHIM

    def classes() -> dict[int, type]:
        found: dict[int, type] = {}
        fresh = shims.ShimSet(guards.RunGuards(), ASYNCIO_SHIM)
        for name in shims.ALLOWED_MODULES:
            shim = fresh.get(name)
            if shim is None:
                continue
            for value in object.__getattribute__(shim, "_shim_attrs").values():
                if isinstance(value, type):
                    for klass in type.__getattribute__(value, "__mro__"):
                        found[id(klass)] = klass
        return found

    first, second = classes(), classes()
    return tuple(klass for oid, klass in first.items() if oid in second)


@functools.cache
def shared_mutable_containers() -> dict[int, str]:
    """Mutable containers shared by every run of a process: the dicts, lists, sets and
    bytearrays held by the class dicts of exposed classes and by the globals of the host
    modules behind the shims and of the sandbox. Host code that hands one to snippet code
    (`str.translate(table)` with a class-level table) lets the snippet change it for everyone."""
    found: dict[int, str] = {}
    mutable = (dict, list, set, bytearray)
    for klass in _exposed_classes():
        if klass.__module__ == "builtins":
            continue
        for attr, value in type.__getattribute__(klass, "__dict__").items():
            if type(value) in mutable:
                found[id(value)] = f"{klass.__module__}.{klass.__qualname__}.{attr}"
    for mod_name, module in list(sys.modules.items()):
        if module is None or not _behind_shims(mod_name):
            continue
        for attr, value in list(vars(module).items()):
            if type(value) in mutable and not (attr.startswith("__") and attr.endswith("__")):
                found[id(value)] = f"{mod_name}.{attr}"
    return found


#: Host modules whose globals the shims reach (the stdlib behind them, and the sandbox itself).
_SHIMMED_STDLIB = frozenset(
    {
        "asyncio", "base64", "binascii", "bisect", "calendar", "collections", "copy", "copyreg",
        "csv", "dataclasses", "datetime", "_datetime", "decimal", "_pydecimal", "difflib", "enum",
        "fnmatch", "fractions", "functools", "graphlib", "hashlib", "heapq", "html", "io",
        "itertools", "json", "json.encoder", "json.decoder", "json.scanner", "math", "numbers",
        "operator", "pathlib", "pprint", "random", "re", "re._compiler", "re._parser", "secrets",
        "shlex", "statistics", "string", "struct", "textwrap", "time", "tomllib",
        "tomllib._parser", "tomllib._re", "typing", "unicodedata", "urllib.parse", "uuid", "zlib", "zoneinfo",
        "zoneinfo._common", "zoneinfo._tzpath", "_strptime", "abc", "_collections_abc",
        "types", "keyword", "reprlib", "weakref", "locale", "codecs", "encodings",
    }
)


def _behind_shims(name: str) -> bool:
    return name in _SHIMMED_STDLIB or name == "sandbox" or name.startswith("sandbox.")


def forbidden_reason(obj: Any, *, handed: bool = True, module_dicts: dict[int, str] | None = None) -> str | None:
    """Why a snippet must never hold `obj` (None if it may). By identity and exact type.
    `handed`: host code handed `obj` over (returned it, raised it, passed it to a hook) rather
    than the snippet reading it off an object it holds; only then is a host-shared mutable
    container a finding (a class attribute the snippet can read anyway is the freeze step's
    business, not a crossing)."""
    oracle = _crawl_oracle()
    reason = oracle.forbidden_reason(obj, _module_dicts() if module_dicts is None else module_dicts)
    if reason:
        return reason
    shared = shared_mutable_containers().get(id(obj)) if handed else None
    if shared is not None and type(obj) in (dict, list, set, bytearray):
        return f"the host-shared mutable {type(obj).__name__} {shared}"
    if handed and type(obj) is types.MappingProxyType and _is_host_class_dict(obj):
        return "a host class's __dict__ (a mappingproxy)"
    return None


def _is_host_class_dict(proxy: types.MappingProxyType) -> bool:
    """The proxy wraps the real dict of an exposed host class (found by identity through what
    gc sees the proxy hold: never by comparing contents, which could run snippet code)."""
    return any(id(held) in _host_class_dicts() for held in gc.get_referents(proxy))


@functools.cache
def _host_class_dicts() -> frozenset[int]:
    return frozenset(
        id(held)
        for klass in _exposed_classes()
        if klass.__module__ != "builtins"
        for held in gc.get_referents(type.__getattribute__(klass, "__dict__"))
        if type(held) is dict
    )


def module_dicts() -> dict[int, str]:
    """The real modules' `__dict__`s by id (computed once per batch of checks: it is slow)."""
    return _module_dicts()


def _module_dicts() -> dict[int, str]:
    return {id(vars(m)): name for name, m in list(sys.modules.items()) if m is not None}


#: Exact types whose instances hold nothing a snippet could use to reach further.
_LEAF_TYPES = frozenset(
    {str, bytes, int, float, complex, bool, type(None), type(Ellipsis), type(NotImplemented), range}
)


def find_forbidden(values: Any, *, depth: int = 4, run_getattr: Any = None,
                   module_dicts: dict[int, str] | None = None) -> list[tuple[str, str]]:
    """Walk what a snippet received (a return value, an exception, what a recorder was passed)
    the way the snippet could: items of exact containers, an exception's arguments, and the
    attributes in an object's `__dict__`, read as the snippet reads them (public names natively,
    as source reads them, the routed names with `guarded_getattr`, private and dunder names with the run's guard `run_getattr`; a refused
    read leads nowhere). Lists (path, reason) for every forbidden object found. Container items
    are read through the base class, so no snippet `__iter__` runs."""
    found: list[tuple[str, str]] = []
    seen: set[int] = set()
    keep: list[Any] = []
    read_private = run_getattr or guards.RunGuards().getattr
    if module_dicts is None:
        module_dicts = _module_dicts()

    def read(obj: Any, name: str) -> Any:
        if name.startswith("_"):
            return read_private(obj, name)
        if name in RUNTIME_CHECKED_ATTRIBUTES:
            return guards.guarded_getattr(obj, name)
        if name in HOST_METHOD_NAMES:
            return crossing.host_attr(obj, name)
        # A public name in source is read natively (only a computed `getattr` is judged).
        problem = guards.attribute_problem(name)
        if problem:
            raise AttributeError(problem)
        return getattr(obj, name)

    def walk(obj: Any, path: str, level: int, handed: bool = True) -> None:
        if type(obj) in _LEAF_TYPES or id(obj) in seen:
            return
        seen.add(id(obj))
        keep.append(obj)
        reason = forbidden_reason(obj, handed=handed, module_dicts=module_dicts)
        if reason:
            found.append((path, reason))
            return
        if level >= depth:
            return
        if isinstance(obj, (list, tuple, set, frozenset)):
            base = next(b for b in (list, tuple, set, frozenset) if isinstance(obj, b))
            for i, item in enumerate(list(base.__iter__(obj))[:64]):
                walk(item, f"{path}[{i}]", level + 1, handed)
        elif isinstance(obj, dict):
            for i, (k, v) in enumerate(list(dict.items(obj))[:64]):
                walk(k, f"{path}<key {i}>", level + 1, handed)
                walk(v, f"{path}[{i}]", level + 1, handed)
        if isinstance(obj, BaseException):
            walk(BaseException.__dict__["args"].__get__(obj), f"{path}.args", level + 1, handed)
        try:
            own = object.__getattribute__(obj, "__dict__")
        except Exception:
            own = None
        if type(own) is dict or type(own) is types.MappingProxyType:
            for attr in [a for a in list(own)[:64] if type(a) is str]:
                try:
                    value = read(obj, attr)
                except Exception:
                    continue  # refused: the snippet cannot read it either
                walk(value, f"{path}.{attr}", level + 1, False)

    walk(values, "", 0)
    return found


def generated_by_dataclass(code: Any) -> bool:
    """Code `@dataclass` generated (host-compiled from its templates: `__init__`, `__repr__`,
    `__eq__`, ...). It stays host code in this step of issue 19, and reads only the fields of its
    own class's instances, by names the decorator checked."""
    return code.co_filename == "<string>" and "__create_fn__.<locals>." in code.co_qualname


def host_callers(call: Any, *args: Any, allowed: Any = None) -> tuple[Any, list[str]]:
    """Run `call(*args)` and list every snippet-compiled function (a zoo hook, a recorder) that
    host-compiled Python code called: the confused-deputy shape, host code acting on a
    snippet's object with host rights. A call from the snippet's own code or from a prelude
    (compiled under the snippet's policy) is the snippet acting on its own objects; a C builtin
    in between (`repr()`, `sorted()`) has no frame, so its Python caller counts. Returns what
    `call` returned (or the exception it raised) and the findings, `hook <- file:function`.
    `allowed(code)` exempts callers a test accepts (`generated_by_dataclass`)."""
    from sandbox.policy import FILENAME
    from sandbox.prelude import FILENAME_PREFIX

    found: list[str] = []
    entry = host_callers.__code__

    def own(filename: str) -> bool:
        return filename == FILENAME or filename.startswith(FILENAME_PREFIX)

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_filename != FILENAME:
            return
        back = frame.f_back
        if back is None or back.f_code is entry:
            return  # the test's own call into the snippet
        if not own(back.f_code.co_filename) and not (allowed and allowed(back.f_code)):
            found.append(f"{frame.f_code.co_qualname} <- {back.f_code.co_filename}:{back.f_code.co_name}")

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        outcome = call(*args)
    except Exception as exc:  # what a hostile object makes the call raise is part of the outcome
        outcome = exc
    finally:
        sys.setprofile(previous)
    return outcome, found


#: What a zoo hook may be handed by a prelude: plain values, or the snippet's own objects.
PLAIN_RECEIVED = (str, bytes, int, float, bool, type(None), tuple, list, dict)


def zoo_through_calls(calls_source: str, *, allowed: Any = None) -> tuple[list[Any], list[Any], list[str], list[Any]]:
    """Build the zoo, then call each entry of the `CALLS` dict that `calls_source` defines (it
    returns `[ZOO, LOG, CALLS]`; the calls are snippet code) with every zoo member, watched by
    `host_callers`. Returns the outcomes, the zoo's log, the host-caller findings, and what the
    hooks were handed that is neither plain nor the run's own."""
    value, ex = run_snippet(ZOO_SOURCE + calls_source, budget=False)
    zoo, log, calls = value
    outcomes: list[Any] = []
    found: list[str] = []
    for name in ZOO_NAMES:
        for how, call in calls.items():
            outcome, callers = host_callers(call, zoo[name], allowed=allowed)
            outcomes.append(outcome)
            found += [f"{name} / {how}: {c}" for c in callers]
    guards = ex.shims.context.guards
    # A class whose statement failed was the snippet's own when its hooks got it; the class
    # factory disowns it after (`_ClassFactory._disown`).
    unfinished = guards.class_factory._unfinished
    handed = [item for _, args, kwargs in log for item in (*args, *kwargs.values())]
    foreign = [item for item in handed
               if type(item) not in PLAIN_RECEIVED and not guards.owns(item) and item not in unfinished]
    return outcomes, log, found, foreign
