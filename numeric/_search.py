"""The search: Hypothesis draws structures, each is decided as one batch, and the record is
settled from what was seen (a failure goes to the witness)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from hypothesis import currently_in_test_context, target

from attnproof.symbolic import Theorem

from . import _strategies as strategies
from . import _time_log as time_log
from ._backends import Backend, Configuration, unavailable_reason
from ._decide import Outcome, decide, is_stability
from ._devices import kind_of, out_of_memory, out_of_memory_reason
from ._driver import (
    CannotDecide,
    Evidence,
    Failure,
    Inconsistent,
    OurFault,
    Passed,
    Tally,
    Where,
    find_failure,
    rerun_command,
    search_seed,
    settle,
    too_few,
)
from ._ground_truth import ground_truth_error
from ._plan import ImplementationError, ImplementationRaised, Runner, is_reference, runner_for
from ._record import FINDING, NOT_EVALUATED, NumericRecord, NumericStatus
from ._routes import format_judges, route_for
from ._tolerance import TRUTH_ULPS, format_truth_ulps
from ._witness import derivation_fault, refute, refute_raised, refute_shape

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._profiles import Effort, Profile

# Sizes up to this are evaluated exactly (mpmath loops over every sum) from a searched batch.
GROUND_TRUTH_MAX_SIZE = 4

def check(theorem: Theorem, backend_name: str = "numpy", dtype: str = "float64",
          device: str = "cpu", mode: str | None = None,
          profile: str | None = None) -> NumericRecord:
    """Check ``theorem`` numerically on one configuration and return its record.

    A missing backend, dtype or device gives status "skipped"; an exception while compiling or
    evaluating gives "error" with the message; a refuted claim gives "failed" with a shrunk
    counterexample and a replay command (for ``expect="refuted"`` that is the expected outcome);
    a claim false in float64 that this format cannot tell from rounding gives "not-decisive".
    """
    return search(theorem, backend_name, dtype, device, mode, profile)[0]


@dataclass
class Ratios:
    """Largest error / limit seen: over every limited comparison (what a true claim needed),
    and over the truth comparisons this record decides with (what a false claim produced)."""

    needed: float = 0.0
    truth: float = 0.0


def search(theorem: Theorem, backend_name: str = "numpy", dtype: str = "float64",
           device: str = "cpu", mode: str | None = None, profile: str | None = None,
           seed: int | None = None) -> tuple[NumericRecord, Ratios]:
    """:func:`check`, with the error ratios it saw (for ``scripts/calibrate.py``); ``seed``
    fixes Hypothesis's random source."""
    try:
        configuration = Configuration(backend_name, dtype, device, mode)
    except ValueError as error:  # a name outside the vocabulary: skipped, saying what is known
        record = NumericRecord(backend_name, dtype, str(device), mode or "",
                               NumericStatus.SKIPPED)
        record.reason = str(error)
        return record, Ratios()
    # its own time: Hypothesis's draws, the comparisons and decisions, the kinds' own routes
    with time_log.phase("search"):
        return _search(theorem, configuration, profile, seed)


def _search(theorem: Theorem, configuration: Configuration, profile: str | None,
            seed: int | None) -> tuple[NumericRecord, Ratios]:
    row, dtype = configuration.row, configuration.format
    device, mode = configuration.device, configuration.mode
    record = NumericRecord(row.name, dtype.name, device, mode, NumericStatus.SKIPPED)
    ratios = Ratios()
    start = time.perf_counter()
    record.reason = _skip_reason(row, dtype, device)
    if theorem.claim.nothing_to_draw:  # worked numbers: settled exactly by the symbolic side
        record.reason = theorem.claim.nothing_to_draw
    route = route_for(theorem.claim)
    if record.reason is None:
        where = Where(row, dtype, device, mode)
        chosen = strategies.profile(profile)
        try:
            if route is not None:  # a claim kind brings its own numeric route
                with time_log.attributed(theorem.name, row.name, dtype.name, mode, {}):
                    seen = route(theorem, where, chosen, seed=seed)
                settle(record, seen, rerun_command(
                    theorem, where, seed if seen.seed is None else seen.seed, chosen.name))
            else:
                runner, finding = traceable_or_eager(runner_for(theorem, row, device, mode),
                                                     dtype, chosen)
                seen, ratios = run_search(theorem, runner, dtype, chosen, seed=seed)
                settle(record, seen, rerun_command(theorem, where, seen.seed, chosen.name))
                if finding:  # first: a reason that begins with FINDING reports a defect
                    record.reason = finding + (f"; {record.reason}" if record.reason else "")
        except Exception as error:  # any failure of compiling or evaluating is reported
            record.status, record.reason = NumericStatus.ERROR, (
                out_of_memory_reason(device, error) if out_of_memory(error)
                else f"{type(error).__name__}: {error}")
    record.seconds = round(time.perf_counter() - start, 4)
    return record, ratios


