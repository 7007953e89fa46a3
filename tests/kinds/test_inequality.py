"""Inequalities proved from facts (symbolic/kinds/inequality.py, numeric/kinds/inequality.py):
the planted variants, the routes' content, and declarations that must be refused."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric import check
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.symbolic import (
    AtLeast,
    BelowMaximum,
    Defined,
    Dim,
    Equals,
    Gibbs,
    Greater,
    GreaterOrEqual,
    Mask,
    Positive,
    Real,
    Simplex,
    Source,
    Squares,
    Tensor,
    Theorem,
    TheoremError,
    discover,
    fully_masked,
    kl,
    latex,
    masked_softmax,
    prove,
    rowmax,
    rowmin,
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


CONVEX_TRUE = ("planted_mixture_below_the_largest_level",
               "planted_tempered_mixture_above_the_smallest_entry")
CONVEX_FALSE = ("planted_mixture_above_the_largest_level",
                "planted_smallest_entry_above_the_tempered_mixture")


@pytest.mark.parametrize("name", CONVEX_TRUE)
def test_convex_combinations_are_proved_between_the_extremes_for_all_sizes(name):
    """Named (BelowMaximum) or found in the statement (AtLeast names no facts)."""
    result = prove(PLANTED[name])
    assert result.status == "proved", result.method
    assert "entries at most their maximum" in result.method and "all sizes" in result.method


@pytest.mark.parametrize("name", CONVEX_FALSE)
def test_a_convex_combination_beyond_an_extreme_is_refuted_exactly(name):
    result = prove(PLANTED[name])
    assert result.status == "refuted", result.method
    assert float(result.counterexample["lhs_minus_rhs"]) < 0


@pytest.mark.parametrize(("backend_name", "dtype"), _configurations())
def test_the_numeric_route_settles_the_convex_twins(backend_name, dtype):
    for name in CONVEX_TRUE:
        record = check(PLANTED[name], backend_name, dtype, profile="quick")
        assert record.status == "passed", (name, record.reason)
    for name in CONVEX_FALSE:
        record = check(PLANTED[name], backend_name, dtype, profile="quick")
        assert record.status == "failed", (name, record.reason)


def test_weights_that_do_not_sum_to_one_prove_nothing():
    """2·Σ p_j x_j ≤ max x is false (x ≡ −1): the gap fact leaves −max x, never a proof."""
    twice = GreaterOrEqual(rowmax(x[j], j), 2 * sp.Sum(p[j] * x[j], (j, 0, j.upper)),
                           by=(BelowMaximum(2 * p[j], x[j], j),))
    theorem = Theorem(name="t", source=SOURCE, inputs=(p, x), claim=twice)
    assert prove(theorem).status in ("refuted", "not-proved")


def test_a_weight_not_shown_nonnegative_proves_nothing():
    signed = GreaterOrEqual(rowmax(x[j], j), sp.Sum(x[j] * x[j], (j, 0, j.upper)),
                            by=(BelowMaximum(x[j], x[j], j),))
    theorem = Theorem(name="t", source=SOURCE, inputs=(x,), claim=signed)
    result = prove(theorem)
    assert result.status != "proved"


def test_rowmin_renders_as_a_minimum_and_reads_as_minus_the_maximum_of_minus():
    assert latex(rowmin(x[j], j)) == r"\min_{j} x_{j}"
    theorem = Theorem(name="t", source=SOURCE, inputs=(x,),
                      claim=Equals(rowmin(x[j], j), -rowmax(-x[j], j)))
    assert prove(theorem).status == "proved"


# -- masked weights: the kept values' extremes (masking_output_*_kept_value) -----------------

q_dim, k_dim, v_dim = Dim("n_q"), Dim("n_k"), Dim("d_v")
qi, (kj, kn), vb = q_dim.index("i"), k_dim.indices("j n"), v_dim.index("b")
scores = Tensor("S", (q_dim, k_dim))
keep = Tensor("M", (q_dim, k_dim), Mask())
real_keep = Tensor("M", (q_dim, k_dim), Real(0, 1))
values = Tensor("V", (k_dim, v_dim))


def _masked_output(mask):
    weights = Defined("A", (qi, kj), masked_softmax(scores[qi, kj], mask[qi, kj], kj))
    output = Defined("O", (qi, vb), sp.Sum(weights[qi, kj] * values[kj, vb], (kj, 0, kj.upper)))
    return weights, output


def _hull_claim(name, mask, claim_of):
    weights, output = _masked_output(mask)
    keeps = 1 - fully_masked(mask[qi, kj], kj)
    smallest = rowmin(values[kn, vb], kn)
    largest_kept = rowmax(mask[qi, kj] * values[kj, vb] + (1 - mask[qi, kj]) * smallest, kj)
    return Theorem(name=name, source=SOURCE, inputs=(scores, mask, values),
                   definitions=(weights, output),
                   claim=claim_of(keeps, largest_kept, output[qi, vb], mask))


def test_the_kept_values_bound_masked_attention_for_all_sizes():
    """The catalog's two halves, proved from the gap fact the masked maximum calls for."""
    catalog = {t.name: t for t in discover().theorems}
    for name in ("masking_output_below_largest_kept_value",
                 "masking_output_above_smallest_kept_value"):
        result = prove(catalog[name])
        assert result.status == "proved", (name, result.method)
        assert "entries at most their maximum" in result.method and "all sizes" in result.method


def _largest_dropped(keeps, largest_kept, output, mask):
    smallest = rowmin(values[kn, vb], kn)
    dropped = rowmax((1 - mask[qi, kj]) * values[kj, vb] + mask[qi, kj] * smallest, kj)
    return AtLeast(keeps * dropped, output)


@pytest.mark.parametrize(("claim_of", "why"), [
    (lambda keeps, top, o, m: AtLeast(o, keeps * top), "above the largest kept value"),
    (lambda keeps, top, o, m: AtLeast(top, o), "a fully masked row's 0 below min v"),
    (_largest_dropped, "below the largest value the row masks"),
])
def test_a_false_bound_on_masked_attention_is_never_proved(claim_of, why):
    result = prove(_hull_claim("false_hull", keep, claim_of))
    assert result.status != "proved", (why, result.method)


def test_a_mask_not_declared_zero_one_proves_nothing():
    """m² = m and Π(1 − m)·m = 0 hold for a Mask only: with M real in [0, 1] the bound is
    false (M = 1/2 everywhere: the weights still sum to 1 but the 'kept' maximum is halved)."""
    claim = _hull_claim("real_mask", real_keep,
                        lambda keeps, top, o, m: AtLeast(keeps * top, o))
    assert prove(claim).status != "proved"
