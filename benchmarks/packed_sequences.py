"""Packed sequences from fresh seeds: each planted varlen kernel of
``tests/kernels/planted_packed.py`` checked at ``packed_sequences`` with the default number of
examples, once per seed (the seed CI uses first), and the correct varlen kernel at every
property from each seed (no false alarm).

``--drawn-only`` leaves out the property's explicit cases (an empty sequence between two
others, NaN slack, one token, 129 beside 3): what the draws alone find.

Run: python benchmarks/packed_sequences.py [--seeds 1 2 ... 10] [--examples N] [--drawn-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.kernels.planted_packed

from attnproof.kernels import Case, _properties, check_kernel  # noqa: E402
from attnproof.kernels._check import DEFAULT_EXAMPLES  # noqa: E402
from tests.kernels import planted_packed  # noqa: E402

PROPERTY = "packed_sequences"


def _status(kernel, seed: int | None, examples: int) -> str:
    cell = check_kernel(kernel, properties=[PROPERTY], dtypes=["float32"], examples=examples,
                        seed=seed).cells[0]
    if cell.status != "fails":
        return str(cell.status)
    case = Case.from_json(cell.counterexample["case"])
    return f"fails ({' '.join(f'{a}x{b}' for a, b in case.packed)} +{case.slack})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--drawn-only", action="store_true",
                        help="without the property's explicit cases")
    args = parser.parse_args()
    if args.drawn_only:
        _properties.PROPERTIES = tuple(
            dataclasses.replace(row, explicit=()) if row.name == PROPERTY else row
            for row in _properties.PROPERTIES)
    seeds = [None, *args.seeds]
    print("| planted varlen kernel | " + " | ".join("CI seed" if s is None else str(s)
                                                  for s in seeds) + " | caught |")
    print("|---|" + "---|" * (len(seeds) + 1))
    for name, kernel in planted_packed.PLANTED.items():
        started = time.perf_counter()
        statuses = [_status(kernel, seed, args.examples) for seed in seeds]
        caught = sum(s.startswith("fails") for s in statuses)
        print(f"| `{name}` | " + " | ".join(statuses) +
              f" | {caught} of {len(seeds)} ({time.perf_counter() - started:.0f} s) |",
              flush=True)
    alarms = []
    for seed in seeds:
        result = check_kernel(planted_packed.correct, examples=args.examples, seed=seed)
        alarms += [f"seed {seed}: {c.property} {c.status}" for c in result.cells
                   if c.status not in ("conforms", "n/a")]
    print(f"\ncorrect varlen kernel, every property, {len(seeds)} seeds: "
          f"{'; '.join(alarms) or 'every cell conforms'}")


if __name__ == "__main__":
    main()
