"""The planted kernels of the packed and paged features and of precision across lengths from
fresh seeds: each planted varlen kernel of ``tests/kernels/planted_packed.py`` and each kernel
packed by segment ids of ``tests/kernels/planted_segments.py`` checked at ``packed_sequences``,
each planted paged kernel of ``tests/kernels/planted_paged.py`` at ``paged_kv``, and each
length-switching kernel of ``tests/kernels/planted.py`` (``LENGTH_PRECISION``) at
``precision_across_lengths``, with the default number of examples, once per seed (the seed CI
uses first); then each feature's correct kernel at every property from each seed (no false
alarm).

``--drawn-only`` leaves out the properties' explicit cases: what the draws alone find.

Run: python benchmarks/feature_seeds.py
     [--feature packed_sequences|segment_ids|paged_kv|precision_across_lengths ...]
     [--seeds 1 2 ... 10] [--examples N] [--drawn-only]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.kernels.planted_*

from attnproof.kernels import Case, _properties, check_kernel  # noqa: E402
from attnproof.kernels._check import DEFAULT_EXAMPLES  # noqa: E402
from tests.kernels import (  # noqa: E402
    planted,
    planted_packed,
    planted_paged,
    planted_segments,
)

# the kernels whose precision changes with length, and their correct twin
LENGTH_PRECISION = SimpleNamespace(
    PLANTED={name: getattr(planted, name) for name in planted.LENGTH_PRECISION},
    correct=planted.correct)
# each feature: the property its planted kernels must fail, and the module planting them
FEATURES = {"packed_sequences": ("packed_sequences", planted_packed),
            "segment_ids": ("packed_sequences", planted_segments),
            "paged_kv": ("paged_kv", planted_paged),
            "precision_across_lengths": ("precision_across_lengths", LENGTH_PRECISION)}


def _status(kernel, prop: str, seed: int | None, examples: int) -> str:
    cell = check_kernel(kernel, properties=[prop], dtypes=["float32"], examples=examples,
                        seed=seed).cells[0]
    if cell.status != "fails":
        return str(cell.status)
    case = Case.from_json(cell.counterexample["case"])
    if case.packed is not None:
        return f"fails ({' '.join(f'{a}x{b}' for a, b in case.packed)} +{case.slack})"
    if case.page_size is not None:
        return f"fails (b={case.batch} n_k={case.n_k} P={case.page_size} {case.cache})"
    return f"fails (n_k={case.n_k} {case.fill})"


def feature_rows(feature: str, seeds: list[int | None], examples: int) -> None:
    prop, planted = FEATURES[feature]
    named = feature if feature == prop else f"{feature} at {prop}"
    print(f"\n| planted kernel, {named} | "
          + " | ".join("CI seed" if s is None else str(s) for s in seeds) + " | caught |")
    print("|---|" + "---|" * (len(seeds) + 1))
    for name, kernel in planted.PLANTED.items():
        started = time.perf_counter()
        statuses = [_status(kernel, prop, seed, examples) for seed in seeds]
        caught = sum(s.startswith("fails") for s in statuses)
        print(f"| `{name}` | " + " | ".join(statuses) +
              f" | {caught} of {len(seeds)} ({time.perf_counter() - started:.0f} s) |",
              flush=True)
    alarms = []
    for seed in seeds:
        result = check_kernel(planted.correct, examples=examples, seed=seed)
        alarms += [f"seed {seed}: {c.property} {c.status}" for c in result.cells
                   if c.status not in ("conforms", "n/a")]
    print(f"\n{planted.correct.name}, every property, {len(seeds)} seeds: "
          f"{'; '.join(alarms) or 'every cell conforms'}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--feature", action="append", choices=sorted(FEATURES))
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(1, 11)))
    parser.add_argument("--examples", type=int, default=DEFAULT_EXAMPLES)
    parser.add_argument("--drawn-only", action="store_true",
                        help="without the properties' explicit cases")
    args = parser.parse_args()
    chosen = args.feature or list(FEATURES)
    if args.drawn_only:
        drawn = {FEATURES[feature][0] for feature in chosen}
        _properties.PROPERTIES = tuple(
            dataclasses.replace(row, explicit=()) if row.name in drawn else row
            for row in _properties.PROPERTIES)
    for feature in chosen:
        feature_rows(feature, [None, *args.seeds], args.examples)


if __name__ == "__main__":
    main()
