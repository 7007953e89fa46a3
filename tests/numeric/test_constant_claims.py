"""Claims with no inputs: their sides are constants, and every format still has a verdict.

A constant side is a literal of the format (rounded into it once), and a batch of a claim with no
inputs holds one instance; before this, the lower formats' proved-bound comparison asked the
first input for the batch's size and ended in ``StopIteration``.
"""

import pytest
import sympy as sp

from attnproof.numeric import NumericStatus, check
from attnproof.symbolic import Equals, Source, Theorem

SOURCE = Source("constants", "§1")
LOWER_FORMATS = ("float32", "float16", "bfloat16")

def constant(name: str, lhs, rhs, expect: str = "holds", inputs=()) -> Theorem:
    return Theorem(name, SOURCE, Equals(lhs, rhs), inputs=inputs, expect=expect)


TRUE_CONSTANTS = [
    constant("cube_root_of_eight", sp.root(8, 3), 2),
    constant("log_of_product", sp.log(6), sp.log(2) + sp.log(3)),
    constant("cosine_of_third_pi", sp.cos(sp.pi / 3), sp.Rational(1, 2)),
]
FALSE_CONSTANTS = [
    constant("two_cubed_is_nine", sp.Integer(2) ** 3, 9, expect="refuted"),
    constant("log_of_sum_is_sum_of_logs", sp.log(5), sp.log(2) + sp.log(3), expect="refuted"),
]


@pytest.mark.parametrize("dtype", ("float64", *LOWER_FORMATS))
@pytest.mark.parametrize("theorem", TRUE_CONSTANTS, ids=lambda t: t.name)
def test_a_true_constant_claim_passes_in_every_format(theorem, dtype):
    record = check(theorem, "numpy", dtype)
    assert record.status is NumericStatus.PASSED, record.reason


@pytest.mark.parametrize("theorem", FALSE_CONSTANTS, ids=lambda t: t.name)
def test_a_false_constant_claim_is_refuted_in_float64(theorem):
    record = check(theorem, "numpy", "float64")
    assert record.status is NumericStatus.FAILED, record.reason


@pytest.mark.parametrize("dtype", LOWER_FORMATS)
@pytest.mark.parametrize("theorem", FALSE_CONSTANTS, ids=lambda t: t.name)
def test_a_false_constant_claim_never_errs_in_a_lower_format(theorem, dtype):
    record = check(theorem, "numpy", dtype)
    assert record.status is not NumericStatus.ERROR, record.reason
