"""The driver: what every numeric route shares, written once.

A route (the compiled search, or a claim kind's route in ``numeric/kinds/``) draws and
evaluates; it returns :class:`Evidence`, what it saw, concluding exactly one :data:`Outcome`
(its type makes the conclusions exclusive). The driver turns evidence into a record's status
with :func:`settle`, the one place a status is chosen. The outcomes, in the order a route
that sees several chooses among them (the earlier wins):

1. **Our fault first** (``OurFault``). A derivation of ours that finite differences contradict
   (autodiff, the compiler) makes the record an *error*, whatever else was seen.
2. **A configuration the route cannot judge** (``Unsupported``: no rounding model, no float64
   exp) is *skipped*.
3. **Two routes that disagree** (``Inconsistent``: float64 against a 50-digit evaluation, a
   format against its proved rounding bound) make the record *inconsistent*: nothing else it
   says can be trusted.
4. **A counterexample** (``Failure``) fails the record, with its replay command.
5. **A format that cannot tell** the claim's falsity from its own rounding (``CannotDecide``)
   gives *not-decisive*.
6. **The evidence rule**, for a route that saw nothing fail (``Passed``). A record passes only
   with at least ``MINIMUM_DECIDED`` decided instances, unless its route says why its
   instances are every instance there is
   (``Passed.fixed_inputs``: a claim whose inputs are all given, evaluated at each of its
   given values; more draws would repeat them). With fewer it reads *too-few*. A kernel
   checker's cell counts cases, not instances: each case is one call of the kernel whose
   every output row is judged (1 to 16 query rows per head and batch element, 129 and more at
   the block edges), and a cell needs ``MINIMUM_DECIDED_CASES`` of them.
7. Otherwise the record *passed*.

A kernel checker's cell is settled by the same rules (:func:`settle_cell`), in a kernel's
words (``CellStatus``): passed reads *conforms*, a failure is named by what the kernel did
(*fails*, *raised*, *layout*, *declaration*, or *crashed* and *timed-out* where the worker
running a case died or was killed at its time limit), a configuration the property cannot judge
reads *n/a*, and too few decided cases *too-few*.

A route that raises is the driver's to report too (``_search``): an *error* with the message.
"""

from __future__ import annotations

import random
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from hypothesis import HealthCheck, Phase, find, settings
from hypothesis.errors import NoSuchExample, Unsatisfiable, UnsatisfiedAssumption

from attnproof.symbolic import FLOAT64
from attnproof.symbolic._catalog import theorem_file_argument

from . import _strategies as strategies
from ._backends import Backend
from ._record import CELL_FAILURES, CellStatus, NumericRecord, NumericStatus
from ._tolerance import bits

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from attnproof.symbolic import Dim, Format, Theorem

    from ._profiles import Effort, Profile
    from ._strategies import Structure

    class _Cell(Protocol):
        """What the driver fills of a kernel checker's cell (``attnproof/kernels``)."""

        status: CellStatus
        reason: str

# what a search draws: a structure, or a route's own value
_Value = TypeVar("_Value")
# what a route's run of one structure gives: the route's own type
_Outcome = TypeVar("_Outcome")

# the evidence rule (rule 6): decided instances a record needs, decided cases a kernel cell needs
MINIMUM_DECIDED = 100
MINIMUM_DECIDED_CASES = 3

# the seed of a search the profile derandomizes (CI): the same draws on every machine
DERANDOMIZED_SEED = 0
# further searches a route's structure search runs while it has decided too few instances
TOP_UP_SEARCHES = 3


@dataclass(frozen=True)
class Where:
    """Where a route checks: the backend's row, the dtype (its format), the device's name, the
    mode."""

    row: Backend
    dtype: Format
    device: str
    mode: str

    @property
    def decides_truth(self) -> bool:
        """Whether this configuration decides truth: float64 on a reference backend."""
        return self.row.reference and self.dtype == FLOAT64

    def effort(self, profile: Profile) -> Effort:
        """The profile's effort for this configuration: its truth effort where truth is
        decided, its formats' effort elsewhere."""
        return profile.truth if self.decides_truth else profile.formats


@dataclass(frozen=True)
class Failure:
    """A counterexample (rule 4): what was found (``counterexample``, shown as is), the
    record's reason, whether it refutes the claim on any record (code NaN or ±∞ where the
    statement is finite, a violated proved bound), and its replay command where the route's own
    is finer than the driver's (the compiled search's one batch)."""

    counterexample: dict
    reason: str
    refutes: bool = False
    replay: str | None = None


