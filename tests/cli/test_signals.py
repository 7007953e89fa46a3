"""SIGTERM ends `attnproof prove` like Ctrl-C: the finished theorems are written as a partial
report and the exit code is 143. The test waits on the run's own progress (a file the hung
theorem writes when its worker reaches it), never on the clock."""

import json
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from . import theorem_files as files

# worker processes, subprocess sessions or backend searches: the slow tier
pytestmark = pytest.mark.slow

HANGS_AFTER_SAYING_SO = """
    import multiprocessing, pathlib, time
    if multiprocessing.parent_process() is not None:
        pathlib.Path({marker!r}).write_text("hanging")
        time.sleep(600)
"""


def wait_for(path, process, limit=600.0):
    """Until ``path`` exists; the limit only guards against a broken run hanging the suite."""
    give_up = time.monotonic() + limit
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < give_up, "the run never reached the hung theorem"
        time.sleep(0.05)


def test_sigterm_keeps_the_finished_theorems_and_exits_143(tmp_path):
    theorems, out, marker = tmp_path / "theorems", tmp_path / "out", tmp_path / "hanging"
    theorems.mkdir()
    files.write(theorems, "a_good.py", files.TRUE, name="first")
    hangs = textwrap.dedent(HANGS_AFTER_SAYING_SO.format(marker=str(marker)))
    files.write(theorems, "b_hangs.py", hangs + textwrap.dedent(files.TRUE), name="second")
    process = subprocess.Popen(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems", str(theorems),
         "--out", str(out), "--jobs", "1", "--symbolic-only"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(marker, process)  # one worker, in file order: "first" is finished by now
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    assert "terminated; the 1 theorems finished are kept as a partial report" in stderr
    data = json.loads((out / "results.json").read_text())
    assert [t["name"] for t in data["theorems"]] == ["first"]
    assert data["partial"] and data["partial_reason"].startswith("interrupted after 1 of 2")
