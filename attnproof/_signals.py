"""Ctrl-C (SIGINT) and SIGTERM, as the command handles them (standard library only).

While theorems are being checked or files loaded, a signal stops the work at once: SIGINT raises
``KeyboardInterrupt`` as usual and, within ``sigterm_as_interrupt``, SIGTERM raises
``Terminated``, so both unwind the same way and the workers are ended. Once the last theorem has
finished, ``Stops`` takes over: a signal is recorded and stops only the rendering of reports,
which is the one step it may cut short; the results are always written first. Once the work is
saved, a signal ends the process at once (``Stops.finish``, then
``end_at_once_on_a_signal``): with the code a signal already decided, else with its own code,
saying in one line that the command had finished.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

from ._exits import EXIT_INTERRUPTED, EXIT_TERMINATED

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from types import FrameType
    from typing import Any, NoReturn, TypeAlias

    # What ``signal.signal`` takes and gives back (typeshed's ``signal._HANDLER``, private).
    _Handler: TypeAlias = Callable[[int, FrameType | None], Any] | int | signal.Handlers | None

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Keyed by int: a handler is given the signal as a plain int (``Signals`` is an ``IntEnum``, so
# ``Signals.SIGINT`` and 2 are the same key).
EXIT_BY_SIGNAL: dict[int, int] = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


def quiet_interrupts() -> None:
    """Let no Ctrl-C be printed as "Exception ignored in ...".

    Python raises ``KeyboardInterrupt`` wherever the main thread is, a garbage-collection
    callback (JAX installs one) or an ``atexit`` function included; there it cannot propagate,
    so Python prints it with a traceback and goes on as if nothing had been pressed. This hook
    drops that report and sends the signal again, so the interrupt still stops the command at
    the next place it can; every other unraisable exception is reported as before.
    """
    default = sys.unraisablehook

    def hook(unraisable: sys.UnraisableHookArgs) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            number = signal_of(unraisable.exc_value)
            signal.raise_signal(number)
            return
        default(unraisable)

    sys.unraisablehook = hook


def end_at_once_on_a_signal(code: int) -> None:
    """From now on SIGINT or SIGTERM ends the process at once, without running what is left of
    the shutdown (the work is saved, and no ``atexit`` function may print a traceback): with
    ``code`` where a signal decided it (a further Ctrl-C, as users press it several times, must
    not change it), else with the signal's own code, saying so, as for any signal that comes
    after the last theorem."""
    decided = code if code in EXIT_BY_SIGNAL.values() else None

    def leave(signum: int, frame: FrameType | None) -> None:
        _end_now(signum, decided)

    with contextlib.suppress(ValueError):  # ValueError: not the main thread
        for number in STOP_SIGNALS:
            signal.signal(number, leave)


def _end_now(signum: int, decided: int | None) -> None:
    """End the process: with ``decided``, else with ``signum``'s code after one line saying the
    command had finished before it came."""
    with contextlib.suppress(Exception):  # a stream closed, or in use where the signal came
        if decided is None:
            print(f"\nattnproof: {described(signum)} after the command had finished; what it "
                  "wrote is complete", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(EXIT_BY_SIGNAL[signum] if decided is None else decided)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives, so it unwinds like Ctrl-C."""


def signal_of(stop: KeyboardInterrupt) -> int:
    """The signal a ``KeyboardInterrupt`` stands for."""
    return signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT


def described(number: int) -> str:
    return "terminated" if number == signal.SIGTERM else "interrupted"


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within this block SIGTERM raises ``Terminated`` (main thread only; elsewhere a no-op)."""
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum: int, frame: FrameType | None) -> NoReturn:
    raise Terminated("terminated")


class Stops:
    """SIGINT and SIGTERM recorded, not obeyed at once, while finished work is being saved.

    ``received`` lists the signals that arrived, in order (beginning with ``received``, those
    that came before this took over). While ``stopping`` is true (the rendering of reports,
    which may be cut short) the first signal also raises ``KeyboardInterrupt`` to stop it; at
    any other time a signal only waits to be seen, until ``finish``. Outside the main thread
    signals cannot be handled and nothing is installed.
    """

    def __init__(self, received: Iterable[int] = ()) -> None:
        self.received: list[int] = list(received)
        self.stopping = False
        self.finished = False
        self._previous: dict[int, _Handler] = {}

    def __enter__(self) -> Stops:
        with contextlib.suppress(ValueError):  # ValueError: not the main thread
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._record)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.finished:  # nothing is left to save: a signal still ends the process at once
            return
        for number, previous in self._previous.items():
            signal.signal(number, previous)

    def finish(self) -> None:
        """The work is saved: from now on a signal ends the process at once, as
        ``end_at_once_on_a_signal`` says, with the code of the first signal ``received`` if
        any, and this stays so after the block (``received`` no longer changes, so what is
        said of it is all there is)."""
        self.finished = True

    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    def _record(self, signum: int, frame: FrameType | None) -> None:
        if self.finished:
            first = self.first
            _end_now(signum, None if first is None else EXIT_BY_SIGNAL[first])
        self.received.append(signum)
        if self.stopping and len(self.received) == 1:
            raise KeyboardInterrupt(described(signum))
