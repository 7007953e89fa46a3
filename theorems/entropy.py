"""Attention entropy (tutorial §4.3; theory notebook, entropy demos).

(20)'s bullets are checked for every distribution: H ≥ 0, H ≤ log n_k, the uniform distribution
reaches log n_k, and log n_k − H is the KL divergence from the uniform distribution. The
normalized entropy H/log n_k is 0/0 for a single key (n_k = 1), so "∈ [0, 1]" as written is
false there (normalized_entropy_in_unit_interval in ieee_values.py: NaN in every format); for
n_k ≥ 2 it holds and is checked. "H = 0 for a delta distribution" needs 0·log 0 = 0, a limit
(listed in docs/coverage.md).
"""

from __future__ import annotations

import sympy as sp

from attnproof import (
    AtLeast,
    Defined,
    Dim,
    EntropyTerms,
    Equals,
    Gibbs,
    GreaterOrEqual,
    Simplex,
    Sizes,
    Source,
    Tensor,
    Theorem,
    entropy,
    kl,
)

from ._dims import TUTORIAL, n_k, n_q

i = n_q.index("i")
j = n_k.index("j")
n = n_k.symbol

p = Tensor("p", (n_q, n_k), Simplex())
U = Defined("U", (i, j), 1 / n, latex="U")  # the uniform distribution 1/n_k
H = entropy(p[i, j], j)
SECTION = "§4.3 Definition (Attention Entropy)"

entropy_of_uniform_is_log_n = Theorem(
    name="entropy_of_uniform_is_log_n",
    source=Source(TUTORIAL, SECTION, "(20), 'H = log(n_k): uniform distribution'"),
    claim=Equals(entropy(U[i, j], j), sp.log(n)),
    inputs=(p,),
    definitions=(U,),
)

entropy_gap_is_kl_from_uniform = Theorem(
    name="entropy_gap_is_kl_from_uniform",
    source=Source(TUTORIAL, SECTION, "(20), H ≤ log(n_k)"),
    claim=Equals(sp.log(n) - H, kl(p[i, j], U[i, j], j)),
    inputs=(p,),
    definitions=(U,),
    note="log n_k − H(p) = KL(p‖uniform) ≥ 0: why the uniform distribution has the largest "
    "entropy.",
)

entropy_at_most_log_n = Theorem(
    name="entropy_at_most_log_n",
    source=Source(TUTORIAL, SECTION, "(20), 'H = log(n_k)' as the largest value"),
    claim=GreaterOrEqual(sp.log(n), H, by=(Gibbs(p[i, j], U[i, j], j),)),
    inputs=(p,),
    definitions=(U,),
    note="Also the theory notebook's entropy demos (3, 13, 23): the diffuse row [1/3, 1/3, 1/3] "
    "has entropy log 3, the most any distribution over three keys has.",
)

entropy_nonnegative = Theorem(
    name="entropy_nonnegative",
    source=Source(TUTORIAL, SECTION, "(20), 'H = 0' as the smallest value"),
    claim=GreaterOrEqual(H, 0, by=(EntropyTerms(p[i, j], j),)),
    inputs=(p,),
)

n_k2 = Dim("n_k", Sizes(2, 8))  # at least two keys
j2 = n_k2.index("j")
p2 = Tensor("p", (n_q, n_k2), Simplex())
H2 = entropy(p2[i, j2], j2)

normalized_entropy_at_most_one = Theorem(
    name="normalized_entropy_at_most_one",
    source=Source(TUTORIAL, SECTION, "normalized entropy, for n_k ≥ 2"),
    claim=AtLeast(1, H2 / sp.log(n_k2.symbol)),
    inputs=(p2,),
    corrects="normalized_entropy_in_unit_interval",
    note="For n_k ≥ 2 keys, H/log n_k ≤ 1. With one key the ratio is 0/0 (log 1 = 0, H = 0): "
    "'∈ [0, 1]' as written fails there: it is NaN in every format "
    "(normalized_entropy_in_unit_interval).",
)

normalized_entropy_nonnegative = Theorem(
    name="normalized_entropy_nonnegative",
    source=Source(TUTORIAL, SECTION, "normalized entropy, for n_k ≥ 2"),
    claim=AtLeast(H2 / sp.log(n_k2.symbol), 0),
    inputs=(p2,),
    corrects="normalized_entropy_in_unit_interval",
    note="For n_k ≥ 2 keys, H/log n_k ≥ 0 (0/0 with one key, as above).",
)
