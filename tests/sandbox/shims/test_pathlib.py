"""The `pathlib` shim: pure paths that behave as CPython 3.11's, compared case by case with the
real classes (host-side), and what snippets see of them on both backends: `Path` as a pure path
whose file-system methods raise, `__fspath__` as in `os.fspath`, and no subclassing."""

from __future__ import annotations

import copy
import pathlib as real
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sandbox_helpers import BACKENDS, run

from sandbox.shims import pathlib as shim

PIECES = ["a", "b", "x.tar.gz", ".bashrc", "file.", ".", "..", "/", "//", "///", "\\", "\\\\",
          "c:", "C:", "d:", "\\\\?\\", "UNC", "srv", "share", "NUL", "con.txt", " ", "A", "*.py"]
part = st.lists(st.sampled_from(PIECES), max_size=5).map("".join)
parts = st.lists(part, max_size=4)
FLAVOURS = [(shim.PurePosixPath, real.PurePosixPath), (shim.PureWindowsPath, real.PureWindowsPath)]


def outcome(fn: Any) -> Any:
    """What a call gives (its value, paths as their class name and text), or its error."""
    try:
        value = fn()
    except Exception as exc:  # the error type and message are part of the behaviour
        return ("raises", type(exc).__name__, str(exc))
    return shown(value)


def shown(value: Any) -> Any:
    if isinstance(value, (shim.PurePath, real.PurePath)):
        return (type(value).__name__, str(value), repr(value), value.parts)
    if isinstance(value, (list, tuple)):
        return [shown(v) for v in value]
    return value


ASPECTS = [
    "str", "repr", "parts", "drive", "root", "anchor", "name", "stem", "suffix", "suffixes",
    "parent", "parents", "is_absolute", "is_reserved", "as_posix", "fspath", "bytes", "hash", "as_uri",
]


def aspect(p: Any, name: str) -> Any:
    if name == "str":
        return str(p)
    if name == "fspath":
        return p.__fspath__()
    if name == "bytes":
        return bytes(p)
    if name == "hash":
        return hash(p) == hash(type(p)(str(p)))
    if name == "parents":
        return list(p.parents)
    value = getattr(p, name)
    return value() if callable(value) else value


@settings(max_examples=400, deadline=None)
@given(args=parts, other=parts, text=part)
@pytest.mark.parametrize(("mine", "theirs"), FLAVOURS, ids=["posix", "windows"])
def test_pure_paths_match_cpython(mine: Any, theirs: Any, args: list[str], other: list[str], text: str) -> None:
    p, q = mine(*args), theirs(*args)
    for name in ASPECTS:
        assert outcome(lambda n=name: aspect(p, n)) == outcome(lambda n=name: aspect(q, n)), (args, name)
    o, oq = mine(*other), theirs(*other)
    for label, fa, fb in [
        ("joinpath", lambda: p.joinpath(*other), lambda: q.joinpath(*other)),
        ("truediv", lambda: p / text, lambda: q / text),
        ("rtruediv", lambda: text / p, lambda: text / q),
        ("relative_to", lambda: p.relative_to(*other), lambda: q.relative_to(*other)),
        ("is_relative_to", lambda: p.is_relative_to(*other), lambda: q.is_relative_to(*other)),
        ("with_name", lambda: p.with_name(text), lambda: q.with_name(text)),
        ("with_stem", lambda: p.with_stem(text), lambda: q.with_stem(text)),
        ("with_suffix", lambda: p.with_suffix(text), lambda: q.with_suffix(text)),
        ("match", lambda: p.match(text), lambda: q.match(text)),
        ("eq", lambda: p == o, lambda: q == oq),
        ("lt", lambda: p < o, lambda: q < oq),
        ("ge", lambda: p >= o, lambda: q >= oq),
        ("parents[-1]", lambda: p.parents[-1], lambda: q.parents[-1]),
        ("parents[::2]", lambda: p.parents[::2], lambda: q.parents[::2]),
    ]:
        assert outcome(fa) == outcome(fb), (args, other, text, label)


def test_flavours_and_classes_compare_like_cpython() -> None:
    posix, windows = shim.PurePosixPath("a"), shim.PureWindowsPath("a")
    assert posix != windows and shim.PureWindowsPath("A/B") == shim.PureWindowsPath("a\\b")
    assert shim.Path("a") == posix and hash(shim.Path("a")) == hash(posix)
    with pytest.raises(TypeError):
        _ = posix < windows
    assert type(shim.PurePath("a")) is shim.PurePosixPath
    assert type(shim.Path("a")) is shim.PosixPath
    assert sorted([shim.PurePosixPath("b"), shim.PurePosixPath("a")]) == [shim.PurePosixPath("a"), shim.PurePosixPath("b")]
    assert shim.PurePosixPath("a", shim.PureWindowsPath("b")) == shim.PurePosixPath("a/b")


def test_arguments_follow_os_fspath() -> None:
    class Own:
        def __fspath__(self) -> str:
            return "own/x"

    class Bad:
        def __fspath__(self) -> int:
            return 3

    assert str(shim.PurePosixPath("/r", Own())) == "/r/own/x"
    for arg, message in [
        (3, "expected str, bytes or os.PathLike object, not int"),
        (b"x", "argument should be a str object or an os.PathLike object returning str, not <class 'bytes'>"),
        (Bad(), "expected Bad.__fspath__() to return str or bytes, not int"),
    ]:
        with pytest.raises(TypeError) as caught:
            shim.PurePosixPath(arg)
        with pytest.raises(TypeError) as expected:
            real.PurePosixPath(arg)
        assert str(caught.value) == str(expected.value) == message


