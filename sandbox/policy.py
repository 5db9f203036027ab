"""The compile policy: which Python a snippet may use, decided before anything runs.

A snippet is the body of an async function. `compile_snippet` parses it, checks its size, runs
`SnippetPolicy` (a subclass of RestrictedPython's transformer) over the tree, wraps the body in
`async def __snippet__()` host-side and compiles it.

What the policy adds to RestrictedPython's and why:
- `async def`, `await`, `async for`, `async with`: tools are async, so snippets must await them.
  They get the same name checks as their synchronous twins.
- `match`, `nonlocal`, annotated assignments (dataclasses, TypedDicts): models write them. Names
  bound by patterns and attribute names in class patterns get the usual "_" checks.
- More dunder methods may be *defined* in classes (`__repr__`, `__len__`, `__iter__`, ...): they
  run as restricted code, so defining them opens nothing.

What it removes, to cut the per-operation tax, and why that is safe here:
- Attribute reads are native except the few names in `RUNTIME_CHECKED_ATTRIBUTES` (`format`,
  `mro`, `register`, ...), which go through `_getattr_`. Every other dangerous attribute is
  refused by name at compile time ("_" names and frame/code attributes), computed names go through the guarded `getattr`, and nothing reachable is a real
  module or host object, so the runtime hook had nothing left to decide.
- Item reads and writes, iteration, unpacking and `+=` are native. RestrictedPython routes them
  through hooks to protect Zope objects; a snippet only holds objects it made or JSON copies, and
  container methods such as `.update()` were never guarded anyway. Attribute *writes* keep
  `_write_`, which refuses classes, modules and functions the snippet did not create.
- `print` is a plain builtin that writes to the run's log instead of RestrictedPython's
  `printed` collector.

Every `raise X` is compiled as `raise _raise_(X)`, so the run can tell a `MemoryError` the
snippet raised itself (an `exception`) from one the interpreter raised because memory ran out
(`memory`); see `sandbox.raised.mark_raised`.

Budget mode (the in-process backend, where no process can be killed) inserts `_tick_()` at the
top of every loop body and function, so a runaway loop ends with a clean `timeout`.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from types import CodeType

from RestrictedPython.transformer import INSPECT_ATTRIBUTES, RestrictingNodeTransformer

from .limits import Limits

FILENAME = "<snippet>"
ENTRY_POINT = "__snippet__"
#: The hook a program's final bare expression is passed to (see `compile_snippet`).
LAST_VALUE_HOOK = "_last_"

#: Attribute names that always pass through the runtime `_getattr_` guard, which judges what the
#: read returns whatever the receiver is: the real `str.format` traverses attributes, an ABC's
#: `register` changes a (possibly host) class, `mro()` lists base classes the sandbox keeps out
#: of reach (the real, unchecked enum bases), and `datetime.strptime` and `Pattern.sub`/`subn`
#: cache process-wide on the `str` objects they are given; `throw`/`athrow` must mark a thrown
#: `MemoryError` as the snippet's own.
RUNTIME_CHECKED_ATTRIBUTES = frozenset(
    {"format", "format_map", "register", "mro", "strptime", "sub", "subn", "throw", "athrow",
     "obj"}
)
#: The names among those that the judge decides by the value alone (no stand-in is handed out
#: instead): a class pattern may read them, judged on the subject (`_match_class_`).
#: `AttributeError.obj` is the object the failed lookup ran on, a host object when the lookup
#: forwarded (`typing.Type.x` fails on the real `type`; a bound method's on its raw function).
VALUE_JUDGED_ATTRIBUTES = frozenset({"obj"})

#: Readable names (public ones, and a namedtuple's `_asdict`/`_replace` from `READABLE_PRIVATE`)
#: under which a host class a snippet reaches (`collections.Counter`, the `collections.abc`
#: mixins, `fractions.Fraction`, `urllib.parse.SplitResult`...) defines a Python method or property. Read
#: off the class, that is the raw host function, whose code runs with host rights on whatever it
#: is given as `self` (`Counter.copy(cls)` runs `cls.__class__(cls)`: the real `type`). These
#: reads go through `_hostattr_`, which hands such a function out behind a receiver check
#: (`sandbox.crossing`), whatever the receiver is. The set is pinned by
#: `tests/security/test_unbound_methods.py` against every class the shims expose, so a new shim
#: cannot add an unrouted one; `RECEIVER_AGNOSTIC` lists the methods left native instead.
HOST_METHOD_NAMES = frozenset({
    '_asdict', '_replace', 'aclose', 'as_integer_ratio', 'callback', 'cdf', 'compare', 'conjugate', 'copy', 'copy_with',
    'deleter', 'denominator', 'done', 'elements', 'enter_async_context', 'enter_context',
    'fieldnames', 'fill', 'find_longest_match', 'firstweekday', 'formatday', 'formatmonth', 'formatmonthname',
    'formatweek', 'formatweekday', 'formatweekheader', 'formatyear', 'formatyearpage',
    'get_grouped_opcodes', 'get_identifiers', 'get_matching_blocks', 'get_opcodes', 'get_ready',
    'getfirstweekday', 'getter', 'geturl', 'has_header', 'hostname', 'imag', 'inv_cdf',
    'is_active', 'is_valid', 'itermonthdates', 'itermonthdays', 'itermonthdays2',
    'itermonthdays3', 'itermonthdays4', 'iterweekdays', 'limit_denominator', 'mean', 'median',
    'mode', 'monthdatescalendar', 'monthdays2calendar', 'monthdayscalendar', 'most_common',
    'isreadable', 'isrecursive', 'new_child', 'numerator', 'overlap', 'parents', 'password', 'pdf',
    'pformat', 'pop_all', 'port', 'pprint',
    'prepare', 'prmonth', 'prweek', 'pryear', 'push', 'push_async_callback', 'push_async_exit',
    'quantiles', 'quick_ratio', 'ratio', 'real', 'real_quick_ratio', 'register',
    'safe_substitute', 'samples', 'set_seq1', 'set_seq2', 'set_seqs', 'setfirstweekday',
    'setter', 'sniff', 'static_order', 'stdev', 'substitute', 'subtract', 'total', 'username',
    'variance', 'wrap', 'writeheader', 'writerow', 'writerows', 'yeardatescalendar',
    'yeardays2calendar', 'yeardayscalendar', 'zscore',
})

#: Host methods a source read hands out raw, by `module.qualname` (an entry ending in "." is
#: every method of that class): hot names on builtins (`d.get`, `s.add`, `x.encode`), which a
#: routed read would tax (+18 % on the group-by workload for `get` alone), under which every host
#: method treats `self` as an operator would. They only index, iterate, compare or call `self`'s
#: own public methods (or `self._randbelow`, `self.random`: the receiver's own code), write only
#: items of `self`, or fail in `super()` for a foreign receiver. A computed read still gets
#: them behind the receiver check.
RECEIVER_AGNOSTIC = frozenset({
    "collections.abc.Mapping.get", "collections.abc.Mapping.items", "collections.abc.Mapping.keys",
    "collections.abc.Mapping.values", "collections.abc.MutableMapping.pop",
    "collections.abc.MutableMapping.popitem", "collections.abc.MutableMapping.clear",
    "collections.abc.MutableMapping.setdefault", "collections.abc.MutableMapping.update",
    "collections.abc.Sequence.count", "collections.abc.Sequence.index",
    "collections.abc.Coroutine.close", "collections.abc.Coroutine.send", "collections.abc.Coroutine.throw",
    "collections.ChainMap.get", "collections.ChainMap.pop", "collections.ChainMap.popitem",
    "collections.ChainMap.clear", "collections.Counter.update",
    # `self._get_nodeinfo(node).npredecessors += n`: `+=` on an object that has no such
    # attribute fails before any write, and only graphlib's own node records have one.
    "graphlib.TopologicalSorter.add",
    # `self._encoded_counterpart(*(x.encode(...) for x in self))`: the receiver's own callable.
    "urllib.parse._ResultMixinStr.encode", "urllib.parse._ResultMixinBytes.decode",
    "contextlib.ExitStack.close",  # `self.__exit__(None, None, None)`, as `with` would
    "random.Random.", "random.SystemRandom.",  # arithmetic over `self.random()`/`self._randbelow()`
    "uuid.UUID.",  # arithmetic over `self.int` (`u.time`, `u.hex`, `u.node`...)
})


def receiver_agnostic(method: object) -> bool:
    """`method` (a host function or property) is in `RECEIVER_AGNOSTIC`."""
    fn = getattr(method, "fget", None) or getattr(method, "fset", None) if isinstance(method, property) else method
    qualified = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}"
    return qualified in RECEIVER_AGNOSTIC or qualified.rpartition(".")[0] + "." in RECEIVER_AGNOSTIC


#: "_" attributes a snippet may read on anything: names and docs are plain strings, and
#: `_asdict` and friends are the public API of named tuples. None of them mutates or leads to
#: a frame or a module.
READABLE_PRIVATE = frozenset(
    {"__name__", "__qualname__", "__doc__", "__module__", "_asdict", "_replace", "_fields", "_make"}
)

#: Read natively only as `super().name(...)`; on anything else they go through the runtime
#: guard, which lets them through only when the snippet's own class defines them. Reading
#: `__init__` off a host object would re-run its initialiser on shared state
#: (`json.__init__(...)`), and a host class's `__init_subclass__` bound to itself changes that
#: class (`typing.Protocol`).
SUPER_ONLY = frozenset({"__init__", "__post_init__", "__init_subclass__"})

#: Data-model methods a snippet may read on any object (`(1).__add__`, `super().__repr__()`,
#: `self.__eq__(other)`): each does what the operator or builtin that calls it does, which a
#: snippet may do anyway. Getting, setting and deleting attributes, building, reducing and
#: describing objects are not among them.
DATA_MODEL_METHODS = frozenset(
    {
        "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__", "__floordiv__", "__mod__",
        "__divmod__", "__pow__", "__lshift__", "__rshift__", "__and__", "__xor__", "__or__",
        "__radd__", "__rsub__", "__rmul__", "__rmatmul__", "__rtruediv__", "__rfloordiv__",
        "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__", "__rrshift__", "__rand__",
        "__rxor__", "__ror__", "__iadd__", "__isub__", "__imul__", "__imatmul__", "__itruediv__",
        "__ifloordiv__", "__imod__", "__ipow__", "__ilshift__", "__irshift__", "__iand__",
        "__ixor__", "__ior__", "__neg__", "__pos__", "__abs__", "__invert__", "__complex__",
        "__int__", "__float__", "__index__", "__round__", "__trunc__", "__floor__", "__ceil__",
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__",
        "__len__", "__length_hint__", "__iter__", "__next__", "__reversed__", "__contains__",
        "__getitem__", "__setitem__", "__delitem__", "__missing__", "__repr__", "__str__",
        "__format__", "__bytes__", "__call__", "__enter__", "__exit__", "__aenter__",
        "__aexit__", "__aiter__", "__anext__", "__copy__", "__deepcopy__", "__getattr__",
        "__class_getitem__", "__fspath__",
    }
)

#: Dunder attributes the runtime guard judges (`_getattr_`): the introspection models use. The
#: guard decides per receiver and per value (see `sandbox.guards.RunGuards.getattr`).
INTROSPECTION_DUNDERS = frozenset(
    {
        "__class__", "__dict__", "__annotations__", "__dataclass_fields__",
        "__dataclass_params__", "__match_args__", "__slots__", "__wrapped__", "__mro__",
        "__bases__", "__args__", "__origin__", "__parameters__", "__metadata__", "__cause__",
        "__context__", "__suppress_context__", "__notes__", "__setattr__", "__delattr__",
        "__defaults__", "__kwdefaults__", "__set_name__", "__get__", "__set__", "__delete__",
        "__subclasses__", "__required_keys__", "__optional_keys__", "__total__",
    }
)

#: Dunder attributes a snippet may write, on its own classes, instances and functions only
#: (what `functools.wraps` and hand-written decorators set), plus exception chaining.
WRITABLE_DUNDERS = frozenset(
    {"__doc__", "__name__", "__qualname__", "__wrapped__", "__module__", "__cause__",
     "__context__", "__suppress_context__", "__notes__"}
)

#: Dunder methods a snippet may also assign after its class exists (`C.__call__ = f`,
#: `obj.__getitem__ = None`), on its own classes and instances only: the data model, which a
#: class body may define anyway (see `sandbox.guards.RunGuards.write_problem`).
ASSIGNABLE_DUNDERS = DATA_MODEL_METHODS

#: Dunder methods a snippet class may not define: the pickling hooks drive `setattr` with any
#: name on whatever object their result names (through `copy`); `__class__`, `__dict__` and
#: `__getattribute__` would make host checks (isinstance, instance dictionaries, attribute
#: reads) lie; `__new__` would need the unbound `object.__new__`, which builds any host class
#: without its checks; `__del__` runs at an arbitrary time, possibly after the run.
UNDEFINABLE_DUNDERS = frozenset(
    {
        "__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__getnewargs__",
        "__getnewargs_ex__", "__class__", "__dict__", "__getattribute__", "__new__", "__del__",
        "__prepare__", "__instancecheck__", "__subclasscheck__", "__subclasshook__",
        "__mro_entries__", "__weakref__", "__builtins__", "__globals__", "__import__",
        "__build_class__", "__metaclass__", "__classcell__", "__code__", "__closure__",
        "__subclasses__", "__traceback__", "__self__", "__func__", "__objclass__",
        "__init_subclass_hook__", "__sandbox_owner__",
    }
)

#: Names (not attributes) of the language's own a snippet may read: the module name (so
#: `if __name__ == "__main__":` works), the implicit class cell that `super()` uses, and what
#: a class body's namespace holds from the start (its docstring, `__module__`, `__qualname__`:
#: strings of the snippet's own class; elsewhere they are not defined).
READABLE_DUNDER_NAMES = frozenset({"__name__", "__class__", "__doc__", "__module__", "__qualname__"})


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def is_machinery(name: str) -> bool:
    """A name of the guard machinery or the wrapper (`_getattr_`, `_write_`, `__builtins__`,
    `__snippet__`): it starts and ends with "_". The snippet's own private names do not end
    with "_" (`_cache`, `_helper`, `__secret`)."""
    return len(name) > 1 and name.startswith("_") and name.endswith("_")


def mangle(attr: str, class_name: str | None) -> str:
    """Python's private-name mangling, done here because the guard sees names as strings."""
    if class_name is None or not attr.startswith("__") or attr.endswith("__"):
        return attr
    stripped = class_name.lstrip("_")
    return f"_{stripped}{attr}" if stripped else attr


