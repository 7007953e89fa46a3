"""Existence claims: a witness proves, a wrong witness or an unsolvable linear system refutes,
and a witness that depends on what the claim quantifies over is refused. Negated existence: a
witness or an exact solve refutes, an inconsistent exact system proves for small sizes."""

from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric._search import search
from attnproof.symbolic import (
    Defined,
    Dim,
    Equals,
    Exists,
    NotExists,
    Real,
    Scalar,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    discover,
    prove,
    statement_latex,
)

n = Dim("n")
i = n.index("i")
x, c = Tensor("x", (n,)), Tensor("c", (n,))
t = Scalar("t", Real(-2, 2))
HERE = Source("tests/kinds/test_existence.py", "existence")


def exists(lhs, witness=None, expect="holds"):
    claim = Exists(c, Equals(lhs, c[i] * x[i]), for_all=(x,), witness=witness)
    return Theorem(name="scaling", source=HERE, claim=claim, inputs=(x, t), expect=expect)


def test_a_witness_that_makes_an_identity_proves_the_claim():
    result = prove(exists(t.symbol ** 2 * x[i], Defined("c", (i,), t.symbol ** 2)))
    assert result.status == "proved" and "witness" in result.method


def test_a_wrong_witness_refutes_the_statement_that_names_it():
    result = prove(exists(t.symbol ** 2 * x[i], Defined("c", (i,), t.symbol), expect="refuted"))
    assert result.status == "refuted" and result.counterexample


def test_without_a_witness_a_solvable_system_is_no_proof_and_an_unsolvable_one_refutes():
    assert prove(exists(3 * x[i])).status == "not-proved"
    refuted = prove(exists(x[i] ** 2, expect="refuted"))
    assert refuted.status == "refuted" and "linear solve" in refuted.method


def test_a_witness_may_not_depend_on_what_the_claim_holds_for_every_value_of():
    with pytest.raises(TheoremError, match="depends on x"):
        exists(x[i], Defined("c", (i,), sp.Sum(x[i], (i, 0, n.symbol - 1))))


# -- negated existence --------------------------------------------------------------------------

PLANTED = {t.name: t for t in discover([Path(__file__).resolve().parents[1] / "planted"]).theorems
           if t.origin.endswith("kinds_negated_existence.py")}
CATALOG = discover().by_name()
NOT_LINEAR_FALSE = ("planted_scaled_map_is_not_linear",
                    "planted_scaled_map_is_not_linear_with_witness")
NOT_LINEAR_TRUE = "planted_absolute_value_is_not_linear"


@pytest.mark.parametrize("name", NOT_LINEAR_FALSE)
def test_a_map_that_is_linear_after_all_refutes_its_negated_existence(name):
    result = prove(PLANTED[name])
    assert result.status == "refuted" and result.counterexample


def test_the_exact_solve_shows_the_tensor_that_exists():
    found = prove(PLANTED["planted_scaled_map_is_not_linear"]).counterexample
    assert found["sizes"] == {"d": 1}
    assert found["M"] == f"[[{2 * int(found['values']['W[0, 0]'])}]]"  # M = 2W
    assert "vanishes identically in x" in found["equations"]


def test_a_map_no_matrix_gives_is_proved_for_small_sizes_with_a_pair_of_inputs():
    result = prove(PLANTED[NOT_LINEAR_TRUE])
    assert result.status == "proved-bounded" and result.max_size == 3
    assert "already at the pair x = " in result.method


def test_with_inputs_outside_for_all_no_drawn_value_proves_non_existence():
    c2 = Tensor("c", (n,))
    claim = NotExists(c2, Equals(t.symbol * sp.Abs(x[i]), c2[i] * x[i]), for_all=(x,))
    theorem = Theorem(name="scaled_abs", source=HERE, claim=claim, inputs=(x, t))
    assert prove(theorem).status == "not-proved"  # at t = 0 the map is 0, which is linear


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_numeric_route_fits_the_unknown_by_least_squares(dtype):
    failed, _ = search(PLANTED["planted_scaled_map_is_not_linear"], "numpy", dtype, seed=1)
    assert failed.status == "failed" and "fits lhs = rhs" in failed.counterexample["found"]
    passed, _ = search(PLANTED[NOT_LINEAR_TRUE], "numpy", dtype, seed=1)
    assert passed.status == "passed" and passed.instances >= 100, passed.reason


def test_the_feedforward_claims_of_worked_example_48():
    as_written = prove(CATALOG["example48_ffn_adds_expressiveness"])
    assert as_written.status == "refuted" and "witness M" in as_written.method
    corrected = prove(CATALOG["example48_ffn_with_relu_is_not_linear"])
    assert corrected.status == "proved-bounded"


def test_the_statement_renders_nexists_and_a_negated_claim_needs_for_all():
    assert r"\nexists" in statement_latex(PLANTED[NOT_LINEAR_TRUE])
    with pytest.raises(TheoremError, match="for_all"):
        Theorem(name="bad", source=HERE, inputs=(x,),
                claim=NotExists(c, Equals(x[i], c[i] * x[i])))
