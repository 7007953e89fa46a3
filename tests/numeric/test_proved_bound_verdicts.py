"""Low-precision verdicts from proved error bounds: where the error analysis covers both sides
of an equation, a difference above their proved rounding bound refutes a claim false in float64
in the format too (what the calibrated tolerance could not see), makes a true claim inconsistent
(the rounding model broke), and otherwise the record says how close the sides came."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from attnproof.numeric import check
from attnproof.numeric._backends import backend
from attnproof.numeric._profiles import profile
from attnproof.numeric.kinds import error_bound as route
from attnproof.numeric.kinds import proved_bound
from attnproof.symbolic import FLOAT16, discover
from tests.backends import require_backend

CATALOG = discover([Path(__file__).resolve().parents[2] / "theorems"]).by_name()


# W·W against Wᵀ·W, and attention "linear in the queries" with a scalar c: false, and within
# bfloat16's calibrated tolerance (not decisive there without the proved bound)
@pytest.mark.parametrize(("name", "backend"), [
    ("learned_metric_index_order", "numpy"), ("learned_metric_index_order", "mlx"),
    ("example48_attention_linear_in_queries", "jax")])
def test_a_claim_false_in_float64_is_refuted_in_bfloat16_by_the_proved_bound(name, backend):
    require_backend(backend)
    record = check(CATALOG[name], backend, "bfloat16", "cpu", profile="quick")
    assert record.status == "failed" and record.refutes, record.reason
    assert "refuted in bfloat16 too" in record.reason
    example = record.counterexample
    assert (example["|lhs − rhs| as written"]
            > example["proved bound of the two sides' rounding"])


def test_a_true_claim_says_how_close_it_came_to_the_proved_bound():
    record = check(CATALOG["linear_attention_reassociation"], "numpy", "float16", "cpu",
                   profile="quick")
    assert record.status == "passed", record.reason
    assert "within the proved bound" in record.reason


def test_a_broken_rounding_model_makes_a_true_claim_inconsistent(monkeypatch):
    # a model that promises float32 rounds like float64: the sides' honest float32 difference
    # exceeds the bound it proves, and the record must say so, not pass
    key = ("numpy", "float32")
    monkeypatch.setitem(route.ROUNDING_MODEL, key,
                        dataclasses.replace(route.ROUNDING_MODEL[key], u=2.0**-53))
    record = check(CATALOG["linear_attention_reassociation"], "numpy", "float32", "cpu",
                   profile="quick")
    assert record.status == "inconsistent", record.reason
    assert "rounding model declared for numpy float32 does not hold" in record.reason


@pytest.mark.parametrize("name", ["masking_rows_sum_to_one",  # a mask: outside the draws
                                  "softmax_jacobian"])  # derivatives: no rounding rule
def test_equations_the_analysis_does_not_cover_keep_the_calibrated_verdict(name):
    assert proved_bound.bounded_sides(CATALOG[name]) is None


def test_an_intermediate_that_overflows_puts_the_row_outside_the_model():
    # Vᵀ softmax(βKξ) as written computes e^(βs)·v before dividing by the sum: at βs = 10.57
    # and v = −2.24 that product is −8.7e4, beyond float16's largest 65504, while every
    # node's own value (the quotient, the sums) is in range. The model assumes no overflow,
    # so the row gets no bound; judged, its −inf would read as a broken rounding model.
    theorem = CATALOG["hopfield_update_is_attention"]
    row = {"K": [[2.564453, 2.806641, -2.912109], [2.181641, 2.886719, 2.744141]],
           "V": [[1.518555, -0.364746, 0.530273, -2.236328],
                 [1.356445, -1.319336, -1.856445, 2.177734]],
           "xi": [0.673828, 0.664551, -0.703125], "beta": 1.874023}
    arrays = {name: np.asarray([value], np.float64) for name, value in row.items()}
    sizes = {"N": 2, "d_k": 3, "d_v": 4}
    model = route.ROUNDING_MODEL[("numpy", "float16")]
    evaluation = route.Evaluation(theorem, backend("numpy"), FLOAT16, "cpu",
                                  out=list(theorem.free_indices))
    ((_, side), _) = proved_bound.bounded_sides(theorem)
    watch = route.RangeWatch(FLOAT16, 1)
    with np.errstate(all="ignore"):
        written = evaluation.bounded(side, model, sizes, arrays, watch).computed
    assert np.isneginf(written).any()  # the overflow is real in float16
    assert watch.outside.all()


def test_the_judge_searches_its_batches_from_the_records_seed():
    # the same seed draws the same batches (the replay's promise); another seed draws others
    theorem, row = CATALOG["linear_attention_reassociation"], backend("numpy")
    chosen = profile("quick")
    first, again, other = (proved_bound.compare(theorem, row, FLOAT16, "cpu", chosen, seed)
                           for seed in (3, 3, 4))
    assert first is not None and first.instances > 0
    assert (first.instances, first.worst) == (again.instances, again.worst)
    assert (first.instances, first.worst) != (other.instances, other.worst)
