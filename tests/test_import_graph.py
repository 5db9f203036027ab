"""The import graph of the three packages: no circle between modules, and the layering rules.

Read from the source with ``ast``, so a circle is caught even where a function-level import hides
it from an import-time failure. Every ``import`` counts, at module level or inside a function;
only ``if TYPE_CHECKING:`` blocks are left out, since they never run.

The rules: ``sandbox`` and ``sdk_gen`` stand alone (neither imports ``codemode`` or the other);
nothing imports the CLI (``codemode.cli``) but the CLI itself and the ``__main__`` entry points;
only the CLI knows argparse.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("sandbox", "sdk_gen", "codemode")
Graph = dict[str, set[str]]
#: Circles known and owed a fix, each with why it is still here. The test fails if one of them
#: disappears too, so the entry is removed with the circle.
KNOWN_CIRCLES: set[tuple[str, ...]] = set()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below ``node`` except the bodies of ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and _is_type_checking(child.test):
            for other in child.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield child
        yield from _runtime_nodes(child)


def imported(module: str, path: Path, known: set[str]) -> set[str]:
    """The modules ``module`` imports (absolute names; ``from P import m`` names ``P.m`` when that
    is a module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target)
    return found


def graph() -> Graph:
    files = sources()
    known = set(files)
    return {name: imported(name, path, known) for name, path in files.items()}


def circles(edges: Graph) -> list[list[str]]:
    """Each strongly connected group of two or more modules (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in edges[node]:
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _top(name: str) -> str:
    return name.split(".")[0]


def test_the_graph_sees_every_package() -> None:
    edges = graph()
    for package in PACKAGES:
        assert package in edges and any(name.startswith(package + ".") for name in edges)
    assert "codemode.cli" in edges


def test_module_names_are_public_in_every_package() -> None:
    # One convention for the three packages: a module's name has no leading underscore, and a
    # package's public API is what its `__init__.__all__` lists.
    private = [
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if path.name.startswith("_") and path.name not in {"__init__.py", "__main__.py"}
    ]
    assert private == []


def test_no_import_circle_between_modules() -> None:
    found = {tuple(group) for group in circles(graph())}
    assert found - KNOWN_CIRCLES == set(), "new import circle"
    assert KNOWN_CIRCLES - found == set(), "a known circle is gone: remove it from KNOWN_CIRCLES"


def test_circles_are_found_through_function_level_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    from .b import g\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("from .a import f\n", encoding="utf-8")
    (tmp_path / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n", encoding="utf-8"
    )
    (tmp_path / "d.py").write_text("from .c import x\n", encoding="utf-8")
    known = {"p.a", "p.b", "p.c", "p.d"}
    edges = {name: imported(name, tmp_path / f"{name[2:]}.py", known) for name in known}
    assert edges["p.c"] == {"typing"}  # the TYPE_CHECKING import does not count
    assert circles(edges) == [["p.a", "p.b"]]


@pytest.mark.parametrize(("package", "forbidden"), [("sandbox", {"codemode", "sdk_gen"}),
                                                     ("sdk_gen", {"codemode", "sandbox"})])
def test_the_standalone_packages_import_no_other(package: str, forbidden: set[str]) -> None:
    for name, targets in graph().items():
        if _top(name) == package:
            assert not {t for t in targets if _top(t) in forbidden}, name


def test_nothing_but_the_cli_and_the_entry_points_imports_the_cli() -> None:
    for name, targets in graph().items():
        if name == "codemode.cli" or name.startswith("codemode.cli.") or name.endswith(".__main__"):
            continue
        assert not {t for t in targets if t == "codemode.cli" or t.startswith("codemode.cli.")}, name


def test_only_the_cli_knows_argparse() -> None:
    for name, targets in graph().items():
        if not (name == "codemode.cli" or name.startswith("codemode.cli.")):
            assert "argparse" not in targets, name
