"""Low-precision verdicts from proved error bounds: where the error analysis covers both sides
of an equation, a difference above their proved rounding bound refutes a claim false in float64
in the format too (what the calibrated tolerance could not see), makes a true claim inconsistent
(the rounding model broke), and otherwise the record says how close the sides came."""

import dataclasses
from pathlib import Path

import pytest

from attnproof.numeric import check
from attnproof.numeric.kinds import error_bound as route
from attnproof.numeric.kinds import proved_bound
from attnproof.symbolic import discover
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