def _is_bare_super(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "super"
        and not node.args
        and not node.keywords
    )


#: The one sentence for a snippet nested too deeply for the parser or compiler to handle.
TOO_DEEP_TO_PARSE = "the snippet nests too deeply to parse; flatten the expression or split it up"
#: The sentence for a tree too deep for the policy's own recursion budget.
TOO_DEEP_TO_CHECK = "the snippet nests too deeply to check"
#: Characters of a source line quoted in a syntax error.
MAX_QUOTED_LINE = 160

_RESERVED_NAMES = frozenset({"printed", "builtins", "breakpoint"})


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason the policy refused a snippet."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


class PolicyError(Exception):
    """The snippet was refused before running; `problems` lists each reason with its line."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


# RestrictedPython's own messages, for the checks we inherit, rewritten into our voice.
_REWRITES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(\w+) statements are not allowed\.$"), r"\1 syntax is not supported"),
    (re.compile(r"^Exec calls are not allowed\.$"), "exec() is not available"),
    (re.compile(r"^Eval calls are not allowed\.$"), "eval() is not available"),
    (re.compile(r'^"\*" imports are not allowed\.$'), "'from ... import *' is not supported"),
    (
        re.compile(r'^The keyword argument "metaclass" is not allowed\.$'),
        "metaclass= is not allowed in a class definition",
    ),
    (
        re.compile(r"^Augmented assignment of .*$"),
        "this augmented assignment target is not supported",
    ),
]


def _rewrite(info: str) -> str:
    for pattern, replacement in _REWRITES:
        if pattern.match(info):
            return pattern.sub(replacement, info)
    return info


def class_name_problem(name: str) -> str | None:
    """Why `name` may not be defined in a class namespace, as a class body would be told
    (for namespaces given as data: `type(name, bases, ns)`)."""
    return _name_problem(name, "name", in_class=True)


#: Reserved-looking names a class body may define as methods: the hooks `enum` calls on the
#: snippet's own enum class, with the snippet's own values (`_missing_(value)`) or plain data
#: (`_generate_next_value_(name, start, count, last_values)` gets a copy of the list).
CLASS_HOOK_METHODS = frozenset({"_missing_", "_generate_next_value_"})


def _name_problem(name: str, what: str, *, in_class: bool = False) -> str | None:
    if in_class and name in CLASS_HOOK_METHODS:
        return None
    if is_machinery(name) and not (in_class and is_dunder(name) and name not in UNDEFINABLE_DUNDERS):
        return f'{what} "{name}" is not allowed: names that start and end with "_" are reserved'
    if name.endswith("__roles__"):
        return f'{what} "{name}" is not allowed'
    if name in _RESERVED_NAMES:
        return f'{what} "{name}" is reserved'
    return None


def _tick_call() -> ast.Call:
    return ast.Call(func=ast.Name("_tick_", ast.Load()), args=[], keywords=[])


def _ticked_first(expr: ast.expr) -> ast.AST:
    """`_tick_() or expr`: `expr`, evaluated after a tick (`_tick_()` returns None)."""
    return _located(ast.BoolOp(op=ast.Or(), values=[_tick_call(), expr]), expr)


def _located(new: ast.AST, old: ast.AST) -> ast.AST:
    """Give a node we built, and every child it lacks a location for, the location of `old`,
    so the whole tree never needs a `fix_missing_locations` pass."""
    for node in ast.walk(new):
        if "lineno" in node._attributes and not hasattr(node, "lineno"):
            ast.copy_location(node, old)
    return new


class SnippetPolicy(RestrictingNodeTransformer):
    """RestrictedPython's transformer, extended for async snippets (see the module docstring)."""

    def __init__(self, *, budget: bool = False) -> None:
        super().__init__()
        self.budget = budget
        self.problems: list[Problem] = []
        #: Enclosing scopes, innermost last: ("class", name) or ("function", name).
        self._scopes: list[tuple[str, str]] = []
        self._match_temps = 0

    # -- reporting ---------------------------------------------------------------------------
    def error(self, node: ast.AST, info: str) -> None:  # type: ignore[override]
        self.problems.append(Problem(getattr(node, "lineno", None), _rewrite(info)))
        self.errors.append(info)

    def _refuse(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(getattr(node, "lineno", None), message))
        self.errors.append(message)

    @property
    def _in_class_body(self) -> bool:
        return bool(self._scopes) and self._scopes[-1][0] == "class"

    @property
    def _class_name(self) -> str | None:
        """The class whose private names (`__x`) are mangled here, as the compiler would."""
        for kind, name in reversed(self._scopes):
            if kind == "class":
                return name
        return None

    def check_name(self, node, name, allow_magic_methods=False):  # type: ignore[override]
        if name is None:
            return
        if name == "super":
            # `super().__init__` is the one way to read __init__; it must mean the builtin.
            self._refuse(node, 'name "super" cannot be rebound')
            return
        problem = _name_problem(name, "name", in_class=allow_magic_methods and self._in_class_body)
        if problem:
            self._refuse(node, problem)

    def check_import_names(self, node):  # type: ignore[override]
        # Private module names are host internals (`_io`, `_thread`), and so are a module's
        # private members: neither becomes importable because snippet names may start with "_".
        module = getattr(node, "module", None) or ""
        if module == "__future__" and isinstance(node, ast.ImportFrom) and not node.level:
            # The leading ones were taken out as compile flags (`take_future_imports`).
            self._refuse(node, f"invalid syntax: {_FUTURE_NOT_FIRST}")
            return node
        for alias in node.names:
            parts = [*module.split("."), *alias.name.split(".")] if module else alias.name.split(".")
            for part in parts:
                if part.startswith("_"):
                    self._refuse(node, f'module "{part}" is not allowed: names starting with "_" are private')
                    break
        return super().check_import_names(node)

    # -- printing: a plain builtin, not RestrictedPython's collector -------------------------
    def inject_print_collector(self, node, position=0):  # type: ignore[override]
        return None

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load):
            self.used_names[node.id] = True
            if node.id in ("print", "printed", "super") or node.id in READABLE_DUNDER_NAMES:
                return node
        # In a class body, `__slots__ = ...`, `__match_args__ = ...`, `__hash__ = None` define
        # the class's data model, like a `def __eq__`.
        self.check_name(node, node.id, allow_magic_methods=isinstance(node.ctx, ast.Store))
        return node

    # -- attributes and items ----------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        attr = node.attr
        load = isinstance(node.ctx, ast.Load)
        checked = False
        if attr in INSPECT_ATTRIBUTES:
            self._refuse(node, f'attribute "{attr}" is not allowed: it exposes interpreter internals')
        elif attr.endswith("__roles__"):
            self._refuse(node, f'attribute "{attr}" is not allowed')
        elif attr in READABLE_PRIVATE and load:
            pass
        elif attr in SUPER_ONLY and load and _is_bare_super(node.value):
            pass
        elif is_dunder(attr):
            if load and (attr in SUPER_ONLY or attr in DATA_MODEL_METHODS or attr in INTROSPECTION_DUNDERS):
                checked = True
            elif not load and (attr in WRITABLE_DUNDERS or attr in ASSIGNABLE_DUNDERS):
                # Stored (or deleted) through `_dunder_target_(x)`, whatever the form (a
                # statement, unpacking, a loop target, `+=`): the guard's `setattr` sees the
                # value, and stores a name as a plain copy and C code held as a data-model
                # method behind a forwarder (`guards.stored_value`).
                node = self.node_contents_visit(node)
                target = ast.Call(func=ast.Name("_dunder_target_", ast.Load()), args=[node.value], keywords=[])
                node.value = _located(target, node.value)
                return node
            else:
                self._refuse(node, f'attribute "{attr}" is not allowed: names starting with "_" are private')
        elif attr.startswith("_") and attr != "_":
            # The snippet's own private attributes: the guard checks the object is its own.
            node.attr = attr = mangle(attr, self._class_name)
            checked = True
        node = self.node_contents_visit(node)
        if load:
            if not checked and attr not in RUNTIME_CHECKED_ATTRIBUTES:
                if attr in HOST_METHOD_NAMES:
                    read = ast.Call(func=ast.Name("_hostattr_", ast.Load()),
                                    args=[node.value, ast.Constant(attr)], keywords=[])
                    return _located(read, node)
                return node
            call = ast.Call(
                func=ast.Name("_getattr_", ast.Load()),
                args=[node.value, ast.Constant(attr)],
                keywords=[],
            )
            return _located(call, node)
        args: list[ast.expr] = [node.value, ast.Constant(attr)] if checked else [node.value]
        guarded = ast.Call(func=ast.Name("_write_", ast.Load()), args=args, keywords=[])
        node.value = _located(guarded, node.value)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_With(self, node: ast.With) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        node = self.node_contents_visit(node)
        if node.exc is not None:
            call = ast.Call(func=ast.Name("_raise_", ast.Load()), args=[node.exc], keywords=[])
            node.exc = _located(call, node.exc)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval", "compile"):
            self._refuse(node, f"{node.func.id}() is not available")
        return self.node_contents_visit(node)

    # -- loops and functions -----------------------------------------------------------------
    def _tick(self, node: ast.AST) -> ast.stmt:
        return _located(ast.Expr(_tick_call()), node)

    def _loop(self, node):
        node = self.node_contents_visit(node)
        if self.budget:
            node.body.insert(0, self._tick(node))
        return node

    def guard_iter(self, node):  # type: ignore[override]
        if isinstance(node, ast.comprehension):
            node = self.node_contents_visit(node)
            # An `async for` clause awaits each item from code that ticks itself; the budget's
            # iterator is synchronous, and would break it.
            if self.budget and not node.is_async:
                node.iter = _located(
                    ast.Call(func=ast.Name("_budget_iter_", ast.Load()), args=[node.iter], keywords=[]),
                    node.iter,
                )
            return node
        return self._loop(node)

    def visit_While(self, node: ast.While) -> ast.AST:
        return self._loop(node)

    def visit_Try(self, node: ast.Try) -> ast.AST:
        # Handlers and `finally` blocks can run after the run is over (a suspended generator's
        # `finally` when it is freed): in budget mode their first statement is a tick, which
        # stops them once the run is sealed.
        node = self.node_contents_visit(node)
        if self.budget:
            for handler in node.handlers:
                handler.body.insert(0, self._tick(handler))
                if handler.type is not None:
                    # CPython evaluates the handler's type while the frame unwinds, before the
                    # body: `except (_tick_() or X)` (a review's `except (P() or E)` ran a C
                    # `functools.partial` in the host when the collector freed the generator).
                    handler.type = _ticked_first(handler.type)
            if node.finalbody:
                node.finalbody.insert(0, self._tick(node))
        return node

    def visit_TryStar(self, node: ast.TryStar) -> ast.AST:
        """`try`/`except*`, as `try`/`except`: the interpreter splits the group with the
        snippet's own exceptions (and a snippet group's own `derive`), and what no handler
        matches is raised again."""
        return self.visit_Try(node)  # type: ignore[arg-type]

    def visit_YieldFrom(self, node: ast.YieldFrom) -> ast.AST:
        """`yield from x` delegates to `_yield_from_(x)`: CPython calls what it delegates to by
        the name `close` when the generator is closed, also when the garbage collector frees it
        outside the run (`crossing.yield_from`)."""
        node = self.node_contents_visit(node)
        node.value = _located(ast.Call(func=ast.Name("_yield_from_", ast.Load()), args=[node.value], keywords=[]),
                              node.value)
        return node

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        return self._loop(node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self.node_contents_visit(node)

    def _function(self, node):
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        self._scopes.append(("function", node.name))
        try:
            node = self.node_contents_visit(node)
        finally:
            self._scopes.pop()
        # After the docstring, which stays the function's `__doc__`.
        first = 1 if ast.get_docstring(node, clean=False) is not None else 0
        prologue = _judged_arguments(node)
        if prologue is not None:
            node.body.insert(first, _located(prologue, node))
        if self.budget:
            node.body.insert(first, self._tick(node))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        """A lambda ticks too, first (`_tick_() or body`): host code may call one after the run
        or between its steps (a data-model method, a callback something kept)."""
        self.check_function_argument_names(node)
        node = self.node_contents_visit(node)
        if self.budget:
            node.body = _ticked_first(node.body)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.AST:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        # Class keywords reach host metaclasses and __init_subclass__ (`_root=True`, ...).
        for keyword in node.keywords:
            if keyword.arg is not None and keyword.arg.startswith("_"):
                self._refuse(node, f'class keyword "{keyword.arg}" is not allowed: names starting with "_" are reserved')
        self.check_name(node, node.name)
        self._scopes.append(("class", node.name))
        try:
            body: list[ast.stmt] = []
            for stmt in node.body:
                visited = self.visit(stmt)  # a `match` comes back as its checks and itself
                body.extend(visited if isinstance(visited, list) else [visited])
            node.body = body
        finally:
            self._scopes.pop()
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        if any(keyword.arg == "metaclass" for keyword in node.keywords):
            self.error(node, 'The keyword argument "metaclass" is not allowed.')
        # Every class is built by the run's class factory, which refuses metaclasses and
        # records the class as the snippet's own.
        node.keywords = [
            ast.keyword(arg="metaclass", value=ast.Name("__metaclass__", ast.Load())),
            *node.keywords,
        ]
        return _located(node, node)

    # -- match -------------------------------------------------------------------------------
    def visit_Match(self, node: ast.Match) -> ast.AST | list[ast.stmt]:
        node = self.node_contents_visit(node)
        # `case C(a, b)` reads the attributes C.__match_args__ names, natively. Each class
        # with positional sub-patterns or keyword host-method names is checked by the guard
        # first (`_match_class_`), and the pattern then names what the guard returned.
        checks: list[ast.stmt] = []
        for case in node.cases:
            for pattern in ast.walk(case.pattern):
                if not isinstance(pattern, ast.MatchClass):
                    continue
                routed = [ast.Constant(a) for a in pattern.kwd_attrs
                          if a in HOST_METHOD_NAMES or a in VALUE_JUDGED_ATTRIBUTES]
                if pattern.patterns or routed:
                    self._match_temps += 1
                    temp = f"_match{self._match_temps}_"
                    call = ast.Call(
                        func=ast.Name("_match_class_", ast.Load()),
                        args=[pattern.cls, ast.Constant(len(pattern.patterns)), ast.Tuple(routed, ast.Load())],
                        keywords=[],
                    )
                    checks.append(_located(ast.Assign(targets=[ast.Name(temp, ast.Store())], value=call), pattern))
                    pattern.cls = _located(ast.Name(temp, ast.Load()), pattern.cls)
        if not checks:
            return node
        if self._scopes and self._scopes[-1][0] == "class":
            # In a class body the temps would stay behind as class attributes.
            temps = [ast.Name(check.targets[0].id, ast.Del()) for check in checks]  # type: ignore[attr-defined]
            cleanup = _located(ast.Delete(targets=temps), node)
            return [*checks, _located(ast.Try(body=[node], handlers=[], orelse=[], finalbody=[cleanup]), node)]
        return [*checks, node]

    def visit_match_case(self, node: ast.match_case) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_MatchValue(self, node: ast.MatchValue) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_MatchSingleton(self, node: ast.MatchSingleton) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_MatchSequence(self, node: ast.MatchSequence) -> ast.AST:
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> ast.AST:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> ast.AST:
        self.check_name(node, node.rest)
        return self.node_contents_visit(node)

    def visit_MatchClass(self, node: ast.MatchClass) -> ast.AST:
        # `case C(x=...)` reads attribute x natively, so it gets the attribute checks; the names
        # the guard judges at run time by what comes back (`format`, `mro`, ...) cannot be judged
        # in a pattern, so they are refused there. Host-method names (`numerator`) are judged by
        # the class `_match_class_` puts in the pattern's place (see `visit_Match`).
        for attr in node.kwd_attrs:
            if attr.startswith("_") or attr in INSPECT_ATTRIBUTES or (
                attr in RUNTIME_CHECKED_ATTRIBUTES and attr not in VALUE_JUDGED_ATTRIBUTES
            ):
                self._refuse(node, f'attribute "{attr}" is not allowed in a class pattern')
        return self.node_contents_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> ast.AST:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node: ast.MatchOr) -> ast.AST:
        return self.node_contents_visit(node)


