"""`pathlib`: pure paths, written here on plain strings, with CPython 3.11's semantics.

Why not the real classes, or a subclass of them: CPython's pure paths expose host internals
through attributes a snippet can read. `PurePath.drive.fget` is a real `operator.attrgetter`
(the sandbox hands out only checked ones), `_flavour` holds `pathmod` (the real `posixpath` or
`ntpath` module) and bound methods of a shared flavour object, and the module behind them
imports `os`, `sys`, `re` and `fnmatch`. A subclass inherits all of that through `__mro__`,
`super()` and the property objects, so every attribute would need judging. The semantics
themselves are string logic, so this module implements them: a path holds only strings and
tuples in private slots, its properties are plain functions of this module, and its type's
`__mro__` is these classes and `object`.

`Path` and `PosixPath` work as pure paths (`Path('a') / 'b'`, `.name`, `.suffix`), since models
build paths with them. Their file-system methods (`read_text`, `exists`, `iterdir`, `cwd`, ...)
raise `NotImplementedError` naming the method: a worker has no file system. `WindowsPath` cannot
be built, as on any POSIX CPython; `PureWindowsPath` works (drives, UNC shares, case-insensitive
comparison and matching).

Left out: `os.PathLike` registration (there is no `os`), 3.12's `walk_up`, `with_segments`,
`full_match`. The classes cannot be subclassed (a snippet subclass could shadow the private
slots the methods read): that is a `TypeError` naming the class. Copies rebuild the path from
its parts.
"""

from __future__ import annotations

import fnmatch
import string
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import quote_from_bytes

from ..guards import CheckedMethods, seal

NAME = "pathlib"

_DRIVE_LETTERS = frozenset(string.ascii_letters)
_EXTENDED_PREFIX = "\\\\?\\"
_RESERVED_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"COM{c}" for c in "123456789\xb9\xb2\xb3"}
    | {f"LPT{c}" for c in "123456789\xb9\xb2\xb3"}
)

Parsed = tuple[str, str, tuple[str, ...]]


# -- string logic, one flavour or the other --------------------------------------------------------
def _split_root_posix(part: str) -> tuple[str, str, str]:
    if part[:1] != "/":
        return "", "", part
    rest = part.lstrip("/")
    # POSIX leaves exactly two leading slashes implementation-defined; more are one.
    return "", "//" if len(part) - len(rest) == 2 else "/", rest


def _split_extended(part: str) -> tuple[str, str]:
    prefix = ""
    if part.startswith(_EXTENDED_PREFIX):
        prefix, part = part[:4], part[4:]
        if part.startswith("UNC\\"):
            prefix += part[:3]
            part = "\\" + part[3:]
    return prefix, part


def _split_root_windows(part: str) -> tuple[str, str, str]:
    sep = "\\"
    prefix = ""
    if part[:2] == sep * 2:
        prefix, part = _split_extended(part)
    first, second, third = part[0:1], part[1:2], part[2:3]
    if first == sep and second == sep and third != sep:
        # A UNC share: \\machine\share is the drive.
        index = part.find(sep, 2)
        if index != -1:
            index2 = part.find(sep, index + 1)
            if index2 != index + 1:
                if index2 == -1:
                    index2 = len(part)
                drive = prefix + part[1:index2] if prefix else part[:index2]
                return drive, sep, part[index2 + 1 :]
    drive = root = ""
    if second == ":" and first in _DRIVE_LETTERS:
        drive, part, first = part[:2], part[2:], third
    if first == sep:
        root = first
        part = part.lstrip(sep)
    return prefix + drive, root, part


def _split_root(part: str, windows: bool) -> tuple[str, str, str]:
    return _split_root_windows(part) if windows else _split_root_posix(part)


def _parse(parts: Sequence[str], windows: bool) -> Parsed:
    """(drive, root, parts) of the joined `parts`; the first part is the anchor, if any."""
    sep = "\\" if windows else "/"
    parsed: list[str] = []
    drive = root = ""
    pending = reversed(parts)
    for part in pending:
        if not part:
            continue
        if windows:
            part = part.replace("/", sep)
        drive, root, rel = _split_root(part, windows)
        parsed.extend(x for x in reversed(rel.split(sep)) if x and x != ".")
        if drive or root:
            if not drive:
                # A root without a drive takes the drive of an earlier part: ("C:", "/", "a").
                for earlier in pending:
                    if earlier:
                        drive = _split_root(earlier.replace("/", sep) if windows else earlier, windows)[0]
                        if drive:
                            break
            break
    if drive or root:
        parsed.append(drive + root)
    parsed.reverse()
    return drive, root, tuple(parsed)


