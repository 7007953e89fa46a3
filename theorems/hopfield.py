"""Modern Hopfield networks: energy, gradient, update = attention, fixed points (tutorial §9.2).

(62) writes the energy with lse(z) = log Σ exp(z) applied to β·Kξ. Its gradient is then
ξ − β·Kᵀ softmax(βKξ), not (64)'s ξ − Kᵀ softmax(βKξ): (64) and (65) hold only at β = 1.
Both corrections are stated: the gradient with its β, and the energy of Ramsauer et al. with
lse scaled by 1/β, whose gradient is exactly (64) and whose stationary points are the fixed
points (65).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from attnproof import (
    AtLeast,
    Defined,
    Dim,
    Equals,
    Positive,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    lse,
    rowmax,
)
from attnproof import softmax as softmax_

if TYPE_CHECKING:
    from types import ModuleType

    import numpy

from ._dims import TUTORIAL, d_k, d_v

n_p = Dim("N", Sizes(1, 8), latex="N")  # number of stored patterns (index μ)
mu = n_p.index("mu")
nu = n_p.index("nu")
a = d_k.index("a")
c = d_k.index("c")
b = d_v.index("b")

K = Tensor("K", (n_p, d_k))
V = Tensor("V", (n_p, d_v))
xi = Tensor("xi", (d_k,))
beta = Scalar("beta", Positive(1e-2, 1e2), latex=r"\beta")
T = Scalar("T", Positive(1e-2, 1e2))
B = beta.symbol

scores = sp.Sum(K[mu, c] * xi[c], (c, 0, d_k.symbol - 1))  # (Kξ)_μ
weights = Defined("p", (mu,), softmax_(scores, mu, B))  # softmax(βKξ)_μ
half_norm = sp.Rational(1, 2) * sp.Sum(xi[c] ** 2, (c, 0, d_k.symbol - 1))
energy = -lse(B * scores, mu) + half_norm  # (62), the constant dropped
energy_scaled = -lse(B * scores, mu) / B + half_norm  # Ramsauer et al.



update = sp.Sum(K[mu, a] * weights[mu], (mu, 0, n_p.symbol - 1))  # (Kᵀ softmax(βKξ))_a

hopfield_energy_gradient = Theorem(
    name="hopfield_energy_gradient",
    source=Source(TUTORIAL, "§9.2 proof of Theorem (Hopfield Update = Attention)", "(62), (64)"),
    claim=Equals(sp.Derivative(energy, xi[a]), -update + xi[a]),
    inputs=(K, xi, beta),
    definitions=(weights,),
    expect="refuted",
    note="As written, (64) drops the factor β that the chain rule brings out of lse(β·Kξ).",
)

hopfield_energy_gradient_corrected = Theorem(
    name="hopfield_energy_gradient_corrected",
    source=Source(TUTORIAL, "§9.2", "(62), (64) corrected"),
    claim=Equals(sp.Derivative(energy, xi[a]), -B * update + xi[a]),
    inputs=(K, xi, beta),
    definitions=(weights,),
    corrects="hopfield_energy_gradient",
    note="The gradient of the energy exactly as (62) writes it.",
)

hopfield_scaled_energy_gradient = Theorem(
    name="hopfield_scaled_energy_gradient",
    source=Source(TUTORIAL, "§9.2", "(62) with lse scaled by 1/β, (64)"),
    claim=Equals(sp.Derivative(energy_scaled, xi[a]), -update + xi[a]),
    inputs=(K, xi, beta),
    definitions=(weights,),
    corrects="hopfield_energy_gradient",
    note="With E = −β⁻¹ lse(βKξ) + ½‖ξ‖² (Ramsauer et al. 2020), (64) holds as written.",
)

hopfield_update_is_attention = Theorem(
    name="hopfield_update_is_attention",
    source=Source(TUTORIAL, "§9.2 Theorem (Hopfield Update = Attention)", "(16), (63)"),
    claim=Equals(
        sp.Sum(V[mu, b] * weights[mu], (mu, 0, n_p.symbol - 1)),
        sp.Sum(V[mu, b] * softmax_(scores, mu, 1 / T.symbol), (mu, 0, n_p.symbol - 1)).subs(
            T.symbol, 1 / B
        ),
    ),
    inputs=(K, V, xi, beta),
    definitions=(weights,),
    note="Vᵀ softmax(βKξ) is attention (16) with query ξ, keys K, values V at T = 1/β "
    "and the unscaled bilinear form g = δ of (7).",
)


def at_fixed_point(np: ModuleType, K: numpy.ndarray, xi: numpy.ndarray, beta: numpy.ndarray,
                   **_: numpy.ndarray) -> dict[str, numpy.ndarray]:
    """Iterate ξ ← Kᵀ softmax(βKξ) from the drawn ξ until it stops moving (float64, host).

    Rows that have not converged after the step budget are not fixed points, so they are
    marked invalid rather than checked.
    """
    state = xi
    for _iteration in range(5000):  # not ``_``, the name of the other inputs
        scores = beta[:, None] * np.einsum("bma,ba->bm", K, state)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        step = np.einsum("bm,bma->ba", weights, K)
        moved = np.abs(step - state).max(axis=1)
        state = step
        if np.all(moved <= 1e-15 * (1 + np.abs(state).max(axis=1))):
            break
    return {"xi": state, "valid": moved <= 1e-15 * (1 + np.abs(state).max(axis=1))}


hopfield_fixed_point = Theorem(
    name="hopfield_fixed_point",
    source=Source(TUTORIAL, "§9.2 proof of Theorem (Hopfield Update = Attention)", "(62), (65)"),
    claim=Equals(sp.Derivative(energy, xi[a]), 0),
    inputs=(K, xi, beta),
    at=at_fixed_point,
    lemmas=(Equals(sp.Derivative(energy, xi[a]), -update + xi[a]),),
    definitions=(weights,),
    expect="refuted",
    note="Claim: ∇E = 0 at every ξ* = Kᵀ softmax(βKξ*). Checked at fixed points reached by "
    "iterating the update; there ∇E of (62) is (1 − β)ξ*, nonzero for β ≠ 1.",
)

hopfield_fixed_point_scaled_energy = Theorem(
    name="hopfield_fixed_point_scaled_energy",
    source=Source(TUTORIAL, "§9.2", "(65) for the energy with lse scaled by 1/β"),
    claim=Equals(sp.Derivative(energy_scaled, xi[a]), 0),
    inputs=(K, xi, beta),
    at=at_fixed_point,
    given=(Equals(xi[a], update),),  # what at_fixed_point guarantees on every valid row
    lemmas=(Equals(sp.Derivative(energy_scaled, xi[a]), -update + xi[a]),),
    definitions=(weights,),
    corrects="hopfield_fixed_point",
    note="Lemma: ∇E = ξ − Kᵀ softmax(βKξ) for every ξ, so ∇E vanishes at every fixed point ξ*. "
    "Numerically, ∇E is evaluated at fixed points reached by iterating the update.",
)

# -- §9.3 Theorem (Exponential Capacity), (66): the separation behind exponential storage -------
#
# Pattern i is retrieved from the other N − 1 stored patterns by its score s_i = x_i·ξ against
# theirs, s_j = x_j·ξ. Its separation Δ = s_i − max_{j≠i} s_j (Ramsauer et al. 2020, "separation
# of patterns") is the margin by which it beats every other score.

others = Dim("N_other", Sizes(1, 8))  # the N − 1 stored patterns other than i
j = others.index("j")
score_i = Scalar("s_i", Real(-3, 3), latex="s_i")
scores_other = Tensor("s", (others,))
# β up to 10: the bound's exp(β(max_j s_j − s_i)) stays within float32's range for scores drawn
# in [−3, 3]
beta_capacity = Scalar("beta", Positive(1e-2, 1e1), latex=r"\beta")
B_cap = beta_capacity.symbol

separation = score_i.symbol - rowmax(scores_other[j], j)  # Δ, negative when i does not win


def boltzmann(score: sp.Expr, top: sp.Expr) -> sp.Expr:
    """exp(β·(score − top)): every weight's exponent is shifted by the largest score, which
    leaves the softmax unchanged (a common factor of numerator and denominator) and keeps each
    exponential at most 1, as the stable spelling of softmax does."""
    return sp.exp(B_cap * (score - top))


top_score = sp.Max(score_i.symbol, rowmax(scores_other[j], j))
boltzmann_other = sp.Sum(boltzmann(scores_other[j], top_score), (j, 0, others.symbol - 1))
weight_of_others = boltzmann_other / (boltzmann(score_i.symbol, top_score) + boltzmann_other)

# Stated with AtLeast, checked: no fact of the inequality kind bounds exp(β(s_j − s_i)) by
# exp(−βΔ) (exp is increasing), and the partition function in the denominator is not a
# coefficient its nonnegative combinations can carry.
hopfield_other_patterns_weight_exponentially_small = Theorem(
    name="hopfield_other_patterns_weight_exponentially_small",
    source=Source(TUTORIAL, "§9.3 Theorem (Exponential Capacity)", "(63), (66)"),
    claim=AtLeast(others.symbol * sp.exp(-B_cap * separation), weight_of_others),
    inputs=(score_i, scores_other, beta_capacity),
    note="(66) as printed, M ≈ exp(d/2), is not checkable: '≈' hides the constants and the "
    "retrieval criterion, and the published theorem (Ramsauer et al. 2020: with probability "
    "1 − p some √p·c^((d−1)/4) random patterns on a sphere are each retrieved in one update, "
    "c depending on β and the radius) is a high-probability bound at dimensions no "
    "enumeration or sampling reaches. "
    "What the text gives as its reason, 'the exponential separation provided by softmax', is "
    "stated instead: with Δ = s_i − max_{j≠i} s_j the margin by which pattern i beats each "
    "of the N − 1 others, their softmax weight together is at most (N − 1)·exp(−βΔ), so "
    "the number of patterns enters linearly against an exponentially small factor. It holds "
    "for every score (for Δ ≤ 0 the bound exceeds 1).",
)

# One update from ξ = x_i: the scores are x_i·x_i for pattern i and X_j·x_i for the others.
pattern_i = Tensor("x_i", (d_k,), Real(-1, 1))
patterns_other = Tensor("X", (others, d_k), Real(-1, 1))
score_own = sp.Sum(pattern_i[c] ** 2, (c, 0, d_k.symbol - 1))
score_other = sp.Sum(patterns_other[j, c] * pattern_i[c], (c, 0, d_k.symbol - 1))
top_own = sp.Max(score_own, rowmax(score_other, j))
boltzmann_own = boltzmann(score_own, top_own)
boltzmann_each_other = boltzmann(score_other, top_own)  # one term per other pattern j
boltzmann_rest = sp.Sum(boltzmann_each_other, (j, 0, others.symbol - 1))
retrieved = (boltzmann_own * pattern_i[a]
             + sp.Sum(boltzmann_each_other * patterns_other[j, a],
                      (j, 0, others.symbol - 1))
             ) / (boltzmann_own + boltzmann_rest)  # (63) with V = K = the stored patterns
retrieval_error = sp.sqrt(sp.Sum((retrieved - pattern_i[a]) ** 2, (a, 0, d_k.symbol - 1)))
largest_norm = sp.Max(sp.sqrt(score_own),
                      rowmax(sp.sqrt(sp.Sum(patterns_other[j, c] ** 2, (c, 0, d_k.symbol - 1))),
                             j))
separation_own = score_own - rowmax(score_other, j)

hopfield_one_step_retrieval_error = Theorem(
    name="hopfield_one_step_retrieval_error",
    source=Source(TUTORIAL, "§9.3 Theorem (Exponential Capacity)", "(63), (66)"),
    claim=AtLeast(2 * others.symbol * sp.exp(-B_cap * separation_own) * largest_norm,
                  retrieval_error),
    inputs=(pattern_i, patterns_other, beta_capacity),
    note="The retrieval half of hopfield_other_patterns_weight_exponentially_small: one update "
    "(63) from ξ = x_i moves at most 2(N − 1)·exp(−βΔ)·max_μ ‖x_μ‖ from x_i, Δ = x_i·x_i − "
    "max_{j≠i} x_j·x_i (Ramsauer et al. 2020, the fixed-point lemma's bound): the update minus "
    "x_i is Σ_{j≠i} p_j (x_j − x_i), of norm at most (1 − p_i)·2 max ‖x_μ‖. A pattern "
    "separated by Δ is retrieved to within an error exponentially small in βΔ and only linear "
    "in N.",
)
