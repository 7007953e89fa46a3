"""Progress of ``attnproof prove``: a redrawn bar on a terminal, plain lines otherwise.

Both print one permanent line per finished theorem (so a log keeps every outcome), with the
elapsed time and an estimate of what is left; on a terminal a bar below them shows theorems
done, the theorems running, elapsed time and an ETA, redrawn every second by a daemon thread.

The estimate (``seconds_left``) weighs each theorem still to finish by the seconds it took in
the last run (``expected``, from ``_cache.last_timings``), scaled by this run's pace: what the
theorems finished so far took here against what they took then, so a loaded machine stretches
every expectation alike. A theorem the last run did not time counts the mean of those finished
here. The work left is divided by the theorems measured to run at once, and is never less than
the longest theorem left. Before the runner says which theorems it will check (``planned``), or
where nothing is known yet, the estimate is the average pace so far.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TextIO, cast

from .report import TheoremResult, view
from .report.terminal import escape

BAR_WIDTH = 24


class Progress:
    """Callbacks for ``run``: ``started(name)`` and ``finished(result, done, total)``."""

    def __init__(self, stream: TextIO | None = None, interactive: bool | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 expected: dict[str, float] | None = None) -> None:
        self.stream = stream or sys.stdout
        self.interactive = _is_terminal(self.stream) if interactive is None else interactive
        self.clock = clock
        self.begun = clock()
        self.running: list[str] = []
        self.done = 0
        self.total = 0
        self.expected = dict(expected or {})  # seconds each theorem took in the last run
        self.to_check: set[str] | None = None  # the theorems this run checks, once planned
        self.since: dict[str, float] = {}  # when each running theorem began
        self.took: dict[str, float] = {}  # seconds each theorem finished here took
        self.ended: set[str] = set()  # the theorems finished
        self._lock = threading.Lock()
        self._stop = threading.Event()
        if self.interactive:
            threading.Thread(target=self._tick, daemon=True).start()

    def planned(self, names: Iterable[str]) -> None:
        """The theorems this run checks (those a journal recovered left out)."""
        with self._lock:
            self.to_check = set(names)

    def started(self, name: str) -> None:
        with self._lock:
            self.running.append(name)
            self.since[name] = self.clock()
            self._draw_bar()

    def finished(self, result: TheoremResult, done: int, total: int) -> None:
        with self._lock:
            if result.name in self.running:
                self.running.remove(result.name)
            self.ended.add(result.name)
            if result.name in self.since:
                self.took[result.name] = self.clock() - self.since.pop(result.name)
            self.done, self.total = done, total
            self._clear_bar()
            self.stream.write(self._result_line(result) + "\n")
            for line in refutation_lines(result):
                self.stream.write(line + "\n")
            self._draw_bar()
            self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._clear_bar()
            self.stream.flush()

    # -- lines --------------------------------------------------------------------------------

    def _result_line(self, result: TheoremResult) -> str:
        width = len(str(self.total))
        mark = " " if result.ok else "✗"
        elapsed = self.clock() - self.begun
        left = f", about {self._eta()} left" if 0 < self.done < self.total else ""
        return (f"[{self.done:>{width}}/{self.total}] {mark} {result.status:<14} {result.name}  "
                f"{_detail(result)}  ({_clock(elapsed)}{left})")

    def bar_line(self) -> str:
        elapsed = self.clock() - self.begun
        filled = BAR_WIDTH * self.done // self.total if self.total else 0
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        eta = self._eta()
        running = ", ".join(self.running) or "—"
        line = (f"{bar} {self.done}/{self.total or '?'}  elapsed {_clock(elapsed)}  "
                f"ETA {eta}  running: {running}")
        return line[: max(20, shutil.get_terminal_size().columns - 1)]

    # -- the estimate ---------------------------------------------------------------------------

    def _eta(self) -> str:
        left = self.seconds_left()
        return "?" if left is None else _clock(left)

    def seconds_left(self) -> float | None:
        """Seconds until the last theorem finishes, or None while nothing tells."""
        if self.to_check is None:
            return _average_pace(self.clock() - self.begun, self.done, self.total)
        now = self.clock()
        waiting = self.to_check - self.ended - set(self.since)
        left = [self._expected(name) for name in waiting]
        left += [_minus(self._expected(name), now - since) for name, since in self.since.items()]
        if any(seconds is None for seconds in left):
            return _average_pace(now - self.begun, self.done, self.total)
        if not left:
            return 0.0
        known = cast("list[float]", left)  # none is None: that returned above
        return max(sum(known) / self._at_once(now), max(known))

    def _expected(self, name: str) -> float | None:
        """Seconds ``name`` should take here: the last run's, at this run's pace, else the mean
        of the theorems finished here; None when neither is known."""
        if name in self.expected:
            return self.expected[name] * self._pace()
        return sum(self.took.values()) / len(self.took) if self.took else None

    def _pace(self) -> float:
        """This run's seconds per second of the last run, over the theorems both timed."""
        both = [name for name in self.took if name in self.expected]
        then = sum(self.expected[name] for name in both)
        return sum(self.took[name] for name in both) / then if then > 0 else 1.0

    def _at_once(self, now: float) -> float:
        """How many theorems have run at once on average: their seconds over the elapsed."""
        busy = sum(self.took.values()) + sum(now - since for since in self.since.values())
        elapsed = now - self.begun
        return max(1.0, busy / elapsed) if elapsed > 0 else max(1.0, len(self.since))

    def _draw_bar(self) -> None:
        if self.interactive:
            self.stream.write("\r\x1b[2K" + self.bar_line())
            self.stream.flush()

    def _clear_bar(self) -> None:
        if self.interactive:
            self.stream.write("\r\x1b[2K")

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw_bar()


