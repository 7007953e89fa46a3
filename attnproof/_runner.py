"""Run every theorem's proof and numeric checks, each theorem in its own worker process.

Workers are started with the "spawn" context so that no JAX or MLX thread is ever forked. Each
theorem gets its own process and pipe rather than a slot in a ``ProcessPoolExecutor``: a pool
cannot stop a task that hangs, and one dead worker breaks the pool and every task in flight. Here
a worker that dies or overruns its time loses only its own theorem, which is recorded as an error
with the step it was in; everything it reported before that step is kept.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait

import symbolic

from ._describe import rendering
from ._results import (
    ERROR,
    ErrorEntry,
    NumericOutcome,
    Report,
    SymbolicOutcome,
    TheoremResult,
    environment,
    now_iso,
    result_from_records,
)

PROFILES = ("quick", "default", "thorough")
# Wall-clock budget per theorem (proof plus every numeric configuration) before its worker is
# killed as hung; generous, because only a real hang should reach it.
PROFILE_TIMEOUTS = {"quick": 300.0, "default": 900.0, "thorough": 3600.0}

Progress = Callable[[TheoremResult, int, int], None]
Started = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    backends: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    devices: tuple[str, ...] | None = None
    profile: str = "default"
    time_limit: float = 60.0
    check_numeric: bool = True

    def wants(self, backend: str, dtype: str, device: str) -> bool:
        chosen = zip((self.backends, self.dtypes, self.devices), (backend, dtype, device),
                     strict=True)
        return all(allowed is None or value in allowed for allowed, value in chosen)

    def restrictions(self) -> list[str]:
        """Why a run with these options checks less than everything, in words."""
        reasons = [] if self.check_numeric else ["numeric checks skipped"]
        for label, allowed in (("backends", self.backends), ("dtypes", self.dtypes),
                               ("devices", self.devices)):
            if allowed is not None:
                reasons.append(f"numeric checks only on {label} {', '.join(allowed)}")
        return reasons

    def describe(self) -> dict:
        return {"by": "attnproof prove", "profile": self.profile, "backends": self.backends,
                "dtypes": self.dtypes, "devices": self.devices,
                "check_numeric": self.check_numeric}


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run; ``report`` holds the theorems finished so far (``partial``)."""

    def __init__(self, report: Report):
        super().__init__("run interrupted")
        self.report = report


