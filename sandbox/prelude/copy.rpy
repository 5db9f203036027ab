# copy's `copy` and `deepcopy`, as the snippet's own code (restricted Python, compiled under the
# snippet policy).
#
# The walk is done here, so every attribute read and write on the snippet's objects is its own
# guarded one: exact builtin containers are rebuilt item by item; the snippet's own classes
# copy through their own `__copy__`/`__deepcopy__` when they define one (a `__deepcopy__` gets
# this walk's memo, a plain dict of the snippet's own objects and their copies, keyed on the
# run's `id()`), else as a new instance without `__init__` (`blank`) that receives the instance
# dictionary and slots. No reduce protocol runs on a snippet object. Host classes' values follow
# a rule per type in the kernels (`copy_host`: immutable values, `Random`'s state, the sandbox's
# own hooks, plain-data instances of pure-Python classes) or here (partials, exceptions, named
# tuples, iterators through `copy_iterator`); anything else is refused.
#
# `type(x) is type` holds exactly for classes (the run's `type` never hands out a metaclass):
# classes, like the atomic types, are their own copy.

nil = object()

TOO_DEEP = "deepcopy(): the object is nested too deeply to copy in the sandbox"

# Per class of the snippet's, for this run: its slots' attribute names.
slot_cache = {}


def copy(x):
    """Shallow copy operation on arbitrary Python objects.

    See the module's __doc__ string for more info.
    """
    cls = type(x)
    if cls in ATOMIC or cls is type:
        return x
    if cls is list:
        return x[:]
    if cls is dict or cls is set:
        return x.copy()
    if cls is tuple or cls is frozenset:
        return x
    if cls is bytearray:
        return bytearray(x)
    if cls in MAPPINGS or cls is deque:
        return x.copy()
    if cls is ChainMap:
        maps = x.maps
        return ChainMap(maps[0].copy(), *maps[1:])
    if owns(cls):
        return own_copy(x, cls, None, nil)
    return host_value_copy(x, cls, None, nil)


def deepcopy(x, memo=None, _nil=[]):
    """Deep copy operation on arbitrary Python objects.

    See the module's __doc__ string for more info.
    """
    cls = type(x)
    if cls in DEEP_ATOMIC or cls is type:
        return x
    return deep(x, cls, {} if memo is None else memo)


def deep(x, cls, memo):
    # `deepcopy` of a value of class `cls` that is neither atomic nor a class.
    d = ident(x)
    y = memo.get(d, nil)
    if y is not nil:
        return y
    try:
        y = deep_dispatch(x, cls, memo, d)
    except RecursionError:
        # Where the stack ran out (the walk recurses twice per level of nesting, as CPython's
        # does); the error then passes every outer level as it is.
        raise ValueError(TOO_DEEP) from None
    if y is not x:
        memo[d] = y
        m = ident(memo)
        keep = memo.get(m, nil)
        if keep is nil:
            memo[m] = [x]
        else:
            keep.append(x)
    return y


def deep_dispatch(x, cls, memo, d):
    if cls is list:
        y = []
        memo[d] = y
        for item in x:
            kind = type(item)
            y.append(item if kind in DEEP_ATOMIC or kind is type else deep(item, kind, memo))
        return y
    if cls is dict:
        y = {}
        memo[d] = y
        for key, value in x.items():
            kind = type(value)
            y[deepcopy(key, memo)] = value if kind in DEEP_ATOMIC or kind is type else deep(value, kind, memo)
        return y
    if cls is tuple:
        return deep_tuple(x, memo, d)
    if cls is set:
        y = set()
        memo[d] = y
        for item in x:
            y.add(deepcopy(item, memo))
        return y
    if cls is frozenset:
        return frozenset([deepcopy(item, memo) for item in x])
    if cls is bytearray:
        return bytearray(x)
    if cls in MAPPINGS:
        y = cls(deepcopy(x.default_factory, memo)) if cls is defaultdict else cls()
        memo[d] = y
        for key, value in x.items():
            y[deepcopy(key, memo)] = deepcopy(value, memo)
        return y
    if cls is deque:
        y = deque(maxlen=x.maxlen)
        memo[d] = y
        for item in x:
            y.append(deepcopy(item, memo))
        return y
    if cls is ChainMap:
        return ChainMap(*[deepcopy(m, memo) for m in x.maps])
    if cls is MethodType:
        # A method of the snippet's own object is bound to that object's copy, as in CPython;
        # any other method is its own copy (its object is not the snippet's to copy).
        return rebind_method(x, lambda obj: deepcopy(obj, memo))
    if owns(cls):
        return own_copy(x, cls, memo, d)
    return host_value_copy(x, cls, memo, d)


def deep_tuple(x, memo, d):
    items = []
    changed = False
    for item in x:
        kind = type(item)
        if kind in DEEP_ATOMIC or kind is type:
            items.append(item)
        else:
            copied = deep(item, kind, memo)
            changed = changed or copied is not item
            items.append(copied)
    # A tuple in a cycle was copied while its items were.
    found = memo.get(d, nil)
    if found is not nil:
        return found
    return tuple(items) if changed else x