#: The binary operators, by the stem of their data-model methods.
_BINARY_OPERATORS = (
    "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift", "rshift",
    "and", "xor", "or",
)
#: Methods CPython calls with another object's operand: every comparison and every binary
#: operator, forward, reflected and in place. C code can hand them what a snippet never holds
#: (`mappingproxy.__eq__`/`__or__` pass the proxy's own dictionary on, to the other operand's
#: `__eq__`/`__ror__`, and to its `__or__` when `x | proxy` first returned NotImplemented), so
#: their operand goes through `_operand_` first. All of them, not the ones a known C type uses:
#: a C type that unwraps another operator is then no new route.
OPERAND_METHODS = frozenset({
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    *(f"__{prefix}{stem}__" for stem in _BINARY_OPERATORS for prefix in ("", "r", "i") if prefix + stem != "idivmod"),
})
#: Methods the interpreter calls with a traceback (`with`, `async with`): it arrives as None.
EXIT_METHODS = frozenset({"__exit__", "__aexit__"})
#: The hooks a function gets for its arguments (`_judged_arguments`), by the kind of method: a
#: function whose code names none of its kind's never had that argument judged (a lambda, a
#: function named otherwise, an `__eq__` that judges its operand but not a traceback).
OPERAND_HOOKS = frozenset({"_operand_", "_operands_"})
EXIT_HOOKS = frozenset({"_no_traceback_", "_exit_args_"})


