"""Verdicts a user can trust: no false "proved", no false alarm (one test per way the checker
was once wrong; the planted theorems are in tests/planted/soundness.py)."""

from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings

from attnproof._runner import run
from attnproof.numeric import check
from attnproof.numeric._strategies import from_theorem, profile
from attnproof.report.view import status_phrase
from attnproof.symbolic import (
    Dim,
    Equals,
    Real,
    Source,
    Tensor,
    Theorem,
    discover,
    prove,
)
from attnproof.symbolic._catalog import CATALOG_DIR

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

PLANTED_DIR = Path(__file__).resolve().parents[1] / "planted"
PLANTED = {t.name: t for t in discover([PLANTED_DIR]).theorems}
CATALOG = {t.name: t for t in discover().theorems}
n = Dim("n")
k, j = n.indices("k j")
SOURCE = Source("test", "unit")


def _status(directory, name, dtypes=("float64",), **options):
    """The composed status of one theorem, checked in this process on NumPy only."""
    report = run([directory], theorem_filter=[name], backends=["numpy"], dtypes=list(dtypes),
                 profile="default", isolate=False, **options)
    (result,) = report.theorems
    return result


# -- 1. "proved" is mathematics: code is checked, lemmas must imply the claim -------------------


def test_a_kernel_wrong_for_large_blocks_is_refuted_not_proved():
    theorem = PLANTED["planted_blockwise_without_rescale_from_block_four"]
    assert prove(theorem).status not in ("proved", "proved-bounded")
    result = _status(PLANTED_DIR, theorem.name)
    assert (result.status, result.ok) == ("refuted", True)


def test_an_implementation_with_proved_lemmas_is_checked_never_proved():
    result = _status(CATALOG_DIR, "online_softmax_blockwise")
    assert result.symbolic.status == "lemmas-proved"
    assert "never proved" in result.symbolic.method
    assert (result.status, status_phrase(result)) == (
        "checked", "lemmas proved; claim checked numerically")


@pytest.mark.parametrize("name", ["quick", "default", "thorough"])
def test_every_integer_value_is_reachable_in_every_profile(name):
    theorem = CATALOG["online_softmax_blockwise"]
    seen = set()

    @settings(max_examples=300, database=None)
    @given(from_theorem(theorem, profile(name)))
    def draw(structure):
        seen.add(structure.integer_map["B"])

    draw()
    assert seen == set(range(1, 9))


# -- 2. overflow: inf against inf is not a pass ----------------------------------------------------

s = Tensor("s", (n,))
wide = Tensor("w", (n,), Real(-800, 800))


def test_sides_that_both_overflow_never_pass():
    false = Theorem(name="overflowing_doubling", source=SOURCE,
                    claim=Equals(sp.exp(1000 + s[k]), 2 * sp.exp(1000 + s[k])), inputs=(s,),
                    expect="refuted")
    record = check(false, "numpy", "float64", profile="quick")
    assert record.status == "too-few", record.reason
    assert record.instances == 0 and record.undecided > 0


def test_rows_that_overflow_are_undecided_and_the_others_decide():
    # e^w / (e^w + 1) is inf / inf = NaN in float64 for w > 709.8, yet 1 in exact arithmetic
    true = Theorem(name="sigmoid_two_ways", source=SOURCE,
                   claim=Equals(sp.exp(wide[k]) / (sp.exp(wide[k]) + 1),
                                1 / (1 + sp.exp(-wide[k]))), inputs=(wide,))
    record = check(true, "numpy", "float64", profile="quick")
    assert record.status == "passed", record.reason
    assert record.undecided > 0 and f"{record.undecided} instance(s) undecided" in record.reason


# -- 3. inequalities are refuted exactly, and structured draws reach measure-zero sets ------------


def test_an_inequality_false_only_in_a_kernel_is_refuted_by_both_routes():
    theorem = PLANTED["planted_every_matrix_is_injective"]
    proof = prove(theorem)
    assert proof.status == "refuted" and float(proof.counterexample["lhs_minus_rhs"]) < 0
    assert check(theorem, "numpy", "float64", profile="quick").status == "failed"


def test_a_true_inequality_with_equality_on_parallel_vectors_is_not_refuted():
    theorem = PLANTED["planted_cauchy_schwarz"]
    assert prove(theorem).status == "not-proved"
    assert check(theorem, "numpy", "float64", profile="quick").status == "passed"


# -- 4. a NaN error scale is never a zero tolerance ------------------------------------------------


def test_a_nan_error_scale_becomes_the_magnitude_of_the_values_compared():
    from attnproof.numeric import _evidence

    values = {"lhs": np.array([[1.0, 0.0]]), "rhs": np.array([[1.0 - 2**-53, 0.0]]),
              "scale": np.array([[np.nan, np.inf]])}
    scale = _evidence.usable_scale(values)
    assert scale.tolist() == [[1.0, 0.0]]  # 0 only where both values are exactly 0
    values["lhs"][0, 1] = np.inf
    assert not _evidence.scale_rows(_evidence.usable_scale(values))[0]


