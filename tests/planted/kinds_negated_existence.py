"""Planted negated-existence claims: a map that is linear after all must be refuted (a witness, or
an exact solve, finds the matrix), and a map that is not linear must not be.

Test fixtures, never in the catalog.
"""

import sympy as sp

from attnproof.symbolic import Defined, Dim, Equals, NotExists, Sizes, Source, Tensor, Theorem

PLANTED = "tests/planted/kinds_negated_existence.py"
d = Dim("d", Sizes(1, 5))
p, q = d.indices("p q")
x = Tensor("x", (d,))
W = Tensor("W", (d, d))
M = Tensor("M", (d, d))


def total(expr, *indices):
    return sp.Sum(expr, *((i, 0, i.upper) for i in indices))


twice_through_w = total(W[p, q] * 2 * x[q], q)  # W(2x)

planted_scaled_map_is_not_linear = Theorem(
    name="planted_scaled_map_is_not_linear",
    source=Source(PLANTED, "planted", "x ↦ W(2x) is no linear map"),
    claim=NotExists(M, Equals(twice_through_w, total(M[p, q] * x[q], q)), for_all=(x,)),
    inputs=(x, W),
    expect="refuted",
    note="M = 2W is one; the exact solve finds it without a witness.",
)

planted_scaled_map_is_not_linear_with_witness = Theorem(
    name="planted_scaled_map_is_not_linear_with_witness",
    source=Source(PLANTED, "planted", "x ↦ W(2x), M = 2W"),
    claim=NotExists(M, Equals(twice_through_w, total(M[p, q] * x[q], q)), for_all=(x,),
                    witness=Defined("M", (p, q), 2 * W[p, q])),
    inputs=(x, W),
    expect="refuted",
)

planted_absolute_value_is_not_linear = Theorem(
    name="planted_absolute_value_is_not_linear",
    source=Source(PLANTED, "planted", "x ↦ |x| is no linear map"),
    claim=NotExists(M, Equals(sp.Abs(x[p]), total(M[p, q] * x[q], q)), for_all=(x,)),
    inputs=(x,),
    note="|x| + |−x| = 2|x| while a linear map gives 0: no M, at any size.",
)
