"""Inequalities proved from named facts (tutorial §4.3, §10.2; README "Statistical Mechanics
View"; worked example 48 on cosine similarity).

The variational principle (23) and the entropy range (20) are stated where their topics are
(free_energy.py, entropy.py), proved from Gibbs' inequality. Here: the positivity of linear
attention's ELU + 1 feature map, the README's sharp-versus-soft entropies, and the range of the
cosine similarity.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    ExpPositive,
    Greater,
    GreaterOrEqual,
    Source,
    Squares,
    Tensor,
    Theorem,
    elu,
)

from ._dims import EXAMPLE_48, README, TUTORIAL, d_k, n_q

i = n_q.index("i")
a = d_k.index("a")

# -- §10.2: φ(x) = ELU(x) + 1 is positive -------------------------------------------------------

x = Tensor("x", (n_q, d_k))
phi = Defined("phi", (i, a), elu(x[i, a]) + 1, latex=r"\varphi")

elu_plus_one_is_positive = Theorem(
    name="elu_plus_one_is_positive",
    source=Source(TUTORIAL, "§10.2 Definition (Kernel Attention)", "(70), 'ELU + 1'"),
    claim=Greater(phi[i, a], 0, by=(ExpPositive(x[i, a]),)),
    inputs=(x,),
    definitions=(phi,),
    note="φ(x) = ELU(x) + 1 is x + 1 for x > 0 and exp(x) for x ≤ 0: positive in both cases "
    "(case analysis), so every term φ(q)ᵀφ(k) of (70)'s denominator is positive. In floating "
    "point φ written as ELU(x) + 1 rounds to 0 below x ≈ −37 (float64); the numeric record "
    "counts such instances as undecided.",
)

# -- README: A_sharp (β = 10) is more focused than A_soft (β = 0.1) --------------------------------

README_Q = sp.Matrix([[1, 0], [0, 1]])
README_K = sp.Matrix([[1, 0], [sp.Rational(1, 2), sp.Rational(1, 2)], [0, 1]])
README_SCORES = README_Q * README_K.T / sp.sqrt(2)


def _row_entropy(row: int, beta: sp.Expr | int) -> sp.Expr:
    weights = [sp.exp(beta * s) for s in README_SCORES.row(row)]
    total = sum(weights)
    return -sum(w / total * sp.log(w / total) for w in weights)


def _entropy_gap(row: int) -> sp.Expr:
    return _row_entropy(row, sp.Rational(1, 10)) - _row_entropy(row, 10)


readme_sharp_attention_has_lower_entropy = Theorem(
    name="readme_sharp_attention_has_lower_entropy",
    source=Source(README, "Statistical Mechanics View",
                  "A_sharp (β = 10.0), A_soft (β = 0.1), 'Lower = more focused'"),
    claim=Greater(sp.Min(_entropy_gap(0), _entropy_gap(1)), 0),
    inputs=(),
    note="On the README's Q, K (scores QKᵀ/√2), each query's entropy of A_soft = "
    "softmax(0.1·S) exceeds that of A_sharp = softmax(10·S): the smaller of the two rows' gaps "
    "H(A_soft) − H(A_sharp) is positive, by exact evaluation. The general monotonicity is "
    "entropy_decreases_with_inverse_temperature.",
)

# -- cosine similarity lies in [−1, 1] ------------------------------------------------------------

u = Tensor("u", (d_k,))
v = Tensor("v", (d_k,))
norm_u = sp.sqrt(sp.Sum(u[a] ** 2, (a, 0, d_k.symbol - 1)))
norm_v = sp.sqrt(sp.Sum(v[a] ** 2, (a, 0, d_k.symbol - 1)))
cos_uv = sp.Sum(u[a] * v[a], (a, 0, d_k.symbol - 1)) / (norm_u * norm_v)
COSINE = Source(EXAMPLE_48, "Connection to Linear Algebra Theory",
                "'cosine similarity normalizes by norms' (line 132)")

cosine_similarity_at_most_one = Theorem(
    name="cosine_similarity_at_most_one",
    source=COSINE,
    claim=GreaterOrEqual(1, cos_uv, by=(Squares(u[a] / norm_u - v[a] / norm_v, a),)),
    inputs=(u, v),
    note="1 − cos(u, v) = ½ Σ_a (u_a/‖u‖ − v_a/‖v‖)² ≥ 0 (the Cauchy–Schwarz inequality), for "
    "u, v ≠ 0 where the cosine is defined.",
)

cosine_similarity_at_least_minus_one = Theorem(
    name="cosine_similarity_at_least_minus_one",
    source=COSINE,
    claim=GreaterOrEqual(cos_uv, -1, by=(Squares(u[a] / norm_u + v[a] / norm_v, a),)),
    inputs=(u, v),
    note="1 + cos(u, v) = ½ Σ_a (u_a/‖u‖ + v_a/‖v‖)² ≥ 0, for u, v ≠ 0.",
)

