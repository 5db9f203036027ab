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


def test_codemode_does_not_import_later_layers() -> None:
    import sys

    assert "codemode.cli" not in sys.modules
    assert not any(name.startswith("codemode.bridge") for name in sys.modules)
