"""SIGKILL of `attnproof prove` (what the out-of-memory killer and a CI job's hard timeout do)
loses no finished theorem: each one is in the journal beside the results as soon as it
finishes, the orphaned worker exits without a word, and the next run with the same options
recovers the finished theorems without checking them again. The tests wait on the run's own
progress (files a theorem writes when reached), never on the clock."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from . import theorem_files as files
from .test_signals import wait_for

pytestmark = pytest.mark.slow

# Appends the theorem's name to a file each time a worker that checks it loads its file: a
# recovered theorem is never loaded again.
COUNTS_ITS_CHECKS = """
    import multiprocessing, pathlib, sys
    if multiprocessing.parent_process() is not None and "attnproof._runner" in sys.modules:
        with open({counter!r}, "a") as checked:
            checked.write("{name}\\n")
"""

# Says it has been reached, then waits until the test releases it (never, in the killed run).
WAITS_FOR_RELEASE = """
    import multiprocessing, pathlib, sys, time
    if multiprocessing.parent_process() is not None and "attnproof._runner" in sys.modules:
        pathlib.Path({marker!r}).write_text("waiting")
        while not pathlib.Path({release!r}).exists():
            time.sleep(0.05)
"""

FINISHED = ["first", "second", "third"]


def _prove(theorems, out):
    return [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems",
            str(theorems), "--out", str(out), "--jobs", "1", "--symbolic-only"]


def _theorem_files(tmp_path):
    theorems, counter = tmp_path / "theorems", tmp_path / "checked"
    theorems.mkdir()
    for position, name in enumerate(FINISHED):
        counts = textwrap.dedent(COUNTS_ITS_CHECKS.format(counter=str(counter), name=name))
        files.write(theorems, f"a{position}_{name}.py", counts + textwrap.dedent(files.TRUE),
                    name=name)
    waits = textwrap.dedent(WAITS_FOR_RELEASE.format(marker=str(tmp_path / "reached"),
                                                     release=str(tmp_path / "release")))
    files.write(theorems, "b_last.py", waits + textwrap.dedent(files.TRUE), name="last")
    return theorems, counter


def _killed_run(tmp_path):
    """A run SIGKILLed while its fourth theorem waits: (theorems, counter, out, its stderr)."""
    theorems, counter = _theorem_files(tmp_path)
    out = tmp_path / "out"
    process = subprocess.Popen(_prove(theorems, out), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for(tmp_path / "reached", process)  # one worker, in file order: three finished
        os.kill(process.pid, signal.SIGKILL)
        # the pipes close only when the orphaned worker has exited too
        _, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    (tmp_path / "release").write_text("go")
    return theorems, counter, out, stderr


def test_sigkill_loses_no_finished_theorem_and_the_next_run_recovers_them(tmp_path):
    theorems, counter, out, stderr = _killed_run(tmp_path)
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    journal = out / "results.journal.jsonl"
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert [e["theorem"] for e in entries] == FINISHED
    assert counter.read_text().split() == FINISHED

    again = subprocess.run(_prove(theorems, out), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "recovered 3 finished theorem(s)" in again.stderr
    assert counter.read_text().split() == FINISHED  # not one of them checked again
    data = json.loads((out / "results.json").read_text())
    assert sorted(t["name"] for t in data["theorems"]) == sorted([*FINISHED, "last"])
    assert all(t["ok"] for t in data["theorems"])
    assert data["run"]["recovered"] == sorted(FINISHED)
    assert not journal.exists()  # the complete results hold everything it protected


def test_a_theorem_whose_file_changed_since_is_checked_again(tmp_path):
    theorems, counter, out, _ = _killed_run(tmp_path)
    edited = theorems / "a1_second.py"
    edited.write_text(edited.read_text() + "\n# edited after the kill\n")
    again = subprocess.run(_prove(theorems, out), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "recovered 2 finished theorem(s)" in again.stderr
    assert counter.read_text().split() == [*FINISHED, "second"]


def test_other_options_recover_nothing(tmp_path):
    theorems, counter, out, _ = _killed_run(tmp_path)
    other = [*_prove(theorems, out), "--time-limit", "30"]
    again = subprocess.run(other, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "recovered" not in again.stderr
    assert counter.read_text().split() == FINISHED * 2
