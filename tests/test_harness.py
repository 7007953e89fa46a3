"""The proof harness: every theorem × backend × dtype × device × mode, as one generic test.

Catalog theorems and the planted false variants go through the same discovery and checks.
A claim expected to hold must be proved or pass; a claim expected false must be refuted.
Each catalog test attaches its result record to the pytest report (``user_properties``), so that
under ``pytest -n auto`` the records reach the controller; planted variants are fixtures and
never enter a report.
"""

from __future__ import annotations

import json

import pytest

import numeric
from symbolic import AtLeast, discover, prove
from tests.conftest import PLANTED_DIR

CATALOG = discover()
PLANTED = discover([PLANTED_DIR])
THEOREMS = CATALOG.theorems + PLANTED.theorems
# formats in which every false claim here is refuted (scripts/calibrate.py shows the margins);
# float16 and bfloat16 may answer "not-decisive" instead
SEPARATING_DTYPES = ("float64", "float32")


def _numeric_cases():
    for theorem in THEOREMS:
        for backend, dtype, device, mode in numeric.available_configurations(theorem):
            case_id = f"{theorem.name}-{backend}-{dtype}-{device}-{mode}"
            yield pytest.param(theorem, backend, dtype, device, mode, id=case_id)


@pytest.mark.parametrize("theorem", THEOREMS, ids=lambda t: t.name)
def test_symbolic(theorem, record_property):
    result = prove(theorem)
    if theorem in CATALOG.theorems:
        record_property("attnproof.symbolic",
                        json.dumps({"theorem": theorem.name, **result.to_json()}))
    assert result.status not in ("error",), result.method
    if theorem.expect == "holds":
        assert result.status != "refuted", result.counterexample
    else:
        assert result.status not in ("proved", "proved-bounded"), result.method


@pytest.mark.parametrize(("theorem", "backend", "dtype", "device", "mode"), list(_numeric_cases()))
def test_numeric(theorem, backend, dtype, device, mode, record_property):
    record = numeric.check(theorem, backend, dtype, device, mode)
    if theorem in CATALOG.theorems:
        record_property("attnproof.numeric",
                        json.dumps({"theorem": theorem.name, **record.to_json()}))
    if record.status == "skipped":
        pytest.skip(record.reason)
    assert record.status != "error", record.reason
    assert record.max_error_ulps is not None and record.max_error_bits is not None
    if theorem.expect == "holds":
        assert record.status == "passed", _explain(record)
        assert record.instances >= 1
    elif dtype in SEPARATING_DTYPES:
        assert record.status == "failed", "a claim expected false was not refuted"
        assert record.counterexample, "a refutation must show its counterexample"
    else:  # too coarse to see every slip (scripts/calibrate.py), but never fooled by one
        assert record.status in ("failed", "not-decisive"), _explain(record)


@pytest.mark.parametrize("theorem", CATALOG.theorems, ids=lambda t: t.name)
def test_catalog_identities_are_proved_for_all_sizes(theorem):
    if theorem.expect != "holds" or isinstance(theorem.claim, AtLeast):
        pytest.skip("refuted claims and inequalities are settled elsewhere")
    assert prove(theorem).status == "proved"


@pytest.mark.parametrize("theorem", PLANTED.theorems, ids=lambda t: t.name)
def test_planted_variants_are_refuted_exactly(theorem):
    result = prove(theorem)
    assert theorem.expect == "refuted"
    assert result.status == "refuted", result.method
    assert result.counterexample["lhs_minus_rhs"] not in ("0", "-0")


def _explain(record) -> str:
    parts = [f"status {record.status}"]
    if record.counterexample:
        parts.append(f"counterexample {record.counterexample}")
    if record.replay:
        parts.append(f"replay: {record.replay}")
    if record.reason:
        parts.append(record.reason)
    return "; ".join(parts)
