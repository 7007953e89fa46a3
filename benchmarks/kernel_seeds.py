"""The planted kernel bugs from fresh seeds: is each catch the property's, or the draw's? Every
planted kernel of ``tests/kernels/planted.py`` is checked at its own property with the default
number of examples, once per seed, and a line per kernel prints the status of each seed's cell
and the shrunk case's key count; the correct kernel is checked at every property from each seed
too (no false alarm).

Run: python benchmarks/kernel_seeds.py [--seeds 1 2 ... 10] [--examples N] [--kernel NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.kernels.planted

from attnproof.kernels import Case, check_kernel  # noqa: E402
from attnproof.kernels._check import DEFAULT_EXAMPLES  # noqa: E402
from tests.kernels import planted  # noqa: E402


def _cell(name: str, prop: str, seed: int, examples: int) -> str:
    cell = check_kernel(planted.fresh(name), properties=[prop], examples=examples,
                        seed=seed).cells[0]
    if cell.status != "fails":
        return cell.status
    return f"fails@{Case.from_json(cell.counterexample['case']).n_k}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--kernel", action="append", help="only this planted kernel")
    args = parser.parse_args()
    missed = 0
    for name, (prop, _) in sorted(planted.PLANTED.items()):
        if args.kernel and name not in args.kernel:
            continue
        started = time.perf_counter()
        cells = [_cell(name, prop, seed, args.examples) for seed in args.seeds]
        missed += sum(not c.startswith("fails") for c in cells)
        print(f"{name:<26} {prop:<20} {' '.join(cells)}  ({time.perf_counter() - started:.0f} s)",
              flush=True)
    alarms = 0
    if not args.kernel:
        for seed in args.seeds:
            result = check_kernel(planted.correct, examples=args.examples, seed=seed)
            wrong = [f"{c.property}:{c.status}" for c in result.cells
                     if c.status not in ("conforms", "n/a")]
            alarms += len(wrong)
            print(f"correct kernel, seed {seed}: {' '.join(wrong) or 'every cell conforms'}",
                  flush=True)
    print(f"FIGURE {missed} planted catches missed and {alarms} false alarms over "
          f"{len(args.seeds)} seeds at {args.examples} examples")


if __name__ == "__main__":
    main()
