"""Peak memory of standard vs tiled attention as the sequence grows (tutorial §10.1).

n is the sequence length: n queries and n keys, head dimension D = 16, key blocks of B = 512,
float32. The peak is what tracemalloc sees NumPy allocate while one call runs, the inputs
(allocated before) left out. The standard algorithm materialises the n × n matrix A, 4n² bytes:
it is measured up to n = 16,384 (1 GiB) only, since n = 65,536 would need 16 GiB for A alone;
the tiled one (theorems/costs.py, the algorithm the cost claims count) up to n = 65,536.
The exponents are least-squares slopes of log(peak) against log(n) over each column's sizes.

Run: python benchmarks/bench_memory.py (about four minutes on 2 cores).
"""

import math
import time
import tracemalloc
import types

import numpy as np

from attnproof.theorems.costs import standard_attention, tiled_attention

D = 16
BLOCK = 512
SIZES = (1024, 2048, 4096, 8192, 16384, 32768, 65536)
STANDARD_LARGEST = 16384


def float32_numpy():
    """NumPy whose creation functions default to float32, as the algorithms are written for."""
    def default(function):
        return lambda shape, *args, dtype=np.float32: function(shape, *args, dtype=dtype)
    return types.SimpleNamespace(**{name: getattr(np, name) for name in ("exp", "inf", "maximum")},
                                 zeros=default(np.zeros), full=default(np.full))


def peak_bytes(algorithm, n: int, **options) -> tuple[int, float]:
    """tracemalloc's peak while ``algorithm`` runs on n queries and n keys, and the seconds."""
    generator = np.random.default_rng(0)
    Q, K, V = (generator.standard_normal((n, D), dtype=np.float32) for _ in range(3))
    tracemalloc.start()
    tracemalloc.reset_peak()
    start = time.perf_counter()
    output = algorithm(float32_numpy(), Q, K, V, **options)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert output.dtype == np.float32 and output.shape == (n, D)
    return peak, seconds


def exponent(points: list[tuple[int, int]]) -> float:
    """Slope of log(peak) over log(n), least squares."""
    x = np.log([n for n, _ in points])
    y = np.log([peak for _, peak in points])
    return float(np.polyfit(x, y, 1)[0])


def main():
    standard, tiled = [], []
    print(f"n queries = n keys, D = {D}, B = {BLOCK}, float32; peak by tracemalloc")
    print(f"{'n':>7} | {'standard MiB':>12} {'s':>6} | {'tiled MiB':>10} {'s':>6}")
    for n in SIZES:
        row = f"{n:>7} | "
        if n <= STANDARD_LARGEST:
            peak, seconds = peak_bytes(standard_attention, n)
            standard.append((n, peak))
            row += f"{peak / 2**20:>12.2f} {seconds:>6.2f} | "
        else:
            row += f"{'(not run)':>12} {'':>6} | "
        peak, seconds = peak_bytes(tiled_attention, n, B=BLOCK)
        tiled.append((n, peak))
        print(row + f"{peak / 2**20:>10.3f} {seconds:>6.2f}", flush=True)
    print(f"fitted exponent (log-log least squares): standard {exponent(standard):.3f} "
          f"(n = {standard[0][0]}…{standard[-1][0]}), tiled {exponent(tiled):.3f} "
          f"(n = {tiled[0][0]}…{tiled[-1][0]})")
    print(f"standard expected 4n² + 4nD bytes: at n = {STANDARD_LARGEST} "
          f"{(4 * STANDARD_LARGEST**2 + 4 * STANDARD_LARGEST * D) / 2**20:.2f} MiB; "
          f"tiled 4(2nD + 3n + nB) bytes: at n = {SIZES[-1]} "
          f"{4 * (2 * SIZES[-1] * D + 3 * SIZES[-1] + SIZES[-1] * BLOCK) / 2**20:.3f} MiB")
    assert math.isfinite(exponent(tiled))


if __name__ == "__main__":
    main()
