"""Worker processes that run tasks one at a time each: the theorems of ``attnproof prove``, and
what a theorem's checks report; the cells of ``attnproof kernels`` run in the same workers.

Workers are started with the "spawn" context so that no JAX or MLX thread is ever forked. Each
worker is a process with its own pipe, running one task at a time, rather than a slot in a
``ProcessPoolExecutor``: a pool cannot stop a task that hangs, and one dead worker breaks the
pool and every task in flight. Here a worker that dies or overruns its time loses only the
task it was running, which its caller records with the step it was in (a theorem's error:
everything reported before that step is kept), and a fresh worker takes its place. A task's
time limit counts from the moment its worker begins it, so the start-up of a worker on a busy
machine is never charged to a task; a limit per step (``TimeLimit.per_step``) counts again
from each message.

A worker runs the work its caller gives it, ``work(task, emit)``, which emits messages; a
collector (:class:`Collected` for a theorem) reads them in the parent. A theorem's work is
``check(theorem, options, emit)``, which the runner runs in its own process when it does not
isolate.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from functools import partial
from multiprocessing.connection import wait
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from attnproof import symbolic
from attnproof.numeric import NumericRecord, NumericStatus, time_log

from ._cache import remember_timings, slowest_first
from ._sandbox import how_it_ended, load_contained
from .report import SymbolicOutcome
from .symbolic import ProofStatus

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import SpawnContext
    from multiprocessing.process import BaseProcess
    from pathlib import Path

    from attnproof.symbolic import LoadError, Theorem

# What a task's steps are told to: each message a ``(kind, data)`` tuple, sent to the parent
Emit = Callable[[tuple], None]
# One numeric configuration, as the checker gives it: (backend, dtype, device, mode).
ConfigurationNames = tuple[str, str, str, str]
# The runner's options (``_runner.Options``), which the workers pass to its check untouched
OptionsT = TypeVar("OptionsT")
# ``check(theorem, options, emit)``: one theorem's checks, each step a message to ``emit``
Check = Callable[["Theorem", OptionsT, Emit], None]
# ``work(task, emit)``: what a worker does with one task, each step a message to ``emit``; a
# module-level function (or a ``partial`` of one), so that it pickles to a spawned worker. The
# task is the caller's own (a theorem's ``(origin, name)``, a kernel's cell): any picklable value
Work = Callable[[Any, Emit], None]
# What ``_file_state`` reads of a file: (modification time in ns, size, inode)
FileState = tuple[int, int, int]
# A new worker imports SymPy (and the numeric stack) before it can begin a task; on a loaded
# machine that takes seconds. This much extra time is allowed before it says it has begun.
STARTUP_ALLOWANCE = 120.0


# -- what a pool of workers needs of its caller ---------------------------------------------------


class Collector(Protocol):
    """What the parent reads of one task's messages: over once ``done`` or ``failure`` is set."""

    done: bool
    failure: str | None

    def take(self, message: tuple) -> None: ...

    def fail(self, reason: str) -> None:
        """The worker ended, or raised, before the task was done."""

    def overran(self, seconds: float) -> None:
        """The task ran past its time limit of ``seconds`` and its worker was killed."""


class Followed(Protocol):
    """A caller of :func:`run_in_workers`: what each task is sent as, and what it hears."""

    def message(self, task: Any) -> object:
        """What a worker is sent for ``task`` (it must pickle; the task need not)."""

    def collector(self, task: Any) -> Collector: ...

    def start(self, task: Any) -> None: ...

    def finish(self, task: Any, collected: Any, seconds: float) -> None:
        """``collected``: what ``collector(task)`` made, once the task is over."""


class RunState(Protocol):
    """What :func:`run_isolated` tells of each theorem (the runner's ``_RunState``)."""

    def start(self, theorem: Theorem) -> None: ...

    def finish(self, theorem: Theorem, collected: Collected) -> None: ...


@dataclass(frozen=True)
class TimeLimit:
    """Seconds a task may take, from its worker's first message, or, ``per_step``, from each
    message (a step: a kernel's case), so that a long task of short steps is never cut."""

    seconds: float
    per_step: bool = False


# -- what one theorem's checks have reported ------------------------------------------------------


