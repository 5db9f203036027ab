"""``__all__`` matches what ``codemode`` really exports, and public objects name ``codemode``."""

from __future__ import annotations

import inspect

import codemode


def test_all_lists_exactly_the_public_names() -> None:
    public = {
        name
        for name, obj in vars(codemode).items()
        if not name.startswith("_") and not inspect.ismodule(obj)
    }
    assert public == set(codemode.__all__)
    assert len(codemode.__all__) == len(set(codemode.__all__))


def test_public_classes_and_functions_name_the_package() -> None:
    for name in codemode.__all__:
        obj = getattr(codemode, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert obj.__module__ == "codemode", name


def test_importing_codemode_does_not_load_the_cli() -> None:
    import subprocess
    import sys

    code = "import sys, codemode; print('codemode.cli' in sys.modules, 'codemode.code_mode.bridge' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
