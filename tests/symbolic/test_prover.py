"""The provers: what they prove, what they refuse to prove, and how they report it."""

import sympy as sp

from attnproof.symbolic import (
    AtLeast,
    Defined,
    Dim,
    Equals,
    Mask,
    Positive,
    Scalar,
    Simplex,
    Source,
    Tensor,
    Theorem,
    fully_masked,
    kl,
    masked_softmax,
    prove,
    softmax,
)
from attnproof.symbolic._normal_form import residual

n = Dim("n")
m = Dim("m")
i, j, k = n.indices("i j k")
r = m.index("r")
x = Tensor("x", (n,))
w = Tensor("w", (m, n))
SOURCE = Source("test", "unit")


def total(expr, index):
    return sp.Sum(expr, (index, 0, index.upper))


def test_sums_over_different_bound_names_are_equal():
    assert residual(total(x[j], j) - total(x[k], k)) == 0


def test_delta_under_a_sum_is_eliminated_within_range():
    assert residual(total(sp.KroneckerDelta(j, i) * x[j], j) - x[i]) == 0


def test_index_free_factors_leave_the_sum():
    c = sp.Symbol("c", real=True)
    assert residual(total(c * x[j] * sp.exp(c), j) - c * sp.exp(c) * total(x[j], j)) == 0


def test_adjacent_ranges_merge():
    p = sp.Symbol("p", integer=True, nonnegative=True)
    q = sp.Symbol("q", integer=True, positive=True)
    f = sp.exp(x[j])
    split = sp.Sum(f, (j, 0, p - 1)) + sp.Sum(f, (j, p, p + q - 1))
    assert residual(split - sp.Sum(f, (j, 0, p + q - 1))) == 0


def test_denominators_under_a_sum_are_factored_to_one_spelling():
    c = sp.Symbol("c", positive=True)
    row_total = total(sp.exp(w[r, k]), k) + 1  # an Add, as a masked softmax's denominator is
    numerator = w[r, i]
    assert residual(total(numerator / (c * row_total), r)
                    - total(numerator / row_total, r) / c) == 0
    assert residual(total(numerator / sp.expand(row_total**2), r)
                    - total(numerator / row_total**2, r)) == 0
    assert residual(total(numerator / row_total, r) - total(numerator / row_total**2, r)) != 0


def test_a_false_identity_leaves_a_residual():
    assert residual(total(x[j] ** 2, j) - total(x[j], j) ** 2) != 0


def test_simplex_assumption_is_what_proves_the_kl_gap():
    beta = sp.Symbol("beta", positive=True)
    A = softmax(w[r, j], j, beta)
    p_simplex = Tensor("p", (m, n), Simplex())
    p_free = Tensor("p", (m, n), Positive())
    for p, expected in ((p_simplex, "proved"), (p_free, "refuted")):
        claim = Equals(kl(p[r, j], A, j), total(p[r, j] * sp.log(p[r, j]), j)
                       - beta * total(p[r, j] * w[r, j], j)
                       + sp.log(total(sp.exp(beta * w[r, k]), k)))
        theorem = Theorem("kl_expansion", SOURCE, claim,
                          inputs=(w, p, Scalar("beta", Positive())))
        assert prove(theorem).status == expected


def test_refutation_gives_a_counterexample_that_evaluates_nonzero():
    T = Scalar("T", Positive())
    A = Defined("A", (r, j), softmax(w[r, j], j, 1 / T.symbol))
    theorem = Theorem(
        "jacobian_missing_beta", SOURCE,
        Equals(sp.Derivative(A[r, j], w[r, k]), A[r, j] * (sp.KroneckerDelta(j, k) - A[r, k])),
        inputs=(w, T), definitions=(A,), expect="refuted",
    )
    result = prove(theorem)
    assert result.status == "refuted"
    assert result.counterexample["values"]["T"] != "1"
    assert abs(float(result.counterexample["lhs_minus_rhs"])) > 1e-6


