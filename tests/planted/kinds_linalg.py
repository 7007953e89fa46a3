"""Planted linear-algebra claims: each false one must be refuted by the exact search and fail
the numeric route, and the true one beside it must do neither.

Test fixtures, discovered from this directory like any user's theorem directory; never in the
catalog.
"""

import sympy as sp

from attnproof.symbolic import (
    Defined,
    Dim,
    Positive,
    PositiveDefinite,
    PositiveSemidefinite,
    RankAtMost,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
)

PLANTED = "tests/planted/kinds_linalg.py"
n = Dim("n", Sizes(1, 5))
m = Dim("m", Sizes(1, 5))
r = Dim("r", Sizes(1, 3))
a, b, c = n.indices("a b c")
i, j = m.indices("i j")
k = r.index("k")


def total(expr, *indices):
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


W = Tensor("W", (n, n))
WtW = Defined("G", (a, b), total(W[c, a] * W[c, b], c))  # a Gram matrix: PSD
WW = Defined("P", (a, b), total(W[a, c] * W[c, b], c))  # W², the index order of (9): not PSD

planted_square_of_a_matrix_is_psd = Theorem(
    name="planted_square_of_a_matrix_is_psd",
    source=Source(PLANTED, "planted", "W W for W^T W"),
    claim=PositiveSemidefinite(WW[a, b], a, b),
    inputs=(W,),
    definitions=(WW,),
    expect="refuted",
    note="W² is not positive semi-definite: W = [[0, 1], [-1, 0]] gives W² = −I.",
)

planted_gram_matrix_is_psd = Theorem(
    name="planted_gram_matrix_is_psd",
    source=Source(PLANTED, "planted", "W^T W"),
    claim=PositiveSemidefinite(WtW[a, b], a, b),
    inputs=(W,),
    definitions=(WtW,),
    note="xᵀWᵀWx = ‖Wx‖² ≥ 0.",
)

planted_gram_matrix_is_positive_definite = Theorem(
    name="planted_gram_matrix_is_positive_definite",
    source=Source(PLANTED, "planted", "W^T W definite"),
    claim=PositiveDefinite(WtW[a, b], a, b),
    inputs=(W,),
    definitions=(WtW,),
    expect="refuted",
    note="False only on singular W, a measure-zero set: the structured draws must reach it.",
)

planted_identity_is_positive_definite = Theorem(
    name="planted_identity_is_positive_definite",
    source=Source(PLANTED, "planted", "2 I"),
    claim=PositiveDefinite(2 * sp.KroneckerDelta(a, b), a, b),
    inputs=(W,),
    note="2I: xᵀ(2I)x = 2‖x‖².",
)

L = Tensor("L", (m, r))
R = Tensor("R", (m, r))
LRt = Defined("T", (i, j), total(L[i, k] * R[j, k], k))

planted_low_rank_product_rank_one = Theorem(
    name="planted_low_rank_product_rank_one",
    source=Source(PLANTED, "planted", "rank L Rᵀ <= 1"),
    claim=RankAtMost(LRt[i, j], i, j, 1),
    inputs=(L, R),
    definitions=(LRt,),
    expect="refuted",
    note="L Rᵀ has rank up to r, not 1.",
)

planted_low_rank_product_rank_r = Theorem(
    name="planted_low_rank_product_rank_r",
    source=Source(PLANTED, "planted", "rank L Rᵀ <= r"),
    claim=RankAtMost(LRt[i, j], i, j, r.symbol),
    inputs=(L, R),
    definitions=(LRt,),
    note="L Rᵀ factors through R^r.",
)

# jitter: BᵀB plus a multiple of the identity, scaled to the matrix so that float32 can see it
rho = Scalar("rho", Positive(1e-3, 1))
tau = Scalar("tau", Positive(1e-6, 1))
e, g = n.indices("e g")
scaled = rho.symbol * total(W[e, g] ** 2, e, g)  # ρ‖W‖_F²

planted_gram_plus_jitter_is_positive_definite = Theorem(
    name="planted_gram_plus_jitter_is_positive_definite",
    source=Source(PLANTED, "planted", "WᵀW + (ρ‖W‖² + τ)I"),
    claim=PositiveDefinite(WtW[a, b] + (scaled + tau.symbol) * sp.KroneckerDelta(a, b), a, b),
    inputs=(W, rho, tau),
    definitions=(WtW,),
    note="xᵀ(WᵀW + εI)x = ‖Wx‖² + ε‖x‖² > 0 for x ≠ 0.",
)

planted_gram_minus_jitter_is_positive_definite = Theorem(
    name="planted_gram_minus_jitter_is_positive_definite",
    source=Source(PLANTED, "planted", "WᵀW + (ρ‖W‖² − τ)I"),
    claim=PositiveDefinite(WtW[a, b] + (scaled - tau.symbol) * sp.KroneckerDelta(a, b), a, b),
    inputs=(W, rho, tau),
    definitions=(WtW,),
    expect="refuted",
    note="The shift may be negative: W = 0 gives −τI.",
)
