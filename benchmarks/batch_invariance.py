"""Bitwise batch invariance: the planted split-KV kernels from fresh seeds, and the library
kernels of this machine asked as if they declared it.

The planted kernels (``tests/kernels/planted_splits.py``) are checked at ``batch_invariance``
once per seed, with the default number of examples: the fixed split count must conform from
every seed, the counts chosen by the batch size must fail. Each library kernel that runs here
is then declared ``batch_invariant`` (no library documents it; the question is whether its
CPU path happens to be) and checked at that property in each dtype it declares: a failure is
no defect of the library, it answers "may I rely on it?".

``--drawn-only`` runs the planted kernels without the property's explicit decode cases (what
the draws alone find); ``--planted-only`` skips the library kernels.

Run: python benchmarks/batch_invariance.py [--seeds 1 2 ... 10] [--examples N]
     [--kernel jax --kernel mlx --kernel torch ...] [--drawn-only] [--planted-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.kernels.planted_splits

from attnproof.kernels import Case, _properties, check_kernel  # noqa: E402
from attnproof.kernels._check import DEFAULT_EXAMPLES  # noqa: E402
from attnproof.kernels.library import LIBRARY  # noqa: E402
from tests.kernels import planted_splits  # noqa: E402

PLANTED = ("fixed_splits", "splits_by_batch", "long_splits_by_batch")
LIBRARY_HERE = ("jax", "jax-eager", "mlx", "torch", "torch-math", "torch-flash")


def _status(cell) -> str:
    if cell.status != "fails":
        return str(cell.status)
    case = Case.from_json(cell.counterexample["case"])
    return f"fails (b={case.batch}, n_q={case.n_q}, n_k={case.n_k})"


def planted_rows(seeds: list[int | None], examples: int) -> None:
    print("| planted kernel | " + " | ".join(str(s) if s is not None else "CI seed"
                                          for s in seeds) + " |")
    print("|---|" + "---|" * len(seeds))
    for name in PLANTED:
        kernel = getattr(planted_splits, name)
        cells = [check_kernel(kernel, properties=["batch_invariance"], dtypes=["float32"],
                              examples=examples, seed=seed).cells[0] for seed in seeds]
        print(f"| `{name}` | " + " | ".join(str(c.status) for c in cells) + " |")


def library_rows(names: list[str], examples: int) -> None:
    print("\n| library kernel, declared batch_invariant | dtype | verdict | first difference |")
    print("|---|---|---|---|")
    for name in names:
        try:
            kernel = LIBRARY[name]()
        except Exception as error:  # noqa: BLE001 -- a framework missing here is a row
            print(f"| `{name}` | | not here | {type(error).__name__}: {error} |")
            continue
        kernel = dataclasses.replace(kernel, batch_invariant=True)
        for cell in check_kernel(kernel, properties=["batch_invariance"],
                                 examples=examples).cells:
            message = (cell.counterexample or {}).get("message", cell.reason or "")
            print(f"| `{name}` | {cell.dtype} | {_status(cell)} | "
                  f"{message.splitlines()[0][:220] if message else ''} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--kernel", action="append", help="only this library kernel")
    parser.add_argument("--drawn-only", action="store_true",
                        help="the planted kernels without the explicit decode cases")
    parser.add_argument("--planted-only", action="store_true", help="no library kernels")
    args = parser.parse_args()
    if args.drawn_only:
        _properties.PROPERTIES = tuple(
            dataclasses.replace(row, explicit=()) if row.name == "batch_invariance" else row
            for row in _properties.PROPERTIES)
    planted_rows([None, *args.seeds], args.examples)
    if not args.planted_only:
        library_rows(args.kernel or list(LIBRARY_HERE), args.examples)


if __name__ == "__main__":
    main()
