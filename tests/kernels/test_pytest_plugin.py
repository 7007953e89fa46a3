"""Kernels in the pytest plugin, run in a child pytest: ``--attnproof-kernel SPEC`` makes one
test per cell, a planted bug fails its cell with its replay, a spec that does not load is one
failing test naming it while the others run, and the controller writes the session's
conformance matrix from the cells' records, across xdist workers."""

from __future__ import annotations

import json
import os

import pytest

from attnproof.kernels._pytest import KERNEL_KEY
from attnproof.kernels._schema import problem
from attnproof.pytest_plugin import KERNEL_KEY as PLUGIN_KERNEL_KEY

pytest.importorskip("xdist")

pytestmark = pytest.mark.slow  # a child pytest with its own workers

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORRECT, BUGGY = "tests.kernels.planted:correct", "tests.kernels.planted:dq_missing_scale"


def test_the_plugin_and_the_helpers_share_the_record_key():
    assert KERNEL_KEY == PLUGIN_KERNEL_KEY


@pytest.fixture
def child(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    pytester.makepyfile(test_unrelated="def test_unrelated():\n    pass\n")

    def run(*args):
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=600)

    return run


def _matrix(pytester) -> dict:
    return json.loads((pytester.path / "reports" / "pytest" / "kernels" /
                       "conformance.json").read_text())


def test_each_cell_is_a_test_and_the_matrix_is_written(child, pytester):
    result = child("-n", "2", "--attnproof-kernel", CORRECT, "--attnproof-kernel", BUGGY,
                   "--attnproof-kernel", "nosuch_module:kernel", "--attnproof-kernel-examples",
                   "5", "-k", "backward_dq or load or unrelated")
    # two cells and the unrelated test pass; the buggy cell and the unloadable spec fail
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines([
        "*test_kernel_cell?dq_missing_scale-backward_dq-float32-cpu*",
        "*replay: attnproof replay backward_dq --kernel tests.kernels.planted:dq_missing_scale*",
        "*--attnproof-kernel nosuch_module:kernel: ImportError*",
        "attnproof: wrote *kernels*conformance.md"])
    matrix = _matrix(pytester)
    assert problem(matrix) is None
    cells = {(k["kernel"], c["property"], c["dtype"]): c["status"]
             for k in matrix["kernels"] for c in k["cells"]}
    assert cells == {("correct", "backward_dq", "float32"): "conforms",
                     ("dq_missing_scale", "backward_dq", "float32"): "fails"}
    # no theorem was checked: no theorem report
    assert not (pytester.path / "reports" / "pytest" / "results.json").exists()


def test_a_device_this_machine_lacks_skips_its_cells_and_says_so(child, pytester):
    result = child("--attnproof-kernel", CORRECT, "--attnproof-device", "gpu",
                   "-k", "forward and not load")
    result.assert_outcomes(skipped=1)
    (kernel,) = _matrix(pytester)["kernels"]
    (cell,) = kernel["cells"]
    assert (cell["status"], cell["device"]) == ("skipped", "gpu")
    assert "no device gpu" in cell["reason"]