def _judged_arguments(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    """The prologue of a method in `OPERAND_METHODS` or `EXIT_METHODS`: its operand (or
    traceback) parameter, or its `*args`, rebound to what a hook makes of it. Any function with
    such a name gets it, wherever it is defined (a class body, or a function put into a class
    later), since CPython picks the method by name."""
    if node.name in OPERAND_METHODS:
        index, one, many = 1, "_operand_", "_operands_"
    elif node.name in EXIT_METHODS:
        index, one, many = 3, "_no_traceback_", "_exit_args_"
    else:
        return None
    positional = [*node.args.posonlyargs, *node.args.args]
    if len(positional) > index:
        name = positional[index].arg
        args: list[ast.expr] = [ast.Name(name, ast.Load())]
        hook = one
    elif node.args.vararg is not None:
        name = node.args.vararg.arg
        args = [ast.Name(name, ast.Load()), ast.Constant(index - len(positional))]
        hook = many
    else:
        return None
    call = ast.Call(func=ast.Name(hook, ast.Load()), args=args, keywords=[])
    return ast.Assign(targets=[ast.Name(name, ast.Store())], value=call)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


@dataclass(slots=True)
class _TreeFacts:
    depth: int = 0
    nodes: int = 0
    stray_yield: ast.AST | None = None
    global_names: set[str] | None = None


def _inspect(tree: ast.Module, max_depth: int, max_nodes: int) -> _TreeFacts:
    """One iterative walk (a hostile tree cannot blow the host's stack) that measures the tree,
    finds a `yield` outside any def, and collects the names declared `global` anywhere.

    Globals are hoisted into the wrapper so that `count = 0` at the top level and `global count`
    in a helper mean the same variable, exactly as in a script."""
    facts = _TreeFacts(global_names=set())
    stack: list[tuple[ast.AST, int, bool]] = [(tree, 1, False)]
    while stack:
        node, depth, nested = stack.pop()
        facts.nodes += 1
        if depth > facts.depth:
            facts.depth = depth
        if facts.nodes > max_nodes or facts.depth > max_depth:
            break
        if isinstance(node, ast.Global):
            facts.global_names.update(node.names)  # type: ignore[union-attr]
        elif not nested and facts.stray_yield is None and isinstance(node, (ast.Yield, ast.YieldFrom)):
            facts.stray_yield = node
        inner = nested or isinstance(node, _SCOPES)
        for child in ast.iter_child_nodes(node):
            stack.append((child, depth + 1, inner))
    return facts


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def top_level_bindings(tree: ast.Module) -> set[str]:
    """The names the snippet body itself binds (assignments, loop and `with` targets, imports,
    `def`/`class` names, `except ... as`, match captures, `:=`, `del`), not those of nested
    functions, classes or comprehensions, except a `:=` inside a comprehension, which binds in
    the body. An explicit stack: a hostile tree cannot blow the host's stack."""
    names: set[str] = set()
    stack: list[tuple[ast.AST, bool]] = [(child, False) for child in tree.body]
    while stack:
        node, in_comprehension = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            # Decorators, defaults, bases and annotations are evaluated in the body's scope.
            outer = [*node.decorator_list, *getattr(node, "bases", ()), *getattr(node, "keywords", ())]
            if not isinstance(node, ast.ClassDef):
                outer += [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
            stack.extend((child, in_comprehension) for child in outer)
            continue
        if isinstance(node, ast.Lambda):
            stack.extend((d, in_comprehension) for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None)
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, (ast.Store, ast.Del)) and not in_comprehension:
                names.add(node.id)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.alias):
            if node.name != "*":
                names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name and not in_comprehension:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest and not in_comprehension:
            names.add(node.rest)
        inner = in_comprehension or isinstance(node, _COMPREHENSIONS)
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))
    return names


