"""A results file of the wrong shape is refused before rendering: one line naming the field,
exit code 2, no traceback, for `report`, `list` and `show` alike."""

import json
from pathlib import Path

import pytest

from attnproof.cli import EXIT_USAGE, main
from attnproof.report.results import report_to_json, write_json
from attnproof.report.schema import ResultsError, load_results, problem

from .samples import sample_report

COMMITTED = Path(__file__).parents[2] / "reports" / "reference" / "results.json"


def _valid() -> dict:
    return json.loads(json.dumps(report_to_json(sample_report())))


def _broken(change) -> dict:
    data = _valid()
    change(data)
    return data


WRONG_SHAPES = {
    "a list": ([], "$: [] is not of type 'object'"),
    "a number for a name": (
        _broken(lambda d: d["theorems"][1].update(name=7)), "$.theorems[1].name: 7"),
    "an unknown status": (
        _broken(lambda d: d["theorems"][0]["numeric"][1].update(status="ok")),
        "$.theorems[0].numeric[1].status: 'ok' is not one of"),
    "a missing field": (
        _broken(lambda d: d["theorems"][2].pop("ok")),
        "$.theorems[2]: 'ok' is a required property"),
    "a list for seconds": (
        _broken(lambda d: d["theorems"][0]["symbolic"].update(seconds=[])),
        "$.theorems[0].symbolic.seconds"),
    "an error without its message": (
        _broken(lambda d: d["errors"][0].pop("message")),
        "$.errors[0]: 'message' is a required property"),
    "a string for theorems": (
        _broken(lambda d: d.update(theorems="none")), "$.theorems: 'none' is not of type"),
    "an unknown field": (
        _broken(lambda d: d["theorems"][0].update(extra=1)), "'extra' was unexpected"),
    "an unknown schema": (_broken(lambda d: d.update(schema=99)), "$.schema: 99 is not one of"),
    "a NaN error, as JSON cannot hold it": (
        _broken(lambda d: d["theorems"][0]["numeric"][0].update(max_error_ulps=float("nan"))),
        "$.theorems[0].numeric[0].max_error_ulps: 'NaN' is not valid"),
    "a NaN error, as the writer spells one": (
        _broken(lambda d: d["theorems"][1]["numeric"][0].update(max_error_bits="nan")),
        "$.theorems[1].numeric[0].max_error_bits: 'nan' is not valid"),
    "a negative error": (
        _broken(lambda d: d["theorems"][0]["numeric"][0].update(ground_truth_ulps=-0.5)),
        "$.theorems[0].numeric[0].ground_truth_ulps: -0.5 is less than the minimum of 0"),
    "an infinite time, as JSON cannot hold it": (
        _broken(lambda d: d["theorems"][0]["symbolic"].update(seconds=float("inf"))),
        "$.theorems[0].symbolic.seconds: 'Infinity' is not valid"),
    "a negative count": (
        _broken(lambda d: d["theorems"][0]["numeric"][1].update(instances=-1280)),
        "$.theorems[0].numeric[1].instances: -1280 is less than the minimum of 0"),
    "a negative count of examples": (
        _broken(lambda d: d["theorems"][1]["numeric"][1].update(examples=-1)),
        "$.theorems[1].numeric[1].examples: -1 is less than the minimum of 0"),
    "a theorem name used twice": (
        _broken(lambda d: d["theorems"][2].update(name=d["theorems"][0]["name"])),
        "$.theorems[2].name: 'softmax_rows' is already the name of $.theorems[0]"),
}


def test_the_committed_results_and_every_sample_are_valid(tmp_path):
    assert load_results(COMMITTED).theorems
    path = tmp_path / "results.json"
    write_json(sample_report(), path)
    assert problem(json.loads(path.read_text())) is None


def test_older_schemas_without_their_later_fields_are_valid():
    data = _valid()
    data["schema"] = 1
    for key in ("partial_reason", "run"):
        del data[key]
    for theorem in data["theorems"]:
        del theorem["assumptions"]
        for record in theorem["numeric"]:
            del record["ground_truth_ulps"]
    assert problem(data) is None


def test_an_infinite_error_of_a_failed_check_is_valid():
    data = _valid()
    record = data["theorems"][1]["numeric"][0]
    assert record["status"] == "failed"
    record.update(max_error_ulps="inf", max_error_bits="inf")
    assert problem(data) is None