def _fold(text: str, windows: bool) -> str:
    return text.lower() if windows else text


def _join(left: Parsed, right: Parsed, windows: bool) -> Parsed:
    drive, root, parts = left
    drive2, root2, parts2 = right
    if root2:
        if not drive2 and drive:
            return drive, root2, (drive + root2, *parts2[1:])
    elif drive2:
        if _fold(drive2, windows) == _fold(drive, windows):
            return drive, root, parts + parts2[1:]  # the same drive: relative to the first
    else:
        return drive, root, parts + parts2
    return drive2, root2, parts2


def _format(drive: str, root: str, parts: tuple[str, ...], windows: bool) -> str:
    sep = "\\" if windows else "/"
    if drive or root:
        return drive + root + sep.join(parts[1:])
    return sep.join(parts)


def _fspath(value: Any) -> Any:
    """`os.fspath`: a str or bytes as it is, else what its type's `__fspath__` returns."""
    if isinstance(value, (str, bytes)):
        return value
    kind = type(value)
    try:
        method = kind.__fspath__
    except AttributeError:
        raise TypeError(f"expected str, bytes or os.PathLike object, not {kind.__name__}") from None
    found = method(value)
    if not isinstance(found, (str, bytes)):
        raise TypeError(
            f"expected {kind.__name__}.__fspath__() to return str or bytes, not {type(found).__name__}"
        )
    return found


def _plain(text: Any, what: str) -> str:
    if not isinstance(text, str):
        raise TypeError(f"{what} needs a str, not '{type(text).__name__}'")
    return str.__str__(text)