def _skip_reason(row: Backend, dtype: Format, device: str) -> str | None:
    """Why this machine cannot run a configuration (its names are checked by Configuration)."""
    missing = unavailable_reason(row)
    if missing:
        return missing
    if device not in row.devices():
        return f"{row.name} has no device {device!r} here (devices: {', '.join(row.devices())})"
    if dtype not in row.dtypes.get(kind_of(device), ()):
        return f"{row.name} does not support {dtype} on {device}"
    return None


def traceable_or_eager(runner: Runner, dtype: Format,
                       chosen: Profile) -> tuple[Runner, str | None]:
    """The runner to check with, and a finding where there is one: code under test that raises
    under jit at the smallest sizes but runs eagerly at the same inputs cannot be compiled,
    which is a defect of the code (its users jit it), not of the claim; its values are then
    checked eagerly. Code that raises in both modes is left to the search to judge."""
    theorem = runner.plan.theorem
    if (runner.mode != "jit" or theorem.implementation is None
            or "eager" not in runner.row.modes):
        return runner, None
    batch = effort_for(runner, dtype, chosen).batch
    smallest = _smallest_structure(theorem)
    try:
        decide(runner, smallest, batch, dtype)
        return runner, None
    except ImplementationRaised as raised:
        eager = runner_for(theorem, runner.row, runner.device_name, "eager")
        try:
            decide(eager, smallest, batch, dtype)
        except (ImplementationRaised, ImplementationError):
            return runner, None
        return eager, (f"{FINDING}the implementation cannot run under {runner.row.name}'s "
                       f"jit ({raised.exception}"
                       f"{f' at {raised.where}' if raised.where else ''}) but runs eagerly: "
                       "its values were checked eagerly")
    except ImplementationError:
        return runner, None


def _smallest_structure(theorem: Theorem) -> strategies.Structure:
    sizes = tuple((d.name, d.sizes.low) for d in theorem.dims)
    integers = tuple((s.name, strategies.integer_domain(s).low)
                     for s in strategies.integer_scalars(theorem))
    return strategies.Structure(sizes, integers, 0)


def effort_for(runner: Runner, dtype: Format, chosen: Profile) -> strategies.Effort:
    """The profile's effort for this record: full where truth is decided in the default mode,
    fewer larger batches elsewhere (each new shape is a compilation on a jitting backend)."""
    return strategies.spread(_effort(runner, dtype, chosen), runner.plan.theorem)


def _effort(runner: Runner, dtype: Format, chosen: Profile) -> strategies.Effort:
    if runner.mode != runner.row.default_mode:
        return chosen.other_modes
    if is_reference(runner.row, dtype):
        return chosen.truth
    return chosen.half_formats if dtype.width <= 16 else chosen.formats


