"""Bilinear forms and metrics (tutorial §2.2–§2.3, §8.2; README "As Bilinear Form").

A score is a bilinear form u^a g_ab v^b. (9) writes the learned metric as W_a^c W_cb and calls
it (WᵀW)_ab: read with the tutorial's own summation convention, W_a^c W_cb is Σ_c W_ac W_cb =
(WW)_ab, which is not WᵀW and not even symmetric. The metric that makes the claim true is
W^c_a W_cb = Σ_c W_ca W_cb; its quadratic form is ‖Wx‖², a sum of squares, hence ≥ 0 (positive
semi-definite, as (9) says; not positive definite, as §8.2 says: W = 0 gives 0).
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from attnproof import (
    Defined,
    Equals,
    PositiveSemidefinite,
    Real,
    Scalar,
    Source,
    Tensor,
    Theorem,
)

from ._dims import TUTORIAL, d_k, n_k, n_q

a, b, c = d_k.indices("a b c")
i = n_q.index("i")
j = n_k.index("j")
delta = sp.KroneckerDelta


def total(expr: sp.Expr, *indices: sp.Idx) -> sp.Expr:
    """Σ over every value of each index."""
    return sp.Sum(expr, *((x, 0, x.upper) for x in indices))


u = Tensor("u", (d_k,))
v = Tensor("v", (d_k,))
w = Tensor("w", (d_k,))
M = Tensor("M", (d_k, d_k))
W = Tensor("W", (d_k, d_k))
x = Tensor("x", (d_k,))
alpha = Scalar("alpha", Real(-3, 3), latex=r"\alpha")
beta = Scalar("beta", Real(-3, 3), latex=r"\beta")
al, be = alpha.symbol, beta.symbol


def form(left: Callable[[sp.Idx], sp.Expr], right: Callable[[sp.Idx], sp.Expr]) -> sp.Expr:
    """B(left, right) = left^a M_ab right^b of (5); ``left``/``right`` map an index to an entry."""
    return total(left(a) * M[a, b] * right(b), a, b)


bilinear_form_linear_in_first_argument = Theorem(
    name="bilinear_form_linear_in_first_argument",
    source=Source(TUTORIAL, "§2.2 Definition (Bilinear Form)", "(3), (5)"),
    claim=Equals(
        form(lambda r: al * u[r] + be * v[r], lambda r: w[r]),
        al * form(lambda r: u[r], lambda r: w[r]) + be * form(lambda r: v[r], lambda r: w[r]),
    ),
    inputs=(u, v, w, M, alpha, beta),
    note="B(u, v) = u^a M_ab v^b of (5) satisfies (3) for every matrix M.",
)

bilinear_form_linear_in_second_argument = Theorem(
    name="bilinear_form_linear_in_second_argument",
    source=Source(TUTORIAL, "§2.2 Definition (Bilinear Form)", "(4), (5)"),
    claim=Equals(
        form(lambda r: u[r], lambda r: al * v[r] + be * w[r]),
        al * form(lambda r: u[r], lambda r: v[r]) + be * form(lambda r: u[r], lambda r: w[r]),
    ),
    inputs=(u, v, w, M, alpha, beta),
    note="B(u, v) = u^a M_ab v^b of (5) satisfies (4) for every matrix M.",
)

euclidean_metric_is_dot_product = Theorem(
    name="euclidean_metric_is_dot_product",
    source=Source(TUTORIAL, "§2.3 Example (Euclidean Metric)", "(7)"),
    claim=Equals(total(u[a] * delta(a, b) * v[b], a, b), total(u[a] * v[a], a)),
    inputs=(u, v),
    note="u^a δ_ab v^b is the standard dot product.",
)

# -- the scaled Euclidean metric is the one scaled dot-product attention uses -------------------

Q = Tensor("Q", (n_q, d_k))
K = Tensor("K", (n_k, d_k))
g = Defined("g", (a, b), delta(a, b) / sp.sqrt(d_k.symbol))  # (8)
scaled_dot_product = total(Q[i, a] * K[j, a], a) / sp.sqrt(d_k.symbol)  # (10)

scaled_euclidean_metric_gives_attention_scores = Theorem(
    name="scaled_euclidean_metric_gives_attention_scores",
    source=Source(TUTORIAL, "§2.3 Example (Scaled Euclidean Metric), §3.1.1", "(6), (8), (10)"),
    claim=Equals(total(Q[i, a] * g[a, b] * K[j, b], a, b), scaled_dot_product),
    inputs=(Q, K),
    definitions=(g,),
    note="S^ij = Q^ia g_ab K^jb with g_ab = δ_ab/√d_k is (1/√d_k) Q^ia K^ja: the metric implicit "
    "in scaled dot-product attention. The attn-tensors README states the same ('As Bilinear "
    "Form', and bilinear_form_batch(Q, K, scaled_euclidean_metric(d)) in its Quick Start).",
)

# -- (9): the learned metric -------------------------------------------------------------------

Wt = Defined("Wt", (a, c), W[c, a], latex=r"W^{T}")
WtW = Defined("WtW", (a, b), total(Wt[a, c] * W[c, b], c), latex=r"(W^{T} W)")

learned_metric_index_order = Theorem(
    name="learned_metric_index_order",
    source=Source(TUTORIAL, "§2.3 Example (Learned Bilinear Metric)", "(9)"),
    claim=Equals(total(W[a, c] * W[c, b], c), WtW[a, b]),
    inputs=(W,),
    definitions=(Wt, WtW),
    expect="refuted",
    note="As written, g_ab = W_a^c W_cb sums the second index of the first W against the first "
    "index of the second: that is (WW)_ab, not (WᵀW)_ab (they differ as soon as d_k ≥ 2).",
)

learned_metric_index_order_corrected = Theorem(
    name="learned_metric_index_order_corrected",
    source=Source(TUTORIAL, "§2.3 Example (Learned Bilinear Metric)", "(9) corrected"),
    claim=Equals(total(W[c, a] * W[c, b], c), WtW[a, b]),
    inputs=(W,),
    definitions=(Wt, WtW),
    corrects="learned_metric_index_order",
    note="g_ab = W^c_a W_cb, the first index of each W summed, is (WᵀW)_ab.",
)

quadratic_form = total(x[a] * WtW[a, b] * x[b], a, b)

learned_metric_quadratic_form_is_sum_of_squares = Theorem(
    name="learned_metric_quadratic_form_is_sum_of_squares",
    source=Source(TUTORIAL, "§2.3 Example (Learned Bilinear Metric)", "(9)"),
    claim=Equals(quadratic_form, total(total(W[c, a] * x[a], a) ** 2, c)),
    inputs=(W, x),
    definitions=(Wt, WtW),
    note="xᵀ(WᵀW)x = ‖Wx‖²: the reason WᵀW is positive semi-definite.",
)

learned_metric_positive_semidefinite = Theorem(
    name="learned_metric_positive_semidefinite",
    source=Source(TUTORIAL, "§2.3 Example (Learned Bilinear Metric)", "(9)"),
    claim=PositiveSemidefinite(WtW[a, b], a, b),
    inputs=(W,),
    definitions=(Wt, WtW),
    note="\"Parameterizing the metric as WᵀW ensures positive semi-definiteness\": "
    "xᵀ(WᵀW)x = ‖Wx‖² ≥ 0 for every x, a sum of squares. §8.2's \"positive definiteness\" "
    "(> 0 for x ≠ 0) fails at W = 0: learned_metric_positive_definite.",
)

learned_metric_symmetric = Theorem(
    name="learned_metric_symmetric",
    source=Source(TUTORIAL, "§2.1 Definition (Metric Tensor), §2.3", "(2), (9)"),
    claim=Equals(total(u[a] * WtW[a, b] * v[b], a, b), total(v[a] * WtW[a, b] * u[b], a, b)),
    inputs=(W, u, v),
    definitions=(Wt, WtW),
    unstable_in=("float16",),
    note="A metric is symmetric, so ⟨u, v⟩_g = ⟨v, u⟩_g of (2); WᵀW is. In float16 the product "
    "u_a (WᵀW)_ab overflows for entries near 100 before v_b = 0 cancels it (NaN on one side, "
    "0 on the other): a known instability of this evaluation order, declared.",
)

g_inverse = Defined("ginv", (a, b), sp.sqrt(d_k.symbol) * delta(a, b), latex="g^{-1}")

metric_lower_then_raise_index = Theorem(
    name="metric_lower_then_raise_index",
    source=Source(TUTORIAL, "§2.1 Definition (Metric Tensor), §5.1", "(2), g^{ac} g_{cb} = δ^a_b"),
    claim=Equals(total(g_inverse[a, b] * total(g[b, c] * v[c], c), b), v[a]),
    inputs=(v,),
    definitions=(g, g_inverse),
    note="For the attention metric g = δ/√d_k of §5.1, g^ab = √d_k δ^ab is its inverse: "
    "lowering an index with g and raising it with g^ab returns the vector.",
)