@dataclass
class Collected:
    """What one theorem's checks have reported so far."""

    rendering: dict[str, Any] = field(default_factory=dict)
    symbolic: dict[str, Any] | None = None
    numeric: list[NumericRecord] = field(default_factory=list)
    step: str | ConfigurationNames | None = None  # a named step, or a numeric configuration's
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
            self.numeric.append(NumericRecord(*self.step, NumericStatus.ERROR,
                                              reason=self.failure))
        elif self.symbolic is None:
            self.symbolic = asdict(SymbolicOutcome(ProofStatus.ERROR, self.failure))

    def overran(self, seconds: float) -> None:
        self.fail(f"worker killed: no result within the {seconds:g} s limit")


def _describe_step(step: str | ConfigurationNames | None) -> str:
    if isinstance(step, tuple):
        return "numeric check " + "/".join(step)
    return step or "setup"



# -- worker processes ------------------------------------------------------------------------------


def worker_main(connection: Connection, work: Work, spawned_at: float) -> None:
    """Entry point of a worker process: run tasks, ``work(task, send)`` for each, until told to
    stop. ``None`` ends the worker. ``spawned_at`` (wall clock) times the start-up: a new
    interpreter and its imports."""
    time_log.record("start-up", time.time() - spawned_at)
    # the parent handles Ctrl-C and SIGTERM (sent to the whole group too) and ends its workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent()
    try:
        while (task := connection.recv()) is not None:
            try:
                work(task, connection.send)
            except (BrokenPipeError, ConnectionResetError):
                raise  # the parent is gone: nobody to tell
            except Exception as error:
                connection.send(("failure", f"{type(error).__name__}: {error}"))
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the parent is gone
        pass
    finally:
        connection.close()


def check_theorem(task: tuple[str, str], emit: Emit, options: OptionsT,
                  check: Check[OptionsT]) -> None:
    """A theorem's work in a worker: ``task`` is ``(origin, name)``; the theorem is reloaded from
    its file (theorems need not pickle) and its checks stream, ``check(theorem, options,
    emit)``."""
    emit(("start", "loading the theorem file"))  # starts its clock
    with time_log.phase("theorem file"):
        theorem = _load_one(*task)
    check(theorem, options, emit)


def _exit_with_parent() -> None:
    """End this worker, quietly, as soon as its parent dies (SIGKILL gives the parent no
    chance to end it): a thread waits on the parent's sentinel. Without it an orphan would
    finish its theorem for nobody and then fail to send it."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="attnproof-parent-watch", daemon=True).start()


def _load_one(origin: str, name: str) -> Theorem:
    """The theorem ``name`` from its file, loaded as discovery loaded it: contained, so that an
    exit or a change of directory in the file cannot end or move this worker."""
    found = _theorems_in(origin)
    if name not in found:
        raise LookupError(f"{origin} no longer declares theorem {name!r}")
    return found[name]


# theorems of each file this worker has loaded, with the file's state when it was loaded
_LOADED: dict[str, tuple[FileState | None, dict[str, Theorem]]] = {}


def _theorems_in(origin: str) -> dict[str, Theorem]:
    """The theorems ``origin`` declares, loaded once per worker while the file is unchanged: a
    file declares many theorems, and loading it again for each took a tenth of a second."""
    stamp = _file_state(origin)
    known = _LOADED.get(origin)
    if known is not None and stamp is not None and known[0] == stamp:
        return known[1]
    found = symbolic.discover([origin], load_files=_load_contained).by_name()
    _LOADED[origin] = (stamp, found)
    return found


def _file_state(origin: str) -> FileState | None:
    with contextlib.suppress(OSError):
        status = os.stat(origin)
        return status.st_mtime_ns, status.st_size, status.st_ino
    return None


def _load_contained(paths: list[Path]) -> list[tuple[list[Theorem], list[LoadError]]]:
    return [load_contained(path) for path in paths]


@dataclass
class _Job:
    """A task given to a worker; its ``budget`` counts from the worker's first message, or, with
    ``per_step``, from its latest."""

    task: object
    budget: float
    collected: Collector = field(default_factory=Collected)
    per_step: bool = False
    begun: float | None = None
    heard: float | None = None

    def __post_init__(self) -> None:
        self.assigned = time.monotonic()

    @property
    def deadline(self) -> float:
        if self.begun is None:
            return self.assigned + STARTUP_ALLOWANCE + self.budget
        counted_from = self.heard if self.per_step else self.begun
        assert counted_from is not None  # ``heard_from`` sets ``heard`` whenever it sets ``begun``
        return counted_from + self.budget

    def elapsed(self) -> float:
        """Seconds the task has taken, from its worker's first message when there was one."""
        return time.monotonic() - (self.begun if self.begun is not None else self.assigned)

    def heard_from(self) -> None:
        self.heard = time.monotonic()
        if self.begun is None:
            self.begun = self.heard


