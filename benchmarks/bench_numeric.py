"""Speed of the numeric side, measured side by side in one run (the machine is shared and noisy,
so only ratios from the same run are meaningful).

(a) JAX float32 attention forward + backward at n = 2048, d = 64: the program compiled from the
    catalog's statement (theorems/attention_backward.py) against hand-written jax.numpy
    (goal: within 1.5x).
(b) Checking the softmax Jacobian (theorems/softmax_jacobian.py) on JAX, jit, float64 truth,
    through the full Hypothesis search: a batch of 128 instances per example against one
    instance per example (goal: at least 10x more instances per second).

Run: python benchmarks/bench_numeric.py
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from _timing import best_of  # benchmarks run as scripts: their folder is on sys.path

from attnproof.numeric import compile_expression
from attnproof.numeric._backends import backend
from attnproof.numeric._plan import runner_for
from attnproof.numeric._search import run_search
from attnproof.numeric._strategies import Effort, profile
from attnproof.numeric.route import would_pass
from attnproof.symbolic import FLOAT64
from attnproof.theorems import attention_backward as bw
from attnproof.theorems.softmax_jacobian import softmax_jacobian


def attention(n: int = 2048, d: int = 64) -> tuple[float, float]:
    import jax
    import jax.numpy as jnp

    backend("jax").load()  # x64 on, matmul precision pinned, as in every check
    forward = compile_expression(bw.O[bw.i, bw.b], (bw.i, bw.b), inputs=(bw.Q, bw.K, bw.V),
                                 definitions=(bw.S, bw.A, bw.O))
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


def checking_throughput(examples_batched: int = 16, examples_single: int = 200):
    """Instances per second of the whole search (Hypothesis, evaluation, verdict)."""
    runner = runner_for(softmax_jacobian, backend("jax"), "cpu", "jit")
    base = profile("default")
    rates = []
    for examples, batch in ((examples_batched, 128), (examples_single, 1)):
        chosen = dataclasses.replace(base, truth=Effort(examples, batch))
        run_search(softmax_jacobian, runner, FLOAT64, chosen)  # warm-up: compile each shape
        start = time.perf_counter()
        seen, _ = run_search(softmax_jacobian, runner, FLOAT64, chosen)
        assert would_pass(seen), seen
        rates.append(seen.instances / (time.perf_counter() - start))
    return tuple(rates)


def main() -> None:
    compiled, handwritten = attention()
    print(f"(a) attention fwd+bwd, JAX float32, n=2048, d=64: compiled {compiled * 1e3:.1f} ms, "
          f"hand-written {handwritten * 1e3:.1f} ms, ratio {compiled / handwritten:.2f}x "
          "(goal <= 1.5x)")
    batched, single = checking_throughput()
    print(f"(b) softmax-Jacobian search, JAX jit, float64: batch 128 {batched:,.0f} instances/s, "
          f"one per example {single:,.0f} instances/s, ratio {batched / single:.1f}x "
          "(goal >= 10x)")


if __name__ == "__main__":
    main()
