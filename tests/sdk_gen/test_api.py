"""The public surface: `__all__` matches the real exports, and each reports `sdk_gen`."""

from __future__ import annotations

import ast
from pathlib import Path

import sdk_gen


def test_all_matches_the_imports_in_init():
    tree = ast.parse(Path(sdk_gen.__file__).read_text())
    imported = {
        alias.asname or alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 1
        for alias in node.names
    }
    assert set(sdk_gen.__all__) == imported
    assert sorted(sdk_gen.__all__) == sorted(set(sdk_gen.__all__))


def test_public_objects_report_the_public_module():
    for name in sdk_gen.__all__:
        obj = getattr(sdk_gen, name)
        if callable(obj):
            assert obj.__module__ == "sdk_gen", name


def test_no_dependency_on_codemode_or_sandbox():
    for path in Path(sdk_gen.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in {"codemode", "sandbox"}, (path.name, name)
