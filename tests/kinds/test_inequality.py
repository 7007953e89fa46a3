"""Inequalities proved from facts (symbolic/kinds/inequality.py, numeric/kinds/inequality.py):
the planted variants, the routes' content, and declarations that must be refused."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric import check
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.symbolic import (
    Dim,
    Gibbs,
    Greater,
    GreaterOrEqual,
    Positive,
    Real,
    Simplex,
    Source,
    Squares,
    Tensor,
    Theorem,
    TheoremError,
    discover,
    kl,
    prove,
    statement_latex,
)

PLANTED = {t.name: t for t in discover([Path(__file__).resolve().parents[1] / "planted"]).theorems
           if t.origin.endswith("kinds_inequality.py") or t.name.startswith("planted_")}
TRUE = ("planted_gibbs_inequality", "planted_square_plus_one_positive", "planted_exp_positive")
FALSE = ("planted_kl_at_most_zero", "planted_square_positive", "planted_exp_below_one")
SOURCE = Source("test", "unit")
n = Dim("n")
j = n.index("j")
x = Tensor("x", (n,), Real(-3, 3))
p = Tensor("p", (n,), Simplex())


@pytest.mark.parametrize("name", TRUE)
def test_true_variants_are_proved(name):
    result = prove(PLANTED[name])
    assert result.status == "proved", result.method
    assert "all sizes" in result.method


@pytest.mark.parametrize("name", FALSE)
def test_false_variants_are_refuted_exactly(name):
    result = prove(PLANTED[name])
    assert result.status == "refuted", result.method
    assert result.counterexample["sizes"] and result.counterexample["values"]


def test_a_strict_claim_is_refuted_where_equality_is_reached():
    result = prove(PLANTED["planted_square_positive"])
    assert result.counterexample["equality"] == "lhs = rhs exactly"
    assert result.counterexample["values"] == {"x[0]": "0"}


def test_the_method_names_the_fact_and_the_coefficient():
    method = prove(PLANTED["planted_gibbs_inequality"]).method
    assert "Gibbs' inequality" in method and "= [Gibbs' inequality]" in method


def _configurations():
    rows = [("numpy", "float64")]
    for other in ("jax", "mlx"):
        if unavailable_reason(backend(other)) is None:
            rows.append((other, "float32"))
            break
    return rows


@pytest.mark.parametrize(("backend_name", "dtype"), _configurations())
@pytest.mark.parametrize("name", ("planted_kl_at_most_zero", "planted_exp_below_one"))
def test_the_numeric_route_fails_false_variants(name, backend_name, dtype):
    record = check(PLANTED[name], backend_name, dtype, profile="quick")
    assert record.status == "failed", record.reason


@pytest.mark.parametrize(("backend_name", "dtype"), _configurations())
@pytest.mark.parametrize("name", ("planted_gibbs_inequality", "planted_exp_positive"))
def test_the_numeric_route_passes_true_variants(name, backend_name, dtype):
    record = check(PLANTED[name], backend_name, dtype, profile="quick")
    assert record.status == "passed", record.reason


@pytest.mark.parametrize(("backend_name", "dtype"), [*_configurations(), ("numpy", "float16")])
def test_exact_equality_fails_a_strict_claim_in_every_format(backend_name, dtype):
    """x² > 0 fails only at x = 0, where x² = 0 with no rounding at all (abs-scale 0)."""
    record = check(PLANTED["planted_square_positive"], backend_name, dtype, profile="quick")
    assert record.status == "failed", record.reason
    assert record.counterexample["lhs_minus_rhs"] == "0"


def test_strictness_is_counted_in_float64():
    record = check(PLANTED["planted_square_plus_one_positive"], "numpy", "float64",
                   profile="quick")
    assert record.status == "passed" and "strictness in float64" in record.reason


def test_latex_shows_the_relation():
    assert statement_latex(PLANTED["planted_exp_positive"]).endswith("> 0")
    assert r"\geq" in statement_latex(PLANTED["planted_gibbs_inequality"])


def test_a_fact_whose_hypotheses_fail_proves_nothing():
    s = Tensor("s", (n,), Positive())  # positive, but not a distribution
    theorem = Theorem(name="t", source=SOURCE, inputs=(p, s),
                      claim=GreaterOrEqual(kl(p[j], p[j], j), 0, by=(Gibbs(p[j], s[j], j),)))
    result = prove(theorem)
    assert result.status == "not-proved" and "does not apply" in result.method


def test_a_wrong_fact_proves_nothing():
    theorem = Theorem(name="t", source=SOURCE, inputs=(x,),
                      claim=GreaterOrEqual(x[j] ** 2 + 1, x[j], by=(Squares(x[j] - 1),)))
    assert prove(theorem).status == "not-proved"


def test_by_takes_facts_only():
    with pytest.raises(TheoremError, match="by= takes facts"):
        GreaterOrEqual(x[j], 0, by=("x >= 0",))


def test_a_fact_on_an_undeclared_tensor_names_theorem_and_symbol():
    y = Tensor("y", (n,))
    with pytest.raises(TheoremError, match=r"theorem 'bad', fact 1 .*tensor y"):
        Theorem(name="bad", source=SOURCE, inputs=(x,),
                claim=GreaterOrEqual(x[j] ** 2, 0, by=(Squares(y[j]),)))


def test_concrete_numbers_are_decided_by_exact_evaluation():
    true = Theorem(name="t", source=SOURCE, inputs=(), claim=Greater(sp.E, sp.Rational(27, 10)))
    false = Theorem(name="f", source=SOURCE, inputs=(), claim=Greater(sp.pi, sp.Rational(22, 7)))
    assert prove(true).status == "proved" and "exact evaluation" in prove(true).method
    assert prove(false).status == "refuted"
