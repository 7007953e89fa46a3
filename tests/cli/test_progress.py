"""Progress of ``attnproof prove``: plain lines off a terminal, a redrawn bar on one."""

import dataclasses
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


def finished_as(name: str):
    """A result of theorem ``name`` (the sample's first, renamed)."""
    return dataclasses.replace(sample_report().theorems[0], name=name)


def run_one_at_a_time(progress, clock, seconds: dict[str, float]) -> list[tuple[float, float]]:
    """Check ``seconds``' theorems one after another on the fake clock; after each but the
    last, the estimate against the time the rest really took."""
    names = list(seconds)
    progress.planned(names)
    estimates = []
    for done, name in enumerate(names, 1):
        progress.started(name)
        clock.now += seconds[name]
        progress.finished(finished_as(name), done, len(names))
        if done < len(names):
            estimates.append((progress.seconds_left(), sum(seconds[n] for n in names[done:])))
    return estimates


def test_the_estimate_weighs_what_is_left_by_the_last_run_at_this_runs_pace():
    # the last run: two fast theorems, then two slow ones; this machine is three times slower
    last = {"fast_a": 10.0, "fast_b": 10.0, "slow_c": 100.0, "slow_d": 100.0}
    clock = Clock()
    progress = Progress(io.StringIO(), interactive=False, clock=clock, expected=last)
    estimates = run_one_at_a_time(progress, clock, {name: 3 * s for name, s in last.items()})
    assert estimates == [(630.0, 630.0), (600.0, 600.0), (300.0, 300.0)]
    # the average pace so far would have said 90 s after the first theorem
    assert "about 10:30 left" in progress.stream.getvalue().splitlines()[0]


def test_without_a_last_run_the_estimate_follows_the_theorems_measured_here():
    clock = Clock()
    progress = Progress(io.StringIO(), interactive=False, clock=clock)
    estimates = run_one_at_a_time(progress, clock, {"a": 10.0, "b": 10.0, "c": 100.0, "d": 100.0})
    # each theorem left counts the mean of those finished: 10 s, then 10 s, then 40 s
    assert [left for left, _ in estimates] == [30.0, 20.0, 40.0]


def test_a_running_theorem_counts_what_is_left_of_it_and_parallel_workers_share_the_rest():
    last = {"long": 100.0, "short_a": 10.0, "short_b": 10.0, "short_c": 10.0}
    clock = Clock()
    progress = Progress(io.StringIO(), interactive=False, clock=clock, expected=last)
    progress.planned(list(last))
    progress.started("long")
    progress.started("short_a")
    clock.now += 10
    progress.finished(finished_as("short_a"), 1, 4)  # as fast as last time: pace 1
    # two at once: long has 90 s left, which outlasts the 20 s of short ones beside it
    assert progress.seconds_left() == 90.0


def test_theorems_a_journal_recovered_are_not_waited_for():
    clock = Clock()
    progress = Progress(io.StringIO(), interactive=False, clock=clock,
                        expected={"recovered": 500.0, "checked": 20.0})
    progress.planned(["checked"])  # the runner checks only what the journal did not hold
    assert progress.seconds_left() == 20.0
