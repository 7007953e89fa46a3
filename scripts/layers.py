"""The import graph between the package's layers, counted from the source, links followed.

``symbolic/``, ``numeric/`` and ``theorems/`` are linked into ``attnproof/``, so a drawing tool
that does not follow links sees them apart from the rest. This reads every import statement
(those inside functions included) the way Python resolves it, links followed, and prints how
many modules of each layer import each other layer, with the direction the design allows:

    python scripts/layers.py

It exits 1 when an import runs against the layering (a lower layer importing a higher one).
``tests/packaging/test_import_graph.py`` builds its graph with the same functions.
"""

from __future__ import annotations

import ast
import os
import sys
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "attnproof"

# lowest first: a layer may import the layers before it, never one after it. "the language"
# is attnproof/__init__.py alone, which re-exports symbolic's names for theorem files.
LAYERS = ("symbolic", "numeric", "the language", "theorems", "application")


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


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    files = module_files(root)
    known = set(files)
    return {name: imported_modules(name, path, known) for name, path in files.items()}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "the language"
    return parts[1] if parts[1] in ("symbolic", "numeric", "theorems") else "application"


def layer_edges(graph: dict[str, set[str]]) -> Counter:
    """(importing layer, imported layer) -> how many modules of the first import the second."""
    edges: Counter = Counter()
    for module, imported in graph.items():
        for other in {layer_of(m) for m in imported} - {layer_of(module)}:
            edges[layer_of(module), other] += 1
    return edges


def upward(edges: Counter) -> list[tuple[str, str]]:
    """The layer pairs whose imports run against the layering."""
    return sorted(pair for pair in edges if LAYERS.index(pair[1]) > LAYERS.index(pair[0]))


def main() -> int:
    edges = layer_edges(import_graph())
    print("layers, lowest first: " + " < ".join(LAYERS))
    for source in reversed(LAYERS):
        for target in LAYERS:
            if (source, target) in edges:
                mark = "  AGAINST THE LAYERING" if (source, target) in upward(edges) else ""
                print(f"  {source:>12} -> {target:<12} {edges[source, target]:3d} module(s){mark}")
    wrong = upward(edges)
    print("one-way: every import points to a lower layer" if not wrong
          else f"{len(wrong)} pair(s) of layers import upward")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
