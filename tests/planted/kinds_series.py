"""Planted series: natural gradient descent agrees across parameterizations to first order in
η only, so the same claim to second order must be refuted; a true second-order expansion beside
it must not be. Test fixtures, never in the catalog."""

import sympy as sp

from attnproof.symbolic import Positive, Real, Scalar, Series, Source, Theorem
from attnproof.theorems import natural_gradient as natural

PLANTED = Source("tests/planted/kinds_series.py", "planted series")

planted_natural_gradient_invariant_to_second_order = Theorem(
    name="planted_natural_gradient_invariant_to_second_order",
    source=PLANTED,
    claim=Series(*natural.updates_in_weight(natural.natural_gradient_step), natural.eta.symbol,
                 order=2),
    inputs=(natural.theta, natural.y, natural.eta),
    expect="refuted",
)

x = Scalar("x", Real(-3, 3))
eta = Scalar("eta", Positive(1e-3, 1))

planted_exp_to_second_order = Theorem(
    name="planted_exp_to_second_order",
    source=PLANTED,
    claim=Series(sp.exp(x.symbol + eta.symbol),
                 sp.exp(x.symbol) * (1 + eta.symbol + eta.symbol**2 / 2), eta.symbol, order=2),
    inputs=(x, eta),
)
