"""Temperature limits of attention and its entropy (tutorial §4.2–§4.3; worked example 48).

(17) says softmax(S/T) tends to the one-hot vector of the argmax as T → 0. Its proof assumes a
unique maximum, and with a tie the statement fails: the row (0, 0) gives 1/2 on each tied
maximum at every temperature, so the limit is 1/2, not 1. The limit is the indicator of being
a maximum divided by the number of maxima; with a unique maximum that is (17). Worked example
48's "softmax is a differentiable approximation to argmax" is the same claim and fails the same
way. (18), the uniform limit as T → ∞, holds for every row. Entropy follows: it tends to
log(number of maxima) as T → 0 (0 for a unique maximum: the delta distribution of (20), whose
entropy is 0 because x log x → 0) and to log n_k as T → ∞.
"""

from __future__ import annotations

import sympy as sp

from attnproof import Limit, Positive, Scalar, Source, Tensor, Theorem, entropy, rowmax, softmax

from ._dims import EXAMPLE_48, TUTORIAL, n_k, n_q

i = n_q.index("i")
j, k, m = n_k.indices("j k m")
S = Tensor("S", (n_q, n_k))
T = Scalar("T", Positive(1e-3, 1e3))
A = softmax(S[i, j], j, 1 / T.symbol)  # (16)
H = entropy(A, j)  # (20)

LIMITS = "§4.2 Theorem (Temperature Limits)"
ENTROPY = "§4.3 Definition (Attention Entropy)"


def is_maximum(entry: sp.Expr, over: sp.Idx) -> sp.Expr:
    """1 where ``entry`` is a maximum of its row over ``over``, else 0."""
    return sp.Piecewise((1, sp.Eq(entry, rowmax(entry.xreplace({over: m}), m))), (0, True))


one_hot_of_argmax = is_maximum(S[i, j], j)  # (17) as written: 1 if j = argmax_k S_ik
maxima = sp.Sum(is_maximum(S[i, k], k), (k, 0, n_k.symbol - 1))  # how many entries tie

hard_attention_limit = Theorem(
    name="hard_attention_limit",
    source=Source(TUTORIAL, LIMITS, "(17)"),
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax, row=S[i, j]),
    inputs=(S, T),
    expect="refuted",
    note="False with a tied maximum: for the row (0, 0) every temperature gives 1/2 on each "
    "entry, so the limit is 1/2, not 1. The proof below (17) assumes a unique maximum.",
)

hard_attention_limit_with_ties = Theorem(
    name="hard_attention_limit_with_ties",
    source=Source(TUTORIAL, LIMITS, "(17), corrected for ties"),
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax / maxima, row=S[i, j]),
    inputs=(S, T),
    corrects="hard_attention_limit",
    note="The limit spreads the weight equally over the tied maxima: 1/(number of maxima) on "
    "each, 0 elsewhere.",
)

hard_attention_limit_unique_maximum = Theorem(
    name="hard_attention_limit_unique_maximum",
    source=Source(TUTORIAL, LIMITS, "(17) with the unique maximum its proof assumes, (19)"),
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
    corrects="hard_attention_limit",
    note="(17) as its proof reads it: with a unique maximum j*, every other weight is "
    "exp(−(S_ij* − S_ij)/T)/(…) → 0.",
)

uniform_attention_limit = Theorem(
    name="uniform_attention_limit",
    source=Source(TUTORIAL, LIMITS, "(18)"),
    claim=Limit(A, T.symbol, sp.oo, 1 / n_k.symbol, row=S[i, j]),
    inputs=(S, T),
)

softmax_approximates_argmax = Theorem(
    name="softmax_approximates_argmax",
    source=Source(EXAMPLE_48, "Notes, Part 2; Connection to Linear Algebra Theory",
                  "lines 122, 132"),
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax, row=S[i, j]),
    inputs=(S, T),
    expect="refuted",
    note="'A differentiable approximation to argmax' read as its limit: softmax(S/T) tends to "
    "the one-hot argmax as T → 0. As (17), false with ties: the tied maxima share the weight.",
)

softmax_approximates_argmax_unique_maximum = Theorem(
    name="softmax_approximates_argmax_unique_maximum",
    source=Source(EXAMPLE_48, "Notes, Part 2; Connection to Linear Algebra Theory",
                  "lines 122, 132, for a unique maximum"),
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
    corrects="softmax_approximates_argmax",
    note="True when the row has a unique maximum; with ties the limit is their average "
    "(hard_attention_limit_with_ties).",
)

x = Scalar("x", Positive(1e-3, 1))

zero_log_zero_is_zero = Theorem(
    name="zero_log_zero_is_zero",
    source=Source(TUTORIAL, ENTROPY, "(20), 'H = 0: Delta distribution'"),
    claim=Limit(x.symbol * sp.log(x.symbol), x.symbol, 0, 0, rate=sp.sqrt(x.symbol)),
    inputs=(x,),
    note="The convention 0·log 0 = 0 that gives a delta distribution entropy 0 in (20) is this "
    "limit; |x log x| ≤ √x on (0, 1] is the rate checked numerically.",
)

entropy_vanishes_at_zero_temperature = Theorem(
    name="entropy_vanishes_at_zero_temperature",
    source=Source(TUTORIAL, ENTROPY, "(20), 'H = 0: Delta distribution', with (17)"),
    claim=Limit(H, T.symbol, 0, 0, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
    note="With a unique maximum, hard attention is a delta distribution and its entropy 0.",
)

entropy_at_zero_temperature_counts_maxima = Theorem(
    name="entropy_at_zero_temperature_counts_maxima",
    source=Source(TUTORIAL, ENTROPY, "(20) as T → 0, ties included"),
    claim=Limit(H, T.symbol, 0, sp.log(maxima), row=S[i, j]),
    inputs=(S, T),
    note="With ties the zero-temperature limit is uniform over the maxima, entropy log of "
    "their number.",
)

entropy_at_infinite_temperature = Theorem(
    name="entropy_at_infinite_temperature",
    source=Source(TUTORIAL, ENTROPY, "(20), 'H = log(n_k): uniform distribution', with (18)"),
    claim=Limit(H, T.symbol, sp.oo, sp.log(n_k.symbol), row=S[i, j]),
    inputs=(S, T),
)
