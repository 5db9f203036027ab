# pprint, as the snippet's own code (restricted Python, compiled under the snippet policy).
#
# A port of CPython 3.11's pprint: the container walk, the sorting of dict keys and set items,
# every `repr()` of a leaf and a dataclass's fields are read here with the snippet's rights (the
# stdlib did all of that as host code, and read a dataclass's fields by the names its
# `__dataclass_fields__` gave). The output is CPython's, byte for byte. Differences: there is no
# stream (`pprint`/`pp`/`PrettyPrinter.pprint` print to the run's log, and `stream=` is
# refused); the ids in "<Recursion on ...>" are the run's `id()` numbers; `collections.UserDict`
# and friends are not in the sandbox, so they have no entry. The sandbox's generated dataclass
# methods carry no `__wrapped__`, so the `generated_repr` kernel tells a generated `__repr__`.
#
# The work is done by `Printer` (public slots, so no attribute read in the walk needs the
# guard); `PrettyPrinter` keeps CPython's interface and private attributes, and a subclass's
# `format()` is called for every object, as in CPython (its private `_format`, `_repr`,
# `_pprint_*` and `_dispatch` are CPython internals a subclass cannot hook here).

import re
from collections import ChainMap, Counter, OrderedDict, defaultdict, deque

NO_STREAM = "{}(stream=...) is not available in the sandbox; use pformat()"

MISSING = object()

BUILTIN_SCALARS = frozenset({str, bytes, bytearray, float, complex, bool, type(None)})

dict_repr = dict.__repr__
list_repr = list.__repr__
tuple_repr = tuple.__repr__
int_repr = int.__repr__

#: `type(x).__repr__` for the exact builtin types, whose methods cannot change (each Printer
#: adds the other types it meets).
KNOWN_REPRS = {dict: dict_repr, list: list_repr, tuple: tuple_repr, int: int_repr,
               set: set.__repr__, frozenset: frozenset.__repr__}




def check_options(indent, width, depth):
    indent = int(indent)
    width = int(width)
    if indent < 0:
        raise ValueError("indent must be >= 0")
    if depth is not None and depth <= 0:
        raise ValueError("depth must be > 0")
    if not width:
        raise ValueError("width must be != 0")
    return indent, width


class SafeKey:
    """Helper function for key functions when sorting unorderable objects.

    The wrapped-object will fallback to a Py2.x style comparison for
    unorderable types (sorting first comparing the type name and then by
    the obj ids).  Does not work recursively, so dict.items() must have
    SafeKey applied to both the key and the value.
    """

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def __lt__(self, other):
        try:
            return self.obj < other.obj
        except TypeError:
            return (str(type(self.obj)), id(self.obj)) < (str(type(other.obj)), id(other.obj))


def safe_tuple(t):
    return SafeKey(t[0]), SafeKey(t[1])


def sorted_items(mapping):
    # CPython's `sorted(mapping.items(), key=safe_tuple)`. A tuple of two SafeKeys compares by
    # its keys alone (distinct SafeKeys are never equal), so where the keys are plain text or
    # plain numbers of an exact dict (`sorts_plainly`) sorting the items as they are does the
    # same comparisons, in C.
    if sorts_plainly(mapping):
        return sorted(mapping.items())
    return sorted(mapping.items(), key=safe_tuple)


def recursion(object):
    return "<Recursion on %s with id=%s>" % (type(object).__name__, id(object))


def wrap_bytes_repr(object, width, allowance):
    current = b""
    last = len(object) // 4 * 4
    for i in range(0, len(object), 4):
        part = object[i: i + 4]
        candidate = current + part
        if i == last:
            width -= allowance
        if len(repr(candidate)) > width:
            if current:
                yield repr(current)
            current = part
        else:
            current = candidate
    if current:
        yield repr(current)


