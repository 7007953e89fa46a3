"""Implications from a rank property to a relation: refuted by an exact low-rank instance where
the relation fails, proved when the relation holds on its own, checked numerically on the drawn
instances with the property."""

from pathlib import Path

import pytest

from attnproof.numeric._search import search
from attnproof.symbolic import (
    Equals,
    Implies,
    RankAtMost,
    TheoremError,
    discover,
    prove,
    statement_latex,
)

PLANTED_DIR = Path(__file__).resolve().parents[1] / "planted"
PLANTED = {t.name: t for t in discover([PLANTED_DIR]).theorems
           if t.origin.endswith("kinds_implication.py")}
CATALOG = discover().by_name()
FALSE = "planted_rank_one_attention_has_a_dominant_key"
TRUE = "planted_rank_one_attention_rows_sum_to_one"


def test_a_false_implication_is_refuted_by_an_exact_low_rank_instance():
    result = prove(PLANTED[FALSE])
    assert result.status == "refuted", result.method
    found = result.counterexample
    assert found["hypothesis"].startswith("rank 1") and "fails" in found["conclusion"]


def test_a_conclusion_that_holds_on_its_own_proves_the_implication():
    result = prove(PLANTED[TRUE])
    assert result.status == "proved" and "without the hypothesis" in result.method


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_numeric_route_judges_the_instances_with_the_hypothesis(dtype):
    failed, _ = search(PLANTED[FALSE], "numpy", dtype, seed=1)
    assert failed.status == "failed" and "rank 1" in failed.counterexample["found"]
    passed, _ = search(PLANTED[TRUE], "numpy", dtype, seed=1)
    assert passed.status in ("passed", "too-few"), passed.reason
    assert passed.undecided > 0  # most draws lack the hypothesis and do not count


def test_the_catalog_refutes_ill_conditioning_implies_concentration_with_uniform_weights():
    result = prove(CATALOG["example48_ill_conditioned_attention_concentrates"])
    assert result.status == "refuted"
    assert set(result.counterexample["values"].values()) == {"0"}  # Q = 0: uniform weights
    assert result.counterexample["lhs_minus_rhs"] == "0"


def test_the_statement_renders_the_arrow():
    assert r"\Longrightarrow" in statement_latex(PLANTED[TRUE])


def test_a_hypothesis_that_is_not_a_rank_bound_is_refused():
    claim = PLANTED[TRUE].claim
    assert isinstance(claim.conclusion, Equals) and isinstance(claim.hypothesis, RankAtMost)
    with pytest.raises(TheoremError, match="RankAtMost hypothesis"):
        Implies(claim.conclusion, claim.conclusion)
    with pytest.raises(TheoremError, match="concludes Equals"):
        Implies(claim.hypothesis, claim.hypothesis)
