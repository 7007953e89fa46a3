"""Ctrl-C pressed several times in quick succession, as users do: no traceback and no
"Exception ignored in ..." reaches the terminal, wherever the presses land (a garbage-collection
callback, an atexit function, the shutdown), and the exit code says the run was interrupted."""

import signal
import sys
import time
import types

import pytest

from attnproof import _signals

from .test_signals import start_until_the_second_theorem_hangs, wait_for


def test_an_interrupt_raised_where_it_cannot_propagate_is_sent_again_not_printed(capsys):
    received = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    default = sys.unraisablehook
    try:
        _signals.quiet_interrupts()
        sys.unraisablehook(types.SimpleNamespace(
            exc_type=KeyboardInterrupt, exc_value=KeyboardInterrupt(), exc_traceback=None,
            err_msg="Exception ignored in", object=None))
    finally:
        sys.unraisablehook = default
        signal.signal(signal.SIGINT, previous)
    assert received == [signal.SIGINT]  # the press still stops the command
    assert capsys.readouterr().err == ""


def test_other_unraisable_exceptions_are_reported_as_before():
    reported, default = [], sys.unraisablehook
    sys.unraisablehook = reported.append  # stands for Python's own hook
    try:
        _signals.quiet_interrupts()
        unraisable = types.SimpleNamespace(exc_type=ValueError, exc_value=ValueError("kept"),
                                           exc_traceback=None, err_msg="", object=None)
        sys.unraisablehook(unraisable)
    finally:
        sys.unraisablehook = default
    assert reported == [unraisable]


@pytest.mark.slow
def test_four_quick_interrupts_print_no_traceback(tmp_path):
    process, out, marker = start_until_the_second_theorem_hangs(tmp_path)
    try:
        wait_for(marker, process)
        for _ in range(4):
            process.send_signal(signal.SIGINT)
            time.sleep(0.05)  # the spacing of a hand pressing the keys, not a wait for a result
        _, stderr = process.communicate(timeout=600)
    finally:
        process.kill()
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr
    # 130, or the shell's equivalent: ended by SIGINT during the interpreter's own shutdown
    assert process.returncode in (130, -signal.SIGINT), stderr
    assert (out / "results.json").exists()