def test_a_proof_past_its_time_limit_is_recorded_as_timeout(monkeypatch):
    import attnproof.symbolic._prover as prover
    from attnproof.theorems.softmax_jacobian import softmax_jacobian

    def endless(theorem, bound):
        while True:  # spends CPU time, as a proof does
            sum(range(1000))

    monkeypatch.setattr(prover, "_attempt", endless)
    result = prove(softmax_jacobian, time_limit=0.2)
    assert result.status == "timeout" and "limit of CPU time" in result.method
    assert result.seconds >= 0.2


def test_the_time_limit_counts_the_proofs_cpu_time_not_the_machines_load(monkeypatch):
    # a proof that waits (as one does on a busy machine, its CPU taken by others) is not cut
    # short by the wall clock: its verdict must not depend on the load
    import time

    import attnproof.symbolic._prover as prover
    from attnproof.theorems.softmax_jacobian import softmax_jacobian

    attempt = prover._attempt

    def waits_then_proves(theorem, bound):
        time.sleep(0.5)
        return attempt(theorem, bound)

    monkeypatch.setattr(prover, "_attempt", waits_then_proves)
    result = prove(softmax_jacobian, time_limit=0.3)
    assert result.status == "proved", result


def test_a_crash_inside_the_prover_is_recorded_as_error(monkeypatch):
    import attnproof.symbolic._prover as prover
    from attnproof.theorems.softmax_jacobian import softmax_jacobian

    def crash(theorem, bound):
        raise StopIteration("inside sum_simplify")

    monkeypatch.setattr(prover, "_attempt", crash)
    result = prove(softmax_jacobian)
    assert result.status == "error"
    assert "StopIteration" in result.method


def test_inequalities_are_left_to_numeric_evidence():
    from attnproof.symbolic import AtLeast

    theorem = Theorem("square_nonnegative", SOURCE, AtLeast(x[i] ** 2, 0), inputs=(x,))
    result = prove(theorem)
    assert result.status == "not-proved"
    assert "numeric" in result.method


def test_bounded_proof_is_labelled_with_its_bound():
    # true, but summing the index values themselves is beyond the sum normal form
    size = n.symbol
    theorem = Theorem("gauss_sum", SOURCE, Equals(total(j, j), size * (size - 1) / 2), inputs=(x,))
    result = prove(theorem, bound=2)
    assert result.status == "proved-bounded"
    assert result.max_size == 2


def test_worked_numbers_are_judged_to_the_printed_digits():
    from attnproof.symbolic import Rounds

    third = sp.Rational(1, 3)
    assert prove(Theorem("third", SOURCE, Rounds([[third]], [["0.333"]]), inputs=())).status \
        == "proved"
    assert prove(Theorem("third_coarse", SOURCE, Rounds([[third]], [["0.3"]]), inputs=())).status \
        == "proved"
    wrong = prove(Theorem("third_wrong", SOURCE, Rounds([[third, 1]], [["0.334", "1.000"]]),
                          inputs=()))
    assert wrong.status == "refuted"
    assert wrong.counterexample == {"entries": {"(1, 1)": "0.333333, printed 0.334"}}


# -- 0/1 masks --------------------------------------------------------------------------------

mask = Tensor("M", (m, n), Mask())
s = m.index("s")  # a second row index


def _masked_residual(expr):
    return residual(expr, mask_bases=[mask.base])


def test_mask_entries_and_fully_masked_indicators_are_idempotent():
    none_kept = fully_masked(mask[r, j], j)
    assert _masked_residual(mask[r, j] ** 3 - mask[r, j]) == 0
    assert _masked_residual(none_kept ** 2 - none_kept) == 0
    assert residual(mask[r, j] ** 2 - mask[r, j]) != 0  # only because M is declared a mask


def test_fully_masked_indicator_annihilates_the_rows_kept_entries():
    none_kept = fully_masked(mask[r, j], j)
    assert _masked_residual(none_kept * mask[r, i]) == 0
    assert _masked_residual(none_kept * total(mask[r, k] * sp.exp(x[k]), k)) == 0


