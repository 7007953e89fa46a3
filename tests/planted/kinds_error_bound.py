"""Planted error bounds: softmax's rounding error grows with the row (its observed error reaches
a fifth of the n + 2·c_exp errors counted), so a bound counting n/16 errors must be refuted by an
observed error on every backend, and so must one that leaves out the exponentials' errors (at
two keys); the proved bound with one more error counted must hold. Test fixtures, never in the
catalog."""

from attnproof.symbolic import ErrorBound, Source, Theorem, c_exp
from attnproof.theorems import rounding

PLANTED = Source("tests/planted/kinds_error_bound.py", "planted error bounds")

planted_softmax_error_a_sixteenth_of_the_length = Theorem(
    name="planted_softmax_error_a_sixteenth_of_the_length",
    source=PLANTED,
    claim=ErrorBound(rounding.unshifted, count=rounding.n / 16),
    inputs=(rounding.S,),
    expect="refuted",
)

planted_softmax_error_bound_one_more = Theorem(
    name="planted_softmax_error_bound_one_more",
    source=PLANTED,
    claim=ErrorBound(rounding.unshifted, count=rounding.n + 2 * c_exp + 1),
    inputs=(rounding.S,),
)

# the block-wise algorithm's bound without the rescalings: as if only one block's sums rounded,
# with exp correctly rounded (a count free of c_exp, so that a backend declared with a large
# c_exp, MLX's, is held to it too)
planted_blockwise_bound_without_the_rescalings = Theorem(
    name="planted_blockwise_bound_without_the_rescalings",
    source=PLANTED,
    claim=ErrorBound(rounding.online_softmax(rounding.S[rounding.i, rounding.j],
                                             rounding.V[rounding.j, rounding.e], rounding.j,
                                             rounding.block),
                     count=2 * rounding.b + 6,
                     exponent=rounding.online_softmax_blockwise_error_bound.claim.exponent,
                     relative_to="abs-scale"),
    inputs=(rounding.S, rounding.V, rounding.block),
    expect="refuted",
)

# the bound without the exponentials' errors: at n = 2 an exp's own error (c_exp·u each) is
# already larger than γ_2; the claimed count only outgrows the error as n grows
planted_softmax_error_without_the_exponentials = Theorem(
    name="planted_softmax_error_without_the_exponentials",
    source=PLANTED,
    claim=ErrorBound(rounding.unshifted, count=rounding.n),
    inputs=(rounding.S,),
    expect="refuted",
)
