# operator's callables that read attributes by name, as the snippet's own code.
#
# `attrgetter('a.b')(obj)` and `methodcaller('m')(obj)` read through `read`, the snippet's own
# guarded getattr: a name the snippet could not read (`__globals__`, `__reduce_ex__`) is refused
# with the same message, and a judged name (`format`, `mro`) comes back judged.


class attrgetter:
    """Return a callable object that fetches the given attribute(s) from its operand.
    After f = attrgetter('name'), the call f(r) returns r.name.
    After g = attrgetter('name', 'date'), the call g(r) returns (r.name, r.date).
    After h = attrgetter('name.first', 'name.last'), the call h(r) returns
    (r.name.first, r.name.last).
    """

    __slots__ = ("single", "paths", "names")

    def __init__(self, attr, /, *attrs):
        names = (attr,) + attrs
        paths = []
        for name in names:
            if not isinstance(name, str):
                raise TypeError("attribute name must be a string")
            paths.append(tuple(name.split(".")))
        self.names = names
        self.paths = tuple(paths)
        self.single = paths[0][0] if len(paths) == 1 and len(paths[0]) == 1 else None

    def __call__(self, obj, /):
        single = self.single
        if single is not None:
            return read(obj, single)
        found = []
        for path in self.paths:
            value = obj
            for name in path:
                value = read(value, name)
            found.append(value)
        return found[0] if len(found) == 1 else tuple(found)

    def __repr__(self):
        return f"operator.attrgetter({', '.join([repr(n) for n in self.names])})"


class methodcaller:
    """Return a callable object that calls the given method on its operand.
    After f = methodcaller('name'), the call f(r) returns r.name().
    After g = methodcaller('name', 'date', foo=1), the call g(r) returns
    r.name('date', foo=1).
    """

    __slots__ = ("name", "args", "kwargs")

    def __init__(self, name, /, *args, **kwargs):
        if not isinstance(name, str):
            raise TypeError("method name must be a string")
        self.name = name
        self.args = args
        self.kwargs = kwargs

    def __call__(self, obj, /):
        return read(obj, self.name)(*self.args, **self.kwargs)

    def __repr__(self):
        shown = [repr(self.name)] + [repr(a) for a in self.args]
        shown += [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"operator.methodcaller({', '.join(shown)})"
