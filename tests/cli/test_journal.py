"""SIGKILL of `attnproof prove` (what the out-of-memory killer and a CI job's hard timeout do)
loses no finished theorem: each one is in the run's own journal beside the results as soon as
it finishes, the orphaned worker exits without a word, and the next run with the same options
recovers the finished theorems without checking them again, naming the run it recovered them
from. A theorem whose file, or a module that file imports from outside the environment, has
changed is checked again; a run with other options, or one still live, keeps its journal. The
tests wait on the run's own progress (files a theorem writes when reached), never on the
clock."""

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
# Imports, through the folder put on sys.path, a module that imports another beside it.
IMPORTS_BESIDE_IT = """
    import os, sys
    sys.path.insert(0, os.path.dirname(__file__))
    import _shared
"""
IMPORTS_A_LIBRARY = """
    import mylib
"""


def _prove(theorems, out, *options):
    return [sys.executable, "-m", "attnproof", "prove", "--no-catalog", "--theorems",
            str(theorems), "--out", str(out), "--jobs", "1", "--symbolic-only", *options]


def _theorem_files(tmp_path, imports=None):
    """The three theorems that finish and the one that waits, each finished one counting its
    checks in ``counter``; ``imports`` adds code at the top of a finished theorem's file."""
    theorems, counter = tmp_path / "theorems", tmp_path / "checked"
    theorems.mkdir(exist_ok=True)  # a test may have put helper modules there
    for position, name in enumerate(FINISHED):
        counts = textwrap.dedent(COUNTS_ITS_CHECKS.format(counter=str(counter), name=name))
        extra = textwrap.dedent((imports or {}).get(name, ""))
        files.write(theorems, f"a{position}_{name}.py",
                    extra + counts + textwrap.dedent(files.TRUE), name=name)
    waits = textwrap.dedent(WAITS_FOR_RELEASE.format(marker=str(tmp_path / "reached"),
                                                     release=str(tmp_path / "release")))
    files.write(theorems, "b_last.py", waits + textwrap.dedent(files.TRUE), name="last")
    return theorems, counter


