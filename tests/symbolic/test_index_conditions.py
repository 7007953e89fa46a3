"""Conditions on indices in the sum normal form: an indicator [j ≤ e] under a sum over j is the
limit Σ_{j ≤ e} only where that is exact; [c][¬c] = 0; a row that keeps an entry has no fully
masked indicator; a Piecewise in a statement becomes indicators before SymPy can fold it."""

import sympy as sp

from attnproof.symbolic import (
    Dim,
    Equals,
    Indicator,
    Sizes,
    Source,
    Tensor,
    Theorem,
    indicator,
    masked_softmax,
    prove,
)
from attnproof.symbolic._normal_form import residual

n, m = Dim("n", Sizes(1, 8)), Dim("m", Sizes(1, 8))
i, j, k = n.indices("i j k")
r = m.index("r")
x, S = Tensor("x", (n,)), Tensor("S", (n, n))
HERE = Source("tests/symbolic/test_index_conditions.py", "index conditions")


def total(expr, index, upper=None):
    return sp.Sum(expr, (index, 0, index.upper if upper is None else upper))


def test_an_indicator_under_a_sum_becomes_its_limit():
    assert residual(total(indicator(j <= i) * x[j], j) - total(x[j], j, i)) == 0
    assert residual(total(indicator(j < i) * x[j], j) - total(x[j], j, i - 1)) == 0
    assert residual(total(indicator(j >= i) * x[j], j)
                    - sp.Sum(x[j], (j, i, j.upper))) == 0


def test_a_limit_that_may_leave_the_range_is_not_taken():
    """r runs over another dimension: [j ≤ r] is not Σ_{j ≤ r} when r may exceed n − 1."""
    narrowed = total(indicator(j <= r) * x[j], j) - total(x[j], j, r)
    assert residual(narrowed) != 0


def test_an_indicator_and_its_negation_vanish_and_each_is_its_own_square():
    assert residual(indicator(j <= i) * indicator(j > i) * x[j]) == 0
    assert residual(indicator(j <= i) ** 3 - indicator(j <= i)) == 0
    assert residual(indicator(j <= i) * indicator(j >= i) * x[j]) != 0


def test_a_piecewise_mask_is_rewritten_into_indicators_and_stays_a_mask():
    causal = sp.Piecewise((1, j <= i), (0, True))
    weights = masked_softmax(S[i, j], causal, j)
    assert isinstance(weights.mask, Indicator) and not weights.has(sp.Piecewise)
    claim = Equals(sp.Sum(weights, (j, 0, j.upper)), 1)
    theorem = Theorem(name="causal_rows", source=HERE, claim=claim, inputs=(S,))
    assert prove(theorem).status == "proved"


def test_a_false_mask_statement_is_refuted():
    """Rows keep only the entries j > i: the last row keeps nothing and sums to 0."""
    weights = masked_softmax(S[i, j], indicator(j > i), j)
    claim = Equals(sp.Sum(weights, (j, 0, j.upper)), 1)
    theorem = Theorem(name="future_rows", source=HERE, claim=claim, inputs=(S,),
                      expect="refuted")
    assert prove(theorem).status == "refuted"
