"""No module of the ``attnproof`` package imports itself back, directly or through others: the
graph of import statements (including those inside functions) has no cycle."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import attnproof

PACKAGE = Path(attnproof.__file__).parent


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module under the package, by dotted name; the linked folders are followed."""
    files = {}
    for folder, _, names in os.walk(root, followlinks=True):
        for path in (Path(folder) / n for n in names if n.endswith(".py")):
            parts = path.relative_to(root).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            files[".".join((root.name, *parts))] = path
    return files


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name``'s import statements name: ``from P import m`` names
    the submodule ``P.m`` when there is one, else the package ``P`` whose namespace it reads."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, is_package, node.module, node.level)
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                      for a in node.names}
    return (found & known) - {name}


def _absolute(name: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module
    anchor = name.split(".")
    anchor = anchor[: len(anchor) - level + (1 if is_package else 0)]
    return ".".join(anchor + ([module] if module else []))


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    known = set(files)
    return {name: imported_modules(name, path, known) for name, path in files.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that returns to its start, or None."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node], _ = "open", stack.append(node)
        for successor in sorted(graph.get(node, ())):
            if state.get(successor) == "open":
                return stack[stack.index(successor):] + [successor]
            if successor not in state and (cycle := visit(successor)):
                return cycle
        state[node], _ = "done", stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_names_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_imports_are_resolved_as_python_resolves_them():
    graph = import_graph()
    assert "attnproof.numeric._plan" in graph["attnproof.numeric._decide"]
    assert "attnproof.numeric._strategies" in graph["attnproof.numeric._search"]  # from . import
    assert "attnproof.symbolic" in graph["attnproof.numeric._plan"]
    assert "attnproof.symbolic._theorem" in graph["attnproof.numeric._plan"]
    assert any(m.startswith("attnproof.theorems.") for m in graph)


def test_no_module_of_the_package_imports_itself_back():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)