# -- the classes ------------------------------------------------------------------------------------
class PurePath(metaclass=CheckedMethods):
    """A path without I/O. `PurePath(...)` builds a `PurePosixPath`, as on any POSIX system."""

    __slots__ = ("_drv", "_root", "_parts", "_str", "_folded")
    _windows = False

    def __new__(cls, *args: Any) -> PurePath:
        if cls is PurePath:
            cls = PurePosixPath
        return cls._from_parsed(cls._parse_args(args))

    @classmethod
    def _parse_args(cls, args: Sequence[Any]) -> Parsed:
        parts: list[str] = []
        for arg in args:
            if isinstance(arg, PurePath):
                parts.extend(arg._parts)
                continue
            found = _fspath(arg)
            if not isinstance(found, str):
                raise TypeError(
                    "argument should be a str object or an os.PathLike object returning str, "
                    f"not {type(found)!r}"
                )
            parts.append(str.__str__(found))
        return _parse(parts, cls._windows)

    @classmethod
    def _from_parsed(cls, parsed: Parsed) -> Any:
        self = object.__new__(cls)
        drive, root, parts = parsed
        self._drv = drive
        self._root = root
        self._parts = parts
        self._str = _format(drive, root, parts, cls._windows) or "."
        self._folded = tuple(_fold(p, cls._windows) for p in parts)
        return self

    def __reduce__(self) -> tuple[Any, tuple[str, ...]]:
        return type(self), self._parts

    # -- text ---------------------------------------------------------------------------------
    def __str__(self) -> str:
        return self._str

    def __fspath__(self) -> str:
        return self._str

    def as_posix(self) -> str:
        return self._str.replace("\\", "/") if self._windows else self._str

    def __bytes__(self) -> bytes:
        return self._str.encode("utf-8", "surrogateescape")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_posix()!r})"

    def as_uri(self) -> str:
        if not self.is_absolute():
            raise ValueError("relative path can't be expressed as a file URI")
        if not self._windows:
            return "file://" + quote_from_bytes(bytes(self))
        drive = self._drv
        if len(drive) == 2 and drive[1] == ":":
            rest = self.as_posix()[2:].lstrip("/")
            return f"file:///{drive}/{quote_from_bytes(rest.encode('utf-8'))}"
        return "file:" + quote_from_bytes(self.as_posix().encode("utf-8"))

    # -- comparisons ----------------------------------------------------------------------------
    def _comparable(self, other: Any) -> bool:
        return isinstance(other, PurePath) and other._windows == self._windows

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, PurePath):
            return NotImplemented
        return self._comparable(other) and self._folded == other._folded

    def __hash__(self) -> int:
        return hash(self._folded)

    def __lt__(self, other: Any) -> bool:
        return self._folded < other._folded if self._comparable(other) else NotImplemented

    def __le__(self, other: Any) -> bool:
        return self._folded <= other._folded if self._comparable(other) else NotImplemented

    def __gt__(self, other: Any) -> bool:
        return self._folded > other._folded if self._comparable(other) else NotImplemented

    def __ge__(self, other: Any) -> bool:
        return self._folded >= other._folded if self._comparable(other) else NotImplemented

    # -- components -----------------------------------------------------------------------------
    @property
    def drive(self) -> str:
        return self._drv

    @property
    def root(self) -> str:
        return self._root

    @property
    def anchor(self) -> str:
        return self._drv + self._root

    @property
    def parts(self) -> tuple[str, ...]:
        return self._parts

    @property
    def name(self) -> str:
        parts = self._parts
        if len(parts) == (1 if (self._drv or self._root) else 0):
            return ""
        return parts[-1]

    @property
    def suffix(self) -> str:
        name = self.name
        i = name.rfind(".")
        return name[i:] if 0 < i < len(name) - 1 else ""

    @property
    def suffixes(self) -> list[str]:
        name = self.name
        if name.endswith("."):
            return []
        return ["." + s for s in name.lstrip(".").split(".")[1:]]

    @property
    def stem(self) -> str:
        name = self.name
        i = name.rfind(".")
        return name[:i] if 0 < i < len(name) - 1 else name

    @property
    def parent(self) -> Any:
        parts = self._parts
        if len(parts) == 1 and (self._drv or self._root):
            return self
        return self._from_parsed((self._drv, self._root, parts[:-1]))

    @property
    def parents(self) -> _PathParents:
        return _PathParents(self)

    # -- derived paths --------------------------------------------------------------------------
    def joinpath(self, *args: Any) -> Any:
        parsed = (self._drv, self._root, self._parts)
        return self._from_parsed(_join(parsed, self._parse_args(args), self._windows))

    def __truediv__(self, key: Any) -> Any:
        try:
            return self.joinpath(key)
        except TypeError:
            return NotImplemented

    def __rtruediv__(self, key: Any) -> Any:
        try:
            return self._from_parsed(self._parse_args((key, self)))
        except TypeError:
            return NotImplemented

    def with_name(self, name: Any) -> Any:
        name = _plain(name, "with_name()")
        if not self.name:
            raise ValueError(f"{self!r} has an empty name")
        drive, root, parts = _parse((name,), self._windows)
        seps = ("\\", "/") if self._windows else ("/",)
        if not name or name[-1] in seps or drive or root or len(parts) != 1:
            raise ValueError(f"Invalid name {name!r}")
        return self._from_parsed((self._drv, self._root, (*self._parts[:-1], name)))

    def with_stem(self, stem: Any) -> Any:
        return self.with_name(_plain(stem, "with_stem()") + self.suffix)

    def with_suffix(self, suffix: Any) -> Any:
        suffix = _plain(suffix, "with_suffix()")
        if "/" in suffix or (self._windows and "\\" in suffix):
            raise ValueError(f"Invalid suffix {suffix!r}")
        if (suffix and not suffix.startswith(".")) or suffix == ".":
            raise ValueError(f"Invalid suffix {suffix!r}")
        name = self.name
        if not name:
            raise ValueError(f"{self!r} has an empty name")
        old = self.suffix
        name = name + suffix if not old else name[: -len(old)] + suffix
        return self._from_parsed((self._drv, self._root, (*self._parts[:-1], name)))

    def relative_to(self, *other: Any) -> Any:
        if not other:
            raise TypeError("need at least one argument")
        drive, root, parts = self._drv, self._root, self._parts
        full = (drive, root, *parts[1:]) if root else parts
        to_drive, to_root, to_parts = self._parse_args(other)
        to_full = (to_drive, to_root, *to_parts[1:]) if to_root else to_parts
        n = len(to_full)
        fold = self._windows
        mismatch = (
            bool(root or drive) if n == 0
            else [_fold(p, fold) for p in full[:n]] != [_fold(p, fold) for p in to_full]
        )
        if mismatch:
            formatted = _format(to_drive, to_root, to_parts, self._windows)
            raise ValueError(
                f"{str(self)!r} is not in the subpath of {formatted!r} OR one path is relative "
                "and the other is absolute."
            )
        return self._from_parsed(("", root if n == 1 else "", tuple(full[n:])))

    def is_relative_to(self, *other: Any) -> bool:
        try:
            self.relative_to(*other)
        except ValueError:
            return False
        return True

    # -- questions ------------------------------------------------------------------------------
    def is_absolute(self) -> bool:
        if not self._root:
            return False
        return not self._windows or bool(self._drv)

    def is_reserved(self) -> bool:
        parts = self._parts
        if not self._windows or not parts or parts[0].startswith("\\\\"):
            return False  # UNC paths are never reserved
        name = parts[-1].partition(".")[0].partition(":")[0].rstrip(" ")
        return name.upper() in _RESERVED_NAMES

    def match(self, path_pattern: Any) -> bool:
        windows = self._windows
        pattern = _fold(_plain(path_pattern, "match()"), windows)
        drive, root, pat_parts = _parse((pattern,), windows)
        if not pat_parts:
            raise ValueError("empty pattern")
        if drive and drive != _fold(self._drv, windows):
            return False
        if root and root != _fold(self._root, windows):
            return False
        parts = self._folded
        if drive or root:
            if len(pat_parts) != len(parts):
                return False
            pat_parts = pat_parts[1:]
        elif len(pat_parts) > len(parts):
            return False
        pairs = zip(reversed(parts), reversed(pat_parts), strict=False)  # the pattern may be shorter
        return all(fnmatch.fnmatchcase(part, pat) for part, pat in pairs)


