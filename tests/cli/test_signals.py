"""SIGTERM ends `attnproof prove` like Ctrl-C: the finished theorems are written as a partial
report and the exit code is 143. Once the last theorem is done, a signal only cuts the reports
short: the results are already written, and one line says what was kept. The tests wait on the
run's own progress (a file the hung theorem or a stand-in pdflatex writes when reached, the
last theorem's progress line, an exit function), never on the clock."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from attnproof import _commands, _progress, _runner
from attnproof.cli import main

from . import theorem_files as files
from .fakes import FakeNumeric

# Hangs in the worker that checks it (which has imported the runner), not in the one that
# loads the files for discovery.
HANGS_AFTER_SAYING_SO = """
    import multiprocessing, pathlib, sys, time
    if multiprocessing.parent_process() is not None and "attnproof._runner" in sys.modules:
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


def start_until_the_second_theorem_hangs(tmp_path):
    """A run of two theorems, one worker: (the process, its output folder, the marker the
    second, hanging, theorem writes once reached, when the first is finished)."""
    theorems, out, marker = tmp_path / "theorems", tmp_path / "out", tmp_path / "hanging"
    theorems.mkdir()
    files.write(theorems, "a_good.py", files.TRUE, name="first")
    hangs = textwrap.dedent(HANGS_AFTER_SAYING_SO.format(marker=str(marker)))
    files.write(theorems, "b_hangs.py", hangs + textwrap.dedent(files.TRUE), name="second")
    process = subprocess.Popen(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems", str(theorems),
         "--out", str(out), "--jobs", "1", "--symbolic-only"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, out, marker


@pytest.mark.slow  # worker processes and subprocess sessions
def test_sigterm_keeps_the_finished_theorems_and_exits_143(tmp_path):
    process, out, marker = start_until_the_second_theorem_hangs(tmp_path)
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


# Stands in for pdflatex: says it has begun, then waits on a pipe nobody writes to, so the
# signal surely arrives while the reports are being rendered.
BLOCKING_PDFLATEX = """#!{python}
import pathlib
pathlib.Path({marker!r}).write_text("compiling")
open({fifo!r}).read()
"""


@pytest.mark.slow  # worker processes and subprocess sessions
@pytest.mark.parametrize(("number", "code", "how"), [(signal.SIGTERM, 143, "terminated"),
                                                      (signal.SIGINT, 130, "interrupted")])
def test_a_signal_while_rendering_keeps_the_complete_results_and_says_so(tmp_path, number,
                                                                          code, how):
    theorems, out, marker = tmp_path / "theorems", tmp_path / "out", tmp_path / "compiling"
    theorems.mkdir()
    files.write(theorems, "a_good.py", files.TRUE, name="first")
    bin_dir, fifo = tmp_path / "bin", tmp_path / "never-written"
    bin_dir.mkdir()
    os.mkfifo(fifo)
    pdflatex = bin_dir / "pdflatex"
    pdflatex.write_text(BLOCKING_PDFLATEX.format(python=sys.executable, marker=str(marker),
                                                 fifo=str(fifo)))
    pdflatex.chmod(0o755)
    out.mkdir()
    (out / "report.pdf").write_text("from an earlier run")
    (out / ".attnproof-staging-left-by-a-killed-run").mkdir()
    process = subprocess.Popen(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems", str(theorems),
         "--out", str(out), "--symbolic-only", "--pdf"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    try:
        wait_for(marker, process)  # the results are written; the PDF is being built
        process.send_signal(number)
        stdout, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == code, stderr
    assert "Traceback" not in stderr and "before any theorem was checked" not in stderr
    assert (f"attnproof: {how} while rendering the reports; {out / 'results.json'} holds the "
            "complete results; not rendered: report.pdf") in stderr
    data = json.loads((out / "results.json").read_text())
    assert [t["name"] for t in data["theorems"]] == ["first"]
    assert sorted(p.name for p in out.iterdir()) == ["report.tex", "results.json", "summary.md",
                                                     "topics"]
    assert "left by an earlier run that was killed" in stdout


LOOPS_AFTER_SAYING_SO = """
import os, pathlib
pathlib.Path({marker!r}).write_text(str(os.getpid()))
while True:
    pass
"""


@pytest.mark.slow  # worker processes and subprocess sessions
def test_a_signal_while_files_load_ends_the_loading_worker_and_says_nothing_was_checked(
        tmp_path):
    theorems, marker = tmp_path / "theorems", tmp_path / "loading"
    theorems.mkdir()
    (theorems / "loops.py").write_text(LOOPS_AFTER_SAYING_SO.format(marker=str(marker)))
    process = subprocess.Popen(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems", str(theorems),
         "--out", str(tmp_path / "out"), "--symbolic-only"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(marker, process)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == 143, stderr
    assert "attnproof: terminated before any theorem was checked; nothing written" in stderr
    with pytest.raises(ProcessLookupError):  # the worker that ran the file is gone
        os.kill(int(marker.read_text()), 0)


@pytest.fixture
def sigint_as_python_has_it():
    """SIGINT raising KeyboardInterrupt, as in a fresh process (an earlier command run in this
    one left its own handler), and the handler the command leaves removed afterwards."""
    previous = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    for number, handler in previous.items():
        signal.signal(number, handler)


class _CtrlCAfterTheLastTheorem(_progress.Progress):
    """Progress that presses Ctrl-C as the last theorem's line is printed."""

    def finished(self, result, done, total):
        super().finished(result, done, total)
        if done == total:
            signal.raise_signal(signal.SIGINT)


def test_ctrl_c_as_the_last_theorem_finishes_saves_the_results_and_says_where(
        tmp_path, monkeypatch, capsys, sigint_as_python_has_it):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))
    monkeypatch.setattr(_commands, "Progress", _CtrlCAfterTheLastTheorem)
    theorems, out = tmp_path / "theorems", tmp_path / "out"
    theorems.mkdir()
    files.write(theorems, "a_good.py", files.TRUE, name="first")
    out.mkdir()
    (out / "summary.md").write_text("from an earlier run")
    code = main(["prove", "--no-catalog", "--theorems", str(theorems), "--out", str(out),
                 "--symbolic-only", "--in-process"])
    error = capsys.readouterr().err
    assert code == 130 and error.count("attnproof:") == 1, error
    said = (f"attnproof: interrupted before the results were written; the previous report set "
            f"in {out} is unchanged, and this run's results were saved to ")
    assert error.startswith(said)
    saved = Path(error.removeprefix(said).strip())
    data = json.loads(saved.read_text())
    assert [t["name"] for t in data["theorems"]] == ["first"]
    assert "interrupted" not in data["partial_reason"]  # every theorem was checked
    assert sorted(p.name for p in out.iterdir()) == ["summary.md"]
    assert (out / "summary.md").read_text() == "from an earlier run"
    saved.unlink()
    saved.parent.rmdir()


# Sends Ctrl-C to its own process from an exit function: after `attnproof prove` has returned,
# when the interpreter runs what is registered at exit (with --in-process this file is loaded in
# the command's process).
CTRL_C_AT_EXIT = """
    import atexit, os, signal
    atexit.register(os.kill, os.getpid(), signal.SIGINT)
"""


@pytest.mark.slow  # a subprocess session
def test_ctrl_c_once_the_command_has_finished_exits_130_and_says_so(tmp_path):
    theorems, out = tmp_path / "theorems", tmp_path / "out"
    theorems.mkdir()
    files.write(theorems, "a_good.py", textwrap.dedent(CTRL_C_AT_EXIT) +
                textwrap.dedent(files.TRUE), name="first")
    finished = subprocess.run(
        [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems", str(theorems),
         "--out", str(out), "--symbolic-only", "--in-process"],
        capture_output=True, text=True, timeout=600)
    assert finished.returncode == 130, finished.stderr
    assert finished.stderr.strip() == ("attnproof: interrupted after the command had finished; "
                                       "what it wrote is complete")
    assert "wrote " in finished.stdout
    data = json.loads((out / "results.json").read_text())
    assert [t["name"] for t in data["theorems"]] == ["first"]