@dataclass(frozen=True)
class Passed:
    """Nothing failed (rules 6 and 7): how it was checked (``description``), and where the
    instances are every instance there is, why (``fixed_inputs``). Too few decided instances
    read *too-few*."""

    description: str | None = None
    fixed_inputs: str | None = None


@dataclass(frozen=True)
class CannotDecide:
    """The format cannot tell the claim's falsity from its own rounding (rule 5)."""

    reason: str


@dataclass(frozen=True)
class Inconsistent:
    """Two routes disagree (rule 3): why, and the values where they do."""

    reason: str
    example: dict | None = None


@dataclass(frozen=True)
class Unsupported:
    """A configuration the route cannot judge (rule 2)."""

    reason: str


@dataclass(frozen=True)
class OurFault:
    """A derivation of ours that the evidence contradicts (rule 1): why, and the counterexample
    that shows it, where one does."""

    reason: str
    failure: Failure | None = None


# what a route concluded: exactly one of these, so that two conclusions cannot be told at once
Outcome = Passed | Failure | CannotDecide | Inconsistent | Unsupported | OurFault


@dataclass(frozen=True)
class Evidence:
    """What a route saw: how much (``examples`` drawn, ``instances`` decided, ``undecided``
    ones no float64 value decided, the worst error in ulps, float64's distance from the
    50-digit evaluation, the seed that draws it again where the route chose it), what it
    concluded (``outcome``: one of :data:`Outcome`), and notes appended to the record's reason.
    Immutable: a route that learns more returns a new one (``replace``, :meth:`concluding`,
    :meth:`noting`)."""

    examples: int = 0
    instances: int = 0
    undecided: int = 0
    worst_ulps: float | None = None
    ground_truth_ulps: float | None = None
    seed: int | None = None
    outcome: Outcome = Passed()
    notes: tuple[str, ...] = ()

    def concluding(self, outcome: Outcome) -> Evidence:
        """The same counts, concluding ``outcome`` instead."""
        return replace(self, outcome=outcome)

    def noting(self, *notes: str | None) -> Evidence:
        """The same evidence with ``notes`` (those given) appended."""
        return replace(self, notes=self.notes + tuple(note for note in notes if note))

    @property
    def failure(self) -> Failure | None:
        """The counterexample, where the outcome is one (rule 4) or our fault shows one."""
        if isinstance(self.outcome, Failure):
            return self.outcome
        return self.outcome.failure if isinstance(self.outcome, OurFault) else None

    @property
    def passed(self) -> Passed | None:
        """The outcome where nothing failed, else None."""
        return self.outcome if isinstance(self.outcome, Passed) else None


def settle(record: NumericRecord, evidence: Evidence, replay: str | None = None) -> None:
    """Fill ``record`` from ``evidence`` by the rules of this module's docstring; ``replay`` is
    the driver's command for a failure that brings none."""
    record.examples, record.instances = evidence.examples, evidence.instances
    record.undecided = evidence.undecided
    if evidence.worst_ulps is not None:
        record.max_error_ulps, record.max_error_bits = evidence.worst_ulps, bits(
            evidence.worst_ulps)
    if evidence.ground_truth_ulps is not None:
        record.ground_truth_ulps = evidence.ground_truth_ulps
    failure = evidence.failure
    if failure is not None:
        record.counterexample = failure.counterexample
        record.refutes = failure.refutes
        record.replay = failure.replay or replay
    elif isinstance(evidence.outcome, Inconsistent) and evidence.outcome.example is not None:
        record.counterexample = evidence.outcome.example
    record.status, why = _status(evidence)
    record.reason = _joined(why, *evidence.notes) if why or evidence.notes else None


def settle_cell(cell: _Cell, evidence: Evidence, failed_as: str = "fail") -> None:
    """Fill a kernel checker's cell's status and reason from ``evidence``, by the rules of this
    module's docstring: its ``examples`` are the cases run and its ``instances`` the decided
    ones, ``Unsupported`` reads n/a, and a ``Failure`` is named by what the kernel did in the
    failing case, ``failed_as`` (a case's word: fail, raised, layout, declaration; or what
    stopped the worker running it: crashed, timed-out)."""
    status, why = _status(evidence, lambda seen: too_few_cases(seen.instances, seen.examples))
    if status not in _CELL_STATUS:
        raise ValueError(f"a kernel cell cannot be {status.value}: {why}")
    cell.status = CELL_FAILURES[failed_as] if status == NumericStatus.FAILED else \
        _CELL_STATUS[status]
    cell.reason = _joined(why, *evidence.notes) or ""