_FUTURE_NOT_FIRST = "from __future__ imports must occur at the beginning of the file"
#: The flags of a module with no future statements: what a future statement adds is the rest.
_PLAIN_FLAGS = compile("", FILENAME, "exec", dont_inherit=True).co_flags


def take_future_imports(tree: ast.Module, source: str) -> int:
    """Take the `from __future__ import ...` statements that open the snippet (after an
    optional docstring) out of its body and return their compiler flags: the snippet is a
    program, so they mean what they mean at the top of a file (`annotations` defers
    annotations; the rest are no-ops on 3.11), although the body ends up inside a function.
    CPython itself judges them, so an unknown feature is its SyntaxError. Later ones stay in
    the body, where the policy refuses them with CPython's message."""
    body = tree.body
    start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else 0
    end = start
    while end < len(body) and isinstance(body[end], ast.ImportFrom) \
            and body[end].module == "__future__" and not body[end].level:  # type: ignore[attr-defined]
        end += 1
    if end == start:
        return 0
    futures = body[start:end]
    try:
        code = compile(ast.Module(body=futures, type_ignores=[]), FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:
        # Compiled from a tree, the error points at the statement; point at the feature.
        unknown = [a for f in futures for a in f.names if f"feature {a.name} is" in exc.msg  # type: ignore[attr-defined]
                   or (a.name == "braces" and exc.msg == "not a chance")]
        if unknown:
            exc.lineno, exc.offset = unknown[0].lineno, unknown[0].col_offset + 1
        raise PolicyError([_syntax_problem(exc, source)]) from None
    del body[start:end]
    return code.co_flags & ~_PLAIN_FLAGS


def compile_snippet(source: str, limits: Limits, *, budget: bool = False, session: bool = False) -> CodeType:
    """Compile a snippet into a module code object that defines `__snippet__`.

    With `session`, every name the body binds at its top level is declared global too, so it
    lives in the session's globals and later runs of the session see it.

    Raises `PolicyError` listing every problem (size limits, parse errors and policy refusals),
    each with the snippet's own line number.
    """
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > limits.max_source:
        raise PolicyError(
            [Problem(None, f"the snippet is {size} bytes; the limit is {limits.max_source} bytes")]
        )
    try:
        tree = ast.parse(source, filename=FILENAME, mode="exec")
    except SyntaxError as exc:
        raise PolicyError([_syntax_problem(exc, source)]) from None
    except (RecursionError, MemoryError):
        # CPython's parser reports a stack overflow (`-` * 30000 + `1`) as MemoryError, and
        # building a very deep tree as RecursionError: either way the snippet is too deep.
        raise PolicyError([Problem(None, TOO_DEEP_TO_PARSE)]) from None
    except ValueError as exc:  # null bytes
        raise PolicyError([Problem(None, f"the snippet could not be parsed: {exc}")]) from None
    facts = _inspect(tree, limits.max_ast_depth, limits.max_ast_nodes)
    if facts.nodes > limits.max_ast_nodes:
        raise PolicyError(
            [Problem(None, f"the snippet has more than {limits.max_ast_nodes} syntax nodes; split it up")]
        )
    if facts.depth > limits.max_ast_depth:
        raise PolicyError(
            [Problem(None, f"the snippet nests deeper than {limits.max_ast_depth} levels; flatten it")]
        )
    stray = facts.stray_yield
    if stray is not None:
        raise PolicyError(
            [Problem(getattr(stray, "lineno", None), "yield is only allowed inside a def")]
        )

    flags = take_future_imports(tree, source)
    policy = SnippetPolicy(budget=budget)
    try:
        tree = policy.visit(tree)
    except RecursionError:
        raise PolicyError([Problem(None, TOO_DEEP_TO_CHECK)]) from None
    if policy.problems:
        raise PolicyError(sorted(policy.problems, key=lambda p: (p.line or 0)))

    if session:
        facts.global_names.update(top_level_bindings(tree))  # type: ignore[union-attr]
    # Top-level `global` statements are subsumed by the hoisted declaration.
    body: list[ast.stmt] = [s for s in tree.body if not isinstance(s, ast.Global)] or [ast.Pass()]
    last = body[-1]
    if isinstance(last, ast.Expr):
        # A program that ends with a bare expression returns its value, as a notebook shows it.
        call = ast.Call(func=ast.Name(LAST_VALUE_HOOK, ast.Load()), args=[last.value], keywords=[])
        body[-1] = _located(ast.Return(value=call), last)
    if facts.global_names:
        body.insert(0, ast.Global(names=sorted(facts.global_names)))
    wrapper = ast.AsyncFunctionDef(
        name=ENTRY_POINT,
        args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        ),
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
    )
    module = ast.Module(body=[wrapper], type_ignores=[])
    for node in (wrapper, body[0]):
        if not hasattr(node, "lineno"):
            node.lineno = node.end_lineno = 1
            node.col_offset = node.end_col_offset = 0
    try:
        try:
            code = compile(module, FILENAME, "exec", flags=flags, dont_inherit=True)
        except TypeError:
            # A node without a location (from a transform we did not write): place it and retry.
            ast.fix_missing_locations(module)
            code = compile(module, FILENAME, "exec", flags=flags, dont_inherit=True)
        return _top_level_qualnames(code)
    except SyntaxError as exc:
        raise PolicyError([_syntax_problem(exc, source)]) from None
    except (RecursionError, MemoryError):
        raise PolicyError([Problem(None, TOO_DEEP_TO_PARSE)]) from None
    except (ValueError, TypeError) as exc:  # a tree our transforms got wrong: refused, never raised
        raise PolicyError([Problem(None, f"the snippet could not be compiled: {exc}")]) from None


