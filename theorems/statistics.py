"""Why scores are divided by √d_k: the variance of a dot product of random vectors (tutorial
§2.3 Remark; worked example 48's scaling remarks; the theory notebook's score-scaling demos).

The tutorial names its assumption: q and k have i.i.d. entries of mean 0 and variance 1. Under
it Var(q·k) = d_k and Var(q·k/√d_k) = 1, for every such law (Gaussian or not), proved for all
sizes by moment algebra. Worked example 48 says the same of the score matrix without naming a
law; it is stated here under the tutorial's assumption. The notebook's demo draws Gaussian Q, K
with NumPy's seed 1 and prints the standard deviations of the raw and scaled scores: about
√64 = 8 and about 1, computed from its own code.

Not stated: the classical Hopfield capacity of §9.1 (M ≈ 0.14N) is an asymptotic statement
about retrieval with a tolerated error rate as N → ∞, which the text does not define; it stays in
theorems/_pending.py. §9.3's (66) (M ≈ exp(d/2)) is stated in theorems/hopfield.py in its most
defensible precise form, the separation bound the text gives as its reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sympy as sp

from attnproof import FromCode, Moments, Source, Tensor, Theorem, Variance

from ._dims import EXAMPLE_48, NOTEBOOK, TUTORIAL, d_k, n_k, n_q

if TYPE_CHECKING:
    import numpy as np

# an array namespace (NumPy, another backend's, or exact arithmetic's) and its arrays: the demo's
# code runs on each, so no one type
Namespace = Any
Array = Any

a = d_k.index("a")
i = n_q.index("i")
j = n_k.index("j")
d = d_k.symbol
UNIT = Moments(mean=0, variance=1)  # the tutorial's "i.i.d. with zero mean and unit variance"

q = Tensor("q", (d_k,))
k = Tensor("k", (d_k,))
dot = sp.Sum(q[a] * k[a], (a, 0, d - 1))
REMARK = "§2.3 Remark (after (8))"

dot_product_variance_is_d_k = Theorem(
    name="dot_product_variance_is_d_k",
    source=Source(TUTORIAL, REMARK, "Var(q^a k_a) = d_k"),
    claim=Variance(dot, d, law=UNIT),
    inputs=(q, k),
    note="For q, k with i.i.d. entries of mean 0 and variance 1 (any such law): each term "
    "q_a k_a has variance 1 and the terms are uncorrelated.",
)

scaled_dot_product_variance_is_one = Theorem(
    name="scaled_dot_product_variance_is_one",
    source=Source(TUTORIAL, REMARK, "'the scaling normalizes the variance to 1'"),
    claim=Variance(dot / sp.sqrt(d), 1, law=UNIT),
    inputs=(q, k),
    note="Var(q·k/√d_k) = d_k/d_k = 1 for every d_k, under the same assumption.",
)

# -- worked example 48: the score matrix, whose variance the division keeps from growing ---------

Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
raw_score = sp.Sum(Q[i, a] * K[j, a], (a, 0, d - 1))

example48_scaled_score_variance = Theorem(
    name="example48_scaled_score_variance",
    source=Source(EXAMPLE_48, "Mathematical characterization; ML Examples and Patterns",
                  "lines 9, 91, 114: dividing by √d_k keeps score variance from growing with "
                  "dimension"),
    claim=Variance(raw_score / sp.sqrt(d), 1, law=UNIT),
    inputs=(Q, K),
    note="The example names no law; under the tutorial's (i.i.d. entries, mean 0, variance 1) "
    "every scaled score S_ij has variance 1 whatever d_k is.",
)

example48_unscaled_score_variance = Theorem(
    name="example48_unscaled_score_variance",
    source=Source(EXAMPLE_48, "Part 1: Query-Key Scoring",
                  "line 120: without 1/√d_k, scores grow with dimension"),
    claim=Variance(raw_score, d, law=UNIT),
    inputs=(Q, K),
    note="Without the division each score (QKᵀ)_ij has variance d_k, growing linearly with "
    "the dimension (same assumption).",
)

# -- the notebook's demo, from its own code -------------------------------------------------------


def notebook_score_draws() -> dict[str, np.ndarray]:
    """Demo 5's inputs: rng = np.random.default_rng(1); Q, K = rng.normal(size=(16, 64)) each.
    (NumPy keeps Generator streams stable across versions in practice, not by promise.)"""
    import numpy as np

    rng = np.random.default_rng(1)
    return {"Q": rng.normal(size=(16, 64)), "K": rng.normal(size=(16, 64))}


def notebook_score_scaling(xp: Namespace, Q: Array, K: Array) -> tuple[Array, Array]:
    """Demo 5's code: raw = Q @ K.T; scaled = raw / np.sqrt(64); raw.std(), scaled.std()
    (NumPy's std: the population standard deviation over every entry)."""
    raw = Q @ K.T
    scaled = raw / xp.sqrt(xp.constant(64))

    def std(x: Array) -> Array:
        return xp.sqrt(xp.mean((x - xp.mean(x)) ** 2))

    return std(raw), std(scaled)


notebook_score_scaling_seed_one = Theorem(
    name="notebook_score_scaling_seed_one",
    source=Source(NOTEBOOK, "Demos 5, 15, 25 (score scaling)",
                  "Raw std ≈ √64 = 8, Scaled std ≈ 1 (Gaussian Q, K, seed 1)"),
    claim=FromCode(notebook_score_scaling, ("8", "1"), ("raw std", "scaled std"),
                   data=notebook_score_draws),
    inputs=(),
    note="The document shows the demo's code, not its output; 'about 8' and 'about 1' are "
    "read as the printed digits 8 and 1 (±0.5). The sample of 256 scores has raw std 7.96; the "
    "population values √64 and 1 are dot_product_variance_is_d_k and "
    "scaled_dot_product_variance_is_one at d_k = 64.",
)
