"""The verdict: how a proof result and numeric records combine into a theorem's status."""

import pytest

from attnproof.report.results import is_stability_failure, verdict
from attnproof.symbolic import ProofResult

from .fakes import record

F64 = record()
F64_JAX = record(backend="jax")
F64_FAIL = record(status="failed", counterexample={"x[0]": 1.0})
F64_ERROR = record(status="error", reason="boom")
F32_PASS = record(dtype="float32")
F32_FAIL = record(dtype="float32", status="failed")
MLX64_PASS = record(backend="mlx", dtype="float64")
MLX64_FAIL = record(backend="mlx", dtype="float64", status="failed")
SKIPPED = record(status="skipped", reason="no GPU")
INCONSISTENT = record(status="inconsistent", reason="float64 strays from mpmath")
TOO_FEW = record(status="too-few", reason="too few instances (6)")
TOO_FEW_F16 = record(dtype="float16", status="too-few", reason="too few instances (6)")

CASES = [
    # expect, symbolic status, numeric records, status, ok
    ("holds", "proved", [], "proved", True),
    ("holds", "proved", [F64, F32_PASS], "proved", True),
    ("holds", "proved-bounded", [], "proved-bounded", True),
    ("holds", "not-proved", [F64], "checked", True),
    ("holds", "timeout", [F64_JAX], "checked", True),
    ("holds", None, [F64], "checked", True),
    ("holds", "not-proved", [], "unchecked", False),
    ("holds", "not-proved", [SKIPPED], "unchecked", False),
    ("holds", "not-proved", [F32_PASS], "unchecked", False),
    ("holds", "not-proved", [MLX64_PASS], "unchecked", False),
    ("holds", "refuted", [], "failed", False),
    ("holds", "proved", [F64_FAIL], "inconsistent", False),
    ("holds", "not-proved", [F64, F64_FAIL], "failed", False),
    ("holds", "proved", [F32_FAIL], "unstable", False),
    ("holds", "proved", [MLX64_FAIL], "unstable", False),
    ("holds", "proved", [F64_ERROR], "error", False),
    ("holds", "error", [F64], "error", False),
    ("refuted", "refuted", [], "refuted", True),
    ("refuted", "refuted", [F64_FAIL], "refuted", True),
    ("refuted", "not-proved", [F64_FAIL], "refuted", True),
    ("refuted", "not-proved", [F32_FAIL], "unchecked", False),
    ("refuted", "proved", [], "failed", False),
    ("refuted", "proved-bounded", [], "failed", False),
    ("refuted", "not-proved", [F64], "failed", False),
    ("refuted", "not-proved", [], "unchecked", False),
    ("refuted", "proved", [F64_FAIL], "inconsistent", False),
    ("holds", "not-proved", [F64, F32_FAIL], "unstable", False),
    ("holds", "lemmas-proved", [F64], "checked", True),
    ("holds", "lemmas-proved", [], "unchecked", False),
    ("holds", "proved", [F64, INCONSISTENT], "inconsistent", False),
    ("holds", "not-proved", [F64, TOO_FEW_F16], "checked", True),
    ("holds", "not-proved", [TOO_FEW], "unchecked", False),
    ("refuted", "not-proved", [F64_FAIL, F64_ERROR], "refuted", False),
    ("refuted", "refuted", [F64_ERROR], "refuted", False),
]


@pytest.mark.parametrize(("expect", "proof", "records", "status", "ok"), CASES)
def test_verdict(expect, proof, records, status, ok):
    symbolic = None if proof is None else ProofResult(proof, "method")
    assert verdict(expect, symbolic, records) == (status, ok)


def test_only_non_reference_failures_count_as_stability_failures():
    records = {"f64": F64_FAIL, "f32": F32_FAIL, "mlx64": MLX64_FAIL, "pass": F64}
    flagged = {name for name, r in records.items()
               if is_stability_failure(r)}
    assert flagged == {"f32", "mlx64"}


def _bounded(max_size):
    return ProofResult("proved-bounded", "entry-wise", max_size=max_size)


def test_a_bounded_proof_contradicted_within_its_bound_is_inconsistent():
    inside = record(status="failed", counterexample={"sizes": {"n": 2}})
    assert verdict("holds", _bounded(3), [inside]) == ("inconsistent", False)


def test_a_bounded_proof_says_nothing_beyond_its_bound():
    beyond = record(status="failed", counterexample={"sizes": {"n": 5}})
    assert verdict("holds", _bounded(3), [beyond]) == ("failed", False)


def test_a_declared_instability_is_as_expected_and_an_undeclared_one_is_not():
    f16_fail = record(dtype="float16", status="failed")
    proof = ProofResult("proved", "sum normal form")
    assert verdict("holds", proof, [F64, f16_fail], ("float16",)) == ("unstable", True)
    assert verdict("holds", proof, [F64, f16_fail]) == ("unstable", False)
    assert verdict("holds", proof, [F64, f16_fail, F32_FAIL], ("float16",)) == ("unstable", False)