_CELL_STATUS = {NumericStatus.PASSED: CellStatus.CONFORMS, NumericStatus.TOO_FEW:
                CellStatus.TOO_FEW, NumericStatus.SKIPPED: CellStatus.NOT_APPLICABLE,
                NumericStatus.FAILED: CellStatus.FAILS}  # a failure: by CELL_FAILURES


def _status(evidence: Evidence, rule: Callable[[Evidence], str | None] | None = None
            ) -> tuple[NumericStatus, str | None]:
    """The status and its reason; ``rule(evidence)``: why the evidence is too little (rule 6,
    :func:`too_few` unless given)."""
    outcome = evidence.outcome
    if isinstance(outcome, Passed):
        few = (too_few if rule is None else rule)(evidence)
        if few is not None:
            return NumericStatus.TOO_FEW, _joined(few, outcome.description)
        return NumericStatus.PASSED, _joined(outcome.description, outcome.fixed_inputs)
    return OUTCOME_STATUS[type(outcome)], outcome.reason


# the status of each outcome but a pass, whose status the evidence rule decides
OUTCOME_STATUS: dict[type, NumericStatus] = {
    OurFault: NumericStatus.ERROR, Unsupported: NumericStatus.SKIPPED,
    Inconsistent: NumericStatus.INCONSISTENT, Failure: NumericStatus.FAILED,
    CannotDecide: NumericStatus.NOT_DECISIVE}


def would_pass(evidence: Evidence) -> bool:
    """Whether ``evidence``, settled as it stands, reads "passed" (a route that checks more
    only on a passing record asks)."""
    return _status(evidence)[0] == NumericStatus.PASSED


def too_few(evidence: Evidence) -> str | None:
    """Why ``evidence`` is not enough to pass (rule 6), or None if it is."""
    passed = evidence.passed
    fixed = passed is not None and passed.fixed_inputs is not None
    if fixed or evidence.instances >= MINIMUM_DECIDED:
        return None
    return (f"too few instances ({evidence.instances}): a record passes only with at least "
            f"{MINIMUM_DECIDED} decided instances")


def too_few_cases(decided: int, cases: int) -> str | None:
    """Why a kernel cell with ``decided`` of ``cases`` cases decided cannot conform (rule 6), or
    None if it can."""
    if decided >= MINIMUM_DECIDED_CASES:
        return None
    return f"{decided} of {cases} cases decided (needs {MINIMUM_DECIDED_CASES})"


def _joined(*parts: str | None) -> str | None:
    return "; ".join(part for part in parts if part) or None


# -- the search for a failing example, for the routes that judge one structure at a time --------


@dataclass
class Tally:
    """The counts of a search as it runs (the one mutable part of the evidence): structures
    run, instances decided and undecided, the worst error in ulps; :meth:`evidence` freezes
    them."""

    examples: int = 0
    instances: int = 0
    undecided: int = 0
    worst_ulps: float | None = None

    def add(self, decided: int, undecided: int = 0, worst_ulps: float | None = None) -> None:
        """Count one more structure run, with what it decided."""
        self.examples += 1
        self.instances += decided
        self.undecided += undecided
        if worst_ulps is not None:
            self.worst_ulps = max(self.worst_ulps or 0.0, worst_ulps)

    def evidence(self, seed: int | None = None) -> Evidence:
        """These counts as evidence, drawn from ``seed``; a route concludes it."""
        return Evidence(self.examples, self.instances, self.undecided, self.worst_ulps,
                        seed=seed)


@dataclass(frozen=True)
class Judged:
    """What one structure's run decided, as the driver tallies it: its ``decided`` and
    ``undecided`` instances, its worst error in ulps where the route measures one, whether it
    fails, and whether it shows the claim false in float64 where the format's rounding hides it
    (``indecisive``: the format cannot decide the claim)."""

    decided: int
    undecided: int = 0
    worst_ulps: float | None = None
    fails: bool = False
    indecisive: bool = False


@dataclass(frozen=True)
class StructureRoute(Generic[_Outcome]):
    """A route that searches structures (sizes and a seed) for one whose run fails, as a
    record: it says how to run a structure (``run``), what a run decided (``judge``), what a
    failing run shows (``counterexample``) and why it fails (``failure_reason``), and how the
    evidence reads where none failed (``passed``; ``indecisive_reason`` where a run was
    indecisive). :func:`check_structures` draws, runs, tallies, shrinks and builds the failure.
    Sizes are drawn for ``dims`` (the theorem's dimensions unless given); with ``extremes``,
    every size at its largest and at its smallest runs too where no drawn structure failed."""

    run: Callable[[Structure], _Outcome]
    judge: Callable[[_Outcome], Judged]
    counterexample: Callable[[Structure, _Outcome], dict[str, Any]]
    failure_reason: Callable[[Evidence, dict[str, Any], _Outcome], str]
    passed: Callable[[Evidence], str]
    indecisive_reason: Callable[[Evidence], str] | None = None
    dims: tuple[Dim, ...] | None = None
    extremes: bool = False


