"""A backend that breaks the rounding model declared for it is a finding about the backend, named
with the operation, the argument and the version, and the theorem keeps its verdict: planted
here as NumPy whose float32 exp overflows from x = 40, as MLX 0.32.4's does from x = 88.0
(float32's own log-max is 88.72). A bound that is too small is still refuted on that backend:
only the instances the backend's own exp spoils are set aside."""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from attnproof.numeric import BACKEND_FINDING, NumericRecord
from attnproof.numeric._backends import backend
from attnproof.numeric._driver import Where, settle
from attnproof.numeric._profiles import profile
from attnproof.numeric.kinds import error_bound as route
from attnproof.report.verdict import PROVED, compose
from attnproof.symbolic import FLOAT32, ProofResult, ProofStatus, discover
from attnproof.theorems import rounding

PLANTED = discover([Path(__file__).resolve().parents[1] / "planted"]).by_name()
EARLY = 40.0


class _EarlyExpNumPy:
    """NumPy, but its exp returns inf for every argument above ``EARLY``."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def exp(x):
        x = np.asarray(x)
        return np.where(x > EARLY, np.inf, np.exp(x)).astype(x.dtype)


class _InaccurateExpNumPy(_EarlyExpNumPy):
    """NumPy, but its exp is off by 2^-12 relative: 4096 ulps of float32's u, far above c_exp."""

    @staticmethod
    def exp(x):
        x = np.asarray(x)
        return (np.exp(x) * (1 + 2.0**-12)).astype(x.dtype)


def _row(namespace):
    return dataclasses.replace(backend("numpy"), namespace=lambda module, dtype: namespace())


def _record(theorem, row, seed: int) -> NumericRecord:
    evidence = route.check(theorem, Where(row, FLOAT32, "cpu", "eager"), profile("quick"),
                           seed=seed)
    record = NumericRecord("numpy", "float32", "cpu", "eager", "passed")
    settle(record, evidence)
    return record


def test_an_exp_that_overflows_early_is_measured_where_it_stops():
    domain = route._exp_domain(_row(_EarlyExpNumPy), FLOAT32, "cpu")
    assert domain.early
    assert domain.limit == EARLY and domain.first_infinite == float(
        np.nextafter(np.float32(EARLY), np.float32(np.inf)))
    honest = route._exp_domain(backend("numpy"), FLOAT32, "cpu")
    assert not honest.early and honest.limit == pytest.approx(math.log(np.finfo("f").max))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_instances_past_the_limit_are_outside_the_model_and_the_backend_is_named(seed):
    record = _record(rounding.softmax_unshifted_error_bound, _row(_EarlyExpNumPy), seed)
    assert record.status == "passed", record.reason
    assert record.reason.startswith(BACKEND_FINDING + "numpy 2")  # the backend's version
    assert "float32 exp is not finite from x = 40.000003814697266" in record.reason
    assert " 0 instance(s) past it" not in record.reason and record.undecided > 0
    # the mathematics keeps its verdict: a proof and this record compose to "proved"
    proof = ProofResult(status=ProofStatus.PROVED, method="error analysis")
    assert compose("holds", proof, [record]) == PROVED


def test_without_the_measured_limit_the_backend_still_answers_for_its_exp(monkeypatch):
    # the limit not measured (as if the backend's exp overflowed only at some arguments): each
    # instance above its bound is asked whether the backend's exp broke the model there
    monkeypatch.setattr(route, "_exp_domain",
                        lambda row, dtype, device: route.ExpDomain(math.inf, math.inf, None))
    record = _record(rounding.softmax_unshifted_error_bound, _row(_EarlyExpNumPy), 0)
    assert record.status == "passed", record.reason
    assert record.reason.startswith(BACKEND_FINDING + "numpy 2")
    assert "broke its declared rounding model: its float32 exp(" in record.reason
    assert "= inf where the exact value is" in record.reason


def test_a_bound_too_small_is_still_refuted_on_a_backend_whose_exp_overflows_early():
    plant = PLANTED["planted_softmax_error_without_the_exponentials"]
    record = _record(plant, _row(_EarlyExpNumPy), 0)
    assert record.status == "failed" and record.refutes, record.reason
    example = record.counterexample
    assert example["observed relative error"] > example["bound"]
    assert max(max(row) for row in example["inputs"]["S"]) <= EARLY


def test_an_exp_less_accurate_than_declared_leaves_the_record_unjudged_naming_the_backend():
    record = _record(rounding.softmax_unshifted_error_bound, _row(_InaccurateExpNumPy), 0)
    assert record.status == "skipped", record.reason
    assert record.reason.startswith(BACKEND_FINDING + "numpy 2")
    assert "exp in float32 is off by" in record.reason
    assert "the rounding model is wrong here" in record.reason


def test_the_report_lists_the_backends_fault_apart_from_the_theorems_verdicts():
    from attnproof.report import document, view
    from attnproof.report.results import Report, TheoremResult

    record = _record(rounding.softmax_unshifted_error_bound, _row(_EarlyExpNumPy), 0)
    theorem = TheoremResult("softmax_unshifted_error_bound", "tests", "holds", PROVED, True,
                            numeric=[record])
    report = Report([theorem], [], generated="now")
    (found,) = view.backend_findings(report)
    assert (found.backend, found.dtype) == ("numpy", "float32")
    assert found.what.startswith("numpy 2") and found.what.endswith("3.4e+38)")
    assert found.theorems == ("softmax_unshifted_error_bound",)
    titles = [section.title for section in document.build(report).sections]
    assert titles.index("Backend findings") == titles.index("Summary") + 1
    assert view.explained([record]) == [record]  # shown beside the theorem's evidence too
