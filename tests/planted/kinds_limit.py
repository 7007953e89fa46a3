"""Planted limits: a false variant of each shape the limit kind decides must be refuted, the
true one beside it must not be. Test fixtures, never in the catalog."""

import sympy as sp

from attnproof.symbolic import Dim, Limit, Positive, Scalar, Source, Tensor, Theorem, softmax
from attnproof.theorems.temperature_limits import one_hot_of_argmax

PLANTED = Source("tests/planted/kinds_limit.py", "planted limits")
n_q, n_k = Dim("n_q"), Dim("n_k")
i, j = n_q.index("i"), n_k.index("j")
S = Tensor("S", (n_q, n_k))
T = Scalar("T", Positive(1e-3, 1e3))
A = softmax(S[i, j], j, 1 / T.symbol)

# high temperature gives uniform weights, not hard attention
planted_uniform_limit_is_one_hot = Theorem(
    name="planted_uniform_limit_is_one_hot",
    source=PLANTED,
    claim=Limit(A, T.symbol, sp.oo, one_hot_of_argmax, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
    expect="refuted",
)

# zero temperature with a unique maximum: hard attention, true
planted_zero_temperature_is_one_hot = Theorem(
    name="planted_zero_temperature_is_one_hot",
    source=PLANTED,
    claim=Limit(A, T.symbol, 0, one_hot_of_argmax, row=S[i, j], unique_maximum=True),
    inputs=(S, T),
)

x = Scalar("x", Positive(1e-3, 1))

# x log x tends to 0, not to −1
planted_x_log_x_tends_to_minus_one = Theorem(
    name="planted_x_log_x_tends_to_minus_one",
    source=PLANTED,
    claim=Limit(x.symbol * sp.log(x.symbol), x.symbol, 0, -1, rate=sp.sqrt(x.symbol)),
    inputs=(x,),
    expect="refuted",
)