def check_structures(theorem: Theorem, where: Where, profile: Profile, seed: int | None,
                     route: StructureRoute[_Outcome]) -> Evidence:
    """The evidence of ``route`` searched at ``where``'s effort: a failure with the failing
    run's counterexample, else the passing description (and, where a run was indecisive and
    none failed, why the format cannot decide)."""
    indecisive = False  # whether a run that did not fail was indecisive

    def judge(outcome: _Outcome) -> Judged:
        nonlocal indecisive
        judged = route.judge(outcome)
        indecisive = indecisive or (judged.indecisive and not judged.fails)
        return judged

    seen, failing = search_structures(theorem, profile, where.effort(profile), seed, route.run,
                                      judge, route.dims, route.extremes)
    if failing is not None:
        shrunk, outcome = failing
        example = route.counterexample(shrunk, outcome)
        return seen.concluding(Failure(example, route.failure_reason(seen, example, outcome)))
    if indecisive and route.indecisive_reason is not None:
        return seen.concluding(CannotDecide(route.indecisive_reason(seen)))
    return seen.concluding(Passed(route.passed(seen)))


def search_structures(theorem: Theorem, profile: Profile, effort: Effort, seed: int | None,
                      run: Callable[[Structure], _Outcome], judge: Callable[[_Outcome], Judged],
                      dims: Iterable[Dim] | None = None, extremes: bool = False
                      ) -> tuple[Evidence, tuple[Structure, _Outcome] | None]:
    """``(evidence, (shrunk, outcome))``: structures of ``theorem`` (sizes of ``dims``, else of
    the theorem's dimensions) drawn and shrunk by :func:`search_for_failure` until one fails.
    ``run(structure)`` evaluates one; ``judge(outcome)`` says what it decided, which the
    evidence adds up (:class:`Judged`). Where a search finds no failure and decides fewer
    instances than the evidence rule asks, up to ``TOP_UP_SEARCHES`` more run from the next
    seeds. With ``extremes``, a search that found no failure then runs every size at its
    largest and at its smallest (``strategies.extreme_structures``); a failing one is the
    counterexample as it is (an extreme is not shrunk). The evidence counts every structure run
    (shrinking included) and records the first seed; ``outcome`` is the failing structure's,
    run once more and checked to fail again (None in place of the pair when none failed)."""
    tally = Tally()
    dims = theorem.dims if dims is None else tuple(dims)

    def fails(structure: Structure) -> bool:
        judged = judge(run(structure))
        tally.add(judged.decided, judged.undecided, judged.worst_ulps)
        return judged.fails

    strategy = strategies.from_theorem(theorem, profile, dims)
    shrunk, searched_from = search_for_failure(strategy, fails, effort, profile, seed)
    # a search that found nothing but decided too few instances (the hypothesis of an
    # implication holds on few draws) searches again from the next seeds: more evidence, never
    # a lower bar; a rerun from the recorded seed repeats these searches too
    for more in range(1, TOP_UP_SEARCHES + 1):
        if shrunk is not None or tally.instances >= MINIMUM_DECIDED:
            break
        shrunk, _ = search_for_failure(strategy, fails, effort, profile,
                                       (searched_from + more) % 2**32)
    if extremes and shrunk is None:
        extreme = strategies.extreme_structures(theorem, dims, seed=searched_from)
        shrunk = next((structure for structure in extreme if fails(structure)), None)
    seen = tally.evidence(seed=searched_from)
    if shrunk is None:
        return seen, None
    outcome = run(shrunk)
    # the counterexample a route describes is this run's: it must fail as it did (judged
    # apart, so that the evidence counts it once)
    if not judge(outcome).fails:
        raise RuntimeError("the failing structure passed when run again: the evaluation is not "
                           "deterministic given its seed")
    return seen, (shrunk, outcome)