_WRAPPER_PREFIX = ENTRY_POINT + ".<locals>."


def _top_level_qualnames(code: CodeType) -> CodeType:
    """The compiled snippet with the wrapper's name taken out of every function's qualified
    name: what the snippet defines at its top level is `f`, `Row.total`, `<lambda>`, as in a
    CPython script, not `__snippet__.<locals>.f`, in reprs, messages and `__qualname__` (the
    class factory does the same for classes). Nesting is bounded by the policy's depth limit,
    so the walk recurses."""
    consts = tuple(_top_level_qualnames(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    changed = any(new is not old for new, old in zip(consts, code.co_consts, strict=True))
    qualname = code.co_qualname
    if qualname.startswith(_WRAPPER_PREFIX):
        return code.replace(co_qualname=qualname[len(_WRAPPER_PREFIX):], co_consts=consts)
    return code.replace(co_consts=consts) if changed else code


def _syntax_problem(exc: SyntaxError, source: str) -> Problem:
    line = exc.lineno
    text = exc.msg if exc.msg.startswith("invalid syntax") else f"invalid syntax: {exc.msg}"
    lines = source.splitlines()
    if line and 0 < line <= len(lines):
        src = lines[line - 1]
        shown = src.strip()
        caret = exc.offset - 1 - (len(src) - len(src.lstrip())) if exc.offset and exc.offset > 0 else None
        if len(shown) > MAX_QUOTED_LINE:
            # Quote a window around the error, not a whole 100 KiB line.
            start = 0 if caret is None else max(0, min(caret - MAX_QUOTED_LINE // 2, len(shown) - MAX_QUOTED_LINE))
            window = shown[start : start + MAX_QUOTED_LINE]
            prefix = "..." if start else ""
            suffix = "..." if start + MAX_QUOTED_LINE < len(shown) else ""
            if caret is not None:
                caret = caret - start + len(prefix)
            shown = prefix + window + suffix
        text += f"\n    {shown}"
        if caret is not None:
            text += "\n    " + " " * max(0, caret) + "^"
    return Problem(line, text)