def run(
    directories: Iterable,
    *,
    theorem_filter: Iterable[str] | None = None,
    backends: Iterable[str] | None = None,
    dtypes: Iterable[str] | None = None,
    devices: Iterable[str] | None = None,
    profile: str = "default",
    jobs: int | None = None,
    progress: Progress | None = None,
    started: Started | None = None,
    time_limit: float = 60.0,
    timeout: float | None = None,
    check_numeric: bool = True,
    isolate: bool = True,
) -> Report:
    """Check the theorems found in ``directories`` and return the report.

    Args:
        theorem_filter: names to check; the others are left out and the report is ``partial``.
        backends, dtypes, devices: restrict numeric configurations; None means all available.
            Any restriction marks the report ``partial``.
        jobs: worker processes at once (default: CPU count).
        progress: called as ``progress(result, done, total)`` as each theorem finishes.
        started: called with a theorem's name as its checks begin.
        time_limit: seconds for each symbolic proof attempt.
        timeout: seconds per theorem before its worker is killed (default: by profile).
        isolate: False runs everything in this process (for debugging; no hang protection).

    Raises:
        ValueError: an unknown profile, jobs < 1, or a name in ``theorem_filter`` that no
            file declares.
        RunInterrupted: on Ctrl-C, carrying the partial report.
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    catalog = symbolic.discover(list(directories))
    wanted = _wanted_names(catalog, theorem_filter)
    options = Options(_tuple(backends), _tuple(dtypes), _tuple(devices), profile, time_limit,
                      check_numeric)
    selected = [t for t in catalog.theorems if wanted is None or t.name in wanted]
    run_state = _RunState(catalog, selected, wanted, options, progress, started)
    budget = timeout if timeout is not None else PROFILE_TIMEOUTS[profile]
    try:
        if isolate:
            _run_isolated(selected, options, jobs or os.cpu_count() or 1, budget, run_state)
        else:
            _run_in_process(selected, options, run_state)
    except KeyboardInterrupt:
        raise RunInterrupted(run_state.report(interrupted=True)) from None
    return run_state.report(interrupted=False)


def numeric_api():
    """The ``numeric`` package if it offers the checker contract, else None."""
    try:
        import numeric
    except ImportError:
        return None
    needed = ("available_configurations", "check")
    return numeric if all(hasattr(numeric, name) for name in needed) else None


def _tuple(values) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _wanted_names(catalog, theorem_filter) -> set[str] | None:
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
    selected: list
    wanted: set[str] | None
    options: Options
    progress: Progress | None
    started: Started | None
    finished: dict[str, TheoremResult] = field(default_factory=dict)
    errors: list[ErrorEntry] = field(default_factory=list)

    def start(self, theorem) -> None:
        if self.started:
            self.started(theorem.name)

    def finish(self, theorem, collected: _Collected) -> None:
        result = assemble(theorem, collected)
        if collected.failure:
            self.errors.append(ErrorEntry(theorem.origin, theorem.name, collected.failure))
        self.finished[theorem.name] = result
        if self.progress:
            self.progress(result, len(self.finished), len(self.selected))

    def report(self, interrupted: bool) -> Report:
        theorems = [self.finished[t.name] for t in self.selected if t.name in self.finished]
        theorems += _load_error_theorems(self.catalog, self.wanted)
        errors = [_load_error_entry(e) for e in self.catalog.errors] + self.errors
        reasons = self._partial_reasons(interrupted, len(theorems))
        run_info = {**self.options.describe(),
                    "theorems": None if self.wanted is None else sorted(self.wanted)}
        return Report(theorems, errors, bool(reasons), now_iso(), environment(theorems),
                      "; ".join(reasons), run_info)

    def _partial_reasons(self, interrupted: bool, reported: int) -> list[str]:
        reasons = []
        if interrupted:
            reasons.append(f"interrupted after {len(self.finished)} of {len(self.selected)} "
                           "theorems")
        if self.wanted is not None:
            reasons.append(f"only {len(self.wanted)} selected theorem(s) were checked")
        return reasons + self.options.restrictions()


def _load_error_entry(error: symbolic.LoadError) -> ErrorEntry:
    return ErrorEntry(error.path, error.theorem, error.message)


def _load_error_theorems(catalog, wanted) -> list[TheoremResult]:
    """An error theorem for each load error that names a theorem not otherwise in the catalog."""
    loaded = {t.name for t in catalog.theorems}
    named = {e.theorem: e for e in catalog.errors if e.theorem and e.theorem not in loaded}
    return [
        TheoremResult(name=name, source="", expect=None, status=ERROR, ok=False, origin=e.path)
        for name, e in named.items()
        if wanted is None or name in wanted
    ]


def assemble(theorem, collected: _Collected) -> TheoremResult:
    """A theorem's result from what its checks reported; a worker failure forces ``error``."""
    description = {**declaration(theorem), **collected.rendering}
    return result_from_records(description, collected.symbolic, collected.numeric,
                               collected.failure)


def declaration(theorem) -> dict:
    """The ``describe`` fields that need no rendering (rendering runs in the worker)."""
    return {"name": theorem.name, "source": str(theorem.source), "expect": theorem.expect,
            "corrects": theorem.corrects, "note": theorem.note, "origin": theorem.origin}


# -- the checks of one theorem, as a sequence of messages ------------------------------------------


def check_steps(theorem, options: Options, emit: Callable[[tuple], None]) -> None:
    """Render, prove and check ``theorem``, emitting a message before and after each step.

    A "start" message names the step about to run, so that if the process dies there the parent
    knows which step to blame.
    """
    emit(("start", "rendering"))
    emit(("rendering", rendering(theorem)))
    emit(("start", "symbolic proof"))
    emit(("symbolic", _schema_symbolic(symbolic.prove(theorem, time_limit=options.time_limit))))
    for configuration in _configurations(theorem, options):
        emit(("start", configuration))
        emit(("numeric", _numeric_record(theorem, configuration, options.profile)))
    emit(("done", None))


def _schema_symbolic(proof) -> dict:
    return asdict(SymbolicOutcome.from_record(proof))


def _configurations(theorem, options: Options) -> list[tuple[str, str, str, str]]:
    api = numeric_api() if options.check_numeric else None
    if api is None:
        return []
    found = api.available_configurations(theorem)
    return [tuple(c) for c in found if options.wants(*c[:3])]


def _numeric_record(theorem, configuration, profile: str) -> dict:
    """One numeric check; an exception inside it becomes that record's error, not the run's."""
    backend, dtype, device, mode = configuration
    try:
        record = numeric_api().check(theorem, backend, dtype, device, mode, profile=profile)
        return asdict(NumericOutcome.from_record(record))
    except Exception as error:  # a checker bug must not lose the other configurations
        reason = f"{type(error).__name__}: {error}"
        return asdict(NumericOutcome(backend, dtype, device, mode, "error", reason=reason))