@pytest.mark.parametrize("case", sorted(WRONG_SHAPES))
@pytest.mark.parametrize("command", [["report"], ["list", "--no-catalog"], ["show", "x"]])
def test_a_results_file_of_the_wrong_shape_is_a_usage_error_naming_the_field(
        tmp_path, capsys, case, command):
    data, expected = WRONG_SHAPES[case]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(data))
    assert main([*command, "--json", str(path)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith(f"attnproof: {path} is not a results file: ") and expected in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content, expected", [
    (None, "is a directory, not a results file"),
    ("{", "is not valid JSON: Expecting property name"),
    (b"\xff\xfe", "is not UTF-8 text"),
    ("[" * 100_000, "nested too deeply"),
])
def test_an_unreadable_results_file_is_a_usage_error(tmp_path, capsys, content, expected):
    path = tmp_path / "results.json"
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    for command in (["report"], ["show", "x"], ["list", "--no-catalog"]):
        assert main([*command, "--json", str(path)]) == EXIT_USAGE
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err


def test_the_error_shows_control_characters_from_the_file(tmp_path, capsys):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_broken(lambda d: d["theorems"][0].update(status="\x1b[2J"))))
    assert main(["report", "--json", str(path)]) == EXIT_USAGE
    assert "\x1b" not in capsys.readouterr().err


def test_load_results_raises_a_results_error_naming_the_field(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_broken(lambda d: d["theorems"][0].update(ok="yes"))))
    with pytest.raises(ResultsError, match=r"\$\.theorems\[0\]\.ok: 'yes' is not of type"):
        load_results(path)


def test_the_schema_file_has_exactly_the_keys_the_writer_writes():
    from attnproof.report import schema as results_schema

    from .test_results_json import NUMERIC_KEYS, SYMBOLIC_KEYS, THEOREM_KEYS
    schema = results_schema.schema_validator("attnproof.report", results_schema.SCHEMA_FILE).schema
    defs = schema["$defs"]
    assert set(defs["theorem"]["properties"]) == THEOREM_KEYS
    assert set(defs["symbolic"]["properties"]) == SYMBOLIC_KEYS
    assert set(defs["numeric"]["properties"]) == NUMERIC_KEYS
    assert set(schema["properties"]) == set(report_to_json(sample_report()))


def test_the_schema_allows_exactly_the_statuses_the_code_writes():
    from attnproof.numeric import NumericStatus
    from attnproof.report import TheoremStatus
    from attnproof.report.schema import SCHEMA_FILE
    from attnproof.symbolic._prover import ProofStatus

    schema_file = Path(__file__).parents[2] / "attnproof" / "report" / SCHEMA_FILE
    schema = json.loads(schema_file.read_text())
    found = {}

    def walk(node, path=()):
        if isinstance(node, dict):
            if "status" in node.get("properties", {}):
                found[path[-1]] = set(node["properties"]["status"]["enum"])
            for key, value in node.items():
                walk(value, path + (key,))

    walk(schema)
    assert sorted(map(sorted, found.values())) == sorted(
        sorted(e) for e in (TheoremStatus, ProofStatus, NumericStatus))


@pytest.fixture
def schema_checks(monkeypatch) -> list:
    """One entry per schema check of a results file from here on."""
    from attnproof.report import schema as results_schema

    checked: list = []
    real_problem = results_schema.problem
    monkeypatch.setattr(results_schema, "problem",
                        lambda data: checked.append(1) or real_problem(data))
    return checked


def _read_twice(path) -> None:
    """Two commands reading ``path``, each with its own memo read from the cache directory."""
    from attnproof import _cache

    for _ in range(2):
        memo = _cache.ValidResults()
        assert memo.load(path).theorems
        memo.save()


def test_a_results_file_is_checked_once_for_its_bytes_and_again_when_they_change(
        tmp_path, cache_dir, schema_checks):
    """list and show read every run under reports/ on each call: bytes found valid before are
    not checked again, and any other bytes are (a valid file edited into an invalid one is
    refused)."""
    from attnproof import _cache

    path = tmp_path / "results.json"
    write_json(sample_report(), path)
    _read_twice(path)
    assert len(schema_checks) == 1
    data = json.loads(path.read_text())
    data["theorems"][0]["status"] = "ok"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultsError, match="status"):
        _cache.ValidResults().load(path)
    assert len(schema_checks) == 2


def test_without_a_cache_every_read_is_checked(tmp_path, monkeypatch, schema_checks):
    from attnproof.numeric import _compile_cache

    monkeypatch.setenv(_compile_cache.NO_CACHE_VARIABLE, "1")
    path = tmp_path / "results.json"
    write_json(sample_report(), path)
    _read_twice(path)
    assert len(schema_checks) == 2
