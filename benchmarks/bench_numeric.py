"""Speed of the numeric side, printed side by side in one run.

(a) JAX float32 attention forward + backward at n = 2048, d = 64: the program compiled from the
    statement against hand-written jax.numpy (goal: within 1.5x).
(b) Softmax-Jacobian checking throughput on JAX (jit, float64 truth + float32 stability):
    batched instances per example against one instance per example (goal: at least 10x).

Run: python benchmarks/bench_numeric.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "numeric"))

from sample_theorems import K, O, P, Q, V, scores, softmax_jacobian  # noqa: E402

from numeric import compile_expression  # noqa: E402
from numeric._backends import backend  # noqa: E402
from numeric._checker import decide, runner_for  # noqa: E402
from numeric._strategies import Structure  # noqa: E402


def best_of(function, repeats: int = 7) -> float:
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def attention(n: int = 2048, d: int = 64) -> tuple[float, float]:
    import jax
    import jax.numpy as jnp

    backend("jax").load()
    e = O.indices[1]
    forward = compile_expression(O[O.indices[0], e], O.indices,
                                 inputs=(Q, K, V), definitions=(scores, P, O))
    sizes = {"batch": 1, "n_q": n, "n_k": n, "d_k": d, "d_v": d}

    def compiled_loss(q, k, v, g):
        return jnp.sum(forward(jnp, {"Q": q, "K": k, "V": v}, sizes) * g)

    def handwritten_loss(q, k, v, g):
        weights = jax.nn.softmax(jnp.einsum("zia,zja->zij", q, k) / jnp.sqrt(d), axis=-1)
        return jnp.sum(jnp.einsum("zij,zje->zie", weights, v) * g)

    rng = np.random.default_rng(0)
    q, k, v, g = (jnp.asarray(rng.normal(size=(1, n, d)), jnp.float32) for _ in range(4))
    timings = []
    for loss in (compiled_loss, handwritten_loss):
        step = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
        timings.append(best_of(lambda step=step: jax.block_until_ready(step(q, k, v, g))))
    return tuple(timings)


def jacobian_throughput(batched: int = 128, seconds: float = 2.0) -> tuple[float, float]:
    runner = runner_for(softmax_jacobian, backend("jax"), "cpu", "jit")
    structure = Structure((("n_q", 4), ("n_k", 5)), (), 0)
    rates = []
    for batch in (batched, 1):
        decide(runner, structure, batch, "float32")
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            decide(runner, Structure(structure.sizes, (), count), batch, "float32")
            count += 1
        rates.append(count * batch / (time.perf_counter() - start))
    return tuple(rates)


def _check_all(names: list[str]) -> list[tuple[str, str]]:
    import sample_theorems

    from numeric import check

    by_name = {t.name: t for t in sample_theorems.SAMPLE}
    verdicts = []
    for name in names:
        for backend_name in ("numpy", "jax"):
            for dtype in ("float64", "float32"):
                record = check(by_name[name], backend_name, dtype, profile="default")
                verdicts.append((name, record.status))
    return verdicts


def default_run(workers: int = 2) -> tuple[float, int, int]:
    """Wall time of the default profile over the sample catalog, split over ``workers``."""
    import multiprocessing

    import sample_theorems

    names = [t.name for t in sample_theorems.SAMPLE]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        verdicts = sum(pool.map(_check_all, [names[w::workers] for w in range(workers)]), [])
    expected = {t.name: t.expect for t in sample_theorems.SAMPLE}
    wrong = sum((status == "passed") != (expected[n] == "holds") for n, status in verdicts)
    return time.perf_counter() - start, len(verdicts), wrong


def main() -> None:
    seconds, records, wrong = default_run()
    print(f"(c) default profile, {records} records (sample catalog x numpy/jax x float64/float32)"
          f" on 2 processes: {seconds:.1f} s wall, {wrong} unexpected verdicts")
    compiled, handwritten = attention()
    print(f"(a) attention fwd+bwd, JAX float32, n=2048, d=64: compiled {compiled * 1e3:.1f} ms, "
          f"hand-written {handwritten * 1e3:.1f} ms, ratio {compiled / handwritten:.2f}x "
          "(goal <= 1.5x)")
    batched, single = jacobian_throughput()
    print(f"(b) softmax-Jacobian check, JAX jit, float64 truth + float32 stability: batched(128) "
          f"{batched:,.0f} instances/s, one per example {single:,.0f} instances/s, ratio "
          f"{batched / single:.1f}x (goal >= 10x)")


if __name__ == "__main__":
    main()
