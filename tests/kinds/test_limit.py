"""The limit kind: its symbolic route, exact refutation, numeric route and declaration checks."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric._search import search
from attnproof.symbolic import (
    FLOAT16,
    Dim,
    Limit,
    Positive,
    Scalar,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    discover,
    prove,
    softmax,
    statement_latex,
)
from attnproof.theorems import temperature_limits as limits
from tests.backends import require_backend

PLANTED = discover([Path(__file__).resolve().parents[1] / "planted"]).by_name()
SOURCE = Source("test", "unit")


def test_ties_refute_hard_attention_at_the_row_zero_zero():
    result = prove(limits.hard_attention_limit)
    assert result.status == "refuted"
    example = result.counterexample
    assert example["values"] == {"S[0, 0]": "0", "S[0, 1]": "0"}
    assert (example["limit"], example["claimed"]) == ("1/2", "1")


def test_the_corrections_are_proved_for_sizes_up_to_three():
    for theorem in (limits.hard_attention_limit_with_ties,
                    limits.hard_attention_limit_unique_maximum, limits.uniform_attention_limit):
        result = prove(theorem)
        assert result.status == "proved-bounded", result.method
        assert result.max_size == 3
        assert "every order of the row's entries" in result.method


def test_a_scalar_limit_is_proved_for_every_value():
    result = prove(limits.zero_log_zero_is_zero)
    assert result.status == "proved"
    assert "Gruntz" in result.method


@pytest.mark.parametrize(("name", "status"), [
    ("planted_uniform_limit_is_one_hot", "refuted"),
    ("planted_x_log_x_tends_to_minus_one", "refuted"),
    ("planted_zero_temperature_is_one_hot", "proved-bounded"),
])
def test_planted_variants(name, status):
    assert prove(PLANTED[name]).status == status


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize(("theorem", "passes"), [
    (limits.hard_attention_limit, False),
    (limits.hard_attention_limit_with_ties, True),
    (PLANTED["planted_uniform_limit_is_one_hot"], False),
    (PLANTED["planted_zero_temperature_is_one_hot"], True),
    (PLANTED["planted_x_log_x_tends_to_minus_one"], False),
    (limits.zero_log_zero_is_zero, True),
])
def test_numeric_route_fails_false_limits_and_passes_true_ones(theorem, passes, backend):
    require_backend(backend)
    record, _ = search(theorem, backend, "float64")
    assert record.status == ("passed" if passes else "failed"), record.reason
    assert "convergence along" in record.reason
    if not passes:
        assert {"lhs", "limit", "allowed"} <= set(record.counterexample)


def test_numeric_counterexample_of_ties_shows_a_tied_row():
    record, _ = search(limits.hard_attention_limit, "numpy", "float64")
    example = record.counterexample
    row = [float(v) for v in example["row"].strip("()").split(", ")]
    assert row.count(max(row)) >= 2
    assert float(example["lhs"]) == pytest.approx(1 / row.count(max(row)))


def test_latex_names_the_point_and_the_assumption():
    latex = statement_latex(limits.hard_attention_limit_unique_maximum)
    assert latex.startswith(r"\lim_{T \to 0^{+}}")
    assert "unique maximum" in latex
    assert r"\to \infty}" in statement_latex(limits.uniform_attention_limit)


n_q, n_k = Dim("n_q"), Dim("n_k")
i, j = n_q.index("i"), n_k.index("j")
S, R = Tensor("S", (n_q, n_k)), Tensor("R", (n_q, n_k))
T = Scalar("T", Positive())


@pytest.mark.parametrize(("claim", "message"), [
    (Limit(softmax(S[i, j], j), sp.Symbol("u"), 0, 0, row=S[i, j]), "u"),
    (Limit(softmax(S[i, j], j, 1 / T.symbol), T.symbol, 0, 0), "row=S"),
    (Limit(softmax(S[i, j], j, 1 / T.symbol) * R[i, j], T.symbol, 0, 0, row=S[i, j]), "R"),
    (Limit(T.symbol, T.symbol, 0, 0), "rate"),
])
def test_bad_declarations_name_the_theorem_and_the_symbol(claim, message):
    inputs = (S, R, T) if claim.row is not None or claim.expr.has(S[i, j]) else (T,)
    with pytest.raises(TheoremError) as raised:
        Theorem(name="bad_limit", source=SOURCE, claim=claim, inputs=inputs)
    assert "bad_limit" in str(raised.value)
    assert message in str(raised.value)


def test_a_format_stops_the_sequence_where_s_over_t_would_overflow():
    import numpy as np

    from attnproof.numeric.kinds.limit import TOWARD_ZERO, _reachable

    points = np.array(TOWARD_ZERO)
    claim = limits.hard_attention_limit.claim
    assert len(_reachable(points, claim, 3.5, FLOAT16)) == len(points)
    kept = _reachable(points, claim, 100.0, FLOAT16)
    assert 0 < len(kept) < len(points)
    assert 100.0 / 2.0 ** -float(kept[-1]) <= np.finfo(np.float16).max / 4


def test_the_claimed_value_counts_tied_maxima_from_the_row():
    import numpy as np

    from attnproof.numeric.kinds._row_values import row_function

    theorem = limits.hard_attention_limit_with_ties
    claim = theorem.claim
    scores = np.array([[[1.0, 1.0, 0.0], [2.0, -1.0, 0.5]]])
    value = row_function(theorem, claim, claim.value, theorem.free_indices)(
        scores, {"n_q": 2, "n_k": 3})
    assert value.tolist() == [[[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]]


def test_a_limits_value_decides_its_conditions_row_by_row():
    # the one as-written evaluator with the rows' arithmetic: a Piecewise whose condition
    # (a relation, And, Not) depends on the drawn scores is decided per row, not once
    import numpy as np
    import sympy as sp

    from attnproof.numeric.kinds._row_values import RowArithmetic
    from attnproof.symbolic.route import AsWritten

    S, i = sp.IndexedBase("S"), sp.Symbol("i", integer=True)
    first, second = S[i, 0], S[i, 1]
    value = sp.Piecewise((first, sp.And(first > second, sp.Not(sp.Eq(first, 0)))),
                         (sp.Abs(second) + sp.Min(first, second), True))
    rows = np.array([[1.0, 3.0], [2.0, 2.0], [0.5, -1.0], [0.0, -1.0]])
    got = AsWritten(RowArithmetic(rows), {}, fixed={}).eval(value, {i: sp.Integer(0)})
    assert np.asarray(got).tolist() == [4.0, 4.0, 0.5, 0.0]


def test_a_node_no_rule_evaluates_is_named():
    import numpy as np
    import sympy as sp

    from attnproof.numeric.kinds._row_values import RowArithmetic
    from attnproof.symbolic import TheoremError
    from attnproof.symbolic.route import AsWritten

    S, i = sp.IndexedBase("S"), sp.Symbol("i", integer=True)
    evaluation = AsWritten(RowArithmetic(np.ones((2, 2))), {}, fixed={})
    named = r"no rule evaluates sin as written \(sin\(S\[i, 0\]\)\)"
    with pytest.raises(TheoremError, match=named):
        evaluation.eval(sp.sin(S[i, 0]), {i: sp.Integer(0)})
