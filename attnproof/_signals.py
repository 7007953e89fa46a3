"""Ctrl-C (SIGINT) and SIGTERM, as the command handles them (standard library only).

While theorems are being checked or files loaded, a signal stops the work at once: SIGINT raises
``KeyboardInterrupt`` as usual and, within ``sigterm_as_interrupt``, SIGTERM raises
``Terminated``, so both unwind the same way and the workers are ended. Once the last theorem has
finished, ``Stops`` takes over: a signal is recorded and stops only the rendering of reports,
which is the one step it may cut short; the results are always written first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from ._exits import EXIT_INTERRUPTED, EXIT_TERMINATED

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_BY_SIGNAL = {signal.SIGINT: EXIT_INTERRUPTED, signal.SIGTERM: EXIT_TERMINATED}


def quiet_interrupts() -> None:
    """Let no Ctrl-C be printed as "Exception ignored in ...".

    Python raises ``KeyboardInterrupt`` wherever the main thread is, a garbage-collection
    callback (JAX installs one) or an ``atexit`` function included; there it cannot propagate,
    so Python prints it with a traceback and goes on as if nothing had been pressed. This hook
    drops that report and sends the signal again, so the interrupt still stops the command at
    the next place it can; every other unraisable exception is reported as before.
    """
    default = sys.unraisablehook

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            number = signal_of(unraisable.exc_value)
            signal.raise_signal(number)
            return
        default(unraisable)

    sys.unraisablehook = hook


def exit_at_once_on_a_further_signal(code: int) -> None:
    """From now on SIGINT or SIGTERM ends the process at once with ``code``, the exit code the
    command has decided, without running what is left of the shutdown: the work is saved, and
    a further Ctrl-C (users press it several times) must neither change the code nor print a
    traceback from an ``atexit`` function."""

    def leave(signum, frame) -> None:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)

    with contextlib.suppress(ValueError):  # ValueError: not the main thread
        for number in STOP_SIGNALS:
            signal.signal(number, leave)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM arrives, so it unwinds like Ctrl-C."""


def signal_of(stop: KeyboardInterrupt) -> int:
    """The signal a ``KeyboardInterrupt`` stands for."""
    return signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT


def described(number: int) -> str:
    return "terminated" if number == signal.SIGTERM else "interrupted"


@contextlib.contextmanager
def sigterm_as_interrupt():
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


def _raise_terminated(signum, frame):
    raise Terminated("terminated")


class Stops:
    """SIGINT and SIGTERM recorded, not obeyed at once, while finished work is being saved.

    ``received`` lists the signals that arrived, in order. While ``stopping`` is true (the
    rendering of reports, which may be cut short) the first signal also raises
    ``KeyboardInterrupt`` to stop it; at any other time a signal only waits to be seen.
    Outside the main thread signals cannot be handled and nothing is installed.
    """

    def __init__(self):
        self.received: list[int] = []
        self.stopping = False
        self._previous: dict[int, object] = {}

    def __enter__(self) -> Stops:
        with contextlib.suppress(ValueError):  # ValueError: not the main thread
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._record)
        return self

    def __exit__(self, *exc_info) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)

    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    def _record(self, signum, frame) -> None:
        self.received.append(signum)
        if self.stopping and len(self.received) == 1:
            raise KeyboardInterrupt(described(signum))