@dataclass
class _Collected:
    """What one theorem's checks have reported so far."""

    rendering: dict = field(default_factory=dict)
    symbolic: dict | None = None
    numeric: list[dict] = field(default_factory=list)
    step: str | tuple | None = None
    done: bool = False
    failure: str | None = None

    def take(self, message: tuple) -> None:
        kind, data = message
        if kind == "start":
            self.step = data
        elif kind == "rendering":
            self.rendering = data
        elif kind == "symbolic":
            self.symbolic = data
        elif kind == "numeric":
            self.numeric.append(data)
        elif kind == "done":
            self.done = True
        elif kind == "failure":
            self.fail(data)
        if kind != "start":
            self.step = None

    def fail(self, reason: str) -> None:
        """Blame the step in progress: it becomes an error record carrying ``reason``."""
        where = _describe_step(self.step)
        self.failure = f"{reason} during {where}"
        if isinstance(self.step, tuple):
            backend, dtype, device, mode = self.step
            self.numeric.append(asdict(NumericOutcome(
                backend, dtype, device, mode, "error", reason=self.failure)))
        elif self.symbolic is None:
            self.symbolic = asdict(SymbolicOutcome("error", self.failure))


def _describe_step(step) -> str:
    if isinstance(step, tuple):
        return "numeric check " + "/".join(step)
    return step or "setup"


def _run_in_process(theorems, options: Options, state: _RunState) -> None:
    for theorem in theorems:
        state.start(theorem)
        collected = _Collected()
        try:
            check_steps(theorem, options, collected.take)
        except Exception as error:
            collected.fail(f"{type(error).__name__}: {error}")
        state.finish(theorem, collected)


# -- worker processes ------------------------------------------------------------------------------


def worker_main(connection, origin: str, name: str, options: Options) -> None:
    """Entry point of a worker process: load one theorem from its file and stream its checks."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends workers
    try:
        theorem = _load_one(origin, name)
        check_steps(theorem, options, connection.send)
    except Exception as error:
        connection.send(("failure", f"{type(error).__name__}: {error}"))
    finally:
        connection.close()


def _load_one(origin: str, name: str):
    """The theorem ``name`` from its file; workers reload it since theorems need not pickle."""
    found = symbolic.discover([origin]).by_name()
    if name not in found:
        raise LookupError(f"{origin} no longer declares theorem {name!r}")
    return found[name]


@dataclass
class _Job:
    theorem: object
    process: multiprocessing.process.BaseProcess
    connection: object
    budget: float
    collected: _Collected = field(default_factory=_Collected)

    def __post_init__(self):
        self.deadline = time.monotonic() + self.budget


def _run_isolated(theorems, options: Options, jobs: int, budget: float, state: _RunState) -> None:
    context = multiprocessing.get_context("spawn")
    pending = deque(theorems)
    running: dict[object, _Job] = {}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                job = _start(context, pending.popleft(), options, budget)
                running[job.connection] = job
                state.start(job.theorem)
            for job in _poll(running):
                del running[job.connection]
                _end(job)
                state.finish(job.theorem, job.collected)
    finally:
        for job in running.values():
            _end(job)


def _start(context, theorem, options: Options, budget: float) -> _Job:
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=worker_main, args=(sender, theorem.origin, theorem.name,
                                                        options), daemon=True)
    process.start()
    sender.close()  # so the worker's exit shows as end-of-file on our side
    return _Job(theorem, process, receiver, budget)


def _poll(running: dict) -> list[_Job]:
    """Read every message that is ready; return the jobs that have finished, died or overrun."""
    nearest = min(job.deadline for job in running.values())
    ready = wait(list(running), timeout=max(0.0, nearest - time.monotonic()))
    ended = [job for connection in ready if _receive(job := running[connection])]
    now = time.monotonic()
    for job in running.values():
        if job not in ended and now >= job.deadline:
            job.collected.fail(f"worker killed: no result within the {job.budget:g} s limit")
            ended.append(job)
    return ended


def _receive(job: _Job) -> bool:
    """Take one message; True when the job is over (finished, or its worker is gone)."""
    try:
        job.collected.take(job.connection.recv())
    except Exception:  # end of file, or a message cut short by the worker's death
        if not job.collected.done and job.collected.failure is None:
            job.collected.fail(_death(job.process))
        return True
    return job.collected.done or job.collected.failure is not None


def _death(process) -> str:
    process.join(timeout=5)
    code = process.exitcode
    if code is not None and code < 0:
        return f"worker died from signal {signal.Signals(-code).name}"
    return f"worker exited with code {code}"


def _end(job: _Job) -> None:
    job.connection.close()
    job.process.join(timeout=1)
    if job.process.is_alive():
        job.process.kill()
        job.process.join()
