"""IEEE values: the arithmetic of enclosures, the exact case analysis, the op-by-op numeric
route, and the planted true and false variants (tests/planted/kinds_ieee.py)."""

from pathlib import Path

import pytest
import sympy as sp
from mpmath import mpf

from attnproof.numeric import Configuration
from attnproof.numeric._search import search
from attnproof.symbolic import (
    FORMATS,
    Between,
    Dim,
    IEEEValue,
    Mask,
    Real,
    Sizes,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    definitions_latex,
    discover,
    prove,
    statement_latex,
)
from attnproof.symbolic.kinds import _ieee_arithmetic as ieee
from attnproof.theorems import ieee_values as catalog
from tests.backends import require_backend

PLANTED = {t.name: t for t in discover([Path(__file__).resolve().parents[1] / "planted"]).theorems
           if t.name.startswith("planted_") and isinstance(t.claim, IEEEValue)}
FALSE = ["planted_finite_fill_uniform_in_float16", "planted_unshifted_softmax_bounded_in_float32"]
TRUE = ["planted_finite_fill_uniform_in_float32", "planted_unshifted_softmax_bounded_in_float64"]
SOURCE = Source("test", "unit")
n = Dim("n", Sizes(1, 3))
k = n.index("k")


# -- the arithmetic --------------------------------------------------------------------------


def test_minus_1e9_overflows_in_float16_only():
    formats = FORMATS
    assert formats["float16"].round(mpf(-1e9)) == -ieee.INF
    assert formats["bfloat16"].round(mpf(-1e9)) == mpf(-998244352)
    assert formats["float32"].round(mpf(-1e9)) == mpf(-1e9)
    assert formats["float16"].round(mpf(65519)) == mpf(65504)  # below the overflow threshold
    assert formats["float16"].round(mpf(65520)) == ieee.INF  # the tie rounds to even: ∞


def test_special_values_follow_ieee_754():
    zero, infinity = ieee.point(0), ieee.point(ieee.INF)
    assert ieee.add(infinity, ieee.negate(infinity)).is_nan
    assert ieee.multiply(zero, infinity).is_nan
    assert ieee.divide(zero, zero).is_nan
    assert ieee.divide(infinity, infinity).is_nan
    assert ieee.exp(ieee.negate(infinity)) == ieee.point(0)
    assert ieee.log(zero).lo == -ieee.INF
    assert ieee.log(ieee.point(-1)).is_nan


def test_exp_underflows_to_exactly_zero_below_the_smallest_subnormal():
    float32 = FORMATS["float32"]
    assert ieee.rounded(ieee.exp(ieee.point(-104)), float32).lo == 0
    assert ieee.rounded(ieee.exp(ieee.point(-103)), float32).lo > 0  # a subnormal


# -- the symbolic route ----------------------------------------------------------------------


@pytest.mark.parametrize("name", FALSE)
def test_a_planted_false_variant_is_refuted(name):
    assert prove(PLANTED[name]).status == "refuted"


@pytest.mark.parametrize("name", TRUE)
def test_a_planted_true_variant_is_not_refuted(name):
    assert prove(PLANTED[name]).status not in ("refuted", "error", "timeout")


def test_the_counterexample_names_format_sizes_values_and_both_sides():
    result = prove(catalog.normalized_entropy_in_unit_interval)
    assert result.status == "refuted"
    found = result.counterexample
    assert found["format"] == "float64" and found["sizes"] == {"n_k": 1}
    assert found["values"] == {"p[0]": "1.0"}
    assert (found["lhs"], found["rhs"]) == ("nan", "in [0, 1]")


def test_a_free_input_is_refuted_at_a_corner_of_its_range():
    found = prove(PLANTED["planted_unshifted_softmax_bounded_in_float32"]).counterexample
    assert found["inputs"] == "every input at the high end"
    assert found["values"]["x[0]"] == "100.0" and found["lhs"] == "nan"


def test_proved_means_every_input_in_its_range_at_the_stated_sizes():
    result = prove(catalog.softmax_max_shift_prevents_overflow)
    assert result.status == "proved-bounded" and result.max_size == 3
    assert "every input in its range" in result.method
    at_one_size = prove(catalog.normalized_entropy_one_key_is_nan)
    assert at_one_size.status == "proved" and at_one_size.method.startswith("exact evaluation")
    one_row = prove(catalog.masking_infinite_fill_fully_masked_row)  # n_q = 1, n_k = 1, 2, 3
    assert one_row.status == "proved" and one_row.method.startswith("exact evaluation")


