"""Definiteness and rank (tutorial §2.1, §2.3, §7.2, §8.2; worked example 48's sanity checks).

A metric is positive definite by the tutorial's own Definition (Metric Tensor); the scaled
Euclidean metric (8) is. §8.2 says the learned metric M = WᵀW gives "positive definiteness":
it gives only positive semi-definiteness (W = 0, or any singular W, has xᵀWᵀWx = ‖Wx‖² = 0 for
some x ≠ 0), as §2.3 itself says after (9). Worked example 48 checks "PSD" with x.T @ A @ x > 0,
which is the test for positive definiteness: the PSD matrix 0 fails it. Each head of §7.2 works
in a d_k-dimensional space: its projection W_Q^h has d_k columns, and its score metric
W_Q^h (W_K^h)ᵀ/√d_k, a d_model × d_model matrix, factors through R^{d_k}, so its rank is at most
d_k.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    PositiveDefinite,
    PositiveSemidefinite,
    RankAtMost,
    Sizes,
    Source,
    Tensor,
    Theorem,
)

from ._dims import EXAMPLE_48, TUTORIAL, d_k

a, b, c = d_k.indices("a b c")


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


# -- (2), (8): the scaled Euclidean metric is a metric ------------------------------------------

g = Defined("g", (a, b), sp.KroneckerDelta(a, b) / sp.sqrt(d_k.symbol))  # (8)

scaled_euclidean_metric_positive_definite = Theorem(
    name="scaled_euclidean_metric_positive_definite",
    source=Source(TUTORIAL, "§2.1 Definition (Metric Tensor), §2.3 Example (Scaled Euclidean "
                  "Metric)", "(2), (8)"),
    claim=PositiveDefinite(g[a, b], a, b),
    inputs=(),
    definitions=(g,),
    note="A metric is 'a symmetric, positive-definite (0, 2)-tensor'; g_ab = δ_ab/√d_k is: "
    "xᵀgx = ‖x‖²/√d_k > 0 for every x ≠ 0.",
)

# -- (58): the learned metric WᵀW is positive semi-definite, not positive definite --------------

W = Tensor("W", (d_k, d_k))
Wt = Defined("Wt", (a, c), W[c, a], latex=r"W^{T}")
WtW = Defined("WtW", (a, b), total(Wt[a, c] * W[c, b], c), latex=r"(W^{T} W)")

learned_metric_positive_definite = Theorem(
    name="learned_metric_positive_definite",
    source=Source(TUTORIAL, "§8.2 Learned Bilinear Attention",
                  "(58), 'M = WᵀW for positive definiteness'"),
    claim=PositiveDefinite(WtW[a, b], a, b),
    inputs=(W,),
    definitions=(Wt, WtW),
    expect="refuted",
    note="As written, WᵀW is not positive definite for every W: W = 0 (or any singular W) "
    "gives xᵀWᵀWx = ‖Wx‖² = 0 for an x ≠ 0 in its null space. It is positive definite exactly "
    "when W has full column rank.",
)

learned_metric_positive_definite_corrected = Theorem(
    name="learned_metric_positive_definite_corrected",
    source=Source(TUTORIAL, "§8.2 Learned Bilinear Attention", "(58) corrected"),
    claim=PositiveSemidefinite(WtW[a, b], a, b),
    inputs=(W,),
    definitions=(Wt, WtW),
    corrects="learned_metric_positive_definite",
    note="M = WᵀW is positive semi-definite (xᵀMx = ‖Wx‖² ≥ 0), as §2.3 says after (9) "
    "(learned_metric_positive_semidefinite); definite only for W of full column rank.",
)

# -- worked example 48, line 83: the "PSD" sanity check -----------------------------------------

n = Dim("n", Sizes(1, 6))
p, q, r = n.indices("p q r")
B = Tensor("B", (n, n))
BtB = Defined("A", (p, q), total(B[r, p] * B[r, q], r), latex="A")

psd_sanity_check_strict = Theorem(
    name="psd_sanity_check_strict",
    source=Source(EXAMPLE_48, "Numerical and Shape Notes", "line 83, 'PSD (x.T @ A @ x > 0)'"),
    claim=PositiveDefinite(BtB[p, q], p, q),
    inputs=(B,),
    definitions=(BtB,),
    expect="refuted",
    note="Every positive semi-definite A is BᵀB for some B (its symmetric square root), so the "
    "check 'x.T @ A @ x > 0' holding for every PSD A and x ≠ 0 says every BᵀB is positive "
    "definite. False: A = 0 (B = 0) is PSD and gives 0. '> 0' tests definiteness; PSD is '>= 0'.",
)

psd_sanity_check_strict_corrected = Theorem(
    name="psd_sanity_check_strict_corrected",
    source=Source(EXAMPLE_48, "Numerical and Shape Notes", "line 83 corrected, "
                  "'x.T @ A @ x >= 0'"),
    claim=PositiveSemidefinite(BtB[p, q], p, q),
    inputs=(B,),
    definitions=(BtB,),
    corrects="psd_sanity_check_strict",
    note="The PSD check is x.T @ A @ x >= 0 (up to rounding): every A = BᵀB passes it, since "
    "xᵀAx = ‖Bx‖².",
)

# -- (55): each head works in a d_k-dimensional space --------------------------------------------

heads = Dim("H", Sizes(1, 4))
d_model = Dim("d_model", Sizes(1, 8), latex=r"d_{\mathrm{model}}")
# d_k of a head, drawn up to 4 so that the drawn shapes include d_k < d_model (4 < 6, 4 < 8),
# where a rank bound of d_k says more than the shape does
d_head = Dim("d_k", Sizes(1, 4))
h = heads.index("h")
e, f = d_model.indices("e f")
s = d_head.index("s")
W_Q = Tensor("W_Q", (heads, d_model, d_head))
W_K = Tensor("W_K", (heads, d_model, d_head))

head_projection_rank_at_most_d_k = Theorem(
    name="head_projection_rank_at_most_d_k",
    source=Source(TUTORIAL, "§7.2 Geometric Interpretation", "(55)"),
    claim=RankAtMost(W_Q[h, e, s], e, s, d_head.symbol),
    inputs=(W_Q,),
    note="Q_h = X W_Q^h: the head sees X only through W_Q^h, a map of rank at most d_k (it has "
    "d_k columns), so its queries lie in a subspace of dimension at most d_k. 'A d_k-dimensional "
    "subspace' holds exactly only for W_Q^h of full column rank (W_Q^h = 0 gives rank 0).",
)

Mh = Defined("M", (h, e, f), total(W_Q[h, e, s] * W_K[h, f, s], s) / sp.sqrt(d_head.symbol))

head_score_metric_rank_at_most_d_k = Theorem(
    name="head_score_metric_rank_at_most_d_k",
    source=Source(TUTORIAL, "§7.2 Geometric Interpretation, §8.2", "(51), (55), (58)"),
    claim=RankAtMost(Mh[h, e, f], e, f, d_head.symbol),
    inputs=(W_Q, W_K),
    definitions=(Mh,),
    note="Each head's scores are the bilinear form (58) of the tokens with the d_model × d_model "
    "metric M^h = W_Q^h (W_K^h)ᵀ/√d_k (multi_head_scores_are_learned_bilinear_forms); it factors "
    "through R^{d_k}, so its rank is at most d_k < d_model when H > 1.",
)