def test_fully_masked_indicator_keeps_what_it_does_not_decide():
    none_kept = fully_masked(mask[r, j], j)
    p = sp.Symbol("p", integer=True, positive=True)
    first_p = sp.Product(1 - mask[r, k], (k, 0, p - 1))  # only the first p keys of the row
    assert _masked_residual(none_kept * mask[s, i]) != 0  # another row
    assert _masked_residual(none_kept * total(sp.exp(x[k]), k)) != 0  # no mask in the sum
    assert _masked_residual(first_p * mask[r, i]) != 0  # i may lie past p
    assert _masked_residual(none_kept * (1 - mask[r, i])) != 0
    kept_total = total(mask[r, k] * sp.exp(x[k]), k)  # 0 where none_kept is 1: 1/0 there
    assert _masked_residual(none_kept * mask[r, i] / kept_total) != 0


def test_masked_rows_sum_to_one_only_with_the_fully_masked_correction():
    T = Scalar("T", Positive())
    A = Defined("A", (r, j), masked_softmax(w[r, j], mask[r, j], j, 1 / T.symbol))

    def rows_sum_to(rhs, expect):
        return Theorem(f"rows_{expect}", SOURCE, Equals(total(A[r, j], j), rhs),
                       inputs=(w, mask, T), definitions=(A,), expect=expect)

    assert prove(rows_sum_to(1 - fully_masked(mask[r, j], j), "holds")).status == "proved"
    wrong = prove(rows_sum_to(1, "refuted"))
    assert wrong.status == "refuted"
    assert wrong.counterexample["lhs_minus_rhs"] == "-1"  # a fully masked row sums to 0


def test_a_power_of_a_sum_under_a_sum_becomes_a_multiple_sum():
    square = total(total(w[r, j] * x[j], j) ** 2, r)
    double = sp.Sum(w[r, j] * x[j] * w[r, k] * x[k], (j, 0, j.upper), (k, 0, k.upper),
                    (r, 0, r.upper))
    assert residual(square - double) == 0
    assert residual(square - sp.Sum(w[r, j] ** 2 * x[j] ** 2, (j, 0, j.upper),
                                    (r, 0, r.upper))) != 0


def test_a_vanishingly_small_worked_number_rounds_like_zero():
    from attnproof.symbolic._prover import _rounds_to

    tiny = sp.N(sp.exp(-sp.Integer(10) ** 9), 50)
    assert _rounds_to(tiny, "0.00000000")
    assert _rounds_to(-tiny, "0.0")
    assert not _rounds_to(tiny, "0.01")
    assert not _rounds_to(tiny, "-1.0")


# -- lemmas, hooks and inequalities: "proved" only for what is shown ----------------------------


def test_a_true_lemma_unrelated_to_a_false_claim_proves_nothing():
    theorem = Theorem(name="unrelated_lemma", source=SOURCE,
                      claim=Equals(2 * x[i], x[i] + x[i] + 1), inputs=(x,),
                      lemmas=(Equals(x[i] * 2, x[i] + x[i]),), expect="refuted")
    assert prove(theorem).status == "refuted"


def test_lemmas_that_imply_the_claim_prove_it_and_say_so():
    theorem = Theorem(name="implied", source=SOURCE,
                      claim=Equals(total(x[j], j) * 2, 2 * total(x[k], k)), inputs=(x,),
                      lemmas=(Equals(total(x[j], j) * 2, 2 * total(x[k], k)),))
    result = prove(theorem)
    assert result.status == "proved" and "imply the claim" in result.method


def test_lemmas_that_do_not_imply_the_claim_leave_it_to_the_numeric_checks():
    # asserted only where a hook puts x in {0, 1}; the lemma is true but beside the point
    theorem = Theorem(name="not_implied", source=SOURCE, claim=Equals(x[i] ** 2, x[i]),
                      inputs=(x,), at=lambda np, x, **_: {"x": (x > 0).astype(float)},
                      lemmas=(Equals(x[i] + x[i], 2 * x[i]),))
    result = prove(theorem)
    assert result.status == "lemmas-proved" and "not shown to imply" in result.method


def test_an_inequality_is_searched_for_an_exact_counterexample():
    theorem = Theorem(name="square_above_itself", source=SOURCE,
                      claim=AtLeast(x[i] ** 2, x[i]), inputs=(x,), expect="refuted")
    result = prove(theorem)
    assert result.status == "refuted" and float(result.counterexample["lhs_minus_rhs"]) < 0