def test_copies_are_equal_paths_of_the_same_class() -> None:
    for p in [shim.PurePosixPath("/a/b"), shim.PureWindowsPath("c:/x/y"), shim.Path("rel/z"), shim.PurePosixPath("//srv/a")]:
        for copied in (copy.copy(p), copy.deepcopy(p)):
            assert copied == p and type(copied) is type(p) and str(copied) == str(p)


def test_windows_path_cannot_be_built_on_posix() -> None:
    with pytest.raises(NotImplementedError, match="cannot instantiate 'WindowsPath' on your system"):
        shim.WindowsPath("a")


def test_parents_is_a_read_only_sequence() -> None:
    parents = shim.PurePosixPath("/a/b/c").parents
    assert [str(p) for p in parents] == ["/a/b", "/a", "/"]
    assert [str(p) for p in reversed(parents)] == ["/", "/a", "/a/b"]
    assert shim.PurePosixPath("/a") in parents and parents.index(shim.PurePosixPath("/")) == 2
    assert parents.count(shim.PurePosixPath("/a")) == 1 and repr(parents) == "<PurePosixPath.parents>"
    with pytest.raises(IndexError):
        parents[3]
    with pytest.raises(TypeError):
        parents["0"]
    with pytest.raises(ValueError, match="is not in list"):
        parents.index(shim.PurePosixPath("/z"))


# -- in a snippet ---------------------------------------------------------------------------------
def test_a_snippet_builds_and_takes_paths_apart(backend: str) -> None:
    code = (
        "from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath\n"
        "p = Path('/data/reports') / 'q3' / 'summary.tar.gz'\n"
        "w = PureWindowsPath('C:/Users/me') / 'Doc.TXT'\n"
        "rel = p.relative_to('/data')\n"
        "return [str(p), p.name, p.stem, p.suffix, p.suffixes, str(p.parent), [str(x) for x in p.parents],\n"
        "        p.parts, p.anchor, p.is_absolute(), str(rel), p.is_relative_to('/etc'), p.match('*.gz'),\n"
        "        str(p.with_suffix('.zip')), str(p.with_name('x')), str(p.with_stem('y')), p.as_posix(),\n"
        "        str(w), w.drive, w.root, w.match('*.txt'), w == PureWindowsPath('c:\\\\users\\\\ME\\\\doc.txt'),\n"
        "        repr(p), repr(PurePath('a')), type(p).__name__, p.__fspath__(), len({p, Path(str(p))}),\n"
        "        sorted(str(x) for x in [PurePosixPath('b'), PurePosixPath('a')])]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [
        "/data/reports/q3/summary.tar.gz", "summary.tar.gz", "summary.tar", ".gz", [".tar", ".gz"],
        "/data/reports/q3", ["/data/reports/q3", "/data/reports", "/data", "/"],
        ["/", "data", "reports", "q3", "summary.tar.gz"], "/", True, "reports/q3/summary.tar.gz", False,
        True, "/data/reports/q3/summary.tar.zip", "/data/reports/q3/x", "/data/reports/q3/y.gz",
        "/data/reports/q3/summary.tar.gz", "C:\\Users\\me\\Doc.TXT", "C:", "\\", True, True,
        "PosixPath('/data/reports/q3/summary.tar.gz')", "PurePosixPath('a')", "PosixPath",
        "/data/reports/q3/summary.tar.gz", 1, ["a", "b"],
    ]


def test_a_snippets_own_fspath_objects_are_paths(backend: str) -> None:
    code = (
        "from pathlib import PurePosixPath\n"
        "class Where:\n    def __fspath__(self):\n        return 'from/own'\n"
        "p = PurePosixPath('/root', Where())\n"
        "return [str(p), Where().__fspath__(), p.__fspath__(), str(PurePosixPath('a') / Where())]"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == ["/root/from/own", "from/own", "/root/from/own", "a/from/own"]


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("Path('/usr') / 1", "unsupported operand type(s) for /: 'PosixPath' and 'int'"),
        ("b'/x' / Path('a')", "unsupported operand type(s) for /: 'bytes' and 'PosixPath'"),
        ("PurePosixPath('/a').relative_to('/b')",
         "'/a' is not in the subpath of '/b' OR one path is relative and the other is absolute."),
        ("PurePosixPath('/').with_name('x')", "PurePosixPath('/') has an empty name"),
        ("PurePosixPath('a').with_suffix('txt')", "Invalid suffix 'txt'"),
        ("PurePosixPath('a').with_name('b/c')", "Invalid name 'b/c'"),
        ("PurePosixPath('a').match('')", "empty pattern"),
        ("Path('a').read_text()",
         "Path.read_text() is not available in the sandbox: there is no file system (pure path operations work)"),
        ("Path.cwd()", "Path.cwd() is not available in the sandbox: there is no file system"),
        ("Path('a').exists()", "Path.exists() is not available in the sandbox"),
        ("WindowsPath('a')", "cannot instantiate 'WindowsPath' on your system"),
    ],
)
def test_unhappy_paths_raise_what_cpython_raises(code: str, message: str) -> None:
    result = run("from pathlib import Path, PurePosixPath, WindowsPath\n" + code)
    assert result.error is not None and result.error.kind == "exception", result
    assert message in result.error.message


@pytest.mark.parametrize("backend", BACKENDS)
def test_file_system_methods_raise_not_implemented_and_can_be_caught(backend: str) -> None:
    code = (
        "from pathlib import Path\nout = []\n"
        "for name in ['read_text', 'write_text', 'exists', 'iterdir', 'mkdir', 'unlink', 'open', 'glob']:\n"
        "    try:\n        getattr(Path('notes.txt'), name)('x')\n"
        "    except NotImplementedError as e:\n        out.append(name in str(e))\n"
        "return out"
    )
    result = run(code, backend)
    assert result.ok, result
    assert result.value == [True] * 8
