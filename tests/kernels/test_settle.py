"""A kernel checker's cell is settled by the numeric driver's rules (``settle_cell``), in a
kernel's words: each rule gives its word, every word is one record status, and no module of the
kernel checker chooses a cell's status on its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from attnproof.kernels import Cell
from attnproof.numeric import MINIMUM_DECIDED_CASES, CellStatus, NumericStatus, settle_cell
from attnproof.numeric._driver import OurFault
from attnproof.numeric.route import CannotDecide, Evidence, Failure, Inconsistent, Unsupported

KERNELS = Path(__file__).resolve().parents[2] / "attnproof" / "kernels"
ENOUGH = MINIMUM_DECIDED_CASES


def _settled(evidence: Evidence, failed_as: str = "fail") -> Cell:
    cell = Cell("forward", "float32", "cpu", CellStatus.SKIPPED)
    settle_cell(cell, evidence, failed_as)
    return cell


def _failure() -> Failure:
    return Failure({"case": {}}, "error 3x the reference's")


@pytest.mark.parametrize("evidence, failed_as, status", [
    (Evidence(examples=ENOUGH, instances=ENOUGH), "fail", CellStatus.CONFORMS),
    (Evidence(examples=20, instances=ENOUGH - 1), "fail", CellStatus.TOO_FEW),
    (Evidence(examples=1, instances=1, outcome=_failure()), "fail", CellStatus.FAILS),
    (Evidence(examples=1, instances=0, outcome=_failure()), "raised", CellStatus.RAISED),
    (Evidence(outcome=_failure()), "layout", CellStatus.LAYOUT),
    (Evidence(outcome=_failure()), "declaration", CellStatus.DECLARATION),
    (Evidence(examples=1, outcome=_failure()), "crashed", CellStatus.CRASHED),
    (Evidence(examples=1, outcome=_failure()), "timed-out", CellStatus.TIMED_OUT),
    (Evidence(outcome=Unsupported("the kernel has no mask")), "fail", CellStatus.NOT_APPLICABLE),
], ids=["conforms", "too-few", "fails", "raised", "layout", "declaration", "crashed",
        "timed-out", "n/a"])
def test_each_rule_gives_its_word(evidence, failed_as, status):
    assert _settled(evidence, failed_as).status == status


def test_too_few_says_how_many_and_the_minimum():
    cell = _settled(Evidence(examples=9, instances=ENOUGH - 1))
    assert cell.reason == f"{ENOUGH - 1} of 9 cases decided (needs {ENOUGH})"


def test_a_failure_outranks_too_few_and_keeps_the_notes():
    cell = _settled(Evidence(examples=1, instances=0, outcome=_failure(),
                             notes=("2 of 3 cases refused by the kernel: no float64",)))
    assert cell.status == CellStatus.FAILS
    assert cell.reason == "error 3x the reference's; 2 of 3 cases refused by the kernel: no float64"


@pytest.mark.parametrize("evidence", [
    Evidence(examples=ENOUGH, instances=ENOUGH, outcome=OurFault("ours")),
    Evidence(instances=ENOUGH, outcome=CannotDecide("rounding")),
    Evidence(instances=ENOUGH, outcome=Inconsistent("strays"))])
def test_a_status_no_cell_can_have_is_refused(evidence):
    with pytest.raises(ValueError, match="a kernel cell cannot be"):
        _settled(evidence)


def test_every_word_is_one_record_status():
    assert {word: word.record_status for word in CellStatus} == {
        CellStatus.CONFORMS: NumericStatus.PASSED, CellStatus.FAILS: NumericStatus.FAILED,
        CellStatus.RAISED: NumericStatus.FAILED, CellStatus.LAYOUT: NumericStatus.FAILED,
        CellStatus.DECLARATION: NumericStatus.FAILED, CellStatus.CRASHED: NumericStatus.FAILED,
        CellStatus.TIMED_OUT: NumericStatus.FAILED, CellStatus.TOO_FEW: NumericStatus.TOO_FEW,
        CellStatus.NOT_APPLICABLE: NumericStatus.SKIPPED, CellStatus.SKIPPED:
        NumericStatus.SKIPPED}


def test_a_cell_read_from_its_json_word_is_the_same_status():
    cell = Cell("forward", "float32", "cpu", "too-few")
    assert cell.status is CellStatus.TOO_FEW and cell.to_json()["status"] == "too-few"
    with pytest.raises(ValueError):
        Cell("forward", "float32", "cpu", "not decisive")


# -- nothing in the kernel checker settles a cell on its own --------------------------------

WORDS = {status.value for status in CellStatus}
# a cell that did not run here is skipped before any search: the one word the checker names
MAY_NAME = {"SKIPPED"}
# modules that read a cell's status to show it, never choose one
DISPLAYS = {"_matrix.py", "_pytest.py"}


def _chosen_statuses(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "CellStatus" and node.attr not in MAY_NAME:
            found.append(f"{path.name}:{node.lineno} CellStatus.{node.attr}")
        if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Attribute) and target.attr == "status"
                for target in node.targets) and isinstance(node.value, ast.Constant) \
                and node.value.value in WORDS:
            found.append(f"{path.name}:{node.lineno} assigns {node.value.value!r}")
    return found


def test_no_module_of_the_kernel_checker_chooses_a_cell_status():
    chosen = [use for path in sorted(KERNELS.glob("*.py")) if path.name not in DISPLAYS
              for use in _chosen_statuses(path)]
    assert chosen == []


def test_the_check_catches_a_module_that_settles_a_cell(tmp_path):
    planted = tmp_path / "_planted.py"
    planted.write_text("def check(cell):\n    cell.status = 'conforms'\n"
                       "    cell.status = CellStatus.FAILS\n", encoding="utf-8")
    assert len(_chosen_statuses(planted)) == 2
