"""Cost claims: the symbolic route, the exact refutation, the counting numeric route, the
statement and bad declarations."""

import importlib.util
from pathlib import Path

import pytest
import sympy as sp

from attnproof.numeric._backends import BACKENDS, available_configurations
from attnproof.numeric._search import check
from attnproof.numeric.kinds.cost import measure
from attnproof.symbolic import Dim, Sizes, Source, Theorem, TheoremError, prove, statement_latex
from attnproof.symbolic.kinds.cost import Cost, Step
from attnproof.theorems import costs, online_softmax

PLANTED = Path(__file__).resolve().parents[1] / "planted" / "kinds_cost.py"


def _planted():
    spec = importlib.util.spec_from_file_location("planted_kinds_cost", PLANTED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


planted = _planted()
FALSE = (planted.planted_standard_attention_memory_linear,
         planted.planted_score_matrix_entries_off_by_t,
         planted.planted_triangular_solve_cost_linear)
TRUE = (planted.planted_tiled_attention_memory_linear,
        planted.planted_triangular_solve_cost_quadratic)


@pytest.mark.parametrize("theorem", FALSE, ids=lambda t: t.name)
def test_the_false_claims_are_refuted_symbolically_and_numerically(theorem):
    assert prove(theorem).status == "refuted"
    assert check(theorem, "numpy", "float64").status == "failed"
    assert check(theorem, "numpy", "float32").status == "failed"


@pytest.mark.parametrize("theorem", TRUE, ids=lambda t: t.name)
def test_the_true_claim_is_proved_and_passes(theorem):
    assert prove(theorem).status == "proved"
    assert check(theorem, "numpy", "float64").status == "passed"
    assert check(theorem, "numpy", "float32").status == "passed"


def test_an_order_refutation_shows_the_ratio_growing():
    found = prove(planted.planted_standard_attention_memory_linear).counterexample
    assert found["limit"] == "oo" and found["growing"] == "n"
    assert "n=1000: 1001000/1000 = 1001" in found["count/claimed"]


def test_an_exact_refutation_gives_the_smallest_sizes():
    found = prove(planted.planted_score_matrix_entries_off_by_t).counterexample
    assert found == {"sizes": "T=1", "counted": "1", "claimed": "2", "count": "T**2"}


def test_the_numeric_route_fails_with_the_sizes_and_both_counts():
    record = check(planted.planted_score_matrix_entries_off_by_t, "numpy", "float64")
    assert record.counterexample["measured"] != record.counterexample["expected"]
    assert "T=" in record.counterexample["sizes"]


def test_code_that_does_not_follow_its_declared_steps_fails_the_count():
    """online_softmax.blockwise_attention computes every score before its key loop: its peak
    is not the tiled algorithm's, so the tiled claim's count fails on it."""
    claim = costs.flash_attention_memory_linear.claim
    theorem = Theorem(
        name="blockwise_with_all_scores", source=Source("test", "§1"),
        claim=Cost(claim.formula, claim.steps, order="O", growing=(costs.n,),
                   implementation=online_softmax.blockwise_attention),
        inputs=costs.flash_attention_memory_linear.inputs)
    assert prove(theorem).status == "proved"  # the declared steps' count is O(n)
    assert check(theorem, "numpy", "float64").status == "failed"  # the code's is not


def test_the_counter_sees_a_temporary_released_before_the_peak():
    import numpy as np

    def two_steps(xp, x):
        y = x @ x.T  # n × n, released below
        del y
        return x + 1  # n × d

    counter = measure(two_steps, {"x": np.ones((4, 2))}, {}, np.float64)
    assert counter.peak == 16 and counter.multiply_adds == 4 * 2 * 4


def test_the_statement_renders_the_count_and_the_order():
    text = statement_latex(costs.standard_attention_memory_quadratic)
    assert text == (r"\#\text{entries} = d n + n^{2} \in \Theta\left(n^{2}\right) \quad "
                    r"(n \to \infty)")
    exact = statement_latex(costs.notebook_score_matrix_entries)
    assert exact == r"\#\text{entries} = T^{2} = T^{2}"


def test_a_cost_is_counted_only_on_backends_whose_arrays_can_be_counted():
    # the claim needs counted arrays, and the rows that give them say so: NumPy's alone
    theorem = costs.notebook_score_matrix_entries
    found = available_configurations(theorem)
    counting = {row.name for row in BACKENDS if theorem.claim.numeric_needs <= row.gives}
    assert theorem.claim.numeric_needs == {"counted arrays"} and counting == {"numpy"}
    assert found and {c[0] for c in found} == counting
    # every configuration of those rows checks it, and none of the others
    assert set(found) == {c for c in available_configurations() if c[0] in counting}


def test_a_need_no_backend_row_names_is_refused_naming_the_theorem():
    import dataclasses

    class NeedsQuantumArrays(Cost):
        numeric_needs = frozenset({"quantum arrays"})

    theorem = costs.notebook_score_matrix_entries
    fields = {f.name: getattr(theorem.claim, f.name) for f in dataclasses.fields(theorem.claim)}
    strange = dataclasses.replace(theorem, claim=NeedsQuantumArrays(**fields))
    with pytest.raises(TheoremError, match=r"notebook_score_matrix_entries: its "
                       r"NeedsQuantumArrays claim needs 'quantum arrays' of a backend"):
        available_configurations(strange)


def _declare(**changes):
    claim = dict(formula=costs.n.symbol, steps=(Step("S", (costs.n, costs.n)),), order="O",
                 growing=(costs.n,))
    claim.update(changes)
    return Theorem(name="bad_cost", source=Source("test", "§1"), claim=Cost(**claim),
                   inputs=(costs.Q,))


@pytest.mark.parametrize("changes, message", [
    (dict(counted="bytes"), "counted must be one of"),
    (dict(order="Omega"), "order must be one of"),
    (dict(growing=()), "names the sizes that grow"),
    (dict(steps=()), "one or more Step"),
    (dict(formula=sp.Symbol("m", positive=True, integer=True)), "symbol m"),
])
def test_bad_declarations_name_the_theorem_and_the_symbol(changes, message):
    with pytest.raises(TheoremError, match=message) as raised:
        _declare(**changes)
    assert "bad_cost" in str(raised.value)


def test_a_growing_size_not_in_the_count_is_rejected():
    with pytest.raises(TheoremError, match="growing size d"):
        _declare(growing=(costs.d,))


def test_an_io_count_sums_the_blocks_moved_and_refuses_a_step_that_does_not_fit():
    from attnproof.symbolic import Dim, Integer, Scalar, Sizes, Source, Tensor, Theorem, prove
    from attnproof.symbolic.kinds.cost import Cost, Step

    n, memory = Dim("n", Sizes(1, 8)), Scalar("M", Integer(4, 64))
    copy = Step("copy", repeat=2, reads=((n,),), writes=((n,),), fast=((2,),))
    fits = Cost(4 * n.symbol, (copy,), counted="io", fast_memory=memory)
    assert fits.count() == 4 * n.symbol
    source, x = Source("tests/kinds/test_cost.py", "io"), Tensor("x", (n,))
    theorem = Theorem(name="copy_io", source=source, claim=fits, inputs=(x, memory))
    assert prove(theorem).status == "proved"
    too_big = Step("hold", reads=((n,),), fast=((memory.symbol + 1,),))
    claim = Cost(n.symbol, (too_big,), counted="io", fast_memory=memory)
    refuted = prove(Theorem(name="hold_io", source=source, claim=claim, inputs=(x, memory),
                            expect="refuted"))
    assert refuted.status == "refuted" and refuted.counterexample["step"] == "hold"


def test_a_step_whose_ranges_depend_on_the_entry_sums_over_its_computed_entries():
    n = Dim("n", Sizes(1, 8))
    i, k = n.indices("i k")
    solve = Step("x", (n,), over=(i,), entries=((i, 0, n.symbol - 1),))
    assert sp.expand(solve.multiply_adds() - n.symbol * (n.symbol - 1) / 2) == 0
    assert solve.entries_held() == n.symbol  # memory: the product of the dimensions
    product = Step("LL", (n, n), over=(i - k + 1,), entries=((i, 0, n.symbol - 1), (k, 0, i)))
    expected = n.symbol * (n.symbol + 1) * (n.symbol + 2) / 6
    assert sp.expand(product.multiply_adds() - expected) == 0
