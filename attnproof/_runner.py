"""Run every theorem's proof and numeric checks in worker processes, one theorem at a time each.

This module decides what one theorem's checks are (``check_steps``, a sequence of messages)
and turns what they report into the run's report; the worker processes that run them, with
their time limits and the replacement of a worker that dies or hangs, are in ``_workers``.

SIGTERM is handled like Ctrl-C: the run stops, the theorems finished so far are kept, and
``RunInterrupted`` carries them with the signal's number.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from attnproof import symbolic
from attnproof.numeric import (
    NumericRecord,
    NumericStatus,
    profile_timeout,
    selected_devices,
    time_log,
)
from attnproof.symbolic import PROOF_TIME_LIMIT

from ._cache import cached_proof
from ._journal import Journal
from ._signals import signal_of, sigterm_as_interrupt
from ._workers import Collected, ConfigurationNames, run_isolated
from .report import (
    ErrorEntry,
    Report,
    SymbolicOutcome,
    TheoremResult,
    TheoremStatus,
    declaration,
    environment,
    now_iso,
    rendering,
    result_from_records,
)

if TYPE_CHECKING:
    from attnproof.numeric import Configuration
    from attnproof.symbolic import Catalog, Theorem

Progress = Callable[[TheoremResult, int, int], None]
Started = Callable[[str], None]
Planned = Callable[[list[str]], None]


class NumericApi(Protocol):
    """What the run uses of the ``numeric`` package (``numeric_api``; tests give a fake)."""

    def available_configurations(self, theorem: Theorem | None = None,
                                 profile: str | None = None) -> list[Configuration]: ...

    def check(self, theorem: Theorem, backend: str, dtype: str, device: str, mode: str, /, *,
              profile: str | None = None) -> NumericRecord: ...

    def backends_that_cannot_start(self) -> dict[str, str]: ...


@dataclass(frozen=True)
class Options:
    backends: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    devices: tuple[str, ...] | None = None
    profile: str = "default"
    modes: tuple[str, ...] | None = None
    time_limit: float = PROOF_TIME_LIMIT
    check_numeric: bool = True

    def wants(self, backend: str, dtype: str, device: str, mode: str) -> bool:
        """Whether the filters keep this configuration; a device word covers devices (``gpu``
        every GPU, ``gpu:1`` one)."""
        chosen = zip((self.backends, self.dtypes, self.modes), (backend, dtype, mode),
                     strict=True)
        return (all(allowed is None or value in allowed for allowed, value in chosen)
                and (self.devices is None or bool(selected_devices([device], self.devices))))

    def restrictions(self) -> list[str]:
        """Why a run with these options checks less than everything, in words."""
        reasons = [] if self.check_numeric else ["numeric checks skipped"]
        for label, allowed in (("backends", self.backends), ("dtypes", self.dtypes),
                               ("devices", self.devices), ("modes", self.modes)):
            if allowed is not None:
                reasons.append(f"numeric checks only on {label} {', '.join(allowed)}")
        return reasons

    def describe(self) -> dict:
        return {"by": "attnproof prove", "profile": self.profile, "backends": self.backends,
                "dtypes": self.dtypes, "devices": self.devices, "modes": self.modes,
                "check_numeric": self.check_numeric}


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during a run; ``report`` holds the theorems finished so far, ``signal``
    the signal's number (SIGINT or SIGTERM). ``after_the_last`` when every theorem had finished
    (the signal cut short only the end of the workers): the report is then whole, not partial."""

    def __init__(self, report: Report, signal_number: int = signal.SIGINT,
                 after_the_last: bool = False) -> None:
        super().__init__("run interrupted")
        self.report = report
        self.signal = signal_number
        self.after_the_last = after_the_last


