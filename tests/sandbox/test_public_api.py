"""The public surface: `__all__` matches the real exports and names the public module."""

from __future__ import annotations

import inspect

import sandbox


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name for name, obj in vars(sandbox).items()
        if not name.startswith("_") and not inspect.ismodule(obj)
    }
    assert set(sandbox.__all__) == public


def test_public_classes_say_sandbox_in_tracebacks() -> None:
    for name in ("Limits", "RunResult", "RunError", "BindingError", "WorkerRuntime", "run"):
        assert getattr(sandbox, name).__module__ == "sandbox"


def test_sandbox_never_imports_codemode() -> None:
    import pathlib

    root = pathlib.Path(sandbox.__file__).parent
    for path in root.glob("*.py"):
        text = path.read_text()
        assert "import codemode" not in text and "from codemode" not in text, path
        assert "sdk_gen" not in text, path