@dataclass(eq=False)
class _Worker:
    """A worker process that runs one task after another; replaced if it dies or hangs.

    Reusing workers saves each task the start-up of a Python process that imports SymPy,
    JAX and MLX (about a second here); a death or a kill still loses only the task in flight.
    """

    process: BaseProcess
    connection: Connection
    job: _Job | None = None
    lane: Iterator[Any] | None = None  # the tasks left of the lane it runs (``run_in_lanes``)

    def assign(self, job: _Job, message: object) -> None:
        self.job = job
        self.connection.send(message)


def run_isolated(theorems: list[Theorem], options: OptionsT, check: Check[OptionsT],
                 jobs: int, budget: float, state: RunState) -> None:
    """Check ``theorems`` in up to ``jobs`` worker processes, each theorem within ``budget``
    seconds; ``state.start(theorem)`` and ``state.finish(theorem, collected)`` follow them."""
    followed = _Theorems(state)
    try:
        run_in_workers(slowest_first(theorems), partial(check_theorem, options=options,
                                                        check=check),
                       followed, jobs, TimeLimit(budget))
    finally:
        remember_timings(followed.seconds)


@dataclass
class _Theorems:
    """The runner's state, told of each theorem; the seconds each took, for the next run's
    order (``slowest_first``)."""

    state: RunState
    seconds: dict[str, float] = field(default_factory=dict)

    def message(self, theorem: Theorem) -> tuple[str, str]:
        return theorem.origin, theorem.name

    def collector(self, theorem: Theorem) -> Collected:
        return Collected()

    def start(self, theorem: Theorem) -> None:
        self.state.start(theorem)

    def finish(self, theorem: Theorem, collected: Collected, seconds: float) -> None:
        self.state.finish(theorem, collected)
        self.seconds[theorem.name] = seconds


def run_in_workers(tasks: Iterable[Any], work: Work, followed: Followed, jobs: int,
                   limit: TimeLimit) -> None:
    """Run ``work`` on each of ``tasks`` in up to ``jobs`` worker processes, one task at a time
    each, within ``limit``. A task is taken when a worker is free for it, so a lazy iterable
    may decide the next task once the ones before it are done (a kernel's time budget)."""
    run_in_lanes(([task] for task in tasks), work, followed, jobs, limit)


def run_in_lanes(lanes: Iterable[Iterable[Any]], work: Work, followed: Followed, jobs: int,
                 limit: TimeLimit) -> None:
    """Run ``work`` on the tasks of each lane in up to ``jobs`` worker processes: the lanes
    side by side, each lane's tasks in order and never two at once, on one worker while the
    lane lasts (what that worker has loaded and compiled for a lane's earlier tasks serves its
    later ones: one kernel's cells, on the devices it runs on). A worker that dies, or is
    killed at the limit, is replaced, and its lane goes on from its next task in a fresh
    worker. Lanes and their tasks are taken lazily, as workers are free for them."""
    context = multiprocessing.get_context("spawn")
    waiting = _Lanes(iter(lanes))
    workers: list[_Worker] = []
    try:
        while True:
            _give_tasks(workers, waiting, context, work, followed, jobs, limit)
            busy = [w for w in workers if w.job]
            if not busy:
                return
            for worker, alive in _poll(busy):
                job, worker.job = _job(worker), None
                if not alive:
                    _stop(worker)
                    workers.remove(worker)
                    waiting.resume(worker.lane)  # its next task in a fresh worker
                followed.finish(job.task, job.collected, job.elapsed())
    finally:
        for worker in workers:
            _stop(worker, politely=worker.job is None)


