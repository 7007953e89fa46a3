"""The series kind: its symbolic route, exact refutation, numeric route and declaration checks."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric._backends import available_configurations
from attnproof.numeric._search import search
from attnproof.symbolic import (
    Positive,
    Real,
    Scalar,
    Series,
    Source,
    Theorem,
    TheoremError,
    discover,
    prove,
    statement_latex,
)
from attnproof.symbolic.kinds.series import coefficients
from attnproof.theorems import natural_gradient as natural
from tests.backends import require_backend

PLANTED = discover([Path(__file__).resolve().parents[1] / "planted"]).by_name()
SECOND_ORDER = PLANTED["planted_natural_gradient_invariant_to_second_order"]
SOURCE = Source("test", "unit")


def test_natural_gradient_agrees_to_first_order():
    result = prove(natural.natural_gradient_reparameterization_invariant)
    assert result.status == "proved"
    assert result.method.startswith("a series to order 1 in eta")


def test_gradient_descent_differs_at_first_order():
    result = prove(natural.gradient_descent_reparameterization_invariant)
    assert result.status == "refuted"
    assert result.counterexample["order"] == 1
    assert float(result.counterexample["lhs_minus_rhs"]) != 0


def test_natural_gradient_is_refuted_at_second_order():
    result = prove(SECOND_ORDER)
    assert result.status == "refuted"
    assert result.counterexample["order"] == 2
    assert set(result.counterexample["values"]) == {"theta", "y"}


def test_coefficients_are_the_taylor_coefficients():
    x, eta = Scalar("x", Real()), Scalar("eta", Positive())
    theorem = Theorem(name="exp_series", source=SOURCE, inputs=(x, eta),
                      claim=Series(sp.exp(eta.symbol) * x.symbol, x.symbol, eta.symbol, order=2))
    found = [sp.simplify(c) for c in coefficients(theorem, theorem.claim)]
    assert found == [0, x.symbol, x.symbol / 2]


def test_planted_true_series_is_proved():
    assert prove(PLANTED["planted_exp_to_second_order"]).status == "proved"


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize(("theorem", "passes"), [
    (natural.natural_gradient_reparameterization_invariant, True),
    (natural.gradient_descent_reparameterization_invariant, False),
    (SECOND_ORDER, False),
    (PLANTED["planted_exp_to_second_order"], True),
])
def test_numeric_route_bounds_the_remainder(theorem, passes, backend):
    require_backend(backend)
    record, _ = search(theorem, backend, "float64")
    assert record.status == ("passed" if passes else "failed"), record.reason
    if not passes:
        example = record.counterexample
        assert float(example["ratio"]) > float(example["allowed"])


def test_only_float64_and_float32_are_checked():
    theorem = natural.natural_gradient_reparameterization_invariant
    dtypes = {c[1] for c in available_configurations(theorem)}
    assert dtypes <= {"float64", "float32"}
    assert "float64" in dtypes


def test_latex_states_the_order():
    latex = statement_latex(natural.natural_gradient_reparameterization_invariant)
    assert r"+ O\left(\eta^{2}\right)" in latex


@pytest.mark.parametrize(("variable", "order", "message"), [
    (sp.Symbol("u"), 1, "u"),
    ("eta", -1, "order"),
])
def test_bad_declarations_name_the_theorem_and_the_symbol(variable, order, message):
    x, eta = Scalar("x", Real()), Scalar("eta", Positive())
    variable = eta.symbol if variable == "eta" else variable
    with pytest.raises(TheoremError) as raised:
        Theorem(name="bad_series", source=SOURCE, inputs=(x, eta),
                claim=Series(x.symbol + eta.symbol, x.symbol, variable, order=order))
    assert "bad_series" in str(raised.value)
    assert message in str(raised.value)


def test_a_fractional_power_is_not_proved_from_vanishing_derivatives():
    x, eta = Scalar("x", Real()), Scalar("eta", Positive())
    theorem = Theorem(name="three_halves", source=SOURCE, inputs=(x, eta),
                      claim=Series(x.symbol * eta.symbol ** sp.Rational(3, 2), 0, eta.symbol))
    assert [sp.simplify(c) for c in coefficients(theorem, theorem.claim)] == [0, 0]
    assert prove(theorem).status not in ("proved", "proved-bounded")