def own_copy(x, cls, memo, d):
    # An instance of the snippet's own class; `memo` is None for a shallow copy.
    if isinstance(x, Enum):
        return x
    hook = copy_hook(x, memo is not None)
    if hook is not None:
        return hook(x) if memo is None else hook(memo)
    layout = copy_layout(cls)[0]
    if layout == "object" or layout == "slots":
        y = blank(cls)
        if layout == "slots":
            copy_host_slots(y, x)
    elif layout == "list":
        y = blank(cls)
        if memo is not None:
            memo[d] = y
        for item in x:
            y.append(item if memo is None else deepcopy(item, memo))
    elif layout == "dict" or layout == "defaultdict":
        y = blank(cls)
        if memo is not None:
            memo[d] = y
        if layout == "defaultdict":
            y.default_factory = maybe_deep(x.default_factory, memo)
        for key, value in x.items():
            y[maybe_deep(key, memo)] = maybe_deep(value, memo)
    elif layout == "set":
        y = blank(cls)
        if memo is not None:
            memo[d] = y
        for item in x:
            y.add(maybe_deep(item, memo))
    elif layout == "bytearray":
        y = blank(cls)
        y.extend(x)
    elif layout == "deque":
        y = blank(cls) if x.maxlen is None else cls((), x.maxlen)
        if memo is not None:
            memo[d] = y
        for item in x:
            y.append(maybe_deep(item, memo))
    elif layout == "value":
        y = blank(cls, builtin_value(x, layout))
    elif layout == "tuple" or layout == "frozenset":
        items = builtin_value(x, layout)
        if memo is not None:
            items = tuple([deepcopy(item, memo) for item in items])
            found = memo.get(d, nil)
            if found is not nil:
                return found
        y = blank(cls, items)
    elif layout == "exception":
        y = cls(*maybe_deep(x.args, memo))
    elif layout == "random":
        y = cls()
        y.setstate(maybe_deep(x.getstate(), memo))
    elif layout == "partial":
        y = cls(maybe_deep(x.func, memo), *maybe_deep(x.args, memo), **maybe_deep(x.keywords, memo))
    elif layout == "decimal":
        y = cls(builtin_value(x, layout))
    elif layout == "datetime":
        y = blank(cls, *maybe_deep(datetime_args(x), memo))
    else:
        raise TypeError(f"cannot copy a '{cls.__name__}' object in the sandbox")
    if memo is not None:
        memo[d] = y
    copy_state(x, y, cls, memo)
    return y


def maybe_deep(value, memo):
    return value if memo is None else deepcopy(value, memo)


def copy_state(x, y, cls, memo):
    # The instance dictionary and the snippet's own slots, through the snippet's own access.
    state = own_state(x)
    if state:
        target = own_state(y)
        if memo is None:
            target.update(state)
        else:
            for key, value in list(state.items()):
                kind = type(value)
                target[key] = value if kind in DEEP_ATOMIC or kind is type else deep(value, kind, memo)
    # Slots are written past the class's own `__setattr__` (a frozen dataclass's refuses), as
    # the instance dictionary is: the copy gets the state, it does not assign it.
    for name in slot_names(cls):
        value = getattr(x, name, nil)
        if value is not nil:
            object.__setattr__(y, name, maybe_deep(value, memo))


def slot_names(cls):
    names = slot_cache.get(cls)
    if names is not None:
        return names
    names = []
    for klass in cls.__mro__:
        if not owns(klass):
            continue
        slots = vars(klass).get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for name in slots:
            if name == "__dict__" or name == "__weakref__":
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = "_" + klass.__name__.lstrip("_") + name
            names.append(name)
    names = slot_cache[cls] = tuple(names)
    return names


def host_value_copy(x, cls, memo, d):
    # A host class's value: a kernel rule for its exact type, or one of the rules below.
    if isinstance(x, Enum):
        return x
    found = copy_host(x, memo is not None)
    if found is not UNHANDLED:
        return found
    if cls is partial:
        return partial(maybe_deep(x.func, memo), *maybe_deep(x.args, memo), **maybe_deep(x.keywords, memo))
    if isinstance(x, BaseException):
        args, state = exception_parts(x)
        y = cls(*maybe_deep(args, memo))
        if memo is not None:
            memo[d] = y
        for name, value in state.items():
            setattr(y, name, maybe_deep(value, memo))
        return y
    if isinstance(x, tuple):
        # A host named tuple (or struct sequence): immutable, so a shallow copy is itself.
        if memo is None:
            return x
        items = [deepcopy(item, memo) for item in x]
        for copied, item in zip(items, x):
            if copied is not item:
                return cls._make(items) if hasattr(cls, "_make") else cls(items)
        return x
    made = copy_iterator(x, memo is not None)
    if made is not None:
        if made[0] == "copy":
            return made[1]
        if made[0] == "items":
            return iter(deepcopy(made[1], memo))
        kind, maker, args, state = made[1:]
        return rebuild_iterator(kind, maker, deepcopy(args, memo), deepcopy(state, memo))
    raise copy_refusal(x)
