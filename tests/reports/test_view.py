"""What every format says: status phrases, errata, totals, reproduce commands, anchors."""

from attnproof import symbolic
from attnproof.report import SymbolicOutcome, view
from attnproof.report.descriptions import assumptions
from tests.cli.samples import sample_report


def test_status_phrases_carry_the_method():
    report = sample_report()
    proved, refuted, _ = report.theorems
    assert view.status_phrase(proved) == "proved for all sizes"
    proved.status, proved.symbolic = "proved-bounded", SymbolicOutcome("proved-bounded", "m", 3)
    assert view.status_phrase(proved) == "proved for sizes ≤ 3"
    proved.status = "checked"
    assert view.status_phrase(proved) == "checked numerically only"
    refuted.status = "failed"
    assert view.status_phrase(refuted) == "FAILED: not refuted"


def test_errata_pair_each_false_claim_with_its_corrections():
    report = sample_report()
    ((claim, fixes),) = view.errata(report)
    assert claim.name == "wrong_claim" and [f.name for f in fixes] == ["right_claim"]
    where, values, replay = view.smallest_counterexample(claim)
    assert (where, replay) == ("exact, symbolic", None)
    assert view.counterexample_summary(values) == "n = 1; x[0] = 1"
    assert view.counterexample_summary({"lhs_minus_rhs": "-2", "v": {"K": [[0.5]]}}) == \
        "lhs − rhs = -2; K = [[0.5]]"
    assert view.counterexample_summary({"v": {"x": list(range(100))}}, limit=12) == "x = [0, 1, …"


def test_a_claim_expected_to_hold_that_fails_with_a_counterexample_is_an_erratum():
    report = sample_report()
    report.theorems[1].expect, report.theorems[1].status = "holds", "failed"
    assert [claim.name for claim, _ in view.errata(report)] == ["wrong_claim"]


def test_totals_add_instances_and_times():
    totals = view.totals(sample_report())
    assert (totals.theorems, totals.as_expected, totals.instances) == (3, 3, 4032)
    assert totals.proof_seconds == 0.25 + 0.1 + 0.1


def test_reproduce_names_the_theorem_file_unless_it_is_in_the_catalog():
    report = sample_report()
    assert view.reproduce_command(report.theorems[0]) == (
        "attnproof prove --theorem softmax_rows --theorems t/softmax.py")
    report.theorems[0].origin = str(symbolic._catalog.CATALOG_DIR / "softmax_jacobian.py")
    assert view.reproduce_command(report.theorems[0]) == "attnproof prove --theorem softmax_rows"


def test_numbers_from_json_strings_and_nones_format_safely():
    assert view.format_ulps("inf") == "∞" and view.format_ulps(None) == "—"
    assert view.format_ulps(2.71e15) == "2.71e+15" and view.format_bits(51.26) == "51.3"


def test_anchor_is_githubs_heading_slug():
    assert view.anchor("softmax_jacobian") == "softmax_jacobian"
    assert view.anchor("A b|c") == "a-bc"


def test_assumptions_say_tensors_are_also_drawn_beyond_their_range(catalog):
    found = {a["name"]: a["domain"] for a in assumptions(catalog.by_name()["softmax_jacobian"])}
    assert found["S"].startswith("real in [-3, 3]; numeric checks also draw instances scaled")
    assert "±100" in found["S"]


def test_a_statement_the_document_denies_is_refuted_as_it_says_and_is_no_erratum():
    report = sample_report()
    report.theorems[1].denied = True
    assert view.status_phrase(report.theorems[1]) == "refuted, as the document says"
    assert view.errata(report) == []


def test_rows_set_aside_and_findings_are_explained_beside_the_evidence_even_when_it_passed():
    from attnproof.numeric import FINDING, NOT_EVALUATED, NumericRecord

    set_aside = NumericRecord("numpy", "float32", "cpu", "eager", "passed",
                              reason=f"12 {NOT_EVALUATED} float32: their exact values ...")
    finding = NumericRecord("jax", "float64", "cpu", "jit", "passed",
                            reason=FINDING + "the implementation cannot run under jax's jit")
    quiet = NumericRecord("numpy", "float64", "cpu", "eager", "passed",
                          reason="no autodiff: derivative claims compare ...")
    assert view.explained([set_aside, finding, quiet]) == [set_aside, finding]