@dataclass
class _Seen:
    """What the search saw over every example."""

    worst: float = 0.0
    invisible: float = 0.0
    # (structure, outcome) of the refuting example
    failure: tuple[strategies.Structure, Outcome] | None = None
    # (structure, outcome) of the first example small enough
    small: tuple[strategies.Structure, Outcome] | None = None
    # (structure, ImplementationError) of the last example whose code returned another shape
    wrong_shape: tuple[strategies.Structure, ImplementationError] | None = None
    # (structure, ImplementationRaised) of the last example whose code raised
    raised: tuple[strategies.Structure, ImplementationRaised] | None = None
    out_of_range: int = 0  # rows whose exact values this format cannot hold
    last: strategies.Structure | None = None  # the structure of the last example drawn


def run_search(theorem: Theorem, runner: Runner, dtype: Format, chosen: Profile,
               seed: int | None = None) -> tuple[Evidence, Ratios]:
    """Search for a failing batch; what was seen, and the error ratios. The evidence records
    the seed the search drew from, so that ``attnproof replay --seed`` draws it again."""
    effort = effort_for(runner, dtype, chosen)
    searched_from = search_seed(chosen, seed)
    tally = Tally()
    seen, ratios = _drive(theorem, runner, dtype, chosen, effort, tally, searched_from)
    # code that returned another shape or raised, and nothing else wrong: no further batch
    # evaluates
    raised_only = seen.failure is None and seen.raised is not None
    wrong_shape_only = seen.failure is None and seen.wrong_shape is not None and not raised_only
    if not (wrong_shape_only or raised_only):
        _top_up(runner, dtype, effort, tally, seen, ratios)
    tally.worst_ulps = seen.worst
    counted = tally.evidence(seed=searched_from)
    # elsewhere it would measure NumPy, not this record
    if is_reference(runner.row, dtype) and not (wrong_shape_only or raised_only):
        counted = replace(counted, ground_truth_ulps=_ground_truth(runner, theorem, seen))
    stray = counted.ground_truth_ulps
    if raised_only:
        return counted.concluding(_raised_failure(runner, dtype, effort.batch, counted, seen)), \
            ratios
    if wrong_shape_only:
        return counted.concluding(_wrong_shape_failure(runner, dtype, effort.batch, counted,
                                                       seen)), ratios
    if stray is not None and stray > TRUTH_ULPS:
        return counted.concluding(Inconsistent(
            f"float64 strays {stray:.3g} ulps from the 50-digit evaluation of the same "
            "statement: the compiled code is wrong")), ratios
    if seen.failure is None:
        return _without_failure(runner, dtype, chosen, counted, seen.invisible,
                                seen.out_of_range), ratios
    failure = refute(runner, *seen.failure, dtype, effort.batch, chosen)
    fault = derivation_fault(failure)
    return counted.concluding(failure if fault is None else OurFault(fault, failure)), ratios


def _drive(theorem: Theorem, runner: Runner, dtype: Format, chosen: Profile, effort: Effort,
           record: Tally, seed: int) -> tuple[_Seen, Ratios]:
    """The driver's search over the theorem's structures, from ``seed``: its corner
    structures first, then drawn ones that climb toward the largest error, until one batch
    fails (shrunk) or the examples run out. ``record`` counts the evidence as it comes."""
    seen, ratios = _Seen(), Ratios()

    def fails(structure: strategies.Structure) -> bool:
        seen.last = structure
        try:
            outcome = decide(runner, structure, effort.batch, dtype)
        except ImplementationRaised as raised:
            seen.raised = (structure, raised)
            return record.examples > 0  # it returned values before: shrink this failure
        except ImplementationError as error:
            if error.got is None:  # no array at all: a declaration error, whatever the size
                raise
            seen.wrong_shape = (structure, error)
            return record.examples > 0  # it returned the stated shape before: shrink this
        _note(seen, ratios, record, structure, outcome)
        if currently_in_test_context():  # a corner runs outside Hypothesis's test
            target(min(outcome.worst, 1e300), label="worst error (ulps)")
            if not is_reference(runner.row, dtype):
                target(min(outcome.format_ratio, 1e300), label="lhs-rhs in format / its limit")
        if outcome.failing_row is None:
            return False
        seen.failure = (structure, outcome)
        return True

    find_failure(strategies.from_theorem(theorem, chosen), fails, effort.examples, seed,
                 explicit=strategies.corner_structures(theorem), targets=True)
    return seen, ratios


