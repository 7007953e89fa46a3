"""The generic proof-harness test, collected by the pytest plugin for a user's theorem
directories (``--attnproof-theorems DIR``) and reused by the repository's own harness.

Each theorem is one symbolic test and one numeric test per backend × dtype × device × mode;
each attaches its record to the pytest report, so the plugin's controller can write the same
report as ``attnproof prove`` (``reports/pytest/`` by default).
"""

from __future__ import annotations

import json

import pytest

from . import numeric
from ._cache import cached_proof
from .numeric import NumericStatus
from .symbolic import ProofResult, Theorem, discover, prove
from .symbolic._prover import PROOF_TIME_LIMIT, ProofStatus

# formats in which every false claim of the catalog and the planted variants is refuted
# (scripts/calibrate.py shows the margins); float16 and bfloat16 may answer "not-decisive"
SEPARATING_DTYPES = ("float64", "float32")


def numeric_cases(theorems) -> list:
    return [pytest.param(theorem, backend, dtype, device, mode,
                         id=f"{theorem.name}-{backend}-{dtype}-{device}-{mode}")
            for theorem in theorems
            for backend, dtype, device, mode in numeric.available_configurations(theorem)]


def proof_of(theorem: Theorem) -> ProofResult:
    """The prover's result, through the same cache as ``attnproof prove``: a proof made by
    either is reused by the other while the statement and the prover's source are unchanged."""
    return cached_proof(theorem, PROOF_TIME_LIMIT, lambda: prove(theorem, PROOF_TIME_LIMIT))


def check_symbolic(theorem: Theorem, record_property=None) -> None:
    """The symbolic route must not err, and must agree with the theorem's ``expect``."""
    result = proof_of(theorem)
    if record_property is not None:
        record_property("attnproof.symbolic",
                        json.dumps({"theorem": theorem.name, **result.to_json()}))
    assert result.status != ProofStatus.ERROR, result.method
    if theorem.expect == "holds":
        assert result.status != ProofStatus.REFUTED, result.counterexample
    else:
        assert result.status not in (ProofStatus.PROVED, ProofStatus.PROVED_BOUNDED), result.method


def check_numeric(theorem: Theorem, backend: str, dtype: str, device: str, mode: str,
                  record_property=None) -> None:
    """One numeric record must agree with the theorem's ``expect`` (skipped where the
    configuration cannot run here)."""
    record = numeric.check(theorem, backend, dtype, device, mode)
    if record_property is not None:
        record_property("attnproof.numeric",
                        json.dumps({"theorem": theorem.name, **record.to_json()}))
    if record.status == NumericStatus.SKIPPED:
        pytest.skip(record.reason)
    assert record.status != NumericStatus.ERROR, record.reason
    if getattr(theorem.claim, "measures_rounding", True):
        assert record.max_error_ulps is not None and record.max_error_bits is not None
    if theorem.expect == "holds":
        # a lower format may lack the instances to pass (a record needs a stated minimum of
        # decided ones); truth in float64 may not
        allowed = ((NumericStatus.PASSED,) if record.decides_truth
                   else (NumericStatus.PASSED, NumericStatus.TOO_FEW))
        if (dtype in theorem.unstable_in and not record.decides_truth
                and not record.refutes):  # declared, and shown
            allowed += (NumericStatus.FAILED,)
        assert record.status in allowed, explain(record)
        assert record.instances >= 1 or record.status == NumericStatus.TOO_FEW
    elif dtype in SEPARATING_DTYPES:
        assert record.status == NumericStatus.FAILED, "a claim expected false was not refuted"
        assert record.counterexample, "a refutation must show its counterexample"
    else:  # too coarse to see every slip, but never fooled by one
        assert record.status in (NumericStatus.FAILED, NumericStatus.NOT_DECISIVE), explain(record)


def explain(record) -> str:
    parts = [f"status {record.status}"]
    if record.counterexample:
        parts.append(f"counterexample {record.counterexample}")
    if record.replay:
        parts.append(f"replay: {record.replay}")
    if record.reason:
        parts.append(record.reason)
    return "; ".join(parts)


# -- the generic test, parametrized by the plugin's configuration -------------------------------


def pytest_generate_tests(metafunc) -> None:
    theorems = metafunc.config.attnproof_catalog.theorems
    if metafunc.function is test_symbolic:
        metafunc.parametrize("theorem", theorems, ids=lambda t: t.name)
    elif metafunc.function is test_numeric:
        metafunc.parametrize(("theorem", "backend", "dtype", "device", "mode"),
                             numeric_cases(theorems))


def test_symbolic(theorem, record_property):
    check_symbolic(theorem, record_property)


def test_numeric(theorem, backend, dtype, device, mode, record_property):
    check_numeric(theorem, backend, dtype, device, mode, record_property)


def load(directories, include_catalog: bool):
    """The theorems the plugin runs: the user's directories, the catalog if asked for."""
    from .symbolic._catalog import CATALOG_DIR

    return discover(([CATALOG_DIR] if include_catalog else []) + list(directories))


def test_theorem_files_load(request):
    errors = request.config.attnproof_catalog.errors
    assert not errors, "\n".join(error.message for error in errors)
