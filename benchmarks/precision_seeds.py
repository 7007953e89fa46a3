"""How the precision estimate reads honest kernels and kernels planted to compute in less than
they declare, over repeated seeds: every cell's estimate (bits of mantissa) and whether it is
flagged as less precise than declared, counted per kernel and dtype.

Run: python benchmarks/precision_seeds.py [--seeds N] [--examples N] [--kernel SPEC ...]
     (SPEC as for `attnproof kernels`, or planted:NAME for tests/kernels/planted.py; default:
     the planted correct kernel in all four dtypes, mlx, torch, jax-eager in float32 and
     float64, and the two planted low-precision kernels)
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.kernels.planted

from attnproof.kernels import check_kernel  # noqa: E402
from attnproof.kernels._frameworks import unavailable_reason  # noqa: E402
from attnproof.kernels._spec import load  # noqa: E402

DEFAULT = ("planted:correct", "mlx", "torch", "jax-eager", "planted:tf32_products",
           "planted:bfloat16_inside")


def kernel_of(spec: str):
    if spec.startswith("planted:"):
        from tests.kernels import planted

        kernel = getattr(planted, spec.split(":", 1)[1])
        if spec == "planted:correct":  # computing in float32 whatever its inputs
            kernel = dataclasses.replace(kernel, dtypes=("float64", "float32", "float16",
                                                         "bfloat16"))
        return kernel
    kernel = load(spec)
    if spec.startswith("jax"):  # on the CPU, JAX's dot takes no half-precision inputs
        kernel = dataclasses.replace(kernel, dtypes=("float64", "float32"))
    return kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--kernel", action="append")
    parser.add_argument("--property", action="append")
    args = parser.parse_args()
    for spec in args.kernel or DEFAULT:
        kernel = kernel_of(spec)
        if unavailable_reason(kernel.framework):
            print(f"{spec}: {unavailable_reason(kernel.framework)}")
            continue
        counts: dict[str, dict] = {}
        started = time.perf_counter()
        for seed in range(args.seeds):
            result = check_kernel(kernel, examples=args.examples, seed=seed,
                                  properties=args.property)
            pooled = result.precision()
            for cell in result.cells:
                row = counts.setdefault(cell.dtype, {"runs": 0, "cells": 0, "flagged": 0,
                                                     "bits": [], "pooled": [],
                                                     "pooled_flagged": 0, "lowest": None})
                if cell.precision:
                    row["cells"] += 1
                    row["bits"].append(cell.precision["bits"])
                    if cell.precision["less_precise"]:
                        row["flagged"] += 1
                        row["lowest"] = min(row["lowest"] or 99, cell.precision["bits"])
            for (_, dtype), estimate in pooled.items():
                counts[dtype]["runs"] += 1
                counts[dtype]["pooled"].append(estimate["bits"])
                counts[dtype]["pooled_flagged"] += estimate["less_precise"]
        print(f"{kernel.name} ({time.perf_counter() - started:.0f} s, {args.seeds} seeds, "
              f"{args.examples} examples a cell)")
        for dtype, row in counts.items():
            bits = row["bits"] or [float("nan")]
            declared = kernel.compute_for(dtype)
            print(f"  {dtype:9} declared {declared:14} pooled bits "
                  f"{', '.join(f'{b:.2f}' for b in row['pooled'])} "
                  f"(flagged {row['pooled_flagged']} of {row['runs']} runs); cells "
                  f"{min(bits):.2f}..{max(bits):.2f}, flagged {row['flagged']} of "
                  f"{row['cells']}")


if __name__ == "__main__":
    main()