def search_for_failure(strategy: SearchStrategy[Structure], fails: Callable[[Structure], bool],
                       effort: Effort, profile: Profile, seed: int | None,
                       explicit: Iterable[Structure] = (),
                       targets: bool = False) -> tuple[Structure | None, int]:
    """``(shrunk, seed)``: the first structure ``strategy`` draws on which ``fails(structure)``
    is true, shrunk by Hypothesis (None when ``effort.examples`` draws found none), and the seed
    that draws it again (:func:`find_failure` says what ``explicit`` and ``targets`` add). Every
    search runs from a seed, so that every record can be rerun (``rerun_command``): the one
    given, else a fixed one where the profile derandomizes (CI), else a fresh one."""
    seed = search_seed(profile, seed)
    return find_failure(strategy, fails, effort.examples, seed, explicit, targets), seed


def search_seed(profile: Profile, seed: int | None) -> int:
    """The seed a search runs from: the one given, else the derandomized one where the profile
    derandomizes (CI), else a fresh one."""
    if seed is not None:
        return seed
    return DERANDOMIZED_SEED if profile.derandomize else random.SystemRandom().getrandbits(32)


def find_failure(strategy: SearchStrategy[_Value] | None, fails: Callable[[_Value], bool],
                 examples: int, seed: int, explicit: Iterable[_Value] = (),
                 targets: bool = False) -> _Value | None:
    """The one search of the driver, for the claim kinds' routes and the kernel checker's
    properties alike: the first of ``explicit`` on which ``fails(value)`` is true, as it is
    (a value written out is not shrunk), else the first of ``examples`` values ``strategy``
    draws from ``seed`` on which it is, shrunk by Hypothesis; None when none is. With
    ``targets``, the search also climbs toward what ``fails`` reports to
    ``hypothesis.target`` (an error against its bound) once its draws are done. ``fails`` may
    call ``hypothesis.reject()`` for a value that is no instance (another is drawn; an explicit
    one is passed over); a ``BaseException`` it raises ends the search and propagates. The
    explicit values run before Hypothesis does, outside its test: ``hypothesis.target`` is only
    to be called where ``hypothesis.currently_in_test_context()``. With no ``examples``, the
    explicit values are the whole search (a route that enumerates its domain)."""
    for value in explicit:
        try:
            if fails(value):
                return value
        except UnsatisfiedAssumption:
            continue
    if examples <= 0:  # the written-out values were the whole search (a declared domain)
        return None
    assert strategy is not None  # only a search with no examples to draw goes without one
    phases = (Phase.generate, Phase.target, Phase.shrink) if targets else (Phase.generate,
                                                                            Phase.shrink)
    options = settings(max_examples=examples, database=None, deadline=None, phases=phases,
                       derandomize=False, suppress_health_check=list(HealthCheck))
    try:
        return find(strategy, fails, settings=options, random=random.Random(seed))
    except (NoSuchExample, Unsatisfiable):  # none failed, or every draw was rejected
        return None


def draw_each(strategy: SearchStrategy[_Value], run: Callable[[_Value], object], examples: int,
              seed: int, explicit: Iterable[_Value] = ()) -> None:
    """``run(value)`` on each of ``explicit``, then on ``examples`` values drawn from ``seed``
    as :func:`find_failure` draws them, whatever each gives (a pass that measures rather than
    searches); ``run`` may reject a value as there."""
    def never_fails(value: _Value) -> bool:
        run(value)
        return False

    find_failure(strategy, never_fails, examples, seed, explicit)


# -- replay ------------------------------------------------------------------------------------


def rerun_command(theorem: Theorem, where: Where, seed: int | None,
                  profile: str = "default") -> str:
    """The command that runs a record's check again on one configuration and prints its
    counterexample: a check is deterministic given its seed (derandomized Hypothesis, seeded
    generators), so the same failure returns. The compiled search's failures bring a finer
    command of their own, one batch (``_witness.replay_command``)."""
    parts = ["attnproof", "replay", theorem.name, "--backend", where.row.name,
             "--dtype", where.dtype.name, "--device", where.device, "--mode", where.mode]
    if seed is not None:
        parts += ["--seed", str(seed)]
    if profile != "default":
        parts += ["--profile", profile]
    extra = theorems_argument(theorem)
    parts += ["--theorems", extra] if extra else []
    return shlex.join(parts)


def theorems_argument(theorem: Theorem) -> str | None:
    """The ``--theorems`` argument that finds ``theorem`` again (None for the catalog's), never
    an absolute path of this machine: a file outside the working directory is named by its
    folder and file, to be replayed from the directory that holds that folder."""
    extra = theorem_file_argument(theorem.origin)
    if not extra:
        return None
    path = PurePath(extra)
    tail = path.parts[1:][-2:] if path.is_absolute() else path.parts
    return str(PurePath(*tail)) if tail else None