def _is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _average_pace(elapsed: float, done: int, total: int) -> float | None:
    """Remaining time at the average pace so far; unknown before the first theorem ends."""
    if not done or not total:
        return None
    return elapsed / done * (total - done)


def _minus(expected: float | None, running: float) -> float | None:
    """What is left of a running theorem's expected seconds (nothing once it overruns them)."""
    return None if expected is None else max(0.0, expected - running)


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes}:{seconds:02d}"


def _detail(result: TheoremResult) -> str:
    parts = []
    if result.symbolic is not None:
        parts.append(f"{result.symbolic.method} ({result.symbolic.seconds:.2f} s)")
    tally = Counter(r.status for r in result.numeric)
    if tally:
        parts.append("numeric " + ", ".join(f"{n} {status}" for status, n in sorted(tally.items())))
        undecided = sum(r.undecided or 0 for r in result.numeric)
        if undecided:
            drawn = undecided + sum(r.instances or 0 for r in result.numeric)
            parts[-1] += f" ({undecided:,} of {drawn:,} draws undecided)"
    reason = first_error(result)
    if reason and not (result.symbolic and result.symbolic.status == "error"):
        parts.append(escape(reason))  # a symbolic error's reason is its method, shown already
    return "; ".join(parts)


# a counterexample's values on one line, cut here: a float64 instance's tensors can run long, and
# `attnproof show NAME` prints them whole
COUNTEREXAMPLE_WIDTH = 240


def refutation_lines(result: TheoremResult) -> list[str]:
    """Under a claim declared to hold that a counterexample refutes, the counterexample and how
    to declare a claim known to be false: a user's own false claim reads as refuted, at once,
    not only as "failed"."""
    if result.status != "failed" or result.expect != "holds":
        return []
    found = view.smallest_counterexample(result)
    if found is None:
        return []
    where, values, _ = found
    shown = "; ".join(view.as_lines(values).splitlines())
    if len(shown) > COUNTEREXAMPLE_WIDTH:
        shown = shown[:COUNTEREXAMPLE_WIDTH - 1] + "…"
    return [f"      refuted, though declared to hold; counterexample ({where}): {escape(shown)}",
            f"      (`attnproof show {result.name}` for the evidence; a claim known to be false "
            'is declared with expect="refuted")']


def first_error(result: TheoremResult) -> str | None:
    """The first line of the reason for the first error among a theorem's checks, saying
    which check it was; None when none of them erred."""
    if result.symbolic is not None and result.symbolic.status == "error":
        return _first_line(f"proof: {result.symbolic.method}")
    for record in result.numeric:
        if record.status == "error":
            where = "/".join((record.backend, record.dtype, record.device, record.mode))
            return _first_line(f"{where}: {record.reason or 'no reason given'}")
    return None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text
