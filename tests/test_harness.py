"""The proof harness: every theorem × configuration ``attnproof prove`` checks, as one generic
test (each backend's default mode; ``--attnproof-profile thorough`` adds eager JAX, and
``--attnproof-device D`` keeps one device or kind, as for a user's theorems).

Catalog theorems and the planted false variants go through the same discovery and checks as a
user's theorem directory under the installed plugin (``attnproof/_harness.py``). Each catalog
test attaches its result record to the pytest report, so that under ``pytest -n auto`` the
records reach the controller; planted variants are fixtures and never enter a report.
"""

from __future__ import annotations

import pytest

from attnproof._harness import (
    check_numeric,
    check_symbolic,
    numeric_cases,
    proof_of,
    selection,
)
from attnproof.symbolic import AtLeast, ClaimKind, discover
from tests.conftest import PLANTED_DIR

pytestmark = [pytest.mark.harness, pytest.mark.slow]

CATALOG = discover()
PLANTED = discover([PLANTED_DIR])
THEOREMS = CATALOG.theorems + PLANTED.theorems


def _recorder(theorem, record_property):
    return record_property if theorem in CATALOG.theorems else None


@pytest.mark.parametrize("theorem", THEOREMS, ids=lambda t: t.name)
def test_symbolic(theorem, record_property):
    check_symbolic(theorem, _recorder(theorem, record_property))


def pytest_generate_tests(metafunc):
    """The numeric cases follow the session's --attnproof-profile and --attnproof-device."""
    if metafunc.function is test_numeric:
        metafunc.parametrize(("theorem", "backend", "dtype", "device", "mode"),
                             numeric_cases(THEOREMS, metafunc.config))


def test_numeric(theorem, backend, dtype, device, mode, record_property, request):
    profile, _ = selection(request.config)
    check_numeric(theorem, backend, dtype, device, mode, _recorder(theorem, record_property),
                  profile)


@pytest.mark.parametrize("theorem", CATALOG.theorems, ids=lambda t: t.name)
def test_catalog_identities_are_proved_for_all_sizes(theorem):
    if theorem.expect != "holds" or isinstance(theorem.claim, (AtLeast, ClaimKind)):
        pytest.skip("refuted claims, inequalities and claim kinds are settled elsewhere")
    # code is checked, never proved: what is proved of an implementation is its lemmas
    proved = "lemmas-proved" if theorem.implementation is not None else "proved"
    if isinstance(theorem.claim, ClaimKind):  # a kind's method says what it proves (sizes <= k)
        assert proof_of(theorem).status in ("proved", "proved-bounded")
        return
    assert proof_of(theorem).status == proved


@pytest.mark.parametrize("theorem", PLANTED.theorems, ids=lambda t: t.name)
def test_planted_variants_are_refuted_exactly(theorem):
    result = proof_of(theorem)
    if theorem.expect == "holds":  # a true variant beside the false ones: never refuted
        assert result.status not in ("refuted", "error"), result.counterexample
        return
    if (theorem.implementation is not None or theorem.at is not None
            or not getattr(theorem.claim, "refutes_exactly", True)):
        # user code, a claim asserted only where a hook puts its inputs, or a kind whose
        # symbolic route only bounds: never refuted symbolically, refuted by the numeric checks
        assert result.status not in ("proved", "proved-bounded", "refuted"), result.method
        return
    assert result.status == "refuted", result.method
    if isinstance(theorem.claim, ClaimKind):  # its counterexample says what failed, its own way
        assert result.counterexample, result.method  # (a strict inequality fails at 0)
        return
    assert result.counterexample["lhs_minus_rhs"] not in ("0", "-0")