class PurePosixPath(PurePath):
    """A pure path with POSIX semantics."""

    __slots__ = ()


class PureWindowsPath(PurePath):
    """A pure path with Windows semantics: drives, UNC shares, case-insensitive comparison."""

    __slots__ = ()
    _windows = True


class _PathParents(metaclass=CheckedMethods):
    """`path.parents`: the logical ancestors, nearest first (a read-only sequence)."""

    __slots__ = ("_path",)

    def __init__(self, path: PurePath) -> None:
        if not isinstance(path, PurePath):
            raise TypeError("parents of a pure path only")
        self._path = path

    def __len__(self) -> int:
        path = self._path
        return len(path._parts) - (1 if (path._drv or path._root) else 0)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"sequence index must be integer, not '{type(index).__name__}'")
        size = len(self)
        if index >= size or index < -size:
            raise IndexError(index)
        if index < 0:
            index += size
        path = self._path
        return path._from_parsed((path._drv, path._root, path._parts[: -index - 1]))

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __reversed__(self) -> Iterator[Any]:
        return (self[i] for i in reversed(range(len(self))))

    def __contains__(self, value: Any) -> bool:
        return any(p == value for p in self)

    def index(self, value: Any) -> int:
        for i, p in enumerate(self):
            if p == value:
                return i
        raise ValueError(f"{value!r} is not in list")

    def count(self, value: Any) -> int:
        return sum(1 for p in self if p == value)

    def __repr__(self) -> str:
        return f"<{type(self._path).__name__}.parents>"


Sequence.register(_PathParents)

#: `Path` methods that need a file system: each raises `NotImplementedError`.
_FILE_SYSTEM_METHODS = (
    "cwd", "home", "stat", "lstat", "exists", "is_dir", "is_file", "is_mount", "is_symlink",
    "is_block_device", "is_char_device", "is_fifo", "is_socket", "samefile", "iterdir", "glob",
    "rglob", "absolute", "resolve", "owner", "group", "open", "read_bytes", "read_text",
    "write_bytes", "write_text", "readlink", "touch", "mkdir", "chmod", "lchmod", "unlink",
    "rmdir", "rename", "replace", "symlink_to", "hardlink_to", "link_to", "expanduser",
)


def _no_file_system(name: str) -> Any:
    def method(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"Path.{name}() is not available in the sandbox: there is no file system "
            "(pure path operations work)"
        )

    method.__name__ = method.__qualname__ = name
    return method


class Path(PurePath):
    """`Path(...)` builds a `PosixPath`: a pure path whose file-system methods raise."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Path:
        if cls is Path:
            cls = PosixPath
        if cls._windows:
            raise NotImplementedError(f"cannot instantiate {cls.__name__!r} on your system")
        return cls._from_parsed(cls._parse_args(args))


for _name in _FILE_SYSTEM_METHODS:
    setattr(Path, _name, _no_file_system(_name))
del _name


class PosixPath(Path, PurePosixPath):
    """What `Path(...)` builds."""

    __slots__ = ()


class WindowsPath(Path, PureWindowsPath):
    """Cannot be built on POSIX (as in CPython there)."""

    __slots__ = ()


# As asyncio's: the class factory refuses these as bases however the snippet's bases are arranged.
seal(PurePath, "pathlib")
seal(_PathParents, "pathlib")


def attrs() -> dict[str, Any]:
    return {
        "PurePath": PurePath, "PurePosixPath": PurePosixPath, "PureWindowsPath": PureWindowsPath,
        "Path": Path, "PosixPath": PosixPath, "WindowsPath": WindowsPath,
    }
