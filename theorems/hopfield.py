"""Modern Hopfield networks: energy, gradient, update = attention, fixed points (tutorial §9.2).

(62) writes the energy with lse(z) = log Σ exp(z) applied to β·Kξ. Its gradient is then
ξ − β·Kᵀ softmax(βKξ), not (64)'s ξ − Kᵀ softmax(βKξ): (64) and (65) hold only at β = 1.
Both corrections are stated: the gradient with its β, and the energy of Ramsauer et al. with
lse scaled by 1/β, whose gradient is exactly (64) and whose stationary points are the fixed
points (65).
"""

import sympy as sp

from attnproof import Defined, Dim, Equals, Positive, Scalar, Sizes, Source, Tensor, Theorem, lse
from attnproof import softmax as softmax_

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


def at_fixed_point(np, K, xi, beta, **_):
    """Iterate ξ ← Kᵀ softmax(βKξ) from the drawn ξ until it stops moving (float64, host).

    Rows that have not converged after the step budget are not fixed points, so they are
    marked invalid rather than checked.
    """
    state = xi
    for _ in range(5000):
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
