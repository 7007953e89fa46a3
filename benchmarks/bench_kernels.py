"""Time to check one kernel across every property and dtype, beside the time of the same number
of plain reference evaluations (forward and backward, same cases, same dtypes), in one run:
the machine is shared and noisy, so only the ratio from one run means much.

Run: python benchmarks/bench_kernels.py [--kernel SPEC] [--examples N]
     (SPEC as for `attnproof kernels`; default: the planted correct NumPy kernel in all four
     dtypes, computing in float32)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kernels.planted

from attnproof.kernels import check_kernel  # noqa: E402
from attnproof.kernels._cases import instance  # noqa: E402
from attnproof.kernels._truth import OUTPUTS, reference  # noqa: E402
from attnproof.kernels.cli import load  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernel", default=None)
    parser.add_argument("--examples", type=int, default=10)
    args = parser.parse_args()
    if args.kernel is None:
        from tests.kernels.planted import correct

        kernel = dataclasses.replace(correct, dtypes=("float64", "float32", "float16",
                                                      "bfloat16"))
    else:
        kernel = load(args.kernel)
    cases = []
    started = time.perf_counter()
    result = check_kernel(kernel, examples=args.examples,
                          on_case=lambda case, dtype: cases.append((case, dtype)))
    checking = time.perf_counter() - started
    started = time.perf_counter()
    for case, dtype in cases:
        compute = kernel.compute_for(dtype)
        reference(instance(case, dtype, compute), compute, dtype, OUTPUTS)
    plain = time.perf_counter() - started
    cells = len(result.cells)
    print(f"kernel {kernel.name}: {cells} cells (properties x dtypes), {len(cases)} cases, "
          f"{sum(c.status == 'conforms' for c in result.cells)} conform, "
          f"{len(result.failures())} fail")
    print(f"check, every property and dtype:            {checking:8.2f} s")
    print(f"{len(cases)} plain reference evaluations (fwd+bwd): {plain:8.2f} s")
    print(f"ratio: {checking / plain:.1f}x")


if __name__ == "__main__":
    main()
