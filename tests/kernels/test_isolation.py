"""A kernel cannot take `attnproof kernels` down: each cell is checked in a worker process, and
a kernel that segfaults, calls os._exit or hangs on a case fails that cell only, naming the
case and its replay, while every other cell of the run is checked and written.

No test depends on how fast the machine is: a planted kernel's good cases take milliseconds,
far inside the per-case limit these tests give (``CASE_TIMEOUT``), and every subprocess has a
limit only as a safety net, never asserted on.
"""

import json
import shlex
import signal
import subprocess
import sys
import types
from pathlib import Path

import pytest

from attnproof import _workers
from attnproof.cli import main

from . import planted

REPO = Path(__file__).resolve().parents[2]
CASE_TIMEOUT = 10
SAFETY_NET = 900  # seconds: a run that hangs fails here instead of stalling the suite
# what each planted kernel of tests/kernels/faulty.py does on its causal cases, and its cell
FAULTS = {"segfaults": ("crashed", "worker died from signal SIGSEGV"),
          "hangs": ("timed-out", f"worker killed: no result within the {CASE_TIMEOUT} s limit "
                                 "per case (--case-timeout)"),
          "exits": ("crashed", "worker exited with code 3")}
GOOD_PROPERTIES = ("forward", "padding")  # checked before and after the causal cell
ONE_CELL = ["--property", "forward", "--dtype", "float32", "--examples", "5"]


def _kernels_command(out: Path) -> list[str]:
    kernels = [word for name in FAULTS for word in ("--kernel", f"tests.kernels.faulty:{name}")]
    properties = [word for name in ("forward", "causal", "padding")
                  for word in ("--property", name)]
    return [sys.executable, "-m", "attnproof", "kernels", *kernels, *properties,
            "--dtype", "float32", "--examples", "5", "--case-timeout", str(CASE_TIMEOUT),
            "--out", str(out)]


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("faulty")
    completed = subprocess.run(_kernels_command(out), cwd=REPO, capture_output=True, text=True,
                               timeout=SAFETY_NET)
    return completed, out


def _cells(out: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((out / "conformance.json").read_text(encoding="utf-8"))
    return {(kernel["kernel"], cell["property"]): cell for kernel in data["kernels"]
            for cell in kernel["cells"]}


@pytest.mark.slow
def test_a_kernel_that_crashes_hangs_or_exits_fails_that_cell_and_the_run_goes_on(faulty_run):
    completed, out = faulty_run
    assert completed.returncode == 1, completed.stderr  # a failing cell: the documented exit
    assert "Traceback" not in completed.stderr
    cells = _cells(out)
    for name, (status, reason) in FAULTS.items():
        stopped = cells[(name, "causal")]
        assert stopped["status"] == status
        assert stopped["reason"].startswith(reason + " during case b=")
        assert json.loads(stopped["counterexample"]["case"])["causal_flag"] is True
        assert stopped["replay"].startswith(f"attnproof replay causal --kernel "
                                            f"tests.kernels.faulty:{name} --dtype float32 ")
        assert f"{name} causal float32 cpu: " in completed.stdout  # said as it happens
        for good in GOOD_PROPERTIES:  # of this kernel, before and after the worker stopped
            assert cells[(name, good)]["status"] == "conforms", cells[(name, good)]
    matrix = (out / "conformance.md").read_text(encoding="utf-8")
    assert "### causal, float32, cpu: timed-out" in matrix
    assert "The case it was running: b=" in matrix


@pytest.mark.slow
def test_the_replay_of_a_crashed_case_crashes_again(faulty_run):
    _, out = faulty_run
    replay = shlex.split(_cells(out)[("segfaults", "causal")]["replay"])
    completed = subprocess.run([sys.executable, "-m", *replay], cwd=REPO, capture_output=True,
                               text=True, timeout=SAFETY_NET)
    assert completed.returncode == -signal.SIGSEGV  # a replay runs in its own process


@pytest.mark.slow
def test_in_process_the_cells_run_here_and_a_worker_needs_a_kernel_it_can_import(
        tmp_path, monkeypatch, capsys):
    made_here = types.ModuleType("kernel_made_here")  # importable here only, not in a worker
    made_here.mine = planted.correct
    monkeypatch.setitem(sys.modules, "kernel_made_here", made_here)
    argv = ["kernels", "--kernel", "kernel_made_here:mine", *ONE_CELL, "--out", str(tmp_path)]
    assert main([*argv, "--in-process"]) == 0
    assert _cells(tmp_path)[("correct", "forward")]["status"] == "conforms"
    assert main(argv) == 1
    cell = _cells(tmp_path)[("correct", "forward")]
    assert cell["status"] == "crashed" and cell["replay"] is None
    assert cell["reason"].startswith("ImportError: kernel_made_here:mine: no module named")
    assert cell["reason"].endswith("during the loading of the kernel")
    assert "Stopped before any case ran." in (tmp_path / "conformance.md").read_text("utf-8")


def test_a_limit_per_case_counts_from_the_latest_case_not_the_cell():
    job = _workers._Job(object(), budget=5.0, per_step=True)
    job.begun, job.heard = job.assigned + 1.0, job.assigned + 100.0
    assert job.deadline - job.assigned == pytest.approx(105.0)
