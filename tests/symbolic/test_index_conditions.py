"""Conditions on indices in the sum normal form: an indicator [j ≤ e] under a sum over j is the
limit Σ_{j ≤ e} only where that is exact; [c][¬c] = 0; a row that keeps an entry has no fully
masked indicator; a Piecewise in a statement becomes indicators before SymPy can fold it, and so
does a Kronecker delta on integer expressions (δ(0, j mod s)); a running sum is its step
recurrence."""

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
from attnproof.symbolic._language import as_expression
from attnproof.symbolic._normal_form import residual
from attnproof.symbolic._vocabulary import expand_vocabulary

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


def test_a_delta_on_an_integer_expression_becomes_an_indicator_and_one_on_an_index_stays():
    s = sp.Symbol("s", integer=True, positive=True)
    weights = masked_softmax(S[i, j], sp.KroneckerDelta(0, sp.Mod(j, s)), j)
    assert isinstance(weights.mask, Indicator) and not weights.has(sp.KroneckerDelta)
    kept = as_expression(sp.KroneckerDelta(j, 0) * x[j], "a delta on an index")
    assert kept.has(sp.KroneckerDelta) and not kept.has(Indicator)
    assert residual(total(sp.KroneckerDelta(j, 0) * x[j], j) - x[0]) == 0


def test_a_row_that_keeps_the_entry_at_an_end_or_at_another_index_is_never_fully_masked():
    s = sp.Symbol("s", integer=True, positive=True)
    for condition in (sp.Eq(sp.Mod(j, s), 0), sp.Eq(sp.floor(i / s), sp.floor(j / s))):
        weights = masked_softmax(S[i, j], indicator(condition), j)
        assert residual(expand_vocabulary(total(weights, j) - 1)) == 0, condition
    # [j mod s = 1] keeps nothing where s = 1: no fully masked indicator may be dropped
    emptiable = masked_softmax(S[i, j], indicator(sp.Eq(sp.Mod(j, s), 1)), j)
    assert residual(expand_vocabulary(total(emptiable, j) - 1)) != 0


def test_a_running_sum_is_its_step_recurrence():
    """Σ_{j ≤ i} = Σ_{j ≤ i−1} + the term at i, also inside a sum over another index; the
    recurrence without its step is not an identity."""
    y = Tensor("y", (n, m))
    assert residual(total(x[j], j, i) - total(x[j], j, i - 1) - x[i]) == 0
    assert residual(total(x[j], j, i) - total(x[j], j, i - 1)) != 0
    inner = sp.Sum(y[j, r] * x[i], (r, 0, r.upper), (j, 0, i))
    stepped = sp.Sum(y[j, r] * x[i], (r, 0, r.upper), (j, 0, i - 1)) + sp.Sum(
        y[i, r] * x[i], (r, 0, r.upper))
    assert residual(inner - stepped) == 0
    assert residual(1 / total(x[j], j, i) - 1 / (total(x[j], j, i - 1) + x[i])) == 0


def test_the_planted_index_masks_and_causal_states_are_settled_for_all_sizes(planted):
    by_name = planted.by_name()
    for name in ("planted_dilated_delta_rows_sum_to_one", "planted_dilated_delta_zeroes_the_rest",
                 "planted_strided_rows_sum_to_one", "planted_block_rows_sum_to_one",
                 "planted_local_window_rows_sum_to_one",
                 "planted_causal_linear_attention_step_recurrence"):
        result = prove(by_name[name])
        assert (result.status, result.method) == ("proved", "sum normal form (all sizes)"), name
    for name in ("planted_dilated_delta_off_by_one_rows_can_be_empty",
                 "planted_causal_linear_attention_reads_the_state_too_early"):
        result = prove(by_name[name])
        assert result.status == "refuted", name
        assert result.counterexample["sizes"], name
