"""Worked numbers from code: exact evaluation of a demo's code proves or refutes its printed
values; the same code runs on the backends and fails a wrong printed digit."""

import pytest

from attnproof.numeric._search import search
from attnproof.symbolic import (
    FromCode,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    prove,
    statement_latex,
)
from attnproof.theorems import _dims
from tests.backends import require_backend
from tests.planted import kinds_statistical as planted

FALSE = planted.planted_score_scaling_printed_nine
TRUE = planted.planted_score_scaling_printed_to_one_decimal
SOURCE = Source("test", "unit")


def third(xp):
    """1/3 in exact arithmetic; in floats, what the backend computes."""
    return (xp.constant(1) / xp.constant(3),)


def test_the_wrong_printed_digit_is_refuted_with_value_and_text():
    result = prove(FALSE)
    assert result.status == "refuted"
    assert result.counterexample["raw std"] == "7.95779, printed 9"
    assert "scaled std" not in result.counterexample


def test_the_right_printed_digits_agree_by_exact_evaluation_which_runs_code_so_is_not_proof():
    result = prove(TRUE)
    assert result.status == "not-proved"
    assert result.method.startswith("exact evaluation of the code in rational arithmetic "
                                    "(the seeded draws taken as exact binary fractions): every "
                                    "value rounds to its printed digits")
    assert result.method.endswith("checked, never proved")


def test_exact_evaluation_is_exact():
    # 1/3 = 0.33333333333333331483 in float64: exact arithmetic keeps the true third
    assert prove(Theorem(name="t", source=SOURCE, claim=FromCode(third, ("0.3333333333333333333",)),
                         inputs=())).status == "not-proved"


def test_the_statement_renders_labels_and_printed_text():
    assert statement_latex(TRUE) == (
        r"\text{raw std} \approx 8.0, \quad \text{scaled std} \approx 1.0 \quad "
        r"\left(\text{from code: }\texttt{notebook\_score\_scaling}\right)")


@pytest.mark.parametrize(("claim", "inputs", "words"), [
    (FromCode(third, ("one third",)), (), "printed value 'one third' of 'value 1'"),
    (FromCode(third, ("0.33",), ("a", "b")), (), "2 labels for 1 printed"),
    (FromCode(third, ("0.33",)), (Tensor("x", (_dims.d_k,)),), "input x is not used"),
])
def test_bad_declarations_name_theorem_and_value(claim, inputs, words):
    with pytest.raises(TheoremError, match=rf"theorem 'bad'.*{words}"):
        Theorem(name="bad", source=SOURCE, claim=claim, inputs=inputs)


def test_the_code_text_is_part_of_the_statement():
    # the proof cache keys a claim by its fields: an edited demo must not keep its verdict
    assert "raw = Q @ K.T" in TRUE.claim.code


@pytest.mark.parametrize(("backend", "dtype"), [
    ("numpy", "float64"),  # NumPy only in the fast tier: the other backends load slowly
    pytest.param("jax", "float32", marks=pytest.mark.slow),
    pytest.param("mlx", "float32", marks=pytest.mark.slow),
])
def test_the_backends_fail_the_wrong_digit_and_pass_the_right_one(backend, dtype):
    require_backend(backend)
    failed, _ = search(FALSE, backend, dtype)
    assert failed.status == "failed"
    assert failed.counterexample["raw std"].endswith("printed 9")
    passed, _ = search(TRUE, backend, dtype)
    assert passed.status == "passed" and passed.instances == 2


def test_a_lower_format_that_only_rounds_differently_says_so():
    tight = Theorem(name="t", source=SOURCE, inputs=(), claim=FromCode(
        planted.statistics.notebook_score_scaling, ("7.9578", "0.9947"), data=
        planted.statistics.notebook_score_draws))
    record, _ = search(tight, "numpy", "float16")
    assert record.status == "failed" and "an instability of this format" in record.reason
    assert record.max_error_ulps > 0
    exact, _ = search(tight, "numpy", "float64")
    assert exact.status == "passed" and exact.max_error_ulps == 0