class Printer:
    # One pformat's settings and state. `fmt` is `format(object, context, maxlevels, level)`:
    # this printer's `safe_repr`, or a PrettyPrinter subclass's own `format`.

    __slots__ = ("depth", "indent_per_level", "width", "compact", "sort_dicts", "underscore_numbers",
                 "readable", "recursive", "fmt", "reprs", "dataclass_fields")

    def __init__(self, indent, width, depth, compact, sort_dicts, underscore_numbers, fmt=None):
        self.depth = depth
        self.indent_per_level = indent
        self.width = width
        self.compact = bool(compact)
        self.sort_dicts = sort_dicts
        self.underscore_numbers = underscore_numbers
        self.readable = True
        self.recursive = False
        self.fmt = self.safe_repr if fmt is None else fmt
        # `type(x).__repr__`, and the names of the fields a dataclass shows (None for a class
        # that takes no dataclass path), read once per type for this pformat.
        self.reprs = dict(KNOWN_REPRS)
        self.dataclass_fields = {}

    def repr_of(self, typ):
        found = self.reprs.get(typ, MISSING)
        if found is MISSING:
            found = self.reprs[typ] = getattr(typ, "__repr__", None)
        return found

    def pformat(self, object):
        out = []
        self.format_(object, out.append, 0, 0, {}, 0)
        return "".join(out)

    def format_(self, object, write, indent, allowance, context, level):
        objid = id(object)
        if objid in context:
            write(recursion(object))
            self.recursive = True
            self.readable = False
            return
        rep = self.repr_(object, context, level)
        max_width = self.width - indent - allowance
        if len(rep) > max_width:
            typ = type_of(object)
            r = self.reprs.get(typ)
            if r is None:
                r = self.repr_of(typ)
            p = DISPATCH.get(r, None)
            if p is not None:
                context[objid] = 1
                p(self, object, write, indent, allowance, context, level + 1)
                del context[objid]
                return
            elif generated_repr(r) and not isinstance(object, type) and self.shown_fields(typ, object) is not None:
                context[objid] = 1
                self.pprint_dataclass(object, write, indent, allowance, context, level + 1)
                del context[objid]
                return
        write(rep)

    def shown_fields(self, typ, object):
        # CPython's test: a dataclass whose parameters still ask for a repr (a subclass decorated
        # with repr=False inherits the generated one); then the fields with repr=True.
        names = self.dataclass_fields.get(typ, MISSING)
        if names is MISSING:
            names = None
            try:
                params = object.__dataclass_params__
            except AttributeError:
                params = None
            if params is not None and params.repr:
                import dataclasses

                names = tuple([f.name for f in dataclasses.fields(object) if f.repr])
            self.dataclass_fields[typ] = names
        return names

    def pprint_dataclass(self, object, write, indent, allowance, context, level):
        cls_name = type_of(object).__name__
        indent += len(cls_name) + 1
        items = [(name, read(object, name)) for name in self.dataclass_fields[type_of(object)]]
        write(cls_name + "(")
        self.format_namespace_items(items, write, indent, allowance, context, level)
        write(")")

    def pprint_dict(self, object, write, indent, allowance, context, level):
        write("{")
        if self.indent_per_level > 1:
            write((self.indent_per_level - 1) * " ")
        length = len(object)
        if length:
            if self.sort_dicts:
                items = sorted_items(object)
            else:
                items = object.items()
            self.format_dict_items(items, write, indent, allowance + 1, context, level)
        write("}")

    def pprint_ordered_dict(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        cls = type(object)
        write(cls.__name__ + "(")
        self.format_(list(object.items()), write, indent + len(cls.__name__) + 1, allowance + 1,
                     context, level)
        write(")")

    def pprint_list(self, object, write, indent, allowance, context, level):
        write("[")
        self.format_items(object, write, indent, allowance + 1, context, level)
        write("]")

    def pprint_tuple(self, object, write, indent, allowance, context, level):
        write("(")
        endchar = ",)" if len(object) == 1 else ")"
        self.format_items(object, write, indent, allowance + len(endchar), context, level)
        write(endchar)

    def pprint_set(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        typ = type(object)
        if typ is set:
            write("{")
            endchar = "}"
        else:
            write(typ.__name__ + "({")
            endchar = "})"
            indent += len(typ.__name__) + 1
        object = sorted(object) if sorts_plainly(object) else sorted(object, key=SafeKey)
        self.format_items(object, write, indent, allowance + len(endchar), context, level)
        write(endchar)

    def pprint_str(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        chunks = []
        lines = object.splitlines(True)
        if level == 1:
            indent += 1
            allowance += 1
        max_width1 = max_width = self.width - indent
        for i, line in enumerate(lines):
            rep = repr(line)
            if i == len(lines) - 1:
                max_width1 -= allowance
            if len(rep) <= max_width1:
                chunks.append(rep)
            else:
                # A list of alternating (non-space, space) strings
                parts = re.findall(r"\S*\s*", line)
                assert parts
                assert not parts[-1]
                parts.pop()  # drop empty last part
                max_width2 = max_width
                current = ""
                for j, part in enumerate(parts):
                    candidate = current + part
                    if j == len(parts) - 1 and i == len(lines) - 1:
                        max_width2 -= allowance
                    if len(repr(candidate)) > max_width2:
                        if current:
                            chunks.append(repr(current))
                        current = part
                    else:
                        current = candidate
                if current:
                    chunks.append(repr(current))
        if len(chunks) == 1:
            write(rep)
            return
        if level == 1:
            write("(")
        for i, rep in enumerate(chunks):
            if i > 0:
                write("\n" + " " * indent)
            write(rep)
        if level == 1:
            write(")")

    def pprint_bytes(self, object, write, indent, allowance, context, level):
        if len(object) <= 4:
            write(repr(object))
            return
        parens = level == 1
        if parens:
            indent += 1
            allowance += 1
            write("(")
        delim = ""
        for rep in wrap_bytes_repr(object, self.width - indent, allowance):
            write(delim)
            write(rep)
            if not delim:
                delim = "\n" + " " * indent
        if parens:
            write(")")

    def pprint_bytearray(self, object, write, indent, allowance, context, level):
        write("bytearray(")
        self.pprint_bytes(bytes(object), write, indent + 10, allowance + 1, context, level + 1)
        write(")")

    def pprint_mappingproxy(self, object, write, indent, allowance, context, level):
        write("mappingproxy(")
        self.format_(object.copy(), write, indent + 13, allowance + 1, context, level)
        write(")")

    def pprint_simplenamespace(self, object, write, indent, allowance, context, level):
        if is_exact_namespace(object):
            # The SimpleNamespace repr is "namespace" instead of the class
            # name, so we do the same here. For subclasses; use the class name.
            cls_name = "namespace"
        else:
            cls_name = type(object).__name__
        indent += len(cls_name) + 1
        items = [(name, getattr(object, name)) for name in namespace_names(object)]
        write(cls_name + "(")
        self.format_namespace_items(items, write, indent, allowance, context, level)
        write(")")

    def format_dict_items(self, items, write, indent, allowance, context, level):
        indent += self.indent_per_level
        delimnl = ",\n" + " " * indent
        last_index = len(items) - 1
        for i, (key, ent) in enumerate(items):
            last = i == last_index
            rep = self.repr_(key, context, level)
            write(rep)
            write(": ")
            self.format_(ent, write, indent + len(rep) + 2, allowance if last else 1, context, level)
            if not last:
                write(delimnl)

    def format_namespace_items(self, items, write, indent, allowance, context, level):
        delimnl = ",\n" + " " * indent
        last_index = len(items) - 1
        for i, (key, ent) in enumerate(items):
            last = i == last_index
            write(key)
            write("=")
            if id(ent) in context:
                # Special-case representation of recursion to match standard
                # recursive dataclass repr.
                write("...")
            else:
                self.format_(ent, write, indent + len(key) + 1, allowance if last else 1, context, level)
            if not last:
                write(delimnl)

    def format_items(self, items, write, indent, allowance, context, level):
        indent += self.indent_per_level
        if self.indent_per_level > 1:
            write((self.indent_per_level - 1) * " ")
        delimnl = ",\n" + " " * indent
        delim = ""
        width = max_width = self.width - indent + 1
        it = iter(items)
        try:
            next_ent = next(it)
        except StopIteration:
            return
        last = False
        while not last:
            ent = next_ent
            try:
                next_ent = next(it)
            except StopIteration:
                last = True
                max_width -= allowance
                width -= allowance
            if self.compact:
                rep = self.repr_(ent, context, level)
                w = len(rep) + 2
                if width < w:
                    width = max_width
                    if delim:
                        delim = delimnl
                if width >= w:
                    width -= w
                    write(delim)
                    delim = ", "
                    write(rep)
                    continue
            write(delim)
            delim = delimnl
            self.format_(ent, write, indent, allowance if last else 1, context, level)

    def repr_(self, object, context, level):
        rep, readable, recursive = self.fmt(object, context.copy(), self.depth, level)
        if not readable:
            self.readable = False
        if recursive:
            self.recursive = True
        return rep

    def pprint_default_dict(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        rdf = self.repr_(object.default_factory, context, level)
        cls = type(object)
        indent += len(cls.__name__) + 1
        write("%s(%s,\n%s" % (cls.__name__, rdf, " " * indent))
        self.pprint_dict(object, write, indent, allowance + 1, context, level)
        write(")")

    def pprint_counter(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        cls = type(object)
        write(cls.__name__ + "({")
        if self.indent_per_level > 1:
            write((self.indent_per_level - 1) * " ")
        items = object.most_common()
        self.format_dict_items(items, write, indent + len(cls.__name__) + 1, allowance + 2, context, level)
        write("})")

    def pprint_chain_map(self, object, write, indent, allowance, context, level):
        if not len(object.maps):
            write(repr(object))
            return
        cls = type(object)
        write(cls.__name__ + "(")
        indent += len(cls.__name__) + 1
        for i, m in enumerate(object.maps):
            if i == len(object.maps) - 1:
                self.format_(m, write, indent, allowance + 1, context, level)
                write(")")
            else:
                self.format_(m, write, indent, 1, context, level)
                write(",\n" + " " * indent)

    def pprint_deque(self, object, write, indent, allowance, context, level):
        if not len(object):
            write(repr(object))
            return
        cls = type(object)
        write(cls.__name__ + "(")
        indent += len(cls.__name__) + 1
        write("[")
        if object.maxlen is None:
            self.format_items(object, write, indent, allowance + 2, context, level)
            write("])")
        else:
            self.format_items(object, write, indent, 2, context, level)
            rml = self.repr_(object.maxlen, context, level)
            write("],\n%smaxlen=%s)" % (" " * indent, rml))

    def safe_repr(self, object, context, maxlevels, level):
        # Return triple (repr_string, isreadable, isrecursive).
        typ = type_of(object)
        if typ in BUILTIN_SCALARS:
            return repr(object), True, False

        r = self.reprs.get(typ)
        if r is None:
            r = self.repr_of(typ)

        if typ is int or (r is int_repr and issubclass(typ, int)):
            if self.underscore_numbers:
                return f"{object:_d}", True, False
            else:
                return repr(object), True, False

        if typ is dict or (r is dict_repr and issubclass(typ, dict)):
            if not object:
                return "{}", True, False
            objid = id(object)
            if maxlevels and level >= maxlevels:
                return "{...}", False, objid in context
            if objid in context:
                return recursion(object), False, True
            context[objid] = 1
            readable = True
            recursive = False
            components = []
            append = components.append
            level += 1
            if self.sort_dicts:
                items = sorted_items(object)
            else:
                items = object.items()
            fmt = self.fmt
            for k, v in items:
                krepr, kreadable, krecur = fmt(k, context, maxlevels, level)
                vrepr, vreadable, vrecur = fmt(v, context, maxlevels, level)
                append("%s: %s" % (krepr, vrepr))
                readable = readable and kreadable and vreadable
                if krecur or vrecur:
                    recursive = True
            del context[objid]
            return "{%s}" % ", ".join(components), readable, recursive

        if typ is list or typ is tuple or (r is list_repr and issubclass(typ, list)) or (
                r is tuple_repr and issubclass(typ, tuple)):
            if typ is list or (typ is not tuple and issubclass(typ, list)):
                if not object:
                    return "[]", True, False
                format = "[%s]"
            elif len(object) == 1:
                format = "(%s,)"
            else:
                if not object:
                    return "()", True, False
                format = "(%s)"
            objid = id(object)
            if maxlevels and level >= maxlevels:
                return format % "...", False, objid in context
            if objid in context:
                return recursion(object), False, True
            context[objid] = 1
            readable = True
            recursive = False
            components = []
            append = components.append
            level += 1
            fmt = self.fmt
            for o in object:
                orepr, oreadable, orecur = fmt(o, context, maxlevels, level)
                append(orepr)
                if not oreadable:
                    readable = False
                if orecur:
                    recursive = True
            del context[objid]
            return format % ", ".join(components), readable, recursive

        rep = repr(object)
        return rep, (rep and not rep.startswith("<")), False


DISPATCH = {
    dict_repr: Printer.pprint_dict,
    OrderedDict.__repr__: Printer.pprint_ordered_dict,
    list_repr: Printer.pprint_list,
    tuple_repr: Printer.pprint_tuple,
    set.__repr__: Printer.pprint_set,
    frozenset.__repr__: Printer.pprint_set,
    str.__repr__: Printer.pprint_str,
    bytes.__repr__: Printer.pprint_bytes,
    bytearray.__repr__: Printer.pprint_bytearray,
    MAPPINGPROXY_REPR: Printer.pprint_mappingproxy,
    SIMPLE_NAMESPACE_REPR: Printer.pprint_simplenamespace,
    defaultdict.__repr__: Printer.pprint_default_dict,
    Counter.__repr__: Printer.pprint_counter,
    ChainMap.__repr__: Printer.pprint_chain_map,
    deque.__repr__: Printer.pprint_deque,
}


def printer(indent=1, width=80, depth=None, compact=False, sort_dicts=True, underscore_numbers=False):
    indent, width = check_options(indent, width, depth)
    return Printer(indent, width, depth, compact, sort_dicts, underscore_numbers)


def pprint(object, stream=None, indent=1, width=80, depth=None, *,
           compact=False, sort_dicts=True, underscore_numbers=False):
    """Pretty-print a Python object to a stream [default is sys.stdout]."""
    if stream is not None:
        raise TypeError(NO_STREAM.format("pprint"))
    print(printer(indent, width, depth, compact, sort_dicts, underscore_numbers).pformat(object))


def pformat(object, indent=1, width=80, depth=None, *,
            compact=False, sort_dicts=True, underscore_numbers=False):
    """Format a Python object into a pretty-printed representation."""
    return printer(indent, width, depth, compact, sort_dicts, underscore_numbers).pformat(object)


def pp(object, *args, sort_dicts=False, **kwargs):
    """Pretty-print a Python object"""
    pprint(object, *args, sort_dicts=sort_dicts, **kwargs)


def saferepr(object):
    """Version of repr() which can handle recursive data structures."""
    return printer().safe_repr(object, {}, None, 0)[0]


def isreadable(object):
    """Determine if saferepr(object) is readable by eval()."""
    return printer().safe_repr(object, {}, None, 0)[1]


def isrecursive(object):
    """Determine if object requires a recursive representation."""
    return printer().safe_repr(object, {}, None, 0)[2]


class PrettyPrinter:
    def __init__(self, indent=1, width=80, depth=None, stream=None, *,
                 compact=False, sort_dicts=True, underscore_numbers=False):
        """Handle pretty printing operations onto a stream using a set of
        configured parameters.

        indent
            Number of spaces to indent for each level of nesting.

        width
            Attempted maximum number of columns in the output.

        depth
            The maximum depth to print out nested structures.

        stream
            Not available in the sandbox: pprint() prints to the run's log.

        compact
            If true, several items will be combined in one line.

        sort_dicts
            If true, dict keys are sorted.

        """
        indent, width = check_options(indent, width, depth)
        if stream is not None:
            raise TypeError(NO_STREAM.format("PrettyPrinter"))
        self._depth = depth
        self._indent_per_level = indent
        self._width = width
        self._stream = None
        self._compact = bool(compact)
        self._sort_dicts = sort_dicts
        self._underscore_numbers = underscore_numbers

    def _printer(self):
        fmt = None if type(self).format is PrettyPrinter.format else self.format
        return Printer(self._indent_per_level, self._width, self._depth, self._compact, self._sort_dicts,
                       self._underscore_numbers, fmt)

    def pprint(self, object):
        print(self._printer().pformat(object))

    def pformat(self, object):
        return self._printer().pformat(object)

    def isrecursive(self, object):
        return self.format(object, {}, 0, 0)[2]

    def isreadable(self, object):
        s, readable, recursive = self.format(object, {}, 0, 0)
        return readable and not recursive

    def format(self, object, context, maxlevels, level):
        """Format object for a specific context, returning a string
        and flags indicating whether the representation is 'readable'
        and whether the object represents a recursive construct.
        """
        return self._safe_repr(object, context, maxlevels, level)

    def _safe_repr(self, object, context, maxlevels, level):
        return self._printer().safe_repr(object, context, maxlevels, level)
