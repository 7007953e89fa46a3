"""A dimension's declared sizes are its domain for every route: no proof, exact search or
counterexample goes below ``Sizes.low`` (or above ``Sizes.high``), and the exact search tries its
structured points (ties, zeros, one-hot rows) at each size from the minimum up."""

import sympy as sp

from attnproof import AtLeast, Dim, Greater, Sizes, Source, Tensor, Theorem, rowsum
from attnproof.symbolic import prove
from attnproof.symbolic._domains import size_assignments, size_steps

HERE = Source("tests", "domains")


def _inverse_size_claim(sizes: Sizes) -> Theorem:
    n_k = Dim("n_k", sizes)
    return Theorem(name="half_at_least_inverse_size", source=HERE,
                   claim=AtLeast(sp.Rational(1, 2), 1 / n_k.symbol),
                   inputs=(Tensor("S", (n_k,)),))


def test_a_claim_true_from_two_on_declared_so_is_not_refuted():
    result = prove(_inverse_size_claim(Sizes(2, 8)))
    assert result.status != "refuted", result.counterexample


def test_the_same_claim_over_every_size_is_refuted_at_one():
    result = prove(_inverse_size_claim(Sizes(1, 8)))
    assert result.status == "refuted" and result.counterexample["sizes"] == {"n_k": 1}


def _spread_is_positive(sizes: Sizes) -> Theorem:
    """Σ_j (S_j − mean S)² > 0: false whenever every score is equal, at every size."""
    n_k = Dim("n_k", sizes)
    (j, k) = n_k.indices("j k")
    S = Tensor("S", (n_k,))
    mean = rowsum(S[k], k) / n_k.symbol
    return Theorem(name="scores_are_spread", source=HERE,
                   claim=Greater(rowsum((S[j] - mean) ** 2, j), 0), inputs=(S,),
                   expect="refuted")


def test_a_strict_inequality_false_at_ties_is_refuted_at_the_declared_minimum():
    result = prove(_spread_is_positive(Sizes(2, 8)))
    assert result.status == "refuted"
    assert result.counterexample["sizes"] == {"n_k": 2}
    assert "n_k ≥ 2 (declared)" in result.method


def test_bounded_routes_walk_sizes_inside_the_domain_only():
    n_q, n_k = Dim("n_q", Sizes(1, 2)), Dim("n_k", Sizes(3, 8))
    theorem = Theorem(name="sizes", source=HERE, claim=AtLeast(n_k.symbol, n_q.symbol),
                      inputs=(Tensor("S", (n_q, n_k)),))
    assert list(size_steps(theorem, 3)) == [3, 4, 5]
    seen = [s for step in size_steps(theorem, 3) for s in size_assignments(theorem, step)]
    assert seen and all(1 <= s["n_q"] <= 2 and s["n_k"] >= 3 for s in seen)
    assert {"n_q": 1, "n_k": 3} in seen and {"n_q": 2, "n_k": 5} in seen


def test_no_step_past_every_maximum_so_a_bounded_proof_never_rests_on_no_sizes():
    n = Dim("n", Sizes(1, 2))
    theorem = Theorem(name="small", source=HERE, claim=AtLeast(n.symbol, 1),
                      inputs=(Tensor("X", (n,)),))
    assert list(size_steps(theorem, 3)) == [1, 2]


def test_exact_draws_stay_inside_a_declared_value_range():
    from attnproof import Positive, Real, Scalar

    x = Scalar("x", Real(-1, 1))
    n = Dim("n")
    (j,) = n.indices("j")
    v = Tensor("v", (n,), Real(-0.5, 0.5))
    w = Tensor("w", (n,), Positive(1e-3, 1))
    true_in_range = Theorem(name="within_ranges", source=HERE,
                            claim=AtLeast(3, x.symbol + 2 * v[j] + w[j]),
                            inputs=(x, v, w))
    assert prove(true_in_range).status != "refuted"  # 2 and 3/2 lie outside the ranges
    false_in_range = Theorem(name="outside", source=HERE,
                             claim=AtLeast(sp.Rational(1, 4), v[j]), inputs=(v,),
                             expect="refuted")
    result = prove(false_in_range)
    assert result.status == "refuted"  # at v = 1/2, the range's end
    assert all(abs(sp.Rational(value)) <= sp.Rational(1, 2)
               for value in result.counterexample["values"].values())
