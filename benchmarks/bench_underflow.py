"""The cost of telling underflow from instability, measured side by side in one run.

Every lower-format batch is also evaluated in float64 with the exponentials below the format's
range flushed (``numeric/_decide.py``, ``underflow_decides``). This times ``decide`` on the same
batches of a few catalog theorems with that evaluation and without it (replaced by "no row"),
in float32 and float16 on NumPy and on JAX, and prints the ratio: the best of several timed
calls, after a warm-up, so compilation is not counted.

Run: python benchmarks/bench_underflow.py
"""

from __future__ import annotations

import numpy as np
from _timing import best_of  # benchmarks run as scripts: their folder is on sys.path

from attnproof.numeric import _decide
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.numeric._plan import runner_for
from attnproof.numeric._strategies import Structure
from attnproof.symbolic import format_named
from attnproof.theorems.attention_backward import (
    attention_backward_dk,
    printed_backward_dk_matches_autodiff,
)
from attnproof.theorems.softmax_jacobian import softmax_jacobian

THEOREMS = (softmax_jacobian, attention_backward_dk, printed_backward_dk_matches_autodiff)
BATCH = 256


def _largest(theorem) -> Structure:
    return Structure(tuple((d.name, d.sizes.high) for d in theorem.dims), (), 7)


def _timed(runner, structure, dtype: str) -> float:
    return best_of(lambda: _decide.decide(runner, structure, BATCH, format_named(dtype)), repeats=5)


def main() -> None:
    checked = _decide.underflow_decides
    print(f"{'theorem':<40} {'backend':<6} {'dtype':<8} {'with':>9} {'without':>9} "
          f"{'ratio':>6}")
    ratios = []
    for name, dtype in (("numpy", "float32"), ("jax", "float32"), ("numpy", "float16"),
                        ("jax", "float16")):
        row = backend(name)
        if unavailable_reason(row):
            continue
        for theorem in THEOREMS:
            runner = runner_for(theorem, row, "cpu", row.default_mode)
            structure = _largest(theorem)
            with_check = _timed(runner, structure, dtype)
            _decide.underflow_decides = lambda *arguments: np.zeros(arguments[-1], dtype=bool)
            try:
                without = _timed(runner, structure, dtype)
            finally:
                _decide.underflow_decides = checked
            ratios.append(with_check / without)
            print(f"{theorem.name:<40} {name:<6} {dtype:<8} {with_check:9.4f} {without:9.4f} "
                  f"{with_check / without:6.2f}")
    print(f"FIGURE decide with the underflow evaluation / without: geometric mean "
          f"{float(np.exp(np.mean(np.log(ratios)))):.2f} over {len(ratios)} theorem-backend-"
          "formats")


if __name__ == "__main__":
    main()
