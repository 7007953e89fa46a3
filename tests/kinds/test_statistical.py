"""Statistical claims: moment algebra proves for all sizes, refutes exactly at small sizes, and
the seeded Monte Carlo route fails a false variance and passes a true one on two backends."""

import pytest
import sympy as sp

from attnproof.numeric import Configuration
from attnproof.numeric._search import search
from attnproof.symbolic import (
    Dim,
    Expectation,
    Gaussian,
    Moments,
    Rademacher,
    Scalar,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    Variance,
    prove,
    statement_latex,
)
from tests.backends import require_backend
from tests.planted import kinds_statistical as planted

FALSE = planted.planted_unscaled_dot_product_variance_one
TRUE = planted.planted_scaled_dot_product_variance_one
SOURCE = Source("test", "unit")
d_k = Dim("d_k")
a = d_k.index("a")
q, k = Tensor("q", (d_k,)), Tensor("k", (d_k,))
dot = sp.Sum(q[a] * k[a], (a, 0, d_k.symbol - 1))


def _theorem(claim, inputs=(q, k), name="t"):
    return Theorem(name=name, source=SOURCE, claim=claim, inputs=inputs)


def test_the_planted_false_variance_is_refuted_at_d_k_two():
    result = prove(FALSE)
    assert result.status == "refuted"
    assert result.counterexample["sizes"] == {"d_k": 2}
    assert (result.counterexample["lhs"], result.counterexample["rhs"]) == ("2", "1")


def test_the_planted_true_variance_is_proved_for_all_sizes_by_moment_algebra():
    result = prove(TRUE)
    assert result.status == "proved"
    assert "moment algebra (all sizes)" in result.method


def test_a_finite_law_confirms_the_counterexample_by_enumeration():
    result = prove(_theorem(Variance(dot, 1, law=Rademacher())))
    assert result.counterexample["enumerated"] == "variance over all 16 ±1 patterns = 2"


def test_the_mean_enters_the_moments():
    # Var(q_a k_a) = E q² E k² − (E q E k)² = 2·2 − 1 = 3 per term for mean 1, variance 1
    assert prove(_theorem(Variance(dot, 3 * d_k.symbol, law=Moments(1, 1)))).status == "proved"
    wrong = prove(_theorem(Variance(dot, 2 * d_k.symbol, law=Moments(1, 1))))
    assert wrong.status == "refuted" and wrong.counterexample["sizes"] == {"d_k": 1}
    assert prove(_theorem(Expectation(dot, d_k.symbol, law=Moments(1, 4)))).status == "proved"


def test_a_matrix_of_scores_has_unit_variance_entry_by_entry():
    n = Dim("n", )
    i = n.index("i")
    Q, K = Tensor("Q", (n, d_k)), Tensor("K", (n, d_k))
    score = sp.Sum(Q[i, a] * K[i, a], (a, 0, d_k.symbol - 1)) / sp.sqrt(d_k.symbol)
    assert prove(_theorem(Variance(score, 1), inputs=(Q, K))).status == "proved"


def test_moments_beyond_the_second_are_not_claimed_proved():
    squares = sp.Sum(q[a] ** 2, (a, 0, d_k.symbol - 1))
    result = prove(_theorem(Variance(squares, 2 * d_k.symbol, law=Gaussian())))
    assert result.status == "not-proved"
    assert "beyond the second" in result.method


def test_a_finite_law_with_higher_moments_is_proved_for_small_sizes_by_enumeration():
    squares = sp.Sum(q[a] ** 2, (a, 0, d_k.symbol - 1))  # q_a² = 1 under ±1 entries
    result = prove(_theorem(Variance(squares, 0, law=Rademacher())))
    assert result.status == "proved-bounded" and result.max_size == 3
    assert result.method.startswith("exact enumeration of every ±1 pattern for sizes <= 3")
    wrong = prove(_theorem(Variance(squares, 1, law=Rademacher())))
    assert wrong.status == "refuted"
    assert (wrong.counterexample["sizes"], wrong.counterexample["lhs"]) == ({"d_k": 1}, "0")


def test_the_statement_renders_with_its_law():
    text = statement_latex(TRUE)
    assert text.startswith(r"\operatorname{Var}\left[")
    assert r"\mathrm{Rademacher}(\pm 1)" in text
    assert r"\text{any law with mean } 0" in statement_latex(FALSE)


@pytest.mark.parametrize(("claim", "inputs", "words"), [
    (Variance(d_k.symbol, 1), (q, k), "holds no random tensor"),
    (Variance(dot, q[a]), (q, k), "depends on the random tensor q"),
    (Variance(dot, 1), (q, k, Scalar("beta")), "scalar beta is not random"),
])
def test_bad_declarations_name_theorem_and_symbol(claim, inputs, words):
    with pytest.raises(TheoremError, match=rf"theorem 'bad'.*{words}"):
        Theorem(name="bad", source=SOURCE, claim=claim, inputs=inputs)


def test_a_law_needs_a_nonnegative_variance():
    with pytest.raises(TheoremError, match="variance >= 0"):
        Moments(0, -1)


@pytest.mark.parametrize(("backend", "dtype", "mode"), [
    ("numpy", "float64", None),  # NumPy only in the fast tier: the other backends load slowly
    pytest.param("jax", "float32", "jit", marks=pytest.mark.slow),
    pytest.param("mlx", "float32", None, marks=pytest.mark.slow),
])
def test_monte_carlo_fails_the_false_variance_and_passes_the_true_one(backend, dtype, mode):
    require_backend(backend)
    failed, _ = search(FALSE, backend, dtype, mode=mode)
    assert failed.status == "failed"
    assert failed.counterexample["sizes"] == {"d_k": 2}
    assert failed.counterexample["claimed"] == "1"
    passed, _ = search(TRUE, backend, dtype, mode=mode)
    assert passed.status == "passed", passed.counterexample
    assert passed.instances == 60_000 and "99.9% interval" in passed.reason


def test_lower_formats_are_left_out():
    found = [Configuration("numpy", dt, "cpu", "eager") for dt in ("float64", "float32", "float16")]
    assert [c.dtype for c in TRUE.claim.numeric_configurations(found)] == ["float64", "float32"]
