"""Every distinct failure is reported: a cell keeps up to three counterexamples of distinct
mechanisms, each with a replay that reproduces it; and a convention read differently in two
dtypes of one kernel is a finding that makes the kernel not ok."""

from __future__ import annotations

import json
import shlex

import pytest

from attnproof.cli import main
from attnproof.kernels import Case, KernelCell, assert_conforms, check_kernel, replay
from attnproof.kernels._check import MAX_COUNTEREXAMPLES, further_seed
from attnproof.kernels._matrix import to_json, to_latex
from attnproof.kernels._mechanism import Mechanism, mechanism_of, size_regime
from attnproof.kernels._run import CaseResult
from attnproof.kernels._schema import problem

from . import planted

EXAMPLES = 10
SPEC = "tests.kernels.planted:two_defects"
# the two planted defects of ``planted.two_defects``, as their mechanisms read
KEYS_TWICE = {"status": "fail", "output": "out", "values": "finite",
              "regime": "n_k past a multiple of 16"}
NAN_ROWS = {"status": "fail", "output": "out", "values": "non-finite",
            "regime": "n_q past a multiple of 16"}


@pytest.fixture(scope="module")
def two_defects():
    return check_kernel(planted.two_defects, properties=["block_lengths"], examples=EXAMPLES,
                        spec=SPEC)


def _failures(cell) -> list[tuple[dict, dict, str]]:
    """(mechanism, counterexample, replay) of each failure a cell kept, the first first."""
    return [(cell.counterexample["mechanism"], cell.counterexample, cell.replay),
            *((o["mechanism"], o["counterexample"], o["replay"]) for o in cell.other_failures)]


def test_two_defects_of_one_cell_are_two_counterexamples(two_defects):
    cell = two_defects.cells[0]
    assert cell.status == "fails"
    failures = _failures(cell)
    mechanisms = [mechanism for mechanism, _, _ in failures]
    assert mechanisms[0] == KEYS_TWICE  # the first, as before: 3 queries x 65 keys
    assert NAN_ROWS in mechanisms[1:]
    assert len({json.dumps(m, sort_keys=True) for m in mechanisms}) == len(mechanisms)
    assert 2 <= len(failures) <= MAX_COUNTEREXAMPLES
    assert len({replay_command for _, _, replay_command in failures}) == len(failures)
    nan_rows = next(example for mechanism, example, _ in failures if mechanism == NAN_ROWS)
    assert (Case.from_json(nan_rows["case"]).n_q, Case.from_json(nan_rows["case"]).n_k) == \
        (65, 3)
    assert "2 more failures of other mechanisms" in cell.reason or \
        "1 more failure of other mechanisms" in cell.reason


def test_each_counterexample_replays_its_own_failure(two_defects):
    for mechanism, example, replay_command in _failures(two_defects.cells[0]):
        case = Case.from_json(example["case"])
        again = replay(planted.two_defects, "block_lengths", "float32", case)
        assert again.failed and mechanism_of(case, again).to_json() == mechanism
        assert again.ratio == example["ratio"]
        assert replay_command.startswith(f"attnproof replay block_lengths --kernel {SPEC} ")
        assert json.loads(shlex.split(replay_command)[-1]) == json.loads(example["case"])


def test_the_printed_replay_of_another_failure_runs_as_printed(two_defects, capsys):
    other = next(o for o in two_defects.cells[0].other_failures if o["mechanism"] == NAN_ROWS)
    assert main(shlex.split(other["replay"])[1:]) == 1  # exit 1: the case fails again
    assert "non-finite" in capsys.readouterr().out


def test_the_matrix_and_the_json_show_every_failure(two_defects):
    markdown, latex = two_defects.to_markdown(), to_latex([two_defects])
    cell = two_defects.cells[0]
    assert f"· {1 + len(cell.other_failures)} failures" in markdown
    assert "Mechanism: finite errors in out; n\\_k past a multiple of 16." in markdown
    assert "Another failure: non-finite out where the truth is finite; n\\_q past a multiple " \
           "of 16" in markdown
    assert markdown.count("Replay:") == 1 + len(cell.other_failures)
    assert latex.count(r"\subsubsection*{Another failure") == len(cell.other_failures)
    data = json.loads(to_json([two_defects]))
    assert problem(data) is None
    written = data["kernels"][0]["cells"][0]
    assert [o["mechanism"] for o in written["other_failures"]] == \
        [o["mechanism"] for o in cell.other_failures]


def test_a_failing_test_names_every_failure_and_its_replay():
    cell = KernelCell(planted.two_defects, "block_lengths", "float32", "cpu", EXAMPLES, SPEC)
    with pytest.raises(pytest.fail.Exception) as failed:
        assert_conforms(cell)
    message = str(failed.value)
    assert "another failure (non-finite out where the truth is finite; n_q past a multiple of " \
           "16)" in message
    assert "replay: attnproof replay block_lengths --kernel tests.kernels.planted:two_defects " \
           "--dtype float32 --device cpu --case '{\"n_q\":65,\"n_k\":3}'" in message


