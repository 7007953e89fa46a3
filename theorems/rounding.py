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

import sympy as sp

from attnproof import (
    Dim,
    ErrorBound,
    FirstOrderErrorBound,
    Positive,
    Sizes,
    Source,
    Tensor,
    Theorem,
    c_exp,
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
