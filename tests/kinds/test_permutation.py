"""The permutation kind: permutations as declared inputs, proofs by re-indexing, every
permutation of small sizes in the exact search, random ones drawn per instance numerically."""

import numpy as np
import pytest
import sympy as sp

from attnproof.numeric import check
from attnproof.numeric.kinds.permutation import draw_permutations, gather
from attnproof.symbolic import (
    Dim,
    Permutation,
    Permuted,
    Source,
    Tensor,
    Theorem,
    TheoremError,
    prove,
    statement_latex,
)
from attnproof.theorems import reshapes_permutations as catalog
from tests.planted import kinds_permutation as planted

FALSE = planted.planted_reordering_keys_alone_leaves_output
TRUE = planted.planted_reordering_keys_and_values_leaves_output


def test_the_false_variant_is_refuted_with_its_permutation():
    result = prove(FALSE)
    assert result.status == "refuted"
    found = result.counterexample
    assert found["permutations"] == {"pi": "(1, 0)"}  # the identity cannot refute it
    assert float(found["lhs_minus_rhs"]) != 0


def test_the_true_variant_is_proved_by_re_indexing():
    result = prove(TRUE)
    assert result.status == "proved"
    assert "re-indexing" in result.method and "all sizes" in result.method


def test_the_worked_example_claim_as_written_is_refuted_and_its_corrections_proved():
    written = prove(catalog.reordering_keys_values_permutes_output)
    assert written.status == "refuted"
    assert written.counterexample["permutations"]["pi"] != "(0, 1)"
    for theorem in (catalog.attention_invariant_to_reordering_keys_values,
                    catalog.attention_equivariant_to_reordering_queries):
        assert prove(theorem).status == "proved"


@pytest.mark.parametrize("backend", ["numpy", "jax"])
def test_the_numeric_route_fails_the_false_variant_and_passes_the_true_one(backend):
    pytest.importorskip(backend if backend == "numpy" else "jax")
    wrong = check(FALSE, backend, "float64")
    assert wrong.status == "failed", wrong.reason
    assert {"sizes", "permutations", "indices", "lhs", "rhs"} <= set(wrong.counterexample)
    right = check(TRUE, backend, "float64")
    assert right.status == "passed", right.reason
    assert right.instances >= 100


def test_drawn_permutations_include_identity_swap_reversal_and_are_bijections():
    orders = draw_permutations(5, 8, np.random.default_rng(1))
    assert all(sorted(row) == list(range(5)) for row in orders.tolist())
    assert orders[0].tolist() == [0, 1, 2, 3, 4]
    assert sum(a != b for a, b in zip(orders[1], range(5), strict=True)) == 2
    assert orders[2].tolist() == [4, 3, 2, 1, 0]


def test_gather_reads_entry_pi_of_each_row():
    array = np.arange(2 * 3, dtype=float).reshape(2, 3)  # batch 2, n 3
    order = np.array([[2, 0, 1], [0, 1, 2]])
    assert gather(np, array, order, 0).tolist() == [[2, 0, 1], [3, 4, 5]]


def test_latex_writes_the_permutation_inside_the_index():
    assert r"S_{i \pi_{j}}" in statement_latex(TRUE) and r"V_{\pi_{j} a}" in statement_latex(TRUE)


def _declare(claim, inputs):
    return Theorem(name="bad_permutation", source=Source("x", "y"), claim=claim, inputs=inputs)


def test_a_permutation_applied_to_another_dimension_is_refused_naming_it():
    n, m = Dim("n"), Dim("m")
    i = m.index("i")
    S, pi = Tensor("S", (m,)), Permutation("pi", n)
    with pytest.raises(TheoremError, match=r"theorem 'bad_permutation'.*index i runs over m.* pi"):
        _declare(Permuted(S[pi[i]], S[i]), (S, pi))


def test_a_permutation_claim_without_a_permutation_is_refused():
    n = Dim("n")
    S = Tensor("S", (n,))
    with pytest.raises(TheoremError, match="theorem 'bad_permutation'.*Permutation"):
        _declare(Permuted(S[n.index("i")], S[n.index("i")]), (S,))


def test_a_sum_that_uses_its_index_bare_and_permuted_is_not_re_indexed():
    n = Dim("n")
    j = n.index("j")
    S, pi = Tensor("S", (n, n)), Permutation("pi", n)
    theorem = _declare(Permuted(sp.Sum(S[pi[j], j], (j, 0, n.symbol - 1)),
                                sp.Sum(S[j, j], (j, 0, n.symbol - 1))), (S, pi))
    assert prove(theorem).status == "refuted"


def test_scalars_and_domains_are_drawn_for_the_numeric_route():
    from attnproof.symbolic import Positive, Scalar, Simplex

    n = Dim("n")
    i, j = n.indices("i j")
    S, p, pi = Tensor("S", (n, n)), Tensor("p", (n,), Simplex()), Permutation("pi", n)
    T = Scalar("T", Positive(0.5, 2.0))
    total = sp.Sum(p[pi[j]] * sp.exp(S[i, pi[j]] / T.symbol), (j, 0, n.symbol - 1))
    plain = sp.Sum(p[j] * sp.exp(S[i, j] / T.symbol), (j, 0, n.symbol - 1))
    theorem = _declare(Permuted(total, plain), (S, p, T, pi))
    assert prove(theorem).status == "proved"
    assert check(theorem, "numpy", "float64").status == "passed"
