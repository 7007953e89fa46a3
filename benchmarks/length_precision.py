"""The precision each kernel behaves like at each length ``precision_across_lengths`` asks
(its short twin's 32 keys and the long 129, 257 and 1,025), over seeds and fills: the figures
its allowance, log2(n_long / n_short) + FLAG_BITS, is measured against.

For every kernel (the planted correct one, the planted length-switching ones, an honest one
summing key by key, and each installed library kernel) and dtype, one line per length: the
lowest and highest estimate in bits over the seeds, per fill; then the largest gap between the
short twin and a long length, each way, beside what the property allows there.

Run: python benchmarks/length_precision.py [--seeds 12] [--kernel jax --kernel mlx ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.kernels.*

from attnproof.kernels import _precision as precision  # noqa: E402
from attnproof.kernels import library  # noqa: E402
from attnproof.kernels._cases import FILLS  # noqa: E402
from attnproof.kernels._frameworks import framework, unavailable_reason  # noqa: E402
from attnproof.kernels._lengths import LONG_KEYS, allowance, explicit, short_twin  # noqa: E402
from attnproof.kernels._properties import by_name  # noqa: E402
from attnproof.kernels._run import run_case  # noqa: E402
from attnproof.symbolic import format_named  # noqa: E402
from tests.kernels import planted  # noqa: E402
from tests.kernels.test_length_precision import _summed_key_by_key  # noqa: E402

DTYPES = ("float32", "float16", "bfloat16")


def kernels(library_names: list[str]) -> dict:
    chosen = {"planted correct": planted.correct,
              "key by key (honest, recursive sums)": dataclasses.replace(
                  planted.precision_kernel("key_by_key", "float32", "float32", "float32"),
                  fn=_summed_key_by_key)}
    chosen.update({name: getattr(planted, name) for name in planted.LENGTH_PRECISION})
    for name in library_names:
        framework_name = library.FRAMEWORK_OF[name]
        if unavailable_reason(framework_name) is None:
            chosen[name] = library.LIBRARY[name]()
    return chosen


def bits_at(kernel, n_k: int, fill: str, name: str, seeds: int) -> list[float]:
    base = dataclasses.replace(explicit()[0], n_k=n_k, fill=fill)
    prop, fw = by_name()["forward"], framework(kernel.framework)
    dtype = format_named(name)
    compute = kernel.compute_for(dtype, "cpu")
    found = []
    for seed in range(seeds):
        result = run_case(kernel, fw, prop, dataclasses.replace(base, seed=seed), dtype)
        estimate = precision.estimate(result.precision, dtype, compute)
        if estimate is not None:
            found.append(estimate["bits"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--kernel", action="append", help="library kernels (default: jax, "
                        "mlx, torch where installed)")
    args = parser.parse_args()
    short = short_twin(explicit()[0]).n_k
    for name, kernel in kernels(args.kernel or ["jax", "mlx", "torch"]).items():
        for dtype in (d for d in DTYPES if d in kernel.dtypes):
            lows, highs = {}, {}
            print(f"\n{name}, {dtype} (declared {kernel.compute_for(dtype, 'cpu')})")
            for n_k in (short, *LONG_KEYS):
                line = []
                for fill in FILLS:
                    found = bits_at(kernel, n_k, fill, dtype, args.seeds)
                    if found:
                        lows[n_k] = min(lows.get(n_k, 99.0), *found)
                        highs[n_k] = max(highs.get(n_k, 0.0), *found)
                    line.append(f"{fill} {min(found):.2f}–{max(found):.2f}" if found
                                else f"{fill} no estimate")
                print(f"  n_k = {n_k:>4}: " + "; ".join(line), flush=True)
            for n_k in LONG_KEYS:
                if short in lows and n_k in lows:
                    print(f"  {n_k} keys below {short} by up to "
                          f"{highs[short] - lows[n_k]:.2f} bits, above by up to "
                          f"{highs[n_k] - lows[short]:.2f} (allowed "
                          f"{allowance(n_k, short):.2f} where the coarser is flagged)")


if __name__ == "__main__":
    main()
