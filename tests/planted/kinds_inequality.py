"""Planted inequalities proved from facts: each false one must be refuted (by the exact search
and by the numeric route), each true one beside it must not be.

Test fixtures, discovered from this directory like any user's theorem directory.
"""

import sympy as sp

from attnproof.symbolic import (
    Dim,
    ExpPositive,
    Gibbs,
    Greater,
    GreaterOrEqual,
    Real,
    Simplex,
    Source,
    Squares,
    Tensor,
    Theorem,
    kl,
)

SOURCE = Source("tests/planted/kinds_inequality.py", "planted")
n = Dim("n")
j = n.index("j")
x = Tensor("x", (n,), Real(-3, 3))
p = Tensor("p", (n,), Simplex())
q = Tensor("q", (n,), Simplex())

# KL ≥ 0 from Gibbs' inequality; its reverse is false wherever p ≠ q
planted_gibbs_inequality = Theorem(
    name="planted_gibbs_inequality",
    source=SOURCE,
    claim=GreaterOrEqual(kl(p[j], q[j], j), 0, by=(Gibbs(p[j], q[j], j),)),
    inputs=(p, q),
)

planted_kl_at_most_zero = Theorem(
    name="planted_kl_at_most_zero",
    source=SOURCE,
    claim=GreaterOrEqual(0, kl(p[j], q[j], j), by=(Gibbs(p[j], q[j], j),)),
    inputs=(p, q),
    expect="refuted",
)

# strict: x² + 1 > 0 holds; x² > 0 fails only at x = 0, where lhs = rhs
planted_square_plus_one_positive = Theorem(
    name="planted_square_plus_one_positive",
    source=SOURCE,
    claim=Greater(x[j] ** 2 + 1, 0, by=(Squares(x[j]),)),
    inputs=(x,),
)

planted_square_positive = Theorem(
    name="planted_square_positive",
    source=SOURCE,
    claim=Greater(x[j] ** 2, 0, by=(Squares(x[j]),)),
    inputs=(x,),
    expect="refuted",
)

# strict and false by a margin: 1 > exp(x) fails for every x > 0
planted_exp_below_one = Theorem(
    name="planted_exp_below_one",
    source=SOURCE,
    claim=Greater(1, sp.exp(x[j]), by=(ExpPositive(x[j]),)),
    inputs=(x,),
    expect="refuted",
)

planted_exp_positive = Theorem(
    name="planted_exp_positive",
    source=SOURCE,
    claim=Greater(sp.exp(x[j]), 0, by=(ExpPositive(x[j]),)),
    inputs=(x,),
)