def _start(tmp_path, theorems, out, *options, env=None):
    """A run whose last theorem will wait until released."""
    for left_by_an_earlier_run in (tmp_path / "reached", tmp_path / "release"):
        left_by_an_earlier_run.unlink(missing_ok=True)
    process = subprocess.Popen(_prove(theorems, out, *options), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    wait_for(tmp_path / "reached", process)  # one worker, in file order: three finished
    return process


def _kill(tmp_path, process):
    """SIGKILL ``process`` while its last theorem waits; its stderr."""
    try:
        os.kill(process.pid, signal.SIGKILL)
        # the pipes close only when the orphaned worker has exited too
        _, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert process.returncode == -signal.SIGKILL
    (tmp_path / "release").write_text("go")
    return stderr


def _killed_run(tmp_path, imports=None, env=None):
    """A run SIGKILLed while its fourth theorem waits: (theorems, counter, out, its stderr)."""
    theorems, counter = _theorem_files(tmp_path, imports)
    out = tmp_path / "out"
    stderr = _kill(tmp_path, _start(tmp_path, theorems, out, env=env))
    return theorems, counter, out, stderr


def _again(theorems, out, *options, env=None):
    """A run to its end, which must succeed."""
    run = subprocess.run(_prove(theorems, out, *options), capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    return run


def _journals(out):
    return sorted(out.glob("results.journal.*.jsonl"))


def _journal_of(out, pid):
    """The journal of the run with ``pid``, and its header."""
    for path in _journals(out):
        header = json.loads(path.read_text().splitlines()[0])
        if header["pid"] == pid:
            return path, header
    raise AssertionError(f"no journal of pid {pid} in {_journals(out)}")


def _recovered_from(stderr, count, journal, pid):
    """Whether ``stderr`` says ``count`` theorems were recovered from the run with ``pid``."""
    return f"recovered {count} finished theorem(s) from the journal {journal} (pid {pid} " \
        in stderr


def test_sigkill_loses_no_finished_theorem_and_the_next_run_recovers_them(tmp_path):
    theorems, counter = _theorem_files(tmp_path)
    out = tmp_path / "out"
    killed = _start(tmp_path, theorems, out)
    stderr = _kill(tmp_path, killed)
    assert "Traceback" not in stderr and "Error" not in stderr, stderr
    journal, header = _journal_of(out, killed.pid)
    assert _journals(out) == [journal]
    assert header["run"].startswith(journal.name.split(".")[2].split("-")[0])
    entries = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert [e["theorem"] for e in entries] == FINISHED
    assert counter.read_text().split() == FINISHED

    again = _again(theorems, out)
    assert _recovered_from(again.stderr, 3, journal, killed.pid), again.stderr
    assert f"started {header['started']}" in again.stderr
    assert counter.read_text().split() == FINISHED  # not one of them checked again
    data = json.loads((out / "results.json").read_text())
    assert sorted(t["name"] for t in data["theorems"]) == sorted([*FINISHED, "last"])
    assert all(t["ok"] for t in data["theorems"])
    assert data["run"]["recovered"] == sorted(FINISHED)
    # the complete results hold everything both journals protected
    assert _journals(out) == []


def test_a_theorem_whose_file_changed_since_is_checked_again(tmp_path):
    theorems, counter, out, _ = _killed_run(tmp_path)
    edited = theorems / "a1_second.py"
    edited.write_text(edited.read_text() + "\n# edited after the kill\n")
    again = _again(theorems, out)
    assert "recovered 2 finished theorem(s)" in again.stderr
    assert counter.read_text().split() == [*FINISHED, "second"]


def test_an_edited_module_imported_through_sys_path_is_checked_again(tmp_path):
    """Two theorem files import one helper beside them, which imports another: editing the
    inner one rechecks the theorems of both files, and only those."""
    beside = tmp_path / "theorems"
    beside.mkdir()
    (beside / "_shared.py").write_text("from _inner import VALUE\n")
    (beside / "_inner.py").write_text("VALUE = 1\n")
    imports = {"second": IMPORTS_BESIDE_IT, "third": IMPORTS_BESIDE_IT}
    theorems, counter, out, _ = _killed_run(tmp_path, imports)
    (beside / "_inner.py").write_text("VALUE = 2  # edited after the kill\n")
    again = _again(theorems, out)
    assert "recovered 1 finished theorem(s)" in again.stderr, again.stderr
    assert counter.read_text().split() == [*FINISHED, "second", "third"]


def test_an_edited_library_on_pythonpath_is_checked_again(tmp_path):
    library = tmp_path / "library" / "mylib"
    library.mkdir(parents=True)
    (library / "__init__.py").write_text("VALUE = 1\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(library.parent), os.environ.get("PYTHONPATH")]))}
    theorems, counter, out, _ = _killed_run(tmp_path, {"second": IMPORTS_A_LIBRARY}, env)
    (library / "__init__.py").write_text("VALUE = 2  # edited after the kill\n")
    again = _again(theorems, out, env=env)
    assert "recovered 2 finished theorem(s)" in again.stderr, again.stderr
    assert counter.read_text().split() == [*FINISHED, "second"]


def test_other_options_recover_nothing_and_leave_the_killed_runs_journal(tmp_path):
    theorems, counter = _theorem_files(tmp_path)
    out = tmp_path / "out"
    killed = _start(tmp_path, theorems, out)
    _kill(tmp_path, killed)
    journal, _ = _journal_of(out, killed.pid)
    other = _again(theorems, out, "--time-limit", "30")
    assert "recovered" not in other.stderr
    assert counter.read_text().split() == FINISHED * 2
    assert _journals(out) == [journal]  # the complete run removed its own journal only

    again = _again(theorems, out)
    assert _recovered_from(again.stderr, 3, journal, killed.pid), again.stderr
    assert counter.read_text().split() == FINISHED * 2


def test_runs_with_other_options_to_one_folder_each_recover_their_own(tmp_path):
    theorems, counter = _theorem_files(tmp_path)
    out = tmp_path / "out"
    first = _start(tmp_path, theorems, out)
    _kill(tmp_path, first)
    second = _start(tmp_path, theorems, out, "--time-limit", "30")
    _kill(tmp_path, second)
    (first_journal, _), (second_journal, _) = (_journal_of(out, first.pid),
                                               _journal_of(out, second.pid))
    assert counter.read_text().split() == FINISHED * 2

    again = _again(theorems, out, "--time-limit", "30")
    assert _recovered_from(again.stderr, 3, second_journal, second.pid), again.stderr
    assert str(first_journal) not in again.stderr
    assert _journals(out) == [first_journal]
    again = _again(theorems, out)
    assert _recovered_from(again.stderr, 3, first_journal, first.pid), again.stderr
    assert counter.read_text().split() == FINISHED * 2  # each recovered its own
    assert _journals(out) == []


def test_the_journal_of_a_live_run_is_left_to_it(tmp_path):
    """A run with the same options that checks the same theorems while another is still live
    neither recovers from that run's journal nor removes it, complete as it is."""
    theorems, counter = _theorem_files(tmp_path)
    out = tmp_path / "out"
    live = _start(tmp_path, theorems, out)
    try:
        journal, _ = _journal_of(out, live.pid)
        beside = _again(theorems, out, *[f"--theorem={name}" for name in FINISHED])
        assert "recovered" not in beside.stderr
        assert counter.read_text().split() == FINISHED * 2
        assert _journals(out) == [journal]
    finally:
        _kill(tmp_path, live)
    again = _again(theorems, out)
    assert _recovered_from(again.stderr, 3, journal, live.pid), again.stderr
