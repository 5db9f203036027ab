# string.Template, as the snippet's own code (restricted Python, compiled under the snippet
# policy).
#
# A port of CPython 3.11's `string.Template`. Placeholders are looked up in the snippet's mapping
# here, with the snippet's rights (`mapping[name]` runs its `__getitem__` as its own code; the
# keyword form chains the two mappings here too, not through the host's `ChainMap`), and a
# subclass's `delimiter`, `idpattern`, `braceidpattern`, `flags` or `pattern` are compiled with
# the `re` shim, which copies patterns and flags by exact type. Pattern settings a subclass
# gives are stored back as exact `str`/`int` copies (a lying subclass never becomes part of the
# compiled pattern). Error messages are CPython's.

import re

sentinel_dict = {}

#: `re.RegexFlag`: CPython's flags stay flags (a snippet cannot subclass an enum with members).
FLAG_TYPE = type(re.IGNORECASE)


class Chain:
    # CPython's `ChainMap(kws, mapping)`, for lookups only: the keywords first.

    __slots__ = ("maps",)

    def __init__(self, *maps):
        self.maps = maps

    def __getitem__(self, key):
        for mapping in self.maps:
            try:
                return mapping[key]
            except KeyError:
                pass
        raise KeyError(key)


def plain(value):
    # A `str` subclass as an exact copy (through the base type's slot: none of its methods run).
    if isinstance(value, str) and type(value) is not str:
        return str.__str__(value)
    return value


def compile_pattern(cls):
    # Static reads and writes: the snippet's own, as `cls.delimiter` in its code would be.
    delimiter, idpattern, braceidpattern = cls.delimiter, cls.idpattern, cls.braceidpattern
    if plain(delimiter) is not delimiter:
        cls.delimiter = plain(delimiter)
    if plain(idpattern) is not idpattern:
        cls.idpattern = plain(idpattern)
    if plain(braceidpattern) is not braceidpattern:
        cls.braceidpattern = plain(braceidpattern)
    flags = cls.flags
    if isinstance(flags, int) and type(flags) is not int and type(flags) is not FLAG_TYPE:
        cls.flags = int.__int__(flags)
    if "pattern" in cls.__dict__:
        pattern = cls.pattern
    else:
        delim = re.escape(cls.delimiter)
        id = cls.idpattern
        bid = cls.braceidpattern or cls.idpattern
        pattern = fr"""
            {delim}(?:
              (?P<escaped>{delim})  |   # Escape sequence of two delimiters
              (?P<named>{id})       |   # delimiter and a Python identifier
              {{(?P<braced>{bid})}} |   # delimiter and a braced identifier
              (?P<invalid>)             # Other ill-formed delimiter exprs
            )
            """
    cls.pattern = re.compile(pattern, cls.flags | re.VERBOSE)


class Template:
    """A string class for supporting $-substitutions."""

    delimiter = "$"
    # r'[a-z]' matches to non-ASCII letters when used with IGNORECASE, but
    # without the ASCII flag.  We can't add re.ASCII to flags because of
    # backward compatibility.  So we use the ?a local flag and [a-z] pattern.
    # See https://bugs.python.org/issue31672
    idpattern = r"(?a:[_a-z][_a-z0-9]*)"
    braceidpattern = None
    flags = re.IGNORECASE

    def __init_subclass__(cls):
        super().__init_subclass__()
        compile_pattern(cls)

    def __init__(self, template):
        self.template = template

    # Search for $$, $identifier, ${identifier}, and any bare $'s

    def _invalid(self, mo):
        i = mo.start("invalid")
        lines = self.template[:i].splitlines(keepends=True)
        if not lines:
            colno = 1
            lineno = 1
        else:
            colno = i - len("".join(lines[:-1]))
            lineno = len(lines)
        raise ValueError("Invalid placeholder in string: line %d, col %d" % (lineno, colno))

    def substitute(self, mapping=sentinel_dict, /, **kws):
        if mapping is sentinel_dict:
            mapping = kws
        elif kws:
            mapping = Chain(kws, mapping)

        # Helper function for .sub()
        def convert(mo):
            # Check the most common path first.
            named = mo.group("named") or mo.group("braced")
            if named is not None:
                return str(mapping[named])
            if mo.group("escaped") is not None:
                return self.delimiter
            if mo.group("invalid") is not None:
                self._invalid(mo)
            raise ValueError("Unrecognized named group in pattern", self.pattern)

        return self.pattern.sub(convert, self.template)

    def safe_substitute(self, mapping=sentinel_dict, /, **kws):
        if mapping is sentinel_dict:
            mapping = kws
        elif kws:
            mapping = Chain(kws, mapping)

        # Helper function for .sub()
        def convert(mo):
            named = mo.group("named") or mo.group("braced")
            if named is not None:
                try:
                    return str(mapping[named])
                except KeyError:
                    return mo.group()
            if mo.group("escaped") is not None:
                return self.delimiter
            if mo.group("invalid") is not None:
                return mo.group()
            raise ValueError("Unrecognized named group in pattern", self.pattern)

        return self.pattern.sub(convert, self.template)

    def is_valid(self):
        for mo in self.pattern.finditer(self.template):
            if mo.group("invalid") is not None:
                return False
            if mo.group("named") is None and mo.group("braced") is None and mo.group("escaped") is None:
                # If all the groups are None, there must be
                # another group we're not expecting
                raise ValueError("Unrecognized named group in pattern", self.pattern)
        return True

    def get_identifiers(self):
        ids = []
        for mo in self.pattern.finditer(self.template):
            named = mo.group("named") or mo.group("braced")
            if named is not None and named not in ids:
                # add a named group only the first time it appears
                ids.append(named)
            elif named is None and mo.group("invalid") is None and mo.group("escaped") is None:
                # If all the groups are None, there must be
                # another group we're not expecting
                raise ValueError("Unrecognized named group in pattern", self.pattern)
        return ids


# Initialize Template.pattern.  __init_subclass__() is automatically called
# only for subclasses, not for the Template class itself.
compile_pattern(Template)
