"""Masks written as expressions of indices: the causal mask of (57) as the tutorial writes it,
M^ij = [j ≤ i], and causal attention as the running sum it makes of each output.

The masks of masking.py are 0/1 input tensors, any pattern at all; here the pattern is the
statement's own, so the claim can say which entries are kept.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    Defined,
    Dim,
    Equals,
    Sizes,
    Source,
    Tensor,
    Theorem,
    indicator,
    masked_softmax,
)

from ._dims import EXAMPLE_48, TUTORIAL, d_v

positions = Dim("n", Sizes(1, 8))
i, j, k = positions.indices("i j k")
b = d_v.index("b")

S = Tensor("S", (positions, positions))
V = Tensor("V", (positions, d_v))
causal = indicator(j <= i)  # (57): M^ij = 1 if j ≤ i, else 0
A = Defined("A", (i, j), masked_softmax(S[i, j], causal, j))

causal_mask_gives_future_positions_zero_weight = Theorem(
    name="causal_mask_gives_future_positions_zero_weight",
    source=Source(TUTORIAL, "§8.1 Causal Masking", "(57), 'future positions get zero weight'"),
    claim=Equals(indicator(j > i) * A[i, j], 0),
    inputs=(S,),
    definitions=(A,),
    note="With the mask of (57) written as the tutorial writes it, [j ≤ i], every weight on a "
    "position j > i is 0.",
)

causal_attention_output_is_a_running_sum = Theorem(
    name="causal_attention_output_is_a_running_sum",
    source=Source(EXAMPLE_48, "Connection to ML Applications",
                  "line 130, the causal mask 'prevents future tokens from influencing past "
                  "predictions'"),
    claim=Equals(sp.Sum(A[i, j] * V[j, b], (j, 0, j.upper)),
                 sp.Sum(sp.exp(S[i, j]) * V[j, b], (j, 0, i))
                 / sp.Sum(sp.exp(S[i, k]), (k, 0, i))),
    inputs=(S, V),
    definitions=(A,),
    note="O_i = Σ_{j ≤ i} exp(S_ij) V_j / Σ_{k ≤ i} exp(S_ik): the output at i is a running "
    "sum over positions up to i, so no later position enters it.",
)