def test_a_log_of_a_mask_passes():
    theorem = PLANTED["planted_softmax_of_log_mask_is_masked_softmax"]
    record = check(theorem, "numpy", "float64", profile="quick")
    assert record.status == "passed", record.reason
    assert record.undecided > 0  # the fully masked rows: 0/0 as written


# -- 5. an at= hook is an assumption ---------------------------------------------------------------


def test_a_claim_placed_by_a_hook_is_never_refuted_where_the_hook_cannot_go():
    proof = prove(PLANTED["planted_hook_points_are_idempotent"])
    assert proof.status == "not-proved" and "at= hook" in proof.method
    assert _status(PLANTED_DIR, "planted_hook_points_are_idempotent").status == "checked"


def test_a_false_claim_behind_a_hook_is_refuted_where_the_hook_goes():
    name = "planted_hook_points_beyond_idempotent"
    result = _status(PLANTED_DIR, name)
    assert (result.status, result.symbolic.status) == ("refuted", "not-proved")
    (record,) = [r for r in result.numeric if r.status == "failed"]
    assert 2.0 in record.counterexample["inputs"]["z"]


def test_a_hook_with_stated_conditions_is_proved_under_them():
    proof = prove(CATALOG["hopfield_fixed_point_scaled_energy"])
    assert proof.status == "proved" and "1 stated condition(s)" in proof.method


# -- 6. IEEE values as written do not end in "error" -----------------------------------------------


def test_a_claim_with_nan_values_is_refuted_not_an_error(tmp_path):
    # float64 gives NaN for log x at x < 0 (rows left undecided); mpmath gives a complex value,
    # which the ground truth once turned into an error. Not among the planted variants: where
    # float64 is finite the claim holds, so its numeric records cannot refute it.
    (tmp_path / "log_square.py").write_text(
        "import sympy as sp\n"
        "from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem\n"
        "n = Dim('n')\nk = n.index('k')\ns = Tensor('s', (n,))\n"
        "log_of_square_halved = Theorem(name='log_of_square_halved', source=Source('t', 'u'),\n"
        "    claim=Equals(sp.log(s[k] ** 2) / 2, sp.log(s[k])), inputs=(s,),\n"
        "    expect='refuted')\n")
    result = _status(tmp_path, "log_of_square_halved")
    assert (result.status, result.ok) == ("refuted", True)
    assert result.symbolic.counterexample["values"] == {"s[0]": "-1"}
    assert all(r.status != "error" for r in result.numeric)


# -- 7. routes that disagree are inconsistent, and fail the run ------------------------------------


def test_a_proof_contradicted_in_float64_is_inconsistent(monkeypatch):
    from wrong_plans import check_with_scaled_rhs

    from attnproof.report import Report, result_from_records
    from attnproof.report.markdown import render

    theorem = CATALOG["free_energy_identity"]
    record = check_with_scaled_rhs(theorem, 1.5, monkeypatch)
    description = {"name": theorem.name, "source": "s", "expect": "holds"}
    result = result_from_records(description, prove(theorem), [record])
    report = Report([result], [])
    assert (result.status, report.ok) == ("inconsistent", False)
    summary = render(report)
    assert summary.index("inconsistent theorem(s)") < summary.index("## Summary")


# -- 8. lower precision counts, and so does the amount of evidence ---------------------------------

def test_a_true_claim_unstable_in_lower_precision_fails_the_theorem(tmp_path):
    # e^s / (e^s + 1) overflows float32 and float16 (inf / inf) at the large rows, s = 100
    (tmp_path / "sigmoid.py").write_text(
        "import sympy as sp\n"
        "from attnproof.symbolic import Dim, Equals, Source, Tensor, Theorem\n"
        "n = Dim('n')\nk = n.index('k')\ns = Tensor('s', (n,))\n"
        "sigmoid_two_ways = Theorem(name='sigmoid_two_ways', source=Source('t', 'u'),\n"
        "    claim=Equals(sp.exp(s[k]) / (sp.exp(s[k]) + 1), 1 / (1 + sp.exp(-s[k]))),\n"
        "    inputs=(s,))\n")
    result = _status(tmp_path, "sigmoid_two_ways", dtypes=("float64", "float16"))
    assert result.symbolic.status == "proved"
    assert (result.status, result.ok) == ("unstable", False)
    assert status_phrase(result) == "holds; unstable in float16"


def test_a_record_needs_a_minimum_of_decided_instances():
    def rarely(np, s, **_):
        return {"valid": np.arange(len(s)) % 64 == 0}  # 4 rows of a batch of 256

    theorem = Theorem(name="rarely_placed", source=SOURCE, claim=Equals(s[k] + s[k], 2 * s[k]),
                      inputs=(s,), at=rarely)
    record = check(theorem, "numpy", "float64", profile="quick")
    assert record.status == "too-few"
    assert record.reason.startswith(f"too few instances ({record.instances})")
    from attnproof.numeric._driver import MINIMUM_DECIDED

    assert record.instances < MINIMUM_DECIDED
