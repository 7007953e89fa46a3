"""What the three lazy export tables save: each package's import as it is (its names loaded on
first use) against the same package with every module its exports name imported at once, as
``from ._x import y as y`` lines would import them.

``attnproof``, ``attnproof.numeric`` and ``attnproof.kernels`` each export their names lazily
(a module ``__getattr__`` over a table), and type checkers read the same names from a
``TYPE_CHECKING`` block, which ``tests/packaging/test_type_exports.py`` holds to the table.
Eager imports would write each name once; this measures what they would cost the command line,
which imports ``attnproof`` for every command and ``attnproof.kernels`` for ``devices``.

Each figure is the least wall time of ``--rounds`` fresh interpreters, the rows side by side in
each round, so the ratios compare processes under the same load.

Run: python benchmarks/import_time.py [--rounds N] (about 30 s with 5 rounds on 2 cores).
"""

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVERY_EXPORT = ("import importlib, attnproof.{package} as p; "
                "[importlib.import_module('attnproof.{package}.' + m) for m, _ in "
                "p._EXPORTS.values()]")
ROWS = [
    ("attnproof", "import attnproof", "import attnproof, attnproof.symbolic"),
    ("attnproof.numeric", "import attnproof.numeric", EVERY_EXPORT.format(package="numeric")),
    ("attnproof.kernels", "import attnproof.kernels", EVERY_EXPORT.format(package="kernels")),
]


def seconds(code: str) -> float:
    """Wall seconds of ``code`` in a fresh interpreter, timed inside it (start-up excluded)."""
    timed = f"import time; start = time.perf_counter(); {code}; print(time.perf_counter() - start)"
    done = subprocess.run([sys.executable, "-c", timed], cwd=REPO, capture_output=True,
                          text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    lazy: dict[str, list[float]] = {name: [] for name, _, _ in ROWS}
    eager: dict[str, list[float]] = {name: [] for name, _, _ in ROWS}
    for _ in range(rounds):
        for name, as_is, every in ROWS:
            lazy[name].append(seconds(as_is))
            eager[name].append(seconds(every))
    print(f"least of {rounds} rounds, seconds")
    print("| package | as it is (lazy) | every export imported | ratio |")
    print("|---|---|---|---|")
    for name, _, _ in ROWS:
        fast, slow = min(lazy[name]), min(eager[name])
        print(f"| `{name}` | {fast:.3f} | {slow:.3f} | {slow / fast:.1f}× |")


if __name__ == "__main__":
    main()
