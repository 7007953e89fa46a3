"""Planted inequalities proved from facts (named, or found in the statement for a convex
combination): each false one must be refuted (by the exact search and by the numeric route),
each true one beside it must not be.

Test fixtures, discovered from this directory like any user's theorem directory.
"""

import sympy as sp

from attnproof.symbolic import (
    AtLeast,
    BelowMaximum,
    Dim,
    ExpPositive,
    Gibbs,
    Greater,
    GreaterOrEqual,
    Positive,
    Real,
    Scalar,
    Simplex,
    Source,
    Squares,
    Tensor,
    Theorem,
    kl,
    rowmax,
    rowmin,
    softmax,
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

# convex combinations: a mixture of the entries of a row under a distribution lies between the
# row's smallest and largest entry, proved from the gaps to the extremes (all sizes), named with
# by= or found in the statement; a mixture is not above the largest entry unless all are equal
w = Dim("w")
k = w.index("k")
mixer = Tensor("mix", (w,), Simplex())
levels = Tensor("y", (w,), Real(-3, 3))
mixture = sp.Sum(mixer[k] * levels[k], (k, 0, k.upper))
x_w = Tensor("x_w", (w,), Real(-3, 3))
heat = Scalar("heat", Positive(1e-1, 1e1))

planted_mixture_below_the_largest_level = Theorem(
    name="planted_mixture_below_the_largest_level",
    source=SOURCE,
    claim=GreaterOrEqual(rowmax(levels[k], k), mixture,
                         by=(BelowMaximum(mixer[k], levels[k], k),)),
    inputs=(mixer, levels),
)

planted_mixture_above_the_largest_level = Theorem(
    name="planted_mixture_above_the_largest_level",
    source=SOURCE,
    claim=GreaterOrEqual(mixture, rowmax(levels[k], k),
                         by=(BelowMaximum(mixer[k], levels[k], k),)),
    inputs=(mixer, levels),
    expect="refuted",
)

# found in the statement (AtLeast names no facts): the tempered softmax's mixture of x
tempered = sp.Sum(softmax(levels[k], k, 1 / heat.symbol) * x_w[k], (k, 0, k.upper))

planted_tempered_mixture_above_the_smallest_entry = Theorem(
    name="planted_tempered_mixture_above_the_smallest_entry",
    source=SOURCE,
    claim=AtLeast(tempered, rowmin(x_w[k], k)),
    inputs=(levels, x_w, heat),
)

planted_smallest_entry_above_the_tempered_mixture = Theorem(
    name="planted_smallest_entry_above_the_tempered_mixture",
    source=SOURCE,
    claim=AtLeast(rowmin(x_w[k], k), tempered),
    inputs=(levels, x_w, heat),
    expect="refuted",
)
