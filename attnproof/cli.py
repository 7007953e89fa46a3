"""The attnproof command: prove checks theorems and writes reports; list, show and report read
the results of a previous run; replay re-runs one numeric batch from a counterexample.

Exit codes: 0 when every theorem came out as declared and every file loaded; 1 otherwise (a
claim expected to hold failed, a claim expected false was not refuted, a file or check is in
error, or the numeric filters matched nothing here); 2 for a usage error (an unknown value, a
missing directory, an unwritable output directory, nothing to check, an unreadable results
file); 3 when the results were written but a report asked for was not (a failed PDF build);
130 when interrupted by Ctrl-C, 143 by SIGTERM (the finished theorems are still written, as a
partial report).
"""

from __future__ import annotations

import sys

from ._exits import (  # the exit codes are part of the command's interface
    EXIT_INTERRUPTED,
    EXIT_NOT_OK,
    EXIT_OK,
    EXIT_OUTPUT,
    EXIT_TERMINATED,
    EXIT_USAGE,
)
from ._signals import Terminated, end_at_once_on_a_signal, quiet_interrupts

__all__ = ["main", "EXIT_OK", "EXIT_NOT_OK", "EXIT_USAGE", "EXIT_OUTPUT", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED"]


def main(argv: list[str] | None = None) -> int:
    quiet_interrupts()
    code = _main(argv)
    end_at_once_on_a_signal(code)
    return code


def _main(argv: list[str] | None) -> int:
    # Neither this module nor the parser imports anything heavy, so Ctrl-C while SymPy and NumPy
    # load (seconds on a cold start) ends here with one line instead of a traceback.
    try:
        from ._parser import run_command
    except KeyboardInterrupt:
        return _interrupted_before_work(EXIT_INTERRUPTED)
    try:
        return run_command(argv, __doc__)
    except KeyboardInterrupt as stop:  # before a run; a run saves its own results when stopped
        return _interrupted_before_work(EXIT_TERMINATED if isinstance(stop, Terminated)
                                        else EXIT_INTERRUPTED)


def _interrupted_before_work(code: int) -> int:
    end_at_once_on_a_signal(code)  # a second Ctrl-C must not cut this line short
    how = "terminated" if code == EXIT_TERMINATED else "interrupted"
    print(f"\nattnproof: {how} before any theorem was checked; nothing written", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
