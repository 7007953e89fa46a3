"""Planted implications from a rank property: the false one must be refuted (an exact low-rank
instance where the conclusion fails), the true one must not be.

Test fixtures, never in the catalog.
"""

import sympy as sp

from attnproof.symbolic import (
    Defined,
    Dim,
    Equals,
    GreaterOrEqual,
    Implies,
    RankAtMost,
    Sizes,
    Source,
    Tensor,
    Theorem,
    rowsum,
    softmax,
)

PLANTED = "tests/planted/kinds_implication.py"
n_q, n_k = Dim("n_q", Sizes(2, 4)), Dim("n_k", Sizes(2, 4))
i = n_q.index("i")
j = n_k.index("j")
S = Tensor("S", (n_q, n_k))
A = Defined("A", (i, j), softmax(S[i, j], j))

planted_rank_one_attention_has_a_dominant_key = Theorem(
    name="planted_rank_one_attention_has_a_dominant_key",
    source=Source(PLANTED, "planted", "rank one ⇒ some weight ≥ 1/2"),
    claim=Implies(RankAtMost(A[i, j], i, j, 1),
                  GreaterOrEqual(2 * sp.Sum(A[i, j] ** 2, (j, 0, j.upper)), 1)),
    inputs=(S,),
    definitions=(A,),
    expect="refuted",
    note="Equal scores give rank one and weights 1/n_k: Σ_j A_ij² = 1/n_k < 1/2 for n_k ≥ 3 "
    "(and = 1/2 at n_k = 2).",
)

planted_rank_one_attention_rows_sum_to_one = Theorem(
    name="planted_rank_one_attention_rows_sum_to_one",
    source=Source(PLANTED, "planted", "rank one ⇒ rows sum to 1"),
    claim=Implies(RankAtMost(A[i, j], i, j, 1), Equals(rowsum(A[i, j], j), 1)),
    inputs=(S,),
    definitions=(A,),
    note="True whatever the rank: the conclusion holds on its own.",
)
