"""Classical Hopfield networks (tutorial §9.1).

N neurons (indices i, j), M stored patterns ξ_μ (index μ). The Hebbian weights (60) are
symmetric, the energy (61) is −1/(2N) Σ_μ (ξ_μ·x)², so never positive, and its gradient is −Wx.
"Fixed points correspond to stored patterns" and the capacity M ≈ 0.14N are statistical claims
about sign dynamics (listed in docs/coverage.md).
"""

import sympy as sp

from attnproof import Defined, Dim, Equals, Positive, Sizes, Source, Tensor, Theorem

from ._dims import TUTORIAL

neurons = Dim("N", Sizes(1, 8))
patterns = Dim("M", Sizes(1, 8))
i, j, k = neurons.indices("i j k")
mu = patterns.index("mu")
N = neurons.symbol


def total(expr, *indices):
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
