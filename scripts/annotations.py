"""How much of the package is annotated: the share of functions whose every parameter (but
``self`` and ``cls``) and whose return carry a type, by folder and in all, links followed:

    python scripts/annotations.py [--at-least PERCENT]

A function counts as annotated only when all of it is: a missing return or one bare parameter
leaves mypy guessing ``Any`` there. With ``--at-least`` it exits 1 when the package's share is
below PERCENT (CI asks 99).
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "attnproof"
_RECEIVERS = ("self", "cls")


def is_annotated(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function``'s return and every parameter but its receiver have a type."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                  *(p for p in (arguments.vararg, arguments.kwarg) if p is not None)]
    return function.returns is not None and all(
        p.annotation is not None for p in parameters if p.arg not in _RECEIVERS)


def counts(source: str, filename: str = "<source>") -> tuple[int, int]:
    """(annotated, all) functions of one module's source, nested ones and methods included."""
    functions = [node for node in ast.walk(ast.parse(source, filename))
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    return sum(map(is_annotated, functions)), len(functions)


def by_folder(root: Path = PACKAGE) -> dict[str, tuple[int, int]]:
    """(annotated, all) per folder of the package, named relative to it ("." for its top)."""
    totals: dict[str, tuple[int, int]] = {}
    for folder, _, names in sorted(os.walk(root, followlinks=True)):
        for name in sorted(n for n in names if n.endswith(".py")):
            path = Path(folder) / name
            annotated, found = counts(path.read_text(encoding="utf-8"), str(path))
            key = str(Path(folder).relative_to(root))
            before = totals.get(key, (0, 0))
            totals[key] = (before[0] + annotated, before[1] + found)
    return totals


def _share(annotated: int, found: int) -> float:
    return 100.0 * annotated / found if found else 100.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--at-least", type=float, metavar="PERCENT",
                        help="exit 1 when the package's share is below PERCENT")
    arguments = parser.parse_args(argv)
    totals = by_folder()
    for folder, (annotated, found) in totals.items():
        print(f"{folder:<20} {annotated:>5} of {found:>5} functions  "
              f"{_share(annotated, found):5.1f}%")
    annotated = sum(a for a, _ in totals.values())
    found = sum(f for _, f in totals.values())
    share = _share(annotated, found)
    print(f"{'the package':<20} {annotated:>5} of {found:>5} functions  {share:5.1f}%")
    if arguments.at_least is not None and share < arguments.at_least:
        print(f"annotated share {share:.1f}% is below {arguments.at_least:g}%", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