def test_a_maximum_of_a_negated_value_is_not_taken_for_the_value_itself():
    """x − max(−x, y) with y below −x is 2x, not 0: an operand is known by its sign too."""
    x = Tensor("x", (n,), Real(1, 2))
    y = Tensor("y", (n,), Real(-5, -4))
    theorem = Theorem(
        name="difference_with_a_negated_maximum", source=SOURCE,
        claim=IEEEValue(x[k] - sp.Max(-x[k], y[k]), "zero", sizes={"n": 1}), inputs=(x, y))
    assert prove(theorem).status == "refuted"


def test_the_statement_renders_each_format_with_its_value():
    text = statement_latex(catalog.masking_finite_fill_fully_masked_row)
    assert r"\mathrm{NaN} & \text{in float16}" in text
    assert r"\text{in float64, float32, bfloat16}" in text
    assert r"\text{fully masked}" in text
    fill = definitions_latex(catalog.masking_finite_fill_fully_masked_row)[0]
    assert fill == r"X_{i j} = \operatorname{where}\left(M_{i j}, S_{i j}, -10^{9}\right)"


# -- declarations ----------------------------------------------------------------------------


def _declare(**claim):
    x = Tensor("x", (n,))
    M = Tensor("M", (n,), Mask())
    value = claim.pop("value", x[k])
    Theorem(name="badly_declared", source=SOURCE, claim=IEEEValue(value, **claim),
            inputs=(x, M))


@pytest.mark.parametrize("claim, words", [
    (dict(yields="finite", at={"M": [1]}), "'n'"),
    (dict(yields="finite", sizes={"n": 1}, at={"M": [1], "z": 1}), "'z'"),
    (dict(yields="finite", sizes={"n": 1}), "'M'"),
    (dict(yields="finite", sizes={"n": 2}, at={"M": [1]}), "sizes {'n': 2}"),
])
def test_a_bad_declaration_names_the_theorem_and_the_symbol(claim, words):
    with pytest.raises(TheoremError) as error:
        _declare(**claim)
    assert "badly_declared" in str(error.value) and words in str(error.value)


def test_a_formula_without_an_ieee_rule_is_refused_when_declared():
    with pytest.raises(TheoremError, match="badly_declared.*no IEEE rule for Min"):
        _declare(value=sp.Min(Tensor("x", (n,))[k], 0), yields="finite", sizes={"n": 1},
                 at={"M": [1]})


def test_a_record_measures_a_claimed_number_in_ulps():
    record, _ = search(catalog.masking_finite_fill_fully_masked_row, "numpy", "float32")
    assert record.status == "passed" and 0 <= record.max_error_ulps <= 4
    assert record.max_error_bits is not None


def test_an_unknown_class_or_format_is_refused():
    with pytest.raises(TheoremError, match="unknown class"):
        IEEEValue(sp.S.One, "infinite")
    with pytest.raises(TheoremError, match="unknown format"):
        IEEEValue(sp.S.One, {"float8": "nan"})


# -- the numeric route -----------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["numpy", "mlx"])
@pytest.mark.parametrize("name", FALSE)
def test_the_numeric_route_fails_a_planted_false_variant(name, backend):
    require_backend(backend)
    theorem = PLANTED[name]
    record, _ = search(theorem, backend, theorem.claim.formats[0])
    assert record.status == "failed", record.reason
    assert record.counterexample["lhs"] == "nan"


@pytest.mark.parametrize("backend", ["numpy", "jax"])
@pytest.mark.parametrize("name", TRUE)
def test_the_numeric_route_passes_a_planted_true_variant(name, backend):
    require_backend(backend)
    theorem = PLANTED[name]
    record, _ = search(theorem, backend, theorem.claim.formats[0])
    assert record.status == "passed", record.reason
    assert record.instances > 0


def test_mlx_float64_is_skipped_with_its_reason():
    require_backend("mlx")  # without MLX the record is skipped as "not installed" instead
    record, _ = search(catalog.normalized_entropy_one_key_is_nan, "mlx", "float64")
    assert record.status == "skipped" and "exp in float32" in record.reason


def test_only_the_claimed_formats_are_configurations():
    found = [Configuration("numpy", d, "cpu", "eager") for d in FORMATS]
    claim = PLANTED["planted_finite_fill_uniform_in_float16"].claim
    assert claim.numeric_configurations(found) == [("numpy", "float16", "cpu", "eager")]


def test_between_accepts_its_ends():
    float16 = FORMATS["float16"]
    from attnproof.symbolic.kinds.ieee import satisfies, violates

    assert satisfies(ieee.point(1), Between(0, 1), float16)
    assert violates(ieee.NAN, Between(0, 1), float16)
    assert not violates(ieee.interval(0.5, 2), Between(0, 1), float16)