def test_the_correct_kernel_searches_no_further():
    result = check_kernel(planted.correct, properties=["block_lengths", "mask", "gqa"],
                          examples=EXAMPLES)
    assert result.ok and result.convention_findings() == []
    assert all(c.status == "conforms" and c.other_failures == [] and c.counterexample is None
               for c in result.cells)
    assert result.precision_left_out() == []


def test_a_mechanism_is_the_status_output_values_and_size_regime():
    regimes = {(3, 1025): "n_k past 1024", (1025, 3): "n_q past 1024",
               (3, 65): "n_k past a multiple of 16", (65, 65): "n_k past a multiple of 16",
               (17, 3): "n_q past a multiple of 16", (3, 64): "n_k several whole tiles of 16",
               (32, 8): "n_q several whole tiles of 16", (16, 16): "one tile (n_q, n_k ≤ 16)"}
    for (n_q, n_k), regime in regimes.items():
        assert size_regime(Case(n_q=n_q, n_k=n_k)) == regime
    case = Case(n_q=2, n_k=3)
    raised = CaseResult("raised", message="raised: ValueError")
    assert mechanism_of(case, raised) == Mechanism("raised", None, None,
                                                   "one tile (n_q, n_k ≤ 16)")
    finite = CaseResult("fail", 40.0, "dk", detail={"output": "dk", "kernel_error": 0.1})
    nan = CaseResult("fail", float("inf"), "out", detail={"kernel_error": 1.7976931348623157e308})
    convention = CaseResult("fail", float("inf"), "out", detail={"at": {}},
                            conventions={"fully_masked": "nan"})
    assert [mechanism_of(case, r).values for r in (finite, nan, convention)] == \
        ["finite", "non-finite", "convention"]
    assert mechanism_of(case, finite).output == "dk"
    assert len({mechanism_of(case, r) for r in (raised, finite, nan, convention)}) == 4


def test_a_further_search_draws_from_a_seed_of_its_own():
    seeds = [further_seed(0, number) for number in range(MAX_COUNTEREXAMPLES)]
    assert seeds[0] == 0 and len(set(seeds)) == len(seeds)
    assert further_seed(7, 1) == further_seed(7, 1) != further_seed(8, 1)


# -- conventions across dtypes -------------------------------------------------------------------


@pytest.fixture(scope="module")
def by_dtype():
    return check_kernel(planted.fully_masked_by_dtype, properties=["fully_masked_rows"],
                        examples=EXAMPLES)


def test_a_convention_that_changes_with_the_dtype_is_a_finding(by_dtype):
    assert {c.dtype: c.conventions["fully_masked"] for c in by_dtype.cells} == {
        "float32": "zeros", "float64": "nan"}
    assert all(c.status == "conforms" for c in by_dtype.cells)  # each cell on its own is fine
    assert not by_dtype.ok
    (finding,) = by_dtype.convention_findings()
    assert finding == {"convention": "fully_masked",
                       "values": {"zeros": ["cpu float32"], "nan": ["cpu float64"]},
                       "properties": ["fully_masked_rows"],
                       "finding": "fully_masked: zeros in float32, nan in float64"}
    markdown = by_dtype.to_markdown()
    assert "**fully\\_masked: zeros in float32, nan in float64** (fully\\_masked\\_rows)" in \
        markdown
    assert "but 1 convention read differently in two dtypes or devices (not ok)" in markdown
    data = json.loads(to_json([by_dtype]))
    assert problem(data) is None
    assert data["kernels"][0]["ok"] is False
    assert data["kernels"][0]["convention_findings"] == [finding]


def test_the_command_exits_1_on_a_convention_apart(tmp_path, capsys):
    argv = ["kernels", "--kernel", "tests.kernels.planted:fully_masked_by_dtype", "--property",
            "fully_masked_rows", "--examples", "5", "--in-process", "--out", str(tmp_path)]
    assert main(argv) == 1
    assert "fully_masked_by_dtype: fully_masked: zeros in float32, nan in float64: a " \
           "convention read differently" in capsys.readouterr().out
    written = json.loads((tmp_path / "conformance.json").read_text(encoding="utf-8"))
    assert written["kernels"][0]["convention_findings"][0]["convention"] == "fully_masked"


def test_one_convention_in_every_dtype_is_no_finding():
    import dataclasses

    kernel = dataclasses.replace(planted.correct, dtypes=("float32", "float64"))
    result = check_kernel(kernel, properties=["fully_masked_rows"], examples=5)
    assert result.ok and result.convention_findings() == []
