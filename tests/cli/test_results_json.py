"""The results JSON: its exact schema, a lossless round trip, and atomic writes."""

import json
import os
from pathlib import Path

import pytest

from attnproof.numeric import NumericStatus
from attnproof.report import results
from attnproof.report.results import TheoremStatus, read_json, report_to_json, write_json
from attnproof.symbolic._prover import ProofStatus

from .samples import sample_report

THEOREM_KEYS = {"name", "source", "expect", "status", "ok", "corrects", "denied", "note",
                "statement_latex", "definitions_latex", "origin", "assumptions", "symbolic",
                "numeric"}
SYMBOLIC_KEYS = {"status", "method", "max_size", "seconds", "counterexample", "residual"}
NUMERIC_KEYS = {"backend", "dtype", "device", "mode", "status", "examples", "instances",
                "max_error_ulps", "max_error_bits", "seconds", "counterexample", "replay",
                "reason", "ground_truth_ulps", "undecided", "refutes"}


def test_schema_has_exactly_the_documented_keys(tmp_path):
    path = tmp_path / "results.json"
    write_json(sample_report(), path)
    data = json.loads(path.read_text())
    assert set(data) == {"schema", "partial", "partial_reason", "run", "generated",
                         "environment", "theorems", "errors"}
    assert data["schema"] == 4
    assert set(data["environment"]) == {"python", "sympy", "numpy", "jax", "mlx", "devices"}
    for theorem in data["theorems"]:
        assert set(theorem) == THEOREM_KEYS
        assert set(theorem["symbolic"]) == SYMBOLIC_KEYS
        assert all(set(record) == NUMERIC_KEYS for record in theorem["numeric"])
    assert [set(e) for e in data["errors"]] == [{"path", "theorem", "message"}]


def test_round_trip_is_lossless(tmp_path):
    path = tmp_path / "results.json"
    report = sample_report()
    write_json(report, path)
    assert report_to_json(read_json(path)) == report_to_json(report)


def test_statuses_read_back_as_enums_that_write_the_same_strings(tmp_path):
    path = tmp_path / "results.json"
    write_json(sample_report(), path)
    report = read_json(path)
    assert [type(t.status) for t in report.theorems] == [TheoremStatus] * 3
    assert {type(r.status) for t in report.theorems for r in t.numeric} == {NumericStatus}
    assert {type(t.symbolic.status) for t in report.theorems} == {ProofStatus}
    assert json.loads(path.read_text())["theorems"][1]["numeric"][1]["status"] == "not-decisive"


def test_non_finite_numbers_are_written_as_strings_in_valid_json(tmp_path):
    report = sample_report()
    report.theorems[0].numeric[0].max_error_bits = float("inf")
    path = tmp_path / "results.json"
    write_json(report, path)

    def reject(constant):
        raise ValueError(f"non-standard JSON constant {constant}")

    data = json.loads(path.read_text(), parse_constant=reject)
    assert data["theorems"][0]["numeric"][0]["max_error_bits"] == "inf"


def test_schema_1_files_still_read_with_defaults_for_the_new_fields(tmp_path):
    data = report_to_json(sample_report())
    data["schema"] = 1
    for key in ("partial_reason", "run"):
        del data[key]
    for theorem in data["theorems"]:
        del theorem["assumptions"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    report = read_json(path)
    assert (report.partial_reason, report.run) == ("", {})
    assert all(t.assumptions == [] for t in report.theorems)


def test_schema_2_records_read_without_a_ground_truth(tmp_path):
    data = report_to_json(sample_report())
    data["schema"] = 2
    for theorem in data["theorems"]:
        for record in theorem["numeric"]:
            del record["ground_truth_ulps"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    records = [r for t in read_json(path).theorems for r in t.numeric]
    assert records and all(r.ground_truth_ulps is None for r in records)


def test_the_schema_document_names_every_key():
    document = (Path(results.__file__).parent / "RESULTS.md").read_text()
    data = report_to_json(sample_report())
    keys = set(data) | THEOREM_KEYS | SYMBOLIC_KEYS | NUMERIC_KEYS
    assert {key for key in keys if f"`{key}`" not in document} == set()
    assert document.startswith(f"# `results.json`, schema {results.SCHEMA}\n")


def test_other_schema_versions_are_rejected(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema": 99, "theorems": [], "errors": []}))
    with pytest.raises(ValueError, match="schema"):
        read_json(path)


class Unprintable:
    def __str__(self):
        raise RuntimeError("cannot serialise")


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name != "results.json")


def test_failed_serialisation_leaves_the_previous_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("previous")
    report = sample_report()
    report.theorems[0].symbolic.counterexample = {"x": Unprintable()}
    with pytest.raises(RuntimeError):
        write_json(report, path)
    assert path.read_text() == "previous"
    assert _leftovers(tmp_path) == []


def test_failed_replace_leaves_the_previous_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "results.json"
    path.write_text("previous")

    def refuse(source, target):
        assert os.path.getsize(source) > 0  # the whole text was written before the swap
        raise OSError("disk full")

    monkeypatch.setattr(results.os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        write_json(sample_report(), path)
    assert path.read_text() == "previous"
    assert _leftovers(tmp_path) == []
