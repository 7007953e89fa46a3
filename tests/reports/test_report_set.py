"""The report files of a run are one set: written under the directory's lock, the results
first, with nothing left from an earlier run; a failed PDF is a failure."""

import argparse
import fcntl
import json
import os
import signal
import sys
import threading

import pytest

from attnproof import _commands, _runner
from attnproof._signals import Stops
from attnproof.cli import main
from attnproof.report import load_results, tex, view, write_reports, writer
from attnproof.report.writer import PdfError, locked
from tests.cli import theorem_files as files
from tests.cli.fakes import FakeNumeric
from tests.cli.samples import sample_report


@pytest.fixture(autouse=True)
def no_figures(monkeypatch):
    """Figures need matplotlib and seconds each; these tests are about the set, not them."""
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)


# the set of a report of a user's own theorems that state claims of documents (no run recorded
# which are the user's, so they count as the documents')
SET = ["coverage.md", "report.tex", "results.json", "summary.md", "topics"]


def names_in(directory):
    return sorted(p.name for p in directory.iterdir())


def contents(directory):
    """Every file of a report directory (pages in folders too), by its path there."""
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*")
            if p.is_file()}


def test_a_run_leaves_only_its_own_files(tmp_path):
    (tmp_path / "report.pdf").write_text("from an earlier run")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "error_bits.png").write_text("from an earlier run")
    written = write_reports(sample_report(), tmp_path)
    assert names_in(tmp_path) == SET
    assert f"removed {tmp_path / 'report.pdf'}, left by an earlier run" in written.notes
    assert f"removed {tmp_path / 'figures'}, left by an earlier run" in written.notes


def test_a_failing_render_keeps_the_new_results_and_no_file_of_the_previous_set(tmp_path,
                                                                              monkeypatch):
    write_reports(sample_report(), tmp_path)
    before = contents(tmp_path)

    def broken(*args):
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(tex, "text", broken)
    changed = sample_report()
    changed.theorems.pop()
    with pytest.raises(RuntimeError, match="renderer bug"):
        write_reports(changed, tmp_path)
    # results first: they are the new run's; what rendered before the bug is too, the rest gone
    saved = load_results(tmp_path / "results.json").theorems
    assert [t.name for t in saved] == [t.name for t in changed.theorems]
    assert "report.tex" not in names_in(tmp_path)
    assert (tmp_path / "summary.md").read_bytes() != before["summary.md"]
    assert "right\\_claim" not in (tmp_path / "topics" / "your-theorems.md").read_text()
    assert not list(tmp_path.glob(".attnproof-staging-*"))


def test_a_failed_pdf_build_is_a_failure_and_leaves_no_stale_pdf(tmp_path, monkeypatch):
    (tmp_path / "report.pdf").write_text("from an earlier run")

    def fails(tex_path, timeout=120.0):
        raise PdfError("pdflatex failed on report.tex: ! Undefined control sequence.")

    monkeypatch.setattr(writer, "compile_pdf", fails)
    written = write_reports(sample_report(), tmp_path, pdf=True)
    assert written.failures == ["pdflatex failed on report.tex: ! Undefined control sequence."]
    assert names_in(tmp_path) == SET


def test_prove_exits_three_when_the_pdf_fails(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_runner, "numeric_api", lambda: FakeNumeric([]))
    monkeypatch.setattr(writer, "compile_pdf", lambda *a, **k: (_ for _ in ()).throw(
        PdfError("pdflatex failed on report.tex")))
    theorems = tmp_path / "theorems"
    theorems.mkdir()
    files.write(theorems, "good.py", files.TRUE, name="doubling")
    out = tmp_path / "out"
    code = main(["prove", "--no-catalog", "--theorems", str(theorems), "--out", str(out),
                 "--in-process", "--pdf"])
    assert code == 3
    assert "attnproof: pdflatex failed on report.tex" in capsys.readouterr().err
    assert json.loads((out / "results.json").read_text())["theorems"][0]["name"] == "doubling"
    assert not (out / "report.pdf").exists()


