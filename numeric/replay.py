"""Replay a numeric counterexample from its record's command: ``attnproof replay NAME ...``.

With ``--batch`` and ``--sizes`` (the compiled search's failures) it rebuilds the exact batch
from the seed and sizes, evaluates it, and prints the verdict with the failing row's inputs and
values as JSON. Without them it runs the record's check again on that configuration, with
``--seed`` where the record had one (a claim kind's route is deterministic given its seed, so
the same counterexample returns), and prints its status, reason and counterexample.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from attnproof.symbolic import discover, format_named

from ._backends import truth_row

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem

    from ._strategies import Structure


def _pairs(text: str) -> tuple[tuple[str, int], ...]:
    return tuple((k, int(v)) for k, v in (p.split("=") for p in text.split(",") if p))


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="attnproof replay",
                                     description=__doc__.splitlines()[0])
    add_arguments(parser)
    return parser.parse_args(argv)


# a record is replayed on the ground truth's backend unless it names another
DEFAULT_BACKEND = truth_row().name


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("theorem")
    parser.add_argument("--backend", default=DEFAULT_BACKEND)
    parser.add_argument("--dtype", default="float64")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--mode", default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--batch", type=int, default=None,
                        help="one batch of the compiled search (with --sizes and --seed)")
    parser.add_argument("--sizes", default=None, help="dim=size,... e.g. n_q=2,n_k=3")
    parser.add_argument("--integers", default="", help="Integer scalars, e.g. B=2")
    parser.add_argument("--profile", default=None,
                        help="the profile the record was checked under (a rerun only)")
    parser.add_argument("--theorems", action="append", help="file or directory of theorems")


def replay(args: argparse.Namespace) -> dict:
    # here, not at the top: the command line builds its parser from this module for every
    # command, and these load Hypothesis and the compiler, which only a replay needs
    from ._backends import backend, unavailable_reason
    from ._decide import decide
    from ._plan import ImplementationError, ImplementationRaised, runner_for
    from ._strategies import fill_batch

    catalog = discover(args.theorems) if args.theorems else discover()
    theorem = catalog.by_name()[args.theorem]
    if args.batch is None and args.sizes is None:
        return _rerun(theorem, args)
    if args.batch is None or args.sizes is None or args.seed is None:
        raise ValueError("one batch is replayed from --seed, --batch and --sizes together; "
                         "without --batch and --sizes the record's check runs again")
    theorem = theorem.claim.searched_as(theorem)  # what the compiled search checked
    structure = _structure(theorem, args)
    row = backend(args.backend)
    if (reason := unavailable_reason(row)) is not None:
        raise ValueError(reason)
    runner = runner_for(theorem, row, args.device, args.mode or row.default_mode)
    try:
        outcome = decide(runner, structure, args.batch, format_named(args.dtype))
    except ImplementationRaised as raised:  # the code under test failed at this batch
        return {"theorem": theorem.name, "failing_row": None, "comparison":
                "implementation raised", "exception": raised.exception,
                "raised_at": raised.where or None, "code_failed": True}
    except ImplementationError as wrong:
        return {"theorem": theorem.name, "failing_row": None, "comparison":
                "implementation shape", "expected_shape": list(wrong.expected),
                "returned_shape": list(wrong.got or ()), "code_failed": True}
    report = {"theorem": theorem.name, "worst_error_ulps": outcome.worst,
              "failing_row": outcome.failing_row, "comparison": outcome.comparison}
    if outcome.failing_row is not None:
        arrays = fill_batch(theorem, structure, args.batch)
        r = outcome.failing_row
        # which instance this is: show and the reports print the same row shrunk toward
        # round values (it still fails there); their digits differ, both are counterexamples
        report["instance"] = (f"row {r} of the batch rebuilt from seed {args.seed}, as drawn "
                              "(the reports show it shrunk toward round values)")
        report["inputs"] = {k: (v[r].tolist() if isinstance(v, np.ndarray) else v)
                            for k, v in arrays.items()}
        report["values"] = {k: v[r].tolist() for k, v in outcome.reference.items()}
        if outcome.low is not None:
            report[f"values in {args.dtype}"] = {k: v[r].tolist() for k, v in outcome.low.items()}
    return report


def _structure(theorem: Theorem, args: argparse.Namespace) -> Structure:
    """The batch ``--batch``, ``--sizes``, ``--integers`` and ``--seed`` describe, checked against
    what ``theorem``'s search draws: a value missing or out of its range is a ValueError naming
    it, where filling the batch would fail on it or exhaust the memory."""
    from ._strategies import Structure, integer_scalars

    if not 1 <= args.batch <= _largest_batch():
        raise ValueError(f"--batch {args.batch} is outside 1 to {_largest_batch()}: no profile's "
                         "search runs such a batch, so no record's replay names one")
    sizes, integers = _pairs(args.sizes), _pairs(args.integers)
    _check_drawn("--sizes", "dimension", {d.name: d.sizes for d in theorem.dims}, sizes)
    _check_drawn("--integers", "Integer scalar",
                 {s.name: s.domain for s in integer_scalars(theorem)}, integers)
    return Structure(sizes, integers, args.seed)


def _check_drawn(option: str, what: str, ranges: dict,
                 given: Iterable[tuple[str, int]]) -> None:
    """Every name of ``ranges`` given a value within its range (``low`` to ``high``)."""
    values = dict(given)
    missing = [name for name in ranges if name not in values]
    if missing:
        raise ValueError(f"{option} gives no value for the {what}{'s' * (len(missing) > 1)} "
                         f"{', '.join(missing)} (the theorem's: {', '.join(ranges)})")
    for name, drawn in ranges.items():
        if not drawn.low <= values[name] <= drawn.high:
            raise ValueError(f"{option} {name}={values[name]} is outside {drawn.low} to "
                             f"{drawn.high}, the values the search draws for the {what} {name}")


def _largest_batch() -> int:
    """The largest batch any profile's search runs, so the largest a replay command names."""
    from ._profiles import PROFILES, Effort

    return max(effort.batch for row in PROFILES.values() for effort in row.values()
               if isinstance(effort, Effort))


def _rerun(theorem: Theorem, args: argparse.Namespace) -> dict:
    """The record's check run again on one configuration: its status, reason, counterexample."""
    from ._search import search

    record, _ = search(theorem, args.backend, args.dtype, args.device, args.mode,
                       profile=args.profile, seed=args.seed)
    return {"theorem": theorem.name, "status": str(record.status), "reason": record.reason,
            "counterexample": record.counterexample, "failing_row": None}


def main(argv: Sequence[str] | None = None) -> int:
    return run(parse(argv))


def run(args: argparse.Namespace) -> int:
    report = replay(args)
    json.dump(report, sys.stdout, indent=1, default=str)
    print()
    failed = (report["failing_row"] is not None or report.get("code_failed")
              or report.get("status") == "failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
