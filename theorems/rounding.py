"""Floating-point error bounds for softmax, evaluated as written (tutorial (19); worked example
48, "Numerical stability"), proved for every length from the rounding model of
``symbolic/kinds/error_bound.py`` and measured on every backend and format.

The two sides of (19) are equal in exact arithmetic and differ in floating point: without the
shift every entry has relative error at most γ_{n + 2·c_exp} (but exp overflows for large
scores); with it, (1 + γ_{n + 2·c_exp})·e^(2u·spread) − 1, the spread max − min of the row
entering through the rounding of S − max. Blanchard, D. J. Higham and N. J. Higham, "Accurately
computing the log-sum-exp and softmax functions" (IMA J. Numer. Anal. 41(4), 2021), state the
first-order forms: (n + 3)u (their Theorem 3.3) and [n + 2 + 2(x_max − x_min)]u (Theorem 4.3,
normwise); with exp correctly rounded (c_exp = 1) the first-order theorems below are theirs.
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    AbsoluteErrorBound,
    Dim,
    ErrorBound,
    FirstOrderErrorBound,
    Positive,
    Sizes,
    Source,
    Tensor,
    Theorem,
    c_exp,
    c_log,
    log_error,
    online_softmax,
    rowmax,
    rowsum,
    spread,
)
from attnproof import unit_roundoff as u

from ._dims import TUTORIAL

# (19) is where the tutorial shifts softmax by the row maximum; these theorems say what the shift
# changes once softmax is evaluated in floating point
SECTION_19 = "§4.2 proof of Theorem (Temperature Limits), (19) in floating point"
FIRST_ORDER = ("§4.2 (19) in floating point, first order as Blanchard, Higham and Higham (IMA J. "
               "Numer. Anal. 41(4), 2021) state it")

rows = Dim("n_q", Sizes(1, 2))
length = Dim("n_k", Sizes(1, 512))  # long rows: the bound grows with n, the error with it
values = Dim("d_v", Sizes(1, 2))
i = rows.index("i")
j, k, m = length.indices("j k m")
e = values.index("e")
S = Tensor("S", (rows, length))
V = Tensor("V", (length, values))
n = length.symbol

unshifted = sp.exp(S[i, j]) / rowsum(sp.exp(S[i, k]), k)
shifted = (sp.exp(S[i, j] - rowmax(S[i, m], m))
           / rowsum(sp.exp(S[i, k] - rowmax(S[i, m], m)), k))

softmax_unshifted_error_bound = Theorem(
    name="softmax_unshifted_error_bound",
    source=Source(TUTORIAL, SECTION_19, "(19), left"),
    claim=ErrorBound(unshifted, count=n + 2 * c_exp),
    inputs=(S,),
)

softmax_shifted_error_bound = Theorem(
    name="softmax_shifted_error_bound",
    source=Source(TUTORIAL, SECTION_19, "(19), right"),
    claim=ErrorBound(shifted, count=n + 2 * c_exp, exponent=2 * u * spread(S[i, j], j)),
    inputs=(S,),
)

softmax_unshifted_first_order = Theorem(
    name="softmax_unshifted_first_order",
    source=Source(TUTORIAL, f"{FIRST_ORDER}: Theorem 3.3, (n + 3)u at c_exp = 1", "(19), left"),
    claim=FirstOrderErrorBound(unshifted, bound=(n + 1 + 2 * c_exp) * u),
    inputs=(S,),
)

softmax_shifted_first_order = Theorem(
    name="softmax_shifted_first_order",
    source=Source(TUTORIAL, f"{FIRST_ORDER}: Theorem 4.3, [n + 2 + 2(x_max − x_min)]u at "
                  "c_exp = 1", "(19), right"),
    claim=FirstOrderErrorBound(shifted, bound=(n + 2 * c_exp + 2 * spread(S[i, j], j)) * u),
    inputs=(S,),
)


# The attention output over signed values can cancel, so its error is bounded against its
# abs-scale Σ_j A_ij |V_je|: normalized weights times V (the tutorial's (13)), or the weighted sum
# divided once at the end, as the flash algorithm does; both count 2n + 2·c_exp errors.
weights = shifted
attention_output_error_bound = Theorem(
    name="attention_output_error_bound",
    source=Source(TUTORIAL, "§3.2 Theorem (Scaled Dot-Product Attention), in floating point",
                  "(13)"),
    claim=ErrorBound(rowsum(weights * V[j, e], j), count=2 * n + 2 * c_exp,
                     exponent=2 * u * spread(S[i, j], j), relative_to="abs-scale"),
    inputs=(S, V),
)

attention_output_divided_last_error_bound = Theorem(
    name="attention_output_divided_last_error_bound",
    source=Source(TUTORIAL, "§10.1.2 Theorem (Flash Attention Algorithm), in floating point",
                  "steps 1–3"),
    claim=ErrorBound(rowsum(sp.exp(S[i, j] - rowmax(S[i, m], m)) * V[j, e], j)
                     / rowsum(sp.exp(S[i, k] - rowmax(S[i, m], m)), k),
                     count=2 * n + 2 * c_exp, exponent=2 * u * spread(S[i, j], j),
                     relative_to="abs-scale"),
    inputs=(S, V),
)


# The online-softmax merge (67)–(68) of two halves of a row, each summarized by its maximum
# m_h, its sum of exponentials l_h and its normalized output o_h: the merged output, divided
# once at the end. Its error is bounded against its abs-scale, with |m1 − m2| entering as the
# spread does for one row.
halves = Dim("n_q", Sizes(1, 8))
h = halves.index("h")
m1, m2 = Tensor("m1", (halves,)), Tensor("m2", (halves,))
l1, l2 = Tensor("l1", (halves,), Positive(1e-2, 1e3)), Tensor("l2", (halves,), Positive(1e-2, 1e3))
o1, o2 = Tensor("o1", (halves, values)), Tensor("o2", (halves, values))
merged_max = sp.Max(m1[h], m2[h])
carried1, carried2 = sp.exp(m1[h] - merged_max) * l1[h], sp.exp(m2[h] - merged_max) * l2[h]

online_softmax_merge_error_bound = Theorem(
    name="online_softmax_merge_error_bound",
    source=Source(TUTORIAL, "§10.1.1 Proposition (Online Softmax), in floating point",
                  "(67)–(68)"),
    claim=ErrorBound((carried1 * o1[h, e] + carried2 * o2[h, e]) / (carried1 + carried2),
                     count=2 * c_exp + 6, exponent=2 * u * sp.Abs(m1[h] - m2[h]),
                     relative_to="abs-scale"),
    inputs=(m1, m2, l1, l2, o1, o2),
)


# The block-wise (flash) algorithm of §10.1.2 for every block size b: keys in ⌈n/b⌉ blocks, a
# running maximum, the running sum and output rescaled by e^(m_old − m_new) at each block and
# divided once at the end. The count grows with b + 2⌈n/b⌉ instead of n: with b = n it is the
# divided-last count 2n + 2·c_exp, and it is smallest near b = √(n(c_exp + 2)), which is why
# blocks of 16 are more accurate than one pass at n = 1024. The rescalings' roundings telescope
# (the running maximum only grows), so the spread enters as it does for one pass.
block = Dim("b", Sizes(1, 64))
b = block.symbol
number_of_blocks = sp.ceiling(n / b)
online_softmax_blockwise_error_bound = Theorem(
    name="online_softmax_blockwise_error_bound",
    source=Source(TUTORIAL, "§10.1.2 Theorem (Flash Attention Algorithm), block-wise in "
                  "floating point, every block size", "steps 1–3"),
    claim=ErrorBound(online_softmax(S[i, j], V[j, e], j, block),
                     count=2 * c_exp + 2 * b + 2 * (number_of_blocks - 1) * (c_exp + 2),
                     exponent=2 * u * spread(S[i, j], j), relative_to="abs-scale"),
    inputs=(S, V, block),
)


# The backward pass through softmax, (43): dS_ij = A_ij (dA_ij − Σ_l A_il dA_il) with
# dA_ij = Σ_e G_ie V_je (37) and A the shifted softmax, each evaluated as written. The
# difference cancels (its terms have either sign), so the bound is against the abs-scale
# A_ij (|dA_ij| + Σ_l A_il |dA_il|), |dA| = Σ_e |G_ie||V_je|: the softmax's n + 2·c_exp errors
# twice (as the outer factor and inside the weighted sum), the weighted sum's n − 1 additions
# and its product, the d_v of dA, the subtraction and the outer product.
G = Tensor("G", (rows, values))  # the upstream gradient ∂L/∂O
f = values.index("f")
l_ = length.index("l")


def weight(key: sp.Idx) -> sp.Expr:
    return (sp.exp(S[i, key] - rowmax(S[i, m], m))
            / rowsum(sp.exp(S[i, k] - rowmax(S[i, m], m)), k))


score_gradient = weight(j) * (rowsum(G[i, e] * V[j, e], e)
                              - rowsum(weight(l_) * rowsum(G[i, f] * V[l_, f], f), l_))
attention_backward_score_gradient_error_bound = Theorem(
    name="attention_backward_score_gradient_error_bound",
    source=Source(TUTORIAL, "§6.5 Theorem (Attention Backward Pass), in floating point",
                  "(43) with (37)"),
    claim=ErrorBound(score_gradient, count=3 * n + 4 * c_exp + values.symbol + 2,
                     exponent=4 * u * spread(S[i, j], j), relative_to="abs-scale"),
    inputs=(S, V, G),
)

# dV_je = Σ_i A_ij G_ie, (38): positive weights times a signed gradient, summed over the rows,
# so the largest of the rows' spreads bounds the exponent
value_gradient = rowsum(weight(j) * G[i, e], i)
attention_backward_value_gradient_error_bound = Theorem(
    name="attention_backward_value_gradient_error_bound",
    source=Source(TUTORIAL, "§6.5 Theorem (Attention Backward Pass), in floating point",
                  "(38)"),
    claim=ErrorBound(value_gradient, count=n + 2 * c_exp + rows.symbol,
                     exponent=rowmax(2 * u * spread(S[i, j], j), i), relative_to="abs-scale"),
    inputs=(S, G),
)


# Log-sum-exp, unshifted and shifted by the row maximum (the lse of (62)–(64), the smooth
# maximum of §4.2): a value that passes through log has an absolute bound. Written out: the
# sum is off by n − 1 + c_exp roundings (and, shifted, e^(±u·spread)); log moves that by at most
# λ_k + X, then rounds once relative to its result; the shifted form adds the maximum back once.
lse_unshifted = sp.log(rowsum(sp.exp(S[i, k]), k))
lse_shifted = rowmax(S[i, m], m) + sp.log(rowsum(sp.exp(S[i, k] - rowmax(S[i, m], m)), k))
sum_errors = n - 1 + c_exp

lse_unshifted_error_bound = Theorem(
    name="lse_unshifted_error_bound",
    source=Source(TUTORIAL, "§9.2 Theorem (Hopfield Update = Attention), lse in floating point",
                  "(62)"),
    claim=AbsoluteErrorBound(lse_unshifted, bound=log_error(sum_errors) * (1 + c_log * u)
                             + c_log * u * sp.Abs(lse_unshifted)),
    inputs=(S,),
)

lse_shifted_error_bound = Theorem(
    name="lse_shifted_error_bound",
    source=Source(TUTORIAL, "§9.2 Theorem (Hopfield Update = Attention), lse in floating point",
                  "(62)"),
    claim=AbsoluteErrorBound(
        lse_shifted,
        bound=((log_error(sum_errors) + u * spread(S[i, j], j)) * (1 + c_log * u)
               + c_log * u * sp.Abs(lse_shifted - rowmax(S[i, m], m))) * (1 + u)
        + u * sp.Abs(lse_shifted)),
    inputs=(S,),
)

lse_unshifted_first_order = Theorem(
    name="lse_unshifted_first_order",
    source=Source(TUTORIAL, f"{FIRST_ORDER}: log-sum-exp, u|y| + (n + 1)u at c_exp = c_log = 1",
                  "(62)"),
    claim=FirstOrderErrorBound(lse_unshifted, bound=c_log * u * sp.Abs(lse_unshifted)
                               + (n + c_exp) * u, relative_to="absolute"),
    inputs=(S,),
)
