"""Classical Hopfield networks (tutorial §9.1).

N neurons (indices i, j), M stored patterns ξ_μ (index μ). The Hebbian weights (60) are
symmetric, the energy (61) is −1/(2N) Σ_μ (ξ_μ·x)², so never positive, and its gradient is −Wx.
"Fixed points correspond to stored patterns" and the capacity M ≈ 0.14N are claims about the sign
dynamics x ↦ sign(Wx) that the text leaves imprecise; what decides both is the aligned local field
ξ_ν^i (Wξ_ν)^i of a stored pattern (ξ_ν is a fixed point exactly when it is positive at every i),
whose mean and variance for random ±1 patterns are stated below, and the energy's symmetry
E(−x) = E(x), which pairs every minimum with its mirror image.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    Expectation,
    Positive,
    Rademacher,
    Sizes,
    Source,
    Tensor,
    Theorem,
    Variance,
)

from ._dims import TUTORIAL

neurons = Dim("N", Sizes(1, 8))
patterns = Dim("M", Sizes(1, 8))
i, j, k = neurons.indices("i j k")
mu, nu = patterns.indices("mu nu")
N = neurons.symbol


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


xi = Tensor("xi", (patterns, neurons))  # stored patterns ξ_μ^i
x = Tensor("x", (neurons,))
# The energy identity is a polynomial identity, proved for all reals; a polynomial that vanishes
# on an open set vanishes everywhere, so its numeric draws may stay where float16 sums of squares
# stay in range (the drawn ±100 rows overflow them, which the checker reports as a failure).
xi_small = Tensor("xi", (patterns, neurons), Positive(1e-1, 3.0))
x_small = Tensor("x", (neurons,), Positive(1e-1, 3.0))
W = Defined("W", (i, j), total(xi[mu, i] * xi[mu, j], mu) / N)  # (60)
energy = -sp.Rational(1, 2) * total(x[i] * W[i, j] * x[j], i, j)  # (61)
SECTION = "§9.1 Classical Hopfield Networks"

classical_hopfield_weights_symmetric = Theorem(
    name="classical_hopfield_weights_symmetric",
    source=Source(TUTORIAL, SECTION, "(60)"),
    claim=Equals(W[i, j], W[j, i]),
    inputs=(xi,),
    definitions=(W,),
    note="Hebbian weights are symmetric, which makes (61) an energy.",
)

classical_hopfield_energy_is_sum_of_overlaps = Theorem(
    name="classical_hopfield_energy_is_sum_of_overlaps",
    source=Source(TUTORIAL, SECTION, "(60)–(61)"),
    claim=Equals(energy, -total(total(xi[mu, i] * x[i], i) ** 2, mu) / (2 * N)),
    inputs=(xi_small, x_small),
    definitions=(W,),
    note="E(x) = −(1/2N) Σ_μ (ξ_μ·x)² ≤ 0: each stored pattern lowers the energy of states "
    "that overlap it.",
)

classical_hopfield_energy_gradient = Theorem(
    name="classical_hopfield_energy_gradient",
    source=Source(TUTORIAL, SECTION, "(61)"),
    claim=Equals(sp.Derivative(energy, x[k]), -total(W[k, j] * x[j], j)),
    inputs=(xi, x),
    definitions=(W,),
    note="∇E = −Wx (by the symmetry of W): the local field whose sign the classical update "
    "follows.",
)

# -- "fixed points (local minima) correspond to stored patterns"; "capacity M ≈ 0.14N" ---------

M = patterns.symbol
aligned_field = xi[nu, i] * total(W[i, j] * xi[nu, j], j)  # ξ_ν^i (W ξ_ν)^i

classical_hopfield_stored_pattern_field = Theorem(
    name="classical_hopfield_stored_pattern_field",
    source=Source(TUTORIAL, SECTION, "after (61), 'Fixed points (local minima) correspond to "
                  "stored patterns', made precise"),
    claim=Expectation(aligned_field, 1 + (M - 1) / N, law=Rademacher()),
    inputs=(xi,),
    definitions=(W,),
    note="A stored pattern ξ_ν is a fixed point of x ↦ sign(Wx) exactly when its aligned field "
    "ξ_ν^i (Wξ_ν)^i is positive at every neuron i. For M random ±1 patterns that field is the "
    "signal 1 (the pattern's own term) plus crosstalk from the others: mean 1 + (M − 1)/N, "
    "positive, but with variance (M − 1)(N − 1)/N² (classical_hopfield_crosstalk_variance). So "
    "stored patterns are fixed points with high probability only when M ≪ N (few, nearly "
    "orthogonal patterns; orthogonal ones give Wξ_ν = ξ_ν exactly), not in general; and the "
    "correspondence is at best up to sign: −ξ_ν is a fixed point whenever ξ_ν is "
    "(classical_hopfield_energy_even).",
)

classical_hopfield_crosstalk_variance = Theorem(
    name="classical_hopfield_crosstalk_variance",
    source=Source(TUTORIAL, SECTION, "capacity M ≈ 0.14N, made precise"),
    claim=Variance(aligned_field, (M - 1) * (N - 1) / N**2, law=Rademacher()),
    inputs=(xi,),
    definitions=(W,),
    note="The crosstalk in a stored pattern's field has variance (M − 1)(N − 1)/N² ≈ M/N against "
    "a signal of 1: the signal-to-noise ratio depends on M/N alone, which is why the number of "
    "patterns that can be stored grows linearly in N. The constant 0.138 is the replica-theory "
    "threshold (Amit, Gutfreund, Sompolinsky 1985) for stable near-pattern states as N → ∞ with "
    "a tolerated fraction of flipped bits that the text does not define; no finite check "
    "reaches it, so the linear scaling is what is stated.",
)

minus_x = -sp.Rational(1, 2) * total((-x[i]) * W[i, j] * (-x[j]), i, j)

classical_hopfield_energy_even = Theorem(
    name="classical_hopfield_energy_even",
    source=Source(TUTORIAL, SECTION, "(61), after it: the mirror of a stored pattern"),
    claim=Equals(minus_x, energy),
    inputs=(xi_small, x_small),
    definitions=(W,),
    note="E(−x) = E(x), and sign(W(−x)) = −sign(Wx): the minima and fixed points come in pairs "
    "±x, so −ξ_ν is a minimum whenever ξ_ν is, a 'spurious' state that is no stored pattern. "
    "Local minima correspond to stored patterns at best up to sign (and mixtures of three "
    "patterns are further spurious minima).",
)
