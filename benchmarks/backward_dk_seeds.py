"""The printed backward pass's dL/dK theorem under several seeds: is its verdict the run's or the
mathematics'? Each of the 12 configurations (NumPy, JAX, MLX × float64, float32, float16,
bfloat16) is searched once per seed, and a line per configuration prints each record's status,
decided instances and worst error in ulps.

Run: python benchmarks/backward_dk_seeds.py [--profile thorough] [--seeds 1 2 3 4 5]
"""

from __future__ import annotations

import argparse

from attnproof.numeric._search import search
from attnproof.theorems.attention_backward import printed_backward_dk_matches_autodiff

BACKENDS = ("numpy", "jax", "mlx")
DTYPES = ("float64", "float32", "float16", "bfloat16")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=None, help="quick, default or thorough")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    args = parser.parse_args()
    statuses = set()
    for backend in BACKENDS:
        for dtype in DTYPES:
            cells = []
            for seed in args.seeds:
                record, _ = search(printed_backward_dk_matches_autodiff, backend, dtype, "cpu",
                                   None, args.profile, seed)
                statuses.add(record.status)
                worst = "" if record.max_error_ulps is None else f", {record.max_error_ulps:.3g}"
                cells.append(f"{record.status}({record.instances}{worst})")
            print(f"{backend:<6} {dtype:<9} " + " ".join(cells), flush=True)
    print(f"FIGURE statuses over {len(args.seeds)} seeds: {', '.join(sorted(statuses))}")


if __name__ == "__main__":
    main()