def run(
    directories: Iterable,
    *,
    theorem_filter: Iterable[str] | None = None,
    backends: Iterable[str] | None = None,
    dtypes: Iterable[str] | None = None,
    devices: Iterable[str] | None = None,
    modes: Iterable[str] | None = None,
    profile: str = "default",
    jobs: int | None = None,
    progress: Progress | None = None,
    started: Started | None = None,
    planned: Planned | None = None,
    time_limit: float = PROOF_TIME_LIMIT,
    timeout: float | None = None,
    check_numeric: bool = True,
    isolate: bool = True,
    catalog: symbolic.Catalog | None = None,
    journal: Journal | None = None,
) -> Report:
    """Check the theorems found in ``directories`` and return the report.

    Args:
        theorem_filter: names to check; the others are left out and the report is ``partial``.
        backends, dtypes, devices, modes: restrict numeric configurations; None means all
            available (and, for modes, those the profile runs: each backend's default mode
            unless the profile is thorough). Any restriction marks the report ``partial``.
        jobs: worker processes at once (default: CPU count).
        progress: called as ``progress(result, done, total)`` as each theorem finishes.
        started: called with a theorem's name as its checks begin.
        planned: called once, before any check begins, with the names of the theorems this
            run checks (those the journal recovered are not).
        time_limit: seconds for each symbolic proof attempt.
        timeout: seconds per theorem before its worker is killed (default: by profile).
        isolate: False runs everything in this process (for debugging; no hang protection).
        catalog: the theorems of ``directories`` when the caller has discovered them already.
        journal: where each finished theorem is recorded as it finishes; the theorems whose
            results it recovered from an earlier run are not checked again.

    Raises:
        ValueError: an unknown profile, jobs < 1, or a name in ``theorem_filter`` that no
            file declares.
        RunInterrupted: on Ctrl-C or SIGTERM, carrying the theorems finished (the whole
            report when the signal came after the last of them).
    """
    profile_budget = profile_timeout(profile)  # raises ValueError for an unknown profile
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    directories = list(directories)
    if catalog is None:
        catalog = symbolic.discover(directories)
    wanted = _wanted_names(catalog, theorem_filter)
    options = Options(_tuple(backends), _tuple(dtypes), _tuple(devices), profile,
                      _tuple(modes), time_limit, check_numeric)
    selected = [t for t in catalog.theorems if wanted is None or t.name in wanted]
    run_state = _RunState(catalog, selected, wanted, options, progress, started, journal)
    to_check = run_state.recover()
    if planned:
        planned([t.name for t in to_check])
    budget = timeout if timeout is not None else profile_budget
    try:
        with sigterm_as_interrupt():
            if isolate:
                run_isolated(to_check, options, check_steps, jobs or os.cpu_count() or 1,
                             budget, run_state)
            else:
                _run_in_process(to_check, options, run_state)
    except KeyboardInterrupt as stop:
        every_one = run_state.all_finished()
        raise RunInterrupted(run_state.report(interrupted=not every_one), signal_of(stop),
                             after_the_last=every_one) from None
    return run_state.report(interrupted=False)


def numeric_api() -> NumericApi | None:
    """The ``numeric`` package if it offers the checker contract, else None."""
    try:
        from attnproof import numeric
    except ImportError:
        return None
    needed = ("available_configurations", "check", "backends_that_cannot_start")
    return numeric if all(hasattr(numeric, name) for name in needed) else None


def _tuple(values: Iterable[str] | None) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _wanted_names(catalog: Catalog, theorem_filter: Iterable[str] | None) -> set[str] | None:
    if theorem_filter is None:
        return None
    wanted = set(theorem_filter)
    known = {t.name for t in catalog.theorems} | {e.theorem for e in catalog.errors}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"no theorem named {', '.join(map(repr, unknown))}")
    return wanted


# -- bookkeeping shared by both execution modes --------------------------------------------------


@dataclass
class _RunState:
    catalog: symbolic.Catalog
    selected: list[Theorem]
    wanted: set[str] | None
    options: Options
    progress: Progress | None
    started: Started | None
    journal: Journal | None = None
    finished: dict[str, TheoremResult] = field(default_factory=dict)
    errors: list[ErrorEntry] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)

    def recover(self) -> list[Theorem]:
        """Take the results the journal still holds as finished; the theorems left to check."""
        if self.journal is None:
            return list(self.selected)
        for theorem in self.selected:
            result = self.journal.recover(theorem, self.options.time_limit)
            if result is not None:
                self.finished[theorem.name] = result
                self.journal.record(theorem, self.options.time_limit, result)
                self.recovered.append(theorem.name)
        return [t for t in self.selected if t.name not in self.finished]

    def start(self, theorem: Theorem) -> None:
        if self.started:
            self.started(theorem.name)

    def finish(self, theorem: Theorem, collected: Collected) -> None:
        result = assemble(theorem, collected)
        if collected.failure:
            self.errors.append(ErrorEntry(theorem.origin, theorem.name, collected.failure))
        elif self.journal is not None:  # a theorem whose worker failed is tried again
            self.journal.record(theorem, self.options.time_limit, result)
        self.finished[theorem.name] = result
        if self.progress:
            self.progress(result, len(self.finished), len(self.selected))

    def all_finished(self) -> bool:
        return len(self.finished) == len(self.selected)

    def report(self, interrupted: bool) -> Report:
        theorems = [self.finished[t.name] for t in self.selected if t.name in self.finished]
        theorems += _load_error_theorems(self.catalog, self.wanted)
        errors = [_load_error_entry(e) for e in self.catalog.errors] + self.errors
        reasons = self._partial_reasons(interrupted, len(theorems))
        run_info = {**self.options.describe(),
                    "theorems": None if self.wanted is None else sorted(self.wanted),
                    "user_theorems": sorted(t.name for t in theorems if not _in_catalog(t)),
                    "recovered": sorted(self.recovered)}
        return Report(theorems, errors, bool(reasons), now_iso(), environment(theorems),
                      "; ".join(reasons), run_info)

    def _partial_reasons(self, interrupted: bool, reported: int) -> list[str]:
        reasons = []
        if interrupted:
            reasons.append(f"interrupted after {len(self.finished)} of {len(self.selected)} "
                           "theorems")
        if self.errors:  # a worker that died or overran: its theorem stopped part-way
            # each made by ``finish``, which names its theorem
            names = ", ".join(cast(str, e.theorem) for e in self.errors)
            reasons.append(f"{len(self.errors)} theorem(s) stopped before finishing: {names}")
        if self.wanted is not None:
            reasons.append(f"only {len(self.wanted)} selected theorem(s) were checked")
        return reasons + self.options.restrictions()


