"""Planted index arithmetic: split heads read at the flat position h·D + c (and through a
flat index over three factors) must not be refuted, the transposed layout c·H + h must be; the
hard-attention limit as the one-hot vector of the *first* maximum (a product over earlier keys)
must be refuted with ties and not with a unique maximum. Test fixtures, never in the catalog."""

import sympy as sp

from attnproof import (
    Dim,
    Equals,
    Limit,
    Sizes,
    Source,
    Tensor,
    Theorem,
    flat,
    indicator,
    rowmax,
)
from attnproof.theorems import temperature_limits as limits

PLANTED = Source("tests/planted/index_arithmetic.py", "planted index arithmetic")
heads, per_head, tokens = Dim("H", Sizes(1, 4)), Dim("D", Sizes(1, 4)), Dim("T", Sizes(1, 5))
H, D, T = heads.symbol, per_head.symbol, tokens.symbol
h, c, t = heads.index("h"), per_head.index("c"), tokens.index("t")
X = Tensor("X", (tokens, flat(heads, per_head)))  # (T, H·D), head h's feature c at h·D + c
W = Tensor("W", (heads, per_head))
X_flat = Tensor("X_flat", (flat(heads, tokens, per_head),))  # (H, T, D) laid out flat

planted_split_heads_reads_h_times_d_plus_c = Theorem(
    name="planted_split_heads_reads_h_times_d_plus_c",
    source=PLANTED,
    claim=Equals(sp.Sum(X[t, h * D + c] * W[h, c], (c, 0, D - 1)),
                 sp.Sum(W[h, c] * X[t, h * D + c], (c, 0, D - 1))),
    inputs=(X, W),
)

planted_flat_index_over_three_factors = Theorem(
    name="planted_flat_index_over_three_factors",
    source=PLANTED,
    claim=Equals(X_flat[D * T * h + D * t + c] * W[h, c], W[h, c] * X_flat[D * T * h + D * t + c]),
    inputs=(X_flat, W),
)

planted_split_heads_in_the_transposed_layout = Theorem(
    name="planted_split_heads_in_the_transposed_layout",
    source=PLANTED,
    claim=Equals(X[t, h * D + c], X[t, c * H + h]),
    inputs=(X,),
    expect="refuted",
)

i, j, k, m = limits.i, limits.j, limits.k, limits.m
S = limits.S
row_max = rowmax(S[i, m], m)
first_maximum = (indicator(sp.Eq(S[i, j], row_max))
                 * sp.Product(1 - indicator(sp.Eq(S[i, k], row_max)), (k, 0, j - 1)))

planted_hard_attention_limit_is_the_first_maximum = Theorem(
    name="planted_hard_attention_limit_is_the_first_maximum",
    source=PLANTED,
    claim=Limit(limits.A, limits.T.symbol, 0, first_maximum, row=S[i, j]),
    inputs=(S, limits.T),
    expect="refuted",
)

planted_hard_attention_limit_is_the_first_of_a_unique_maximum = Theorem(
    name="planted_hard_attention_limit_is_the_first_of_a_unique_maximum",
    source=PLANTED,
    claim=Limit(limits.A, limits.T.symbol, 0, first_maximum, row=S[i, j], unique_maximum=True),
    inputs=(S, limits.T),
)
