"""The spectral claim kind: condition numbers and extreme singular values, proved by reducing
each matrix to symbols, refuted exactly from the characteristic polynomial, checked numerically
with intervals around each singular value."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric import Configuration
from attnproof.numeric._backends import backend, unavailable_reason
from attnproof.numeric._search import search
from attnproof.symbolic import (
    Dim,
    Sizes,
    Source,
    Spectral,
    Tensor,
    Theorem,
    TheoremError,
    cond,
    discover,
    prove,
    singular_max,
    singular_min,
    statement_latex,
)
from attnproof.symbolic.kinds.spectral import exact_extremes

PLANTED_DIR = Path(__file__).resolve().parents[1] / "planted"
PLANTED = {t.name: t for t in discover([PLANTED_DIR]).theorems
           if t.origin.endswith("kinds_spectral.py")}
CATALOG = discover().by_name()
FALSE = sorted(name for name, t in PLANTED.items() if t.expect == "refuted")
TRUE = sorted(name for name, t in PLANTED.items() if t.expect == "holds")
SOURCE = Source("test", "unit")

n = Dim("n", Sizes(1, 4))
a, b, c = n.indices("a b c")
W = Tensor("W", (n, n))


def theorem(claim, inputs=(W,), name="t", expect="holds"):
    return Theorem(name=name, source=SOURCE, claim=claim, inputs=inputs, expect=expect)


def test_there_are_planted_variants_both_ways():
    assert len(FALSE) >= 3 and len(TRUE) >= 2


@pytest.mark.parametrize("name", FALSE)
def test_planted_false_claims_are_refuted_exactly(name):
    result = prove(PLANTED[name])
    assert result.status == "refuted", result.method
    assert result.counterexample["sizes"] and result.counterexample["terms"]


@pytest.mark.parametrize("name", TRUE)
def test_planted_true_claims_are_proved_for_all_sizes(name):
    result = prove(PLANTED[name])
    assert result.status == "proved", result.method
    assert "all sizes" in result.method and "sigma_min = 0" in result.method


def test_exact_singular_values_follow_the_column_convention():
    assert exact_extremes(sp.Matrix([[3, 0], [0, 4]])) == (4, 3)
    assert exact_extremes(sp.Matrix([[1, 1]])) == (sp.sqrt(2), 0)  # wide: σ_min = 0
    assert exact_extremes(sp.Matrix([[1, 1], [1, 1]]))[1] == 0  # rank one
    assert exact_extremes(sp.zeros(2, 2)) == (0, 0)


def test_an_infinite_condition_number_is_compared_in_the_extended_reals():
    found = prove(PLANTED["planted_ridge_worsens_conditioning"]).counterexample
    assert float(found["lhs"]) > float(found["rhs"])
    wide = Dim("m", Sizes(1, 3))
    e = wide.index("e")
    X = Tensor("X", (wide, n))  # a 1 × n X at n ≥ 2 has κ(X) = ∞ = κ(XᵀX)
    gram = sp.Sum(X[e, a] * X[e, b], (e, 0, e.upper))
    claim = Spectral(cond(X[e, a], e, a), "<=", cond(gram, a, b))
    assert prove(theorem(claim, inputs=(X,))).status == "proved"
    refuted = prove(theorem(Spectral(cond(gram, a, b), "<=", 1), inputs=(X,), expect="refuted"))
    assert "inf" in (refuted.counterexample["lhs"], refuted.counterexample["lhs_minus_rhs"])


def test_the_identity_has_condition_number_one():
    claim = Spectral(cond(2 * sp.KroneckerDelta(a, b), a, b), "=", 1)
    assert prove(theorem(claim)).status == "proved"


def test_a_relation_about_an_irreducible_matrix_is_proved_only_when_it_holds_for_every_m_le_m():
    # σ_min ≤ σ_max holds for any matrix: reduced to symbols m ≤ M
    claim = Spectral(singular_min(W[a, b], a, b), "<=", singular_max(W[a, b], a, b))
    assert prove(theorem(claim)).status == "proved"
    # κ(W) ≤ 2 does not: a search finds W with a larger condition number
    refuted = prove(theorem(Spectral(cond(W[a, b], a, b), "<=", 2), expect="refuted"))
    assert refuted.status == "refuted"


def test_strict_equality_cases_refute_a_strict_claim():
    gram = sp.Sum(W[c, a] * W[c, b], (c, 0, c.upper))
    claim = Spectral(cond(gram, a, b), "<", cond(W[c, a], c, a) ** 2)
    assert prove(theorem(claim, expect="refuted")).status == "refuted"


def test_statements_render_kappa_and_sigma():
    text = statement_latex(CATALOG["example48_ridge_shifts_the_spectrum"])
    assert r"\kappa" in text and r"\sigma_{\max}" in text and r"\sigma_{\min}" in text


@pytest.mark.parametrize("bad, message", [
    (lambda: Spectral(cond(W[a, b], a, b), ">=", 1), "relation"),
    (lambda: Spectral(cond(W[a, c], a, b), "=", 1), "column index b"),
    (lambda: Spectral(sp.exp(cond(W[a, b], a, b)), "=", 1), "exp"),
    (lambda: Spectral(sp.Integer(1), "=", 1), "names singular_max"),
])
def test_bad_declarations_are_refused_naming_the_theorem(bad, message):
    with pytest.raises(TheoremError, match=message):
        theorem(bad(), name="bad")


def test_only_float64_and_float32_are_checked_numerically():
    found = [Configuration("numpy", dtype, "cpu", "eager") for dtype in
             ("float64", "float32", "float16", "bfloat16")]
    kept = PLANTED[TRUE[0]].claim.numeric_configurations(found)
    assert [c.dtype for c in kept] == ["float64", "float32"]


def _backends():
    rows = [("numpy", "float64"), ("numpy", "float32")]
    for name in ("jax", "mlx"):
        if unavailable_reason(backend(name)) is None:
            rows.append((name, "float32"))
            break
    return rows


@pytest.mark.parametrize("backend_name,dtype", _backends())
@pytest.mark.parametrize("name", FALSE)
def test_the_numeric_route_fails_planted_false_claims(name, backend_name, dtype):
    record, _ = search(PLANTED[name], backend_name, dtype, seed=1)
    assert record.status == "failed", record.reason
    assert "lhs in [" in record.counterexample["found"]


@pytest.mark.parametrize("backend_name,dtype", _backends())
@pytest.mark.parametrize("name", TRUE)
def test_the_numeric_route_passes_planted_true_claims(name, backend_name, dtype):
    record, _ = search(PLANTED[name], backend_name, dtype, seed=1)
    assert record.status == "passed", record.reason
    assert record.instances >= 100


def test_catalog_verdicts():
    expected = {
        "example48_ridge_improves_conditioning": "proved",
        "example48_ridge_shifts_the_spectrum": "proved",
        "example48_normal_equations_square_the_condition_number": "proved",
    }
    assert {name: str(prove(CATALOG[name]).status) for name in expected} == expected