def _in_catalog(result: TheoremResult) -> bool:
    """Whether a result comes from the built-in catalog (not from a user's own directory)."""
    if not result.origin:
        return False
    return Path(result.origin).resolve().parent == symbolic.CATALOG_DIR.resolve()


def _load_error_entry(error: symbolic.LoadError) -> ErrorEntry:
    return ErrorEntry(error.path, error.theorem, error.message)


def _load_error_theorems(catalog: Catalog, wanted: set[str] | None) -> list[TheoremResult]:
    """An error theorem for each load error that names a theorem not otherwise in the catalog."""
    loaded = {t.name for t in catalog.theorems}
    named = {e.theorem: e for e in catalog.errors if e.theorem and e.theorem not in loaded}
    return [
        TheoremResult(name=name, source="", expect=None, status=TheoremStatus.ERROR, ok=False,
                      origin=e.path)
        for name, e in named.items()
        if wanted is None or name in wanted
    ]


def assemble(theorem: Theorem, collected: Collected) -> TheoremResult:
    """A theorem's result from what its checks reported; a worker failure forces ``error``."""
    description = {**declaration(theorem), **collected.rendering}
    return result_from_records(description, collected.symbolic, collected.numeric,
                               collected.failure)



# -- the checks of one theorem, as a sequence of messages ------------------------------------------


def check_steps(theorem: Theorem, options: Options, emit: Callable[[tuple], None]) -> None:
    """Render, prove and check ``theorem``, emitting a message before and after each step.

    A "start" message names the step about to run, so that if the process dies there the parent
    knows which step to blame.
    """
    emit(("start", "rendering"))
    with time_log.phase("rendering"):
        emit(("rendering", rendering(theorem)))
    emit(("start", "symbolic proof"))
    limit = options.time_limit
    with time_log.phase("proof"):
        proof = cached_proof(theorem, limit, lambda: symbolic.prove(theorem, time_limit=limit))
    emit(("symbolic", _schema_symbolic(proof)))
    for configuration in _configurations(theorem, options):
        emit(("start", configuration))
        emit(("numeric", _numeric_record(theorem, configuration, options.profile)))
    emit(("done", None))


def _schema_symbolic(proof: symbolic.ProofResult) -> dict:
    return asdict(SymbolicOutcome.from_record(proof))


def _configurations(theorem: Theorem, options: Options) -> list[ConfigurationNames]:
    api = numeric_api() if options.check_numeric else None
    if api is None:
        return []
    # modes asked for by name run whatever the profile; otherwise the profile chooses them
    chosen_by_profile = None if options.modes else options.profile
    found = api.available_configurations(theorem, profile=chosen_by_profile)
    # a ``Configuration`` is a NamedTuple of exactly these four names
    return [cast(ConfigurationNames, tuple(c)) for c in found if options.wants(*c)]


def _numeric_record(theorem: Theorem, configuration: ConfigurationNames,
                    profile: str) -> NumericRecord:
    """One numeric check; an exception inside it becomes that record's error, not the run's."""
    try:
        api = numeric_api()
        assert api is not None  # the configuration came from it (``_configurations``)
        return api.check(theorem, *configuration, profile=profile)
    except Exception as error:  # a checker bug must not lose the other configurations
        reason = f"{type(error).__name__}: {error}"
        return NumericRecord(*configuration, NumericStatus.ERROR, reason=reason)


def _run_in_process(theorems: Iterable[Theorem], options: Options, state: _RunState) -> None:
    for theorem in theorems:
        state.start(theorem)
        collected = Collected()
        try:
            check_steps(theorem, options, collected.take)
        except Exception as error:
            collected.fail(f"{type(error).__name__}: {error}")
        state.finish(theorem, collected)
