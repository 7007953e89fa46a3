"""Progress of ``attnproof prove``: plain lines off a terminal, a redrawn bar on one."""

import io

from attnproof._progress import Progress

from .samples import sample_report


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_name_each_finished_theorem_with_elapsed_time_and_what_is_left():
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, interactive=False, clock=clock)
    first, second, _ = sample_report().theorems
    progress.started(first.name)
    clock.now += 65
    progress.finished(first, 1, 2)
    progress.finished(second, 2, 2)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[1/2]   proved         softmax_rows  sum normal form")
    assert lines[0].endswith("(1:05, about 1:05 left)")  # one of two done in 65 s
    assert lines[1].endswith("(1:05)")  # nothing left to estimate
    assert "\r" not in stream.getvalue() and len(lines) == 2


def test_the_bar_shows_done_running_elapsed_and_eta(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    stream, clock = io.StringIO(), Clock()
    progress = Progress(stream, interactive=True, clock=clock)
    first, second, third = sample_report().theorems
    for theorem in (first, second, third):
        progress.started(theorem.name)
    clock.now += 30
    progress.finished(first, 1, 3)
    bar = progress.bar_line()
    assert "1/3" in bar and "elapsed 0:30" in bar and "ETA 1:00" in bar
    assert "running: wrong_claim, right_claim" in bar
    progress.close()
    assert stream.getvalue().endswith("\r\x1b[2K")  # the bar is cleared, the lines stay
    assert "[1/3]" in stream.getvalue()


def test_the_bar_fits_the_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    progress = Progress(io.StringIO(), interactive=False, clock=Clock())
    progress.started("a_theorem_with_a_very_long_name_indeed")
    assert len(progress.bar_line()) == 49


def test_eta_is_unknown_before_the_first_theorem_ends():
    progress = Progress(io.StringIO(), interactive=False, clock=Clock())
    assert "ETA ?" in progress.bar_line()
