# dataclasses' helpers, as the snippet's own code (restricted Python, compiled under the
# snippet policy).
#
# `fields`, `replace`, `asdict` and `astuple` read a dataclass's fields by name: here every read
# is the snippet's own guarded `getattr` (`read`: with the kernels' short path for plain public
# names), and the field list comes from the `field_table`
# kernel, which accepts only real `Field` objects. Field lists are cached per class for the
# run (a class that is not a dataclass is remembered only when it is not the snippet's own,
# since `@dataclass` may still turn one of those into a dataclass); unlike CPython, a
# `__dataclass_fields__` changed after the first call is not seen again.

# The run's own `copy` module, a prelude too: `asdict`/`astuple` deep-copy their leaf values as
# the snippet's own code (sandbox/prelude/copy.rpy), never with the stdlib's `copy`.
import copy as copy_module

deepcopy = copy_module.deepcopy

table_cache = {}


def field_entry(cls):
    # (rows, names) of a dataclass's fields, or None when `cls` is not a dataclass.
    entry = table_cache.get(cls)
    if entry is not None:
        return entry or None
    try:
        found = cls.__dataclass_fields__
    except AttributeError:
        if not owns(cls):
            table_cache[cls] = False
        return None
    rows = field_table(found)
    entry = table_cache[cls] = (rows, tuple([row[1] for row in rows if row[2] == "field"]))
    return entry


def field_rows(cls):
    entry = field_entry(cls)
    return None if entry is None else entry[0]


def field_names(cls):
    # The names of a dataclass's real fields (no ClassVar/InitVar pseudo-fields), or None.
    entry = field_entry(cls)
    return None if entry is None else entry[1]


def fields(class_or_instance):
    """Return a tuple describing the fields of this dataclass.

    Accepts a dataclass or an instance of one. Tuple elements are of type Field.
    """
    cls = class_or_instance if isinstance(class_or_instance, type) else type(class_or_instance)
    rows = field_rows(cls)
    if rows is None:
        raise TypeError("must be called with a dataclass type or instance") from None
    return tuple([row[0] for row in rows if row[2] == "field"])


def is_instance(obj):
    return not isinstance(obj, type) and field_rows(type(obj)) is not None


def replace(obj, /, **changes):
    """Return a new object replacing specified fields with new values.

    This is especially useful for frozen classes.
    """
    cls = type(obj)
    rows = None if isinstance(obj, type) else field_rows(cls)
    if rows is None:
        raise TypeError("replace() should be called on dataclass instances")
    for field, name, kind, init, has_default in rows:
        if kind == "classvar":
            continue
        if not init:
            if name in changes:
                raise ValueError(f"field {name} is declared with init=False, it cannot be "
                                 "specified with replace()")
            continue
        if name not in changes:
            if kind == "initvar" and not has_default:
                raise ValueError(f"InitVar {name!r} must be specified with replace()")
            changes[name] = read(obj, name)
    return cls(**changes)


def asdict(obj, *, dict_factory=dict):
    """Return the fields of a dataclass instance as a new dictionary mapping field names to
    field values, recursing into dataclasses, dicts, lists and tuples; other values are
    deep-copied."""
    if not is_instance(obj):
        raise TypeError("asdict() should be called on dataclass instances")
    return asdict_inner(obj, dict_factory)


def asdict_inner(obj, dict_factory):
    cls = type(obj)
    if cls in ATOMIC:
        return obj
    names = field_names(cls) if not isinstance(obj, type) else None
    if names is not None:
        if dict_factory is dict:
            return {name: asdict_inner(read(obj, name), dict) for name in names}
        return dict_factory([(name, asdict_inner(read(obj, name), dict_factory)) for name in names])
    if cls is list:
        return [asdict_inner(v, dict_factory) for v in obj]
    if cls is dict:
        return {asdict_inner(k, dict_factory): asdict_inner(v, dict_factory) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return cls(*[asdict_inner(v, dict_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return cls(asdict_inner(v, dict_factory) for v in obj)
    if isinstance(obj, dict):
        if hasattr(cls, "default_factory"):
            result = cls(obj.default_factory)
            for k, v in obj.items():
                result[asdict_inner(k, dict_factory)] = asdict_inner(v, dict_factory)
            return result
        return cls((asdict_inner(k, dict_factory), asdict_inner(v, dict_factory)) for k, v in obj.items())
    return deepcopy(obj)


def astuple(obj, *, tuple_factory=tuple):
    """Return the fields of a dataclass instance as a new tuple of field values, recursing into
    dataclasses, dicts, lists and tuples; other values are deep-copied."""
    if not is_instance(obj):
        raise TypeError("astuple() should be called on dataclass instances")
    return astuple_inner(obj, tuple_factory)


def astuple_inner(obj, tuple_factory):
    cls = type(obj)
    if cls in ATOMIC:
        return obj
    names = field_names(cls) if not isinstance(obj, type) else None
    if names is not None:
        return tuple_factory([astuple_inner(read(obj, name), tuple_factory) for name in names])
    if cls is list:
        return [astuple_inner(v, tuple_factory) for v in obj]
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return cls(*[astuple_inner(v, tuple_factory) for v in obj])
    if isinstance(obj, (list, tuple)):
        return cls(astuple_inner(v, tuple_factory) for v in obj)
    if isinstance(obj, dict):
        if hasattr(cls, "default_factory"):
            result = cls(obj.default_factory)
            for k, v in obj.items():
                result[astuple_inner(k, tuple_factory)] = astuple_inner(v, tuple_factory)
            return result
        return cls((astuple_inner(k, tuple_factory), astuple_inner(v, tuple_factory)) for k, v in obj.items())
    return deepcopy(obj)