def _top_up(runner: Runner, dtype: Format, effort: Effort, record: Tally, seen: _Seen,
            ratios: Ratios) -> None:
    """One more batch when the record counts fewer instances than it drew: rows a format
    cannot represent, or that no float64 value decides, are not instances, and a record should
    not hold fewer than its batches' worth because of them. The batch has the last example's
    sizes (the same programs: nothing new to compile) and a seed of its own, so a failure in it
    replays."""
    drawn = record.examples * effort.batch
    if seen.failure is not None or seen.last is None or record.instances >= drawn:
        return
    structure = dataclasses.replace(seen.last, seed=(seen.last.seed + 1) % 2**32)
    outcome = decide(runner, structure, effort.batch, dtype)
    _note(seen, ratios, record, structure, outcome)
    if outcome.failing_row is not None:
        seen.failure = (structure, outcome)


def _note(seen: _Seen, ratios: Ratios, record: Tally, structure: strategies.Structure,
          outcome: Outcome) -> None:
    record.add(outcome.instances, outcome.undecided)
    seen.out_of_range += outcome.out_of_range
    if max(structure.size_map.values(), default=0) <= GROUND_TRUTH_MAX_SIZE:
        seen.small = seen.small or (structure, outcome)
    seen.worst = max(seen.worst, outcome.worst)
    seen.invisible = max(seen.invisible, outcome.invisible)
    for name, error in outcome.errors.items():
        ratio = float(error.max(initial=0.0)) / outcome.limits[name]
        ratios.needed = max(ratios.needed, ratio)
        if not is_stability(name):
            ratios.truth = max(ratios.truth, ratio)


def _ground_truth(runner: Runner, theorem: Theorem, seen: _Seen) -> float | None:
    """Against mpmath: a small searched batch if one was drawn, else fresh small instances."""
    with time_log.phase("ground truth"):
        if seen.small is None:
            return ground_truth_error(runner, _any(theorem))
        structure, outcome = seen.small
        return ground_truth_error(runner, structure, outcome.evaluated)


def _any(theorem: Theorem) -> strategies.Structure:
    integers = tuple((s.name, strategies.integer_domain(s).low)
                     for s in strategies.integer_scalars(theorem))
    return strategies.Structure((), integers, 0)


def _wrong_shape_failure(runner: Runner, dtype: Format, batch: int, tally: Evidence,
                         seen: _Seen) -> Failure:
    """Code that returned the stated shape at some sizes and another at these is refuted here,
    with both shapes; one that never returned it has a declaration error, not a counterexample."""
    assert seen.wrong_shape is not None  # ``run_search`` calls this when code returned one
    structure, error = seen.wrong_shape
    if not tally.examples and not _stated_shape_somewhere(runner, dtype, batch):
        raise ImplementationError(f"{error} (at every size drawn, and with every dimension at "
                                  "its smallest and at its largest)", error.expected, error.got)
    return refute_shape(runner, structure, error, dtype, batch)


def _raised_failure(runner: Runner, dtype: Format, batch: int, tally: Evidence,
                    seen: _Seen) -> Failure:
    """Code that raised at these inputs and returned values at others is refuted here, with its
    exception; code that raised wherever it ran has a declaration error, not a counterexample."""
    assert seen.raised is not None  # ``run_search`` calls this when code raised
    structure, raised = seen.raised
    if not tally.examples and not _evaluates_somewhere(runner, dtype, batch):
        everywhere = ImplementationRaised(runner.plan.theorem, raised.error)
        everywhere.args = (f"{raised} at every size drawn, and with every dimension at its "
                           "smallest and at its largest: an error of the declaration",)
        raise everywhere
    return refute_raised(runner, structure, raised, dtype, batch)


