"""Masked attention (tutorial §8.1, worked example 48's notes): softmax over the kept keys only.

A mask M holds 0 (masked) or 1 (kept) per score. The tutorial applies it as S + (1 − M)(−∞)
before softmax (57); attnproof's ``masked_softmax`` is that limit written exactly, and it gives a
fully masked row zero weights, as PyTorch's scaled_dot_product_attention gives since 2.5 (a
plain softmax after adding −∞ gives 0/0 = NaN there). Numeric checks draw fully masked
rows on purpose (see ``numeric/_strategies.py``).
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    AtLeast,
    Defined,
    Equals,
    Mask,
    Positive,
    Scalar,
    Source,
    Tensor,
    Theorem,
    fully_masked,
    masked_softmax,
    rowmax,
    rowmin,
)

from . import attention_backward as bw
from ._dims import TUTORIAL, n_k, n_q

EXAMPLE_48 = "002_ef3c412201bbbc34.txt"

i, m = n_q.indices("i m")
j, n = n_k.indices("j n")
delta = sp.KroneckerDelta

S = Tensor("S", (n_q, n_k))
M = Tensor("M", (n_q, n_k), Mask())
G = Tensor("G", (n_q, n_k))  # upstream gradient ∂L/∂A
T = Scalar("T", Positive(1e-3, 1e3), latex="T")
A = Defined("A", (i, j), masked_softmax(S[i, j], M[i, j], j, 1 / T.symbol))


def _rowsum(expr: sp.Expr) -> sp.Expr:
    return sp.Sum(expr, (j, 0, n_k.symbol - 1))


masking_zero_weight = Theorem(
    name="masking_zero_weight",
    source=Source(TUTORIAL, "§8.1 Causal Masking", "(57)"),
    claim=Equals((1 - M[i, j]) * A[i, j], 0),
    inputs=(S, M, T),
    definitions=(A,),
    note="After softmax, exp(−∞) = 0, so masked positions get zero weight: for any mask, "
    "not only the causal one.",
)

masking_softmax_jacobian = Theorem(
    name="masking_softmax_jacobian",
    source=Source(TUTORIAL, "§6.3 under the mask of §8.1", "(39), (57)"),
    claim=Equals(
        sp.Derivative(A[i, j], S[m, n]),
        delta(i, m) * A[i, j] * (delta(j, n) - A[i, n]) / T.symbol,
    ),
    inputs=(S, M, T),
    definitions=(A,),
    note="The Jacobian (39) holds unchanged for masked weights, fully masked rows included "
    "(both sides are 0 there).",
)

masking_softmax_gradient = Theorem(
    name="masking_softmax_gradient",
    source=Source(TUTORIAL, "§6.3 Theorem (Softmax Gradient) under the mask of §8.1",
                  "(42)–(43), (57)"),
    claim=Equals(
        sp.Derivative(sp.Sum(G[i, j] * A[i, j], (i, 0, n_q.symbol - 1),
                             (j, 0, n_k.symbol - 1)), S[m, n]),
        A[m, n] * (G[m, n] - sp.Sum(A[m, j] * G[m, j], (j, 0, n_k.symbol - 1))) / T.symbol,
    ),
    inputs=(S, M, G, T),
    definitions=(A,),
    note="The backward pass through a masked softmax needs no special case: masked entries "
    "and fully masked rows get zero gradient.",
)

masking_rows_sum_to_one = Theorem(
    name="masking_rows_sum_to_one",
    source=Source(EXAMPLE_48, "Numerical and Implementation Notes, Masking & indexing"),
    claim=Equals(_rowsum(A[i, j]), 1),
    inputs=(S, M, T),
    definitions=(A,),
    expect="refuted",
    note="Claim: after masking, rows sum to ~1. A row whose every key is masked has no weight "
    "to sum: 0 with zero weights, NaN with −∞ added before softmax, 1 with the notebook's "
    "finite −1e9 (a uniform row over masked keys).",
)

masking_rows_sum_to_one_unless_fully_masked = Theorem(
    name="masking_rows_sum_to_one_unless_fully_masked",
    source=Source(EXAMPLE_48, "Masking & indexing, corrected"),
    claim=Equals(_rowsum(A[i, j]), 1 - fully_masked(M[i, j], j)),
    inputs=(S, M, T),
    definitions=(A,),
    corrects="masking_rows_sum_to_one",
    note="Rows sum to 1, except a fully masked row, which sums to 0: Π(1 − M) is 1 exactly "
    "when every key of the row is masked.",
)


# -- the attention backward pass of §6.5 under a mask, as a causal attention kernel runs it ---

l_, b, c = bw.l_, bw.b, bw.c
A_masked = Defined("A", (i, j), masked_softmax(bw.S[i, j], M[i, j], j))
O_masked = Defined("O", (i, b), bw.total(A_masked[i, j] * bw.V[j, b], j))
dS_masked = Defined("dS", (i, j),  # (43)
                    A_masked[i, j] * (bw.dA[i, j] - bw.total(A_masked[i, n] * bw.dA[i, n], n)))
masked_forward = (bw.S, A_masked, O_masked, bw.dA, dS_masked)
masked_inputs = (bw.Q, bw.K, bw.V, bw.G, M)
masked_loss = bw.total(bw.G[i, b] * O_masked[i, b], i, b)
MASKED_65 = "§6.5 Theorem (Attention Backward Pass) under the mask of §8.1"

masking_attention_backward_dv = Theorem(
    name="masking_attention_backward_dv",
    source=Source(TUTORIAL, MASKED_65, "(38), (57)"),
    claim=Equals(sp.Derivative(masked_loss, bw.V[n, c]),
                 bw.total(A_masked[i, n] * bw.G[i, c], i)),
    inputs=masked_inputs,
    definitions=masked_forward,
)

masking_attention_backward_dq = Theorem(
    name="masking_attention_backward_dq",
    source=Source(TUTORIAL, MASKED_65, "(46), (57)"),
    claim=Equals(sp.Derivative(masked_loss, bw.Q[m, l_]),
                 bw.scale * bw.total(dS_masked[m, j] * bw.K[j, l_], j)),
    inputs=masked_inputs,
    definitions=masked_forward,
)

masking_attention_backward_dk = Theorem(
    name="masking_attention_backward_dk",
    source=Source(TUTORIAL, MASKED_65, "(47), (57)"),
    claim=Equals(sp.Derivative(masked_loss, bw.K[n, l_]),
                 bw.scale * bw.total(dS_masked[i, n] * bw.Q[i, l_], i)),
    inputs=masked_inputs,
    definitions=masked_forward,
    note="The closed forms (46)–(47) hold unchanged with masked weights: masked scores and "
    "fully masked rows pass no gradient to Q or K.",
)


# -- the output within the kept values, whatever the scores ------------------------------------

A_any = Defined("A", (i, j), masked_softmax(S[i, j], M[i, j], j))
O_any = Defined("O", (i, b), bw.total(A_any[i, j] * bw.V[j, b], j))
keeps_a_key = 1 - fully_masked(M[i, j], j)
# the largest and the smallest value of feature b over the keys row i keeps: a masked key's
# entry is replaced by the smallest (largest) of all, which never sets the extreme of a row
# that keeps a key
largest_kept = rowmax(M[i, j] * bw.V[j, b] + (1 - M[i, j]) * rowmin(bw.V[n, b], n), j)
smallest_kept = rowmin(M[i, j] * bw.V[j, b] + (1 - M[i, j]) * rowmax(bw.V[n, b], n), j)
HULL = "§3.2 (12) under the mask of §8.1"

masking_output_below_largest_kept_value = Theorem(
    name="masking_output_below_largest_kept_value",
    source=Source(TUTORIAL, HULL, "(12), (57)"),
    claim=AtLeast(keeps_a_key * largest_kept, O_any[i, b]),
    inputs=(S, M, bw.V),
    definitions=(A_any, O_any),
    note="The output of masked attention is a weighted average of the kept value rows, for "
    "any scores S: in every feature b it is at most the largest v_jb over the keys the row "
    "keeps (a fully masked row, whose output is 0, states 0 ≤ 0). What an attention kernel's "
    "output must satisfy whatever rounding its scores suffer (attnproof kernels).",
)

masking_output_above_smallest_kept_value = Theorem(
    name="masking_output_above_smallest_kept_value",
    source=Source(TUTORIAL, HULL, "(12), (57)"),
    claim=AtLeast(O_any[i, b], keeps_a_key * smallest_kept),
    inputs=(S, M, bw.V),
    definitions=(A_any, O_any),
    note="The lower half: for any scores, o_ib is at least the smallest v_jb over the kept "
    "keys.",
)
