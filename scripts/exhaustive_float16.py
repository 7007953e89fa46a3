"""Cross-check of the proved softmax error bounds at n = 2: every pair of float16 scores.

The numeric route samples; here nothing is sampled. For the unshifted and the shifted softmax of
theorems/rounding.py at a row of two scores, every pair (x1, x2) of float16 numbers inside the
rounding model's domain (no intermediate overflows or leaves float16's normal range) is
evaluated as written in float16 on NumPy, against float64, and its observed error is compared
with the proved bound at that pair. Prints, per theorem, how many pairs were in the domain, how
many violate the bound (must be 0) and the largest observed/B (the bound's tightness at n = 2).

    python scripts/exhaustive_float16.py            # every pair: about 1.4e9 of them
    python scripts/exhaustive_float16.py --step 16  # every 16th float16 as x1 (a quick look)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def float16_scores(low: float, high: float) -> np.ndarray:
    """Every finite float16 number in [low, high]."""
    every = np.arange(2**16, dtype=np.uint16).view(np.float16)
    every = every[np.isfinite(every)]
    return np.unique(every[(every >= low) & (every <= high)]).astype(np.float64)


def check(theorem, scores: np.ndarray, step: int) -> tuple[int, int, float]:
    from attnproof.numeric._backends import backend
    from attnproof.numeric.kinds import error_bound as route
    from attnproof.symbolic import FLOAT16

    evaluation = route.Evaluation(theorem, backend("numpy"), FLOAT16, "cpu")
    model = route.ROUNDING_MODEL[("numpy", "float16")]
    sizes = {"n_q": 1, "n_k": 2}
    decided = violations = 0
    worst = 0.0
    for x1 in scores[::step]:
        pairs = np.stack([np.full_like(scores, x1), scores], axis=1)[:, None, :]
        ratios = evaluation.ratios(theorem.claim, model, sizes, {"S": pairs})
        inside = np.isfinite(ratios.bound)
        ratio = ratios.ratio[inside]
        decided += int(inside.sum())
        violations += int((~(ratio <= 1.0)).sum())  # NaN counts as a violation
        worst = max(worst, float(ratio.max(initial=0.0)))
    return decided, violations, worst


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--step", type=int, default=1, help="take every STEP-th x1")
    args = parser.parse_args(argv)
    from attnproof.theorems import rounding

    # exp stays in float16's normal range: e^x ≥ 2^-14 needs x ≥ −9.70; e^x ≤ 65504, x ≤ 11.09
    scores = float16_scores(-9.70, 11.0)
    failed = 0
    for theorem in (rounding.softmax_unshifted_error_bound, rounding.softmax_shifted_error_bound):
        start = time.perf_counter()
        decided, violations, worst = check(theorem, scores, args.step)
        failed += violations
        print(f"{theorem.name}: {decided:,} pairs in the model's domain, {violations} above the "
              f"bound, largest observed/B {worst:.3f} ({time.perf_counter() - start:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
