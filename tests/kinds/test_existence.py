"""Existence claims: a witness proves, a wrong witness or an unsolvable linear system refutes,
and a witness that depends on what the claim quantifies over is refused."""

import pytest
import sympy as sp

from attnproof.symbolic import (
    Defined,
    Dim,
    Equals,
    Exists,
    Real,
    Scalar,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    prove,
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