def test_the_lock_excludes_a_second_writer(tmp_path):
    with locked(tmp_path):
        other = os.open(tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    other = os.open(tmp_path, os.O_RDONLY)
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released once the writer is done
    os.close(other)


def test_rendering_and_installing_happen_under_the_lock(tmp_path, monkeypatch):
    held = []
    real_locked, real_install = writer.locked, writer._install

    def recording_locked(directory):
        held.append(True)
        return real_locked(directory)

    def checked_install(*args):
        assert held, "files installed without the directory's lock"
        real_install(*args)

    monkeypatch.setattr(writer, "locked", recording_locked)
    monkeypatch.setattr(writer, "_install", checked_install)
    write_reports(sample_report(), tmp_path)
    assert held == [True]


def test_two_writers_at_once_leave_one_consistent_set(tmp_path):
    reports = [sample_report(), sample_report()]
    reports[1].theorems.pop(0)
    failures = []

    def write_repeatedly(report):
        try:
            for _ in range(5):
                write_reports(report, tmp_path)
        except Exception as error:  # surfaced below; a thread cannot fail the test itself
            failures.append(error)

    threads = [threading.Thread(target=write_repeatedly, args=(r,)) for r in reports]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    in_json = [t["name"] for t in json.loads((tmp_path / "results.json").read_text())["theorems"]]
    markdown = (tmp_path / "topics" / "your-theorems.md").read_text()
    sections = [name for name in ("softmax_rows", "wrong_claim", "right_claim")
                if f"## {name}\n" in markdown.replace("\\_", "_")]
    assert sections == in_json
    index = (tmp_path / "summary.md").read_text().replace("\\_", "_")
    assert [name for name in ("softmax_rows", "wrong_claim", "right_claim")
            if f"[{name}](topics/your-theorems.md#{name})" in index] == in_json
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_the_json_can_live_elsewhere_and_is_part_of_the_set(tmp_path):
    target = tmp_path / "elsewhere" / "r.json"
    written = write_reports(sample_report(), tmp_path / "out", target)
    assert target in written.paths and not (tmp_path / "out" / "results.json").exists()
    assert json.loads(target.read_text())["theorems"][0]["name"] == "softmax_rows"


def test_a_users_own_false_claim_is_not_an_erratum_of_the_documents():
    report = sample_report()
    assert [t.name for t, _ in view.errata(report)] == ["wrong_claim"]
    report.run["user_theorems"] = ["wrong_claim", "right_claim"]
    assert view.errata(report) == []


def test_a_signal_before_the_results_are_written_keeps_the_previous_set_and_the_results(
        tmp_path):
    write_reports(sample_report(), tmp_path)
    before = contents(tmp_path)
    changed = sample_report()
    changed.theorems.pop()
    arguments = argparse.Namespace(json=None, pdf=False)
    with Stops() as stops:
        stops.received.append(signal.SIGTERM)  # arrived while the run's last theorem ended
        written = _commands._write(changed, arguments, tmp_path, stops)
    assert contents(tmp_path) == before
    assert written.results is None and written.stopped_by == signal.SIGTERM
    (rescue,) = written.paths
    assert [t.name for t in load_results(rescue).theorems] == [t.name for t in changed.theorems]
    said = _commands._kept(written, tmp_path, signal.SIGTERM)
    assert said == (f"terminated before the results were written; the previous report set in "
                    f"{tmp_path} is unchanged, and this run's results were saved to {rescue}")


def test_staging_folders_left_by_a_killed_run_are_removed(tmp_path):
    (tmp_path / ".attnproof-staging-abc123").mkdir()
    (tmp_path / ".attnproof-staging-abc123" / "summary.md").write_text("half a report")
    written = write_reports(sample_report(), tmp_path)
    assert not list(tmp_path.glob(".attnproof-staging-*"))
    assert [n for n in written.notes if "killed" in n] == [
        f"removed {tmp_path / '.attnproof-staging-abc123'}, left by an earlier run that was killed"]


def test_a_signal_while_writing_for_a_caller_without_stops_reaches_it_afterwards(tmp_path,
                                                                                 monkeypatch):
    def markdown_then_ctrl_c(document):
        signal.raise_signal(signal.SIGINT)  # arrives while the reports render
        return {"summary.md": "# never installed\n", "topics/a.md": "# never installed\n"}

    monkeypatch.setattr(writer.markdown, "pages", markdown_then_ctrl_c)
    # Python's own handler, whatever the process running the test installed before
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):  # as pytest's own handler raises it
            write_reports(sample_report(), tmp_path)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert names_in(tmp_path) == ["results.json"]
    assert [t.name for t in load_results(tmp_path / "results.json").theorems] == [
        t.name for t in sample_report().theorems]
