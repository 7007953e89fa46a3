"""The linear-algebra claim kinds: positive (semi-)definiteness and rank bounds."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric import Configuration
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.numeric._search import search
from attnproof.symbolic import (
    Dim,
    Positive,
    PositiveDefinite,
    PositiveSemidefinite,
    RankAtMost,
    Real,
    Scalar,
    Sizes,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    discover,
    prove,
    statement_latex,
)
from attnproof.symbolic.kinds.linalg import gram_factor, sign_by_form

PLANTED_DIR = Path(__file__).resolve().parents[1] / "planted"
PLANTED = {t.name: t for t in discover([PLANTED_DIR]).theorems
           if t.origin.endswith("kinds_linalg.py")}
CATALOG = discover().by_name()
FALSE = sorted(name for name, t in PLANTED.items() if t.expect == "refuted")
TRUE = sorted(name for name, t in PLANTED.items() if t.expect == "holds")
SOURCE = Source("test", "unit")

n = Dim("n", Sizes(1, 4))
a, b, c = n.indices("a b c")
W = Tensor("W", (n, n))
u, v, w = (Tensor(name, (n,)) for name in "uvw")


def gram(matrix):
    return sp.Sum(matrix[c, a] * matrix[c, b], (c, 0, c.upper))


def theorem(claim, inputs=(W,), name="t"):
    return Theorem(name=name, source=SOURCE, claim=claim, inputs=inputs)


def test_there_are_planted_variants_both_ways():
    assert len(FALSE) >= 3 and len(TRUE) >= 3


# -- the symbolic and exact refutation routes ------------------------------------------------------


@pytest.mark.parametrize("name", FALSE)
def test_planted_false_claims_are_refuted_exactly(name):
    result = prove(PLANTED[name])
    assert result.status == "refuted", result.method
    assert result.counterexample["sizes"]


@pytest.mark.parametrize("name", TRUE)
def test_planted_true_claims_are_proved_for_all_sizes(name):
    result = prove(PLANTED[name])
    assert result.status == "proved", result.method
    assert "all sizes" in result.method


def test_a_singular_gram_matrix_is_refuted_with_a_null_space_vector():
    result = prove(CATALOG["learned_metric_positive_definite"])
    example = result.counterexample
    assert result.status == "refuted"
    assert example["x^T A x"] == "0" and example["relation"] == "x^T A x = 0 with x != 0"
    assert any(sp.Rational(x) != 0 for x in example["x"].strip("[]").split(","))


def test_a_negative_quadratic_form_is_refuted_with_an_exact_negative_value():
    example = prove(PLANTED["planted_square_of_a_matrix_is_psd"]).counterexample
    assert sp.Rational(example["x^T A x"]) < 0
    matrix = sp.Matrix(sp.sympify(example["matrix"]))
    x = sp.Matrix(sp.sympify(example["x"]))
    assert (x.T * matrix * x)[0, 0] == sp.Rational(example["x^T A x"])


def test_a_rank_counterexample_gives_the_exact_rank():
    example = prove(PLANTED["planted_low_rank_product_rank_one"]).counterexample
    assert int(example["rank"]) > 1
    assert sp.Matrix(sp.sympify(example["matrix"])).rank() == int(example["rank"])


def test_a_negative_multiple_of_a_gram_matrix_is_not_proved_but_refuted():
    result = prove(theorem(PositiveSemidefinite(-gram(W), a, b)))
    assert result.status == "refuted"


def test_a_sum_of_two_gram_matrices_is_neither_proved_nor_refuted():
    both = gram(W) + sp.Sum(W[a, c] * W[b, c], (c, 0, c.upper))
    result = prove(theorem(PositiveSemidefinite(both, a, b)))
    assert result.status == "not-proved", result.method


def test_the_gram_recognizer_reads_the_factor_and_rejects_a_product_of_two_matrices():
    coefficient, factor, _ = gram_factor(2 * gram(W), a, b)
    assert coefficient == 2 and factor == W[c, a]
    V = Tensor("V", (n, n))
    assert gram_factor(sp.Sum(W[c, a] * V[c, b], (c, 0, c.upper)), a, b) is None


def test_a_strict_claim_is_not_proved_from_a_gram_matrix():
    assert prove(theorem(PositiveDefinite(gram(W), a, b))).status == "refuted"


def test_a_rank_bound_without_a_visible_factorization_is_proved_by_minors_for_small_sizes():
    outer = u[a] * v[b] + u[a] * w[b]  # u (v + w)ᵀ: rank 1, written as a sum of two outer products
    result = prove(theorem(RankAtMost(outer, a, b, 1), inputs=(u, v, w)))
    assert result.status == "proved-bounded", result.method
    assert result.max_size == 3 and "minor" in result.method


def test_a_rank_bound_by_the_shape_is_proved_for_all_sizes():
    m = Dim("m", Sizes(1, 4))
    e = m.index("e")
    tall = Tensor("X", (n, m))
    result = prove(theorem(RankAtMost(tall[a, e], a, e, m.symbol), inputs=(tall,)))
    assert result.status == "proved" and "columns" in result.method


# -- statements and declarations ---------------------------------------------------------------


def test_statements_render_to_latex():
    assert r"\geq 0" in statement_latex(PLANTED["planted_gram_matrix_is_psd"])
    assert r"x \neq 0" in statement_latex(PLANTED["planted_gram_matrix_is_positive_definite"])
    rank = statement_latex(PLANTED["planted_low_rank_product_rank_r"])
    assert r"\operatorname{rank}" in rank and r"\leq r" in rank


def test_a_row_index_missing_from_the_matrix_is_refused_naming_theorem_and_index():
    with pytest.raises(TheoremError, match=r"theorem 'bad'.*row index a"):
        theorem(PositiveSemidefinite(W[c, b], a, b), name="bad")


def test_a_non_square_definiteness_claim_is_refused():
    m = Dim("m")
    e = m.index("e")
    X = Tensor("X", (n, m))
    with pytest.raises(TheoremError, match=r"theorem 'bad'.*square"):
        theorem(PositiveDefinite(X[a, e], a, e), inputs=(X,), name="bad")


def test_a_rank_bound_in_an_undeclared_symbol_is_refused():
    with pytest.raises(TheoremError, match=r"theorem 'bad', rank bound: symbol k"):
        theorem(RankAtMost(W[a, b], a, b, sp.Symbol("k", integer=True, positive=True)),
                name="bad")


def test_a_rank_bound_in_a_scalar_input_is_refused():
    k = Scalar("k", Positive(1, 3))
    with pytest.raises(TheoremError, match=r"theorem 'bad'.*rank bound uses k"):
        theorem(RankAtMost(W[a, b], a, b, k.symbol), inputs=(W, k), name="bad")


def test_only_float64_and_float32_are_checked_numerically():
    found = [Configuration("numpy", dtype, "cpu", "eager") for dtype in
             ("float64", "float32", "float16", "bfloat16")]
    kept = PLANTED["planted_gram_matrix_is_psd"].claim.numeric_configurations(found)
    assert [c.dtype for c in kept] == ["float64", "float32"]


# -- the numeric route -----------------------------------------------------------------------------


def _backends():
    rows = [("numpy", "float64")]
    for name, dtype in (("mlx", "float32"), ("jax", "float32")):
        if unavailable_reason(backend(name)) is None:
            rows.append((name, dtype))
            break
    return rows


@pytest.mark.parametrize("backend_name,dtype", _backends())
@pytest.mark.parametrize("name", FALSE)
def test_the_numeric_route_fails_planted_false_claims(name, backend_name, dtype):
    record, _ = search(PLANTED[name], backend_name, dtype, seed=1)
    assert record.status == "failed", record.reason
    assert record.counterexample["found"] and record.counterexample["matrix"]


@pytest.mark.parametrize("backend_name,dtype", _backends())
@pytest.mark.parametrize("name", TRUE)
def test_the_numeric_route_passes_planted_true_claims(name, backend_name, dtype):
    record, _ = search(PLANTED[name], backend_name, dtype, seed=1)
    assert record.status == "passed", record.reason
    assert record.instances >= 100 and "tol =" in record.reason


def test_catalog_verdicts():
    expected = {
        "scaled_euclidean_metric_positive_definite": "proved",
        "learned_metric_positive_definite": "refuted",
        "learned_metric_positive_definite_corrected": "proved",
        "learned_metric_positive_semidefinite": "proved",
        "psd_sanity_check_strict": "refuted",
        "psd_sanity_check_strict_corrected": "proved",
        "head_projection_rank_at_most_d_k": "proved",
        "head_score_metric_rank_at_most_d_k": "proved",
    }
    assert {name: str(prove(CATALOG[name]).status) for name in expected} == expected


def test_a_true_claim_no_symbolic_route_proves_passes_numerically():
    both = gram(W) + sp.Sum(W[a, c] * W[b, c], (c, 0, c.upper))  # WᵀW + WWᵀ
    record, _ = search(theorem(PositiveSemidefinite(both, a, b)), "numpy", "float64", seed=2)
    assert record.status == "passed", record.reason


def test_a_non_symmetric_matrix_is_judged_by_its_quadratic_form():
    # [[0, 1], [-1, 0]]-like skew parts add nothing to xᵀAx: WᵀW + (W − Wᵀ) is still PSD
    skew = W[a, b] - W[b, a]
    claim = PositiveSemidefinite(gram(W) + skew, a, b)
    record, _ = search(theorem(claim), "numpy", "float64", seed=3)
    assert record.status == "passed", record.reason
    assert prove(theorem(claim)).status != "refuted"


# -- jitter: Gram matrices plus a multiple of the identity -----------------------------------------


def test_a_gram_matrix_plus_a_positive_multiple_of_the_identity_is_positive_definite():
    eps = Scalar("epsilon", Positive(1e-6, 1))
    claim = PositiveDefinite(gram(W) + eps.symbol * sp.KroneckerDelta(a, b), a, b)
    result = prove(theorem(claim, inputs=(W, eps)))
    assert result.status == "proved" and "plus a multiple of the identity" in result.method
    semidefinite = PositiveSemidefinite(gram(W) + eps.symbol * sp.KroneckerDelta(a, b), a, b)
    assert prove(theorem(semidefinite, inputs=(W, eps))).status == "proved"


def test_a_shift_of_unknown_sign_is_not_proved():
    shift = Scalar("s", Real(-1, 1))
    claim = PositiveDefinite(gram(W) + shift.symbol * sp.KroneckerDelta(a, b), a, b)
    assert prove(theorem(claim, inputs=(W, shift))).status == "refuted"


def test_the_sign_of_a_coefficient_is_read_from_its_form():
    rho = Scalar("rho", Positive(1e-3, 1))
    frobenius = sp.Sum(W[c, b] ** 2, (c, 0, c.upper), (b, 0, b.upper))
    assert sign_by_form(rho.symbol * frobenius) == "nonnegative"
    assert sign_by_form(rho.symbol * frobenius + rho.symbol) == "positive"
    assert sign_by_form(frobenius - rho.symbol) is None


def test_catalog_jitter_is_proved_and_float32_sees_it():
    jitter = CATALOG["example48_jitter_makes_gram_positive_definite"]
    assert prove(jitter).status == "proved"
    record, _ = search(jitter, "numpy", "float32", seed=1)
    assert record.status == "passed", record.reason
