"""Planted IEEE-value theorems: the false ones must be refuted, the true ones beside them not.

Each pair differs in one format or one range end, where a checker that ignored rounding into
the format, or took x − max(x) for a plain subtraction, would get it wrong.
"""

import sympy as sp

from attnproof.symbolic import (
    Between,
    Defined,
    Dim,
    IEEEValue,
    Real,
    Sizes,
    Source,
    Tensor,
    Theorem,
    softmax,
)
from attnproof.theorems import ieee_values as ieee

PLANTED = "tests/planted/kinds_ieee.py"

# -- the −1e9 fill on a fully masked row: 1/3 in float32, NaN in float16 (−1e9 overflows) -------

planted_finite_fill_uniform_in_float16 = Theorem(
    name="planted_finite_fill_uniform_in_float16",
    source=Source(PLANTED, "planted", "a fully masked row in float16, claimed uniform"),
    claim=IEEEValue(ieee.A_fill[ieee.i, ieee.jj], sp.Rational(1, 3), formats=("float16",),
                    sizes={"n_q": 1, "n_k": 3}, at={"M": ieee.fully_masked}),
    inputs=(ieee.S, ieee.M),
    definitions=(ieee.X_fill, ieee.E_fill, ieee.A_fill),
    expect="refuted",
)

planted_finite_fill_uniform_in_float32 = Theorem(
    name="planted_finite_fill_uniform_in_float32",
    source=Source(PLANTED, "planted", "a fully masked row in float32, uniform"),
    claim=IEEEValue(ieee.A_fill[ieee.i, ieee.jj], sp.Rational(1, 3), formats=("float32",),
                    sizes={"n_q": 1, "n_k": 3}, at={"M": ieee.fully_masked}),
    inputs=(ieee.S, ieee.M),
    definitions=(ieee.X_fill, ieee.E_fill, ieee.A_fill),
)

# -- softmax without the max shift on scores up to 100: overflows in float32 at the range end --

keys = Dim("n_k", Sizes(1, 2))
j, k = keys.index("j"), keys.index("k")
x = Tensor("x", (keys,), Real(-100, 100))
A = Defined("A", (j,), softmax(x[j], j))

planted_unshifted_softmax_bounded_in_float32 = Theorem(
    name="planted_unshifted_softmax_bounded_in_float32",
    source=Source(PLANTED, "planted", "exp(x)/Σexp(x) in [0, 1] for scores up to 100"),
    claim=IEEEValue(A[j], Between(0, 1), formats=("float32",), sizes={"n_k": 2}),
    inputs=(x,),
    definitions=(A,),
    expect="refuted",
)

planted_unshifted_softmax_bounded_in_float64 = Theorem(
    name="planted_unshifted_softmax_bounded_in_float64",
    source=Source(PLANTED, "planted", "exp(x)/Σexp(x) in [0, 1] for scores up to 100"),
    claim=IEEEValue(A[j], Between(0, 1), formats=("float64",), sizes={"n_k": 2}),
    inputs=(x,),
    definitions=(A,),
)
