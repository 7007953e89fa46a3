"""Planted geometry claims: the Christoffel symbols (27) of a metric that varies with the point x
must be found nonzero; those of a constant metric must not be. Both are identities with
derivatives along x, checked by the existing routes (sum normal form, exact counterexample,
compiled derivatives or autodiff)."""

import sympy as sp

from attnproof.symbolic import Defined, Dim, Equals, Sizes, Source, Tensor, Theorem

PLANTED = "tests/planted/kinds_geometry.py"

d = Dim("d", Sizes(1, 4))
a, b, c, e = d.indices("a b c e")
x = Tensor("x", (d,))
g_inv = Tensor("ginv", (d, d))


def christoffel(g):
    """Γ^c_ab = ½ g^ce (∂_a g_be + ∂_b g_ae − ∂_e g_ab)."""
    def grad(p, q, r):
        return sp.Derivative(g(q, r), x[p])
    return sp.Rational(1, 2) * sp.Sum(
        g_inv[c, e] * (grad(a, b, e) + grad(b, a, e) - grad(e, a, b)), (e, 0, d.symbol - 1))


varying = Defined("h", (a, b), sp.KroneckerDelta(a, b) * (1 + x[a] ** 2))
constant = Defined("g", (a, b), 2 * sp.KroneckerDelta(a, b))

planted_christoffel_vanish_for_varying_metric = Theorem(
    name="planted_christoffel_vanish_for_varying_metric",
    source=Source(PLANTED, "planted", "Γ = 0 for g_ab = δ_ab (1 + x_a²)"),
    claim=Equals(christoffel(lambda p, q: varying[p, q]), 0),
    inputs=(x, g_inv),
    definitions=(varying,),
    expect="refuted",
)

planted_christoffel_vanish_for_constant_metric = Theorem(
    name="planted_christoffel_vanish_for_constant_metric",
    source=Source(PLANTED, "planted", "Γ = 0 for g_ab = 2 δ_ab"),
    claim=Equals(christoffel(lambda p, q: constant[p, q]), 0),
    inputs=(x, g_inv),
    definitions=(constant,),
)
