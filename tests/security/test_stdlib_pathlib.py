"""`pathlib`: pure paths only. File-system methods raise and touch nothing; a path, its type,
its properties and its parents lead to no real module, flavour object or host internals; the
classes cannot be subclassed or changed."""

from __future__ import annotations

import pytest

from sandbox.shims import pathlib as shim

pytestmark = pytest.mark.anyio

BACKENDS = ["worker", "inprocess"]
PRE = "from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath\np = Path('/a/b')\n"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_reading_a_file_through_path_is_refused(sb, backend):
    code = sb.secret.fill("from pathlib import Path\nreturn Path(SECRET_PATH).read_text()")
    result = await sb.assert_refused(code, "exception", "NotImplementedError", "no file system", backend=backend)
    sb.assert_no_leak(result)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call", ["write_text('x')", "write_bytes(b'x')", "touch()", "open('w')", "mkdir()"])
async def test_writing_through_path_creates_nothing(sb, backend, call):
    code = sb.secret.fill(f"from pathlib import Path\nPath(OUT_PATH).{call}\nreturn 1")
    result = await sb.assert_refused(code, "exception", "NotImplementedError", backend=backend)
    sb.assert_no_leak(result)  # the out file does not exist, the secret is unchanged


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_snippet_sees_only_the_shims_classes_and_plain_values(sb, backend):
    code = PRE + (
        "f = PurePath.drive.fget\n"
        "return [[c.__name__ for c in type(p).__mro__], [c.__name__ for c in type(p.parents).__mro__],\n"
        "        type(f).__name__, f.__name__, type(PurePath.name.fget).__name__, type(p).__name__]"
    )
    await sb.assert_harmless(code, [
        ["PosixPath", "Path", "PurePosixPath", "PurePath", "object"], ["_PathParents", "object"],
        "function", "drive", "function", "PosixPath",
    ], backend=backend)


REFUSED = {
    # the internals CPython's classes expose, and ours keep in private slots
    "flavour": ("return p._flavour", "AttributeError", '"_flavour" is not accessible'),
    "parts-slot": ("return p._parts", "AttributeError", '"_parts" is not accessible'),
    "class-flag": ("return PurePath._windows", "AttributeError", '"_windows" is not accessible'),
    "parents-path": ("return p.parents._path", "AttributeError", '"_path" is not accessible'),
    "factory": ("return type(p)._from_parsed", "AttributeError", '"_from_parsed" is not accessible'),
    "vars-type": ("return vars(type(p))", "TypeError", "vars() of a 'type' object is not available"),
    "vars-inst": ("return vars(p)", "TypeError", "vars() argument must have __dict__ attribute"),
    "dict": ("return p.__dict__", "AttributeError", '"__dict__" is not accessible'),
    "type-dict": ("return type(p).__dict__", "AttributeError", '"__dict__" is not accessible'),
    "init-subclass": ("return type(p).__init_subclass__", "AttributeError", '"__init_subclass__"'),
    "parents-ctor": ("return type(p.parents)(object())", "TypeError", "parents of a pure path only"),
    "no-os": ("import pathlib\nreturn pathlib.os", "AttributeError", "has no attribute 'os'"),
    "no-posixpath": ("import pathlib\nreturn pathlib.posixpath", "AttributeError", "has no attribute"),
    # subclasses (also with a borrowed `__module__`)
    "subclass": ("class P(PurePosixPath):\n    pass\nreturn 1", "TypeError", "cannot be subclassed"),
    "subclass-spoof": ("class P(Path):\n    __module__ = 'sandbox.shims.pathlib'\nreturn 1", "TypeError",
                       "cannot be subclassed"),
    # writes to the shared classes and to a path
    "class-write": ("PurePosixPath.name = 'x'\nreturn 1", "TypeError", "cannot modify class"),
    "class-flag-write": ("PurePosixPath._windows = True\nreturn 1", "AttributeError", '"_windows"'),
    "class-setattr": ("setattr(PurePath, 'stem', 1)\nreturn 1", "TypeError", "cannot modify class"),
    "class-delattr": ("del PurePath.suffix\nreturn 1", "TypeError", "cannot modify class"),
    "inst-write": ("p.name = 'x'\nreturn 1", "TypeError", "cannot modify attributes"),
    "inst-slot-write": ("object.__setattr__(p, '_str', '/etc/passwd')\nreturn str(p)", "AttributeError", '"_str"'),
}
POLICY_REFUSED = {
    "fget-globals": "return PurePath.name.fget.__globals__",
    "method-globals": "return PurePath.match.__globals__",
    "fs-globals": "return Path.read_text.__globals__",
    "reduce": "return p.__reduce__()",
    "reduce-ex": "return p.__reduce_ex__(2)",
    "new": "return PurePath.__new__",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(REFUSED))
async def test_internals_and_writes_are_refused(sb, backend, name):
    code, *fragments = REFUSED[name]
    result = await sb.assert_refused(PRE + code, "exception", *fragments, backend=backend)
    sb.assert_no_leak(result)
    await sb.assert_next_run_ok(backend)


@pytest.mark.parametrize("name", sorted(POLICY_REFUSED))
async def test_host_function_internals_are_refused_before_running(sb, name):
    await sb.assert_refused(PRE + POLICY_REFUSED[name], "syntax", "is not allowed")


async def test_a_refused_write_leaves_the_shared_classes_as_they_were(sb):
    for code in ("PurePosixPath.name = 'x'", "PurePosixPath._windows = True", "del PurePath.suffix",
                 "object.__setattr__(p, '_str', 'forged')"):
        result = await sb.run(PRE + code + "\nreturn 1", backend="inprocess")
        assert result.error is not None, code
    assert isinstance(shim.PurePosixPath.__dict__.get("name", shim.PurePath.__dict__["name"]), property)
    assert shim.PurePosixPath._windows is False and "suffix" in shim.PurePath.__dict__
    after = await sb.run(PRE + "return [p.name, p.suffix, str(p), str(PurePosixPath('x/y.z').suffix)]",
                         backend="inprocess")
    assert after.ok and after.value == ["b", "", "/a/b", ".z"], after
