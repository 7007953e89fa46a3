"""Planted statistical claims and worked numbers from code: each false one must be refuted,
the true one beside it must not be."""

import sympy as sp

from attnproof.symbolic import (
    Dim,
    FromCode,
    Moments,
    Rademacher,
    Source,
    Tensor,
    Theorem,
    Variance,
)
from attnproof.theorems import statistics

PLANTED = "tests/planted/kinds_statistical.py"
d_k = Dim("d_k")
a = d_k.index("a")
q = Tensor("q", (d_k,))
k = Tensor("k", (d_k,))
dot = sp.Sum(q[a] * k[a], (a, 0, d_k.symbol - 1))

# -- statistical: the variance of an unscaled dot product is d_k, not 1 --------------------------

planted_unscaled_dot_product_variance_one = Theorem(
    name="planted_unscaled_dot_product_variance_one",
    source=Source(PLANTED, "planted", "Var(q·k) = 1 without the 1/√d_k scaling"),
    claim=Variance(dot, 1, law=Moments(0, 1)),
    inputs=(q, k),
    expect="refuted",
    note="True at d_k = 1 only: refuted exactly at d_k = 2 (variance 2).",
)

planted_scaled_dot_product_variance_one = Theorem(
    name="planted_scaled_dot_product_variance_one",
    source=Source(PLANTED, "planted", "Var(q·k/√d_k) = 1"),
    claim=Variance(dot / sp.sqrt(d_k.symbol), 1, law=Rademacher()),
    inputs=(q, k),
)

# -- worked numbers from code: the notebook's seeded demo with a wrong printed digit -------------

planted_score_scaling_printed_nine = Theorem(
    name="planted_score_scaling_printed_nine",
    source=Source(PLANTED, "planted", "raw std printed 9 instead of 8"),
    claim=FromCode(statistics.notebook_score_scaling, ("9", "1"), ("raw std", "scaled std"),
                   data=statistics.notebook_score_draws),
    inputs=(),
    expect="refuted",
)

planted_score_scaling_printed_to_one_decimal = Theorem(
    name="planted_score_scaling_printed_to_one_decimal",
    source=Source(PLANTED, "planted", "raw std 8.0, scaled std 1.0"),
    claim=FromCode(statistics.notebook_score_scaling, ("8.0", "1.0"), ("raw std", "scaled std"),
                   data=statistics.notebook_score_draws),
    inputs=(),
    unstable_in=("bfloat16",),
    note="bfloat16's 8-bit significand gives raw std 7.94, which rounds to 7.9.",
)