def _evaluates_somewhere(runner: Runner, dtype: Format, batch: int) -> bool:
    """Whether the code returns values with every dimension at its smallest or its largest
    size (see ``_stated_shape_somewhere``)."""
    theorem = runner.plan.theorem
    integers = tuple((s.name, strategies.integer_domain(s).low)
                     for s in strategies.integer_scalars(theorem))
    for end in ("low", "high"):
        sizes = tuple((d.name, getattr(d.sizes, end)) for d in theorem.dims)
        try:
            decide(runner, strategies.Structure(sizes, integers, 0), batch, dtype)
        except (ImplementationRaised, ImplementationError):
            continue
        return True
    return False


def _stated_shape_somewhere(runner: Runner, dtype: Format, batch: int) -> bool:
    """Whether the code returns the stated shape with every dimension at its declared smallest,
    or at its largest, size: the draws may have missed the sizes where it does, and whether the
    code is wrong at some sizes or declared wrong must not depend on them."""
    theorem = runner.plan.theorem
    integers = tuple((s.name, strategies.integer_domain(s).low)
                     for s in strategies.integer_scalars(theorem))
    for end in ("low", "high"):
        sizes = tuple((d.name, getattr(d.sizes, end)) for d in theorem.dims)
        try:
            decide(runner, strategies.Structure(sizes, integers, 0), batch, dtype)
        except ImplementationError:
            continue
        return True
    return False


def _without_failure(runner: Runner, dtype: Format, chosen: Profile, counted: Evidence,
                     invisible: float, out_of_range: int = 0) -> Evidence:
    seen = _by_calibration(runner, dtype, counted, invisible, out_of_range)
    # a proved bound of both sides' rounding decides what the calibration cannot, where the
    # error analysis covers the equation (the mode's compiled programs are judged above)
    decided_so_far = isinstance(seen.outcome, CannotDecide) or too_few(seen) is None
    if (not is_reference(runner.row, dtype) and runner.mode == runner.row.default_mode
            and seen.instances and decided_so_far):
        for judge in format_judges():
            seen = judge(seen, runner.plan.theorem, runner.row, dtype, runner.device_name,
                         false_in_float64=invisible > 0, profile=chosen)
    return seen


def _by_calibration(runner: Runner, dtype: Format, counted: Evidence, invisible: float,
                    out_of_range: int = 0) -> Evidence:
    """What the calibrated tolerance can say of a search without a failing batch."""
    if counted.instances == 0 and not counted.undecided:
        return counted.concluding(CannotDecide(
            f"no drawn instance can be evaluated in {dtype} (range or rounding)"))
    if invisible > 0:
        measured = runner.row.measured_as(dtype)
        # the two figures are in different units: float64's epsilon and the format's
        return counted.concluding(CannotDecide(
            f"false in float64 (lhs vs rhs up to {invisible:.3g} float64 ulps) but within "
            f"{dtype}'s rounding bound of {format_truth_ulps(measured):g} {measured} ulps: "
            "this format cannot decide the claim"))
    return counted.concluding(Passed(_passing_notes(runner, dtype))).noting(
        _undecided_note(counted.undecided), _out_of_range_note(out_of_range, dtype))


def _out_of_range_note(rows: int, dtype: Format) -> str | None:
    if not rows:
        return None
    return (f"{rows} {NOT_EVALUATED} {dtype}: their exact values or exponents lie "
            "outside its range, or an entry is made only of exponentials below its smallest "
            "normal number (an overflow or underflow there is the format's, not the claim's)")


def _undecided_note(undecided: int) -> str | None:
    if not undecided:
        return None
    return (f"{undecided} instance(s) undecided: the statement's own float64 value or its "
            "error scale was not finite there")


def _passing_notes(runner: Runner, dtype: Format) -> str | None:
    derivative_without_autodiff = runner.plan.primal is not None and not runner.row.autodiff
    measured = runner.row.measured_as(dtype)
    notes = [runner.row.notes] if derivative_without_autodiff else []
    if measured != dtype:
        notes.append(f"{dtype} measured with {measured}'s epsilon ({runner.row.name} computes "
                     f"exp in {measured})")
    return "; ".join(notes) or None