@dataclass
class _Lanes:
    """The lanes not yet begun, and those whose worker died, taken first."""

    unbegun: Iterator[Iterable[Any]]
    resumed: list[Iterator[Any]] = field(default_factory=list)

    def next(self) -> Iterator[Any] | None:
        if self.resumed:
            return self.resumed.pop(0)
        lane = next(self.unbegun, None)
        return None if lane is None else iter(lane)

    def resume(self, lane: Iterator[Any] | None) -> None:
        if lane is not None:
            self.resumed.append(lane)


def _give_tasks(workers: list[_Worker], waiting: _Lanes, context: SpawnContext, work: Work,
                followed: Followed, jobs: int, limit: TimeLimit) -> None:
    """Give each idle worker the next task of its lane, or of a lane not yet begun once its
    own is done; start workers for further lanes up to ``jobs``."""
    for worker in [w for w in workers if w.job is None]:
        task = _next_task(worker, waiting)
        if task is not None:
            _give(worker, task, followed, limit)
    while len(workers) < jobs:
        # a stand-in that only holds the lane ``_next_task`` picks: never started, sent to or
        # stopped, so it needs no process nor pipe
        spare = _Worker(cast("BaseProcess", None), cast("Connection", None))
        task = _next_task(spare, waiting)
        if task is None:
            return
        worker = _spawn(context, work)
        worker.lane = spare.lane
        workers.append(worker)
        _give(worker, task, followed, limit)


def _next_task(worker: _Worker, waiting: _Lanes) -> Any:
    """The next task of ``worker``'s lane; when it has none, of the next lane that has one,
    which becomes the worker's; None when no lane has a task left."""
    while True:
        if worker.lane is None:
            worker.lane = waiting.next()
            if worker.lane is None:
                return None
        task = next(worker.lane, None)
        if task is not None:
            return task
        worker.lane = None


def _give(worker: _Worker, task: Any, followed: Followed, limit: TimeLimit) -> None:
    worker.assign(_Job(task, limit.seconds, followed.collector(task), limit.per_step),
                  followed.message(task))
    followed.start(task)


def _spawn(context: SpawnContext, work: Work) -> _Worker:
    """A worker running ``worker_main(pipe, work, now)``."""
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=worker_main, args=(theirs, work, time.time()),
                              daemon=True)
    process.start()
    theirs.close()  # so the worker's exit shows as end-of-file on our side
    return _Worker(process, ours)


def _poll(busy: list[_Worker]) -> list[tuple[_Worker, bool]]:
    """Read every message that is ready; return (worker, still usable) for each job that has
    finished, or whose worker died or overran its time."""
    nearest = min(_job(w).deadline for w in busy)
    by_connection = {w.connection: w for w in busy}
    # ``wait`` gives back those of the objects it was given that are ready: our connections
    ready = cast("list[Connection]",
                 wait(list(by_connection), timeout=max(0.0, nearest - time.monotonic())))
    ended = []
    for connection in ready:
        worker = by_connection[connection]
        over, alive = _receive(worker)
        if over:
            ended.append((worker, alive))
    now = time.monotonic()
    for worker in busy:
        if all(worker is not w for w, _ in ended) and now >= _job(worker).deadline:
            _job(worker).collected.overran(_job(worker).budget)
            ended.append((worker, False))
    return ended


def _receive(worker: _Worker) -> tuple[bool, bool]:
    """Take one message: (is the job over, is the worker still usable)."""
    collected = _job(worker).collected
    try:
        message = worker.connection.recv()
        _job(worker).heard_from()
        collected.take(message)
    except Exception:  # end of file, or a message cut short by the worker's death
        if not collected.done and collected.failure is None:
            collected.fail(_death(worker.process))
        return True, False
    return collected.done or collected.failure is not None, True


def _job(worker: _Worker) -> _Job:
    """The job of a busy worker: ``_poll`` and ``_receive`` are given only those."""
    assert worker.job is not None  # ``run_in_lanes`` polls the workers that have a job
    return worker.job


def _death(process: BaseProcess) -> str:
    return f"worker {how_it_ended(process)}"


def _stop(worker: _Worker, politely: bool = False) -> None:
    """End a worker: ask an idle one to exit, kill one that is dead, busy or hung."""
    if politely:
        with contextlib.suppress(OSError):
            worker.connection.send(None)
        worker.process.join(timeout=2)
    worker.connection.close()
    if worker.process.is_alive():
        worker.process.kill()
    worker.process.join()
