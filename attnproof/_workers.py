"""Worker processes that check theorems one at a time each, and what a theorem's checks report.

Workers are started with the "spawn" context so that no JAX or MLX thread is ever forked. Each
worker is a process with its own pipe, checking one theorem at a time, rather than a slot in a
``ProcessPoolExecutor``: a pool cannot stop a task that hangs, and one dead worker breaks the
pool and every task in flight. Here a worker that dies or overruns its time loses only the
theorem it was checking, which is recorded as an error with the step it was in (everything
reported before that step is kept), and a fresh worker takes its place. A theorem's time limit
counts from the moment its worker begins it, so the start-up of a worker on a busy machine is
never charged to a theorem.

A worker runs the check the runner gives it, ``check(theorem, options, emit)``, which emits
messages (:class:`Collected` reads them); the runner runs the same check in its own process
when it does not isolate.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait

from attnproof import symbolic
from attnproof.numeric import NumericRecord, NumericStatus, time_log

from ._cache import remember_timings, slowest_first
from ._sandbox import how_it_ended, load_contained
from .report import SymbolicOutcome
from .symbolic import ProofStatus

# ``check(theorem, options, emit)``: one theorem's checks, each step a message to ``emit``
Check = Callable[[object, object, Callable[[tuple], None]], None]
# A new worker imports SymPy (and the numeric stack) before it can begin a theorem; on a loaded
# machine that takes seconds. This much extra time is allowed before it says it has begun.
STARTUP_ALLOWANCE = 120.0


# -- what one theorem's checks have reported ------------------------------------------------------


@dataclass
class Collected:
    """What one theorem's checks have reported so far."""

    rendering: dict = field(default_factory=dict)
    symbolic: dict | None = None
    numeric: list[NumericRecord] = field(default_factory=list)
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
            self.numeric.append(NumericRecord(*self.step, NumericStatus.ERROR,
                                              reason=self.failure))
        elif self.symbolic is None:
            self.symbolic = asdict(SymbolicOutcome(ProofStatus.ERROR, self.failure))


def _describe_step(step) -> str:
    if isinstance(step, tuple):
        return "numeric check " + "/".join(step)
    return step or "setup"



# -- worker processes ------------------------------------------------------------------------------


def worker_main(connection, options, check: Check, spawned_at: float) -> None:
    """Entry point of a worker process: check theorems, one per task, until told to stop.

    A task is ``(origin, name)``; the worker reloads the theorem from its file (theorems need
    not pickle) and streams its checks, ``check(theorem, options, send)``. ``None`` ends the
    worker. ``spawned_at`` (wall clock) times the start-up: a new interpreter and its imports.
    """
    time_log.record("start-up", time.time() - spawned_at)
    # the parent handles Ctrl-C and SIGTERM (sent to the whole group too) and ends its workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _exit_with_parent()
    try:
        while (task := connection.recv()) is not None:
            try:
                connection.send(("start", "loading the theorem file"))  # starts its clock
                with time_log.phase("theorem file"):
                    theorem = _load_one(*task)
                check(theorem, options, connection.send)
            except (BrokenPipeError, ConnectionResetError):
                raise  # the parent is gone: nobody to tell
            except Exception as error:
                connection.send(("failure", f"{type(error).__name__}: {error}"))
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the parent is gone
        pass
    finally:
        connection.close()


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


def _load_one(origin: str, name: str):
    """The theorem ``name`` from its file, loaded as discovery loaded it: contained, so that an
    exit or a change of directory in the file cannot end or move this worker."""
    found = _theorems_in(origin)
    if name not in found:
        raise LookupError(f"{origin} no longer declares theorem {name!r}")
    return found[name]


# theorems of each file this worker has loaded, with the file's state when it was loaded
_LOADED: dict[str, tuple[tuple, dict]] = {}


def _theorems_in(origin: str) -> dict:
    """The theorems ``origin`` declares, loaded once per worker while the file is unchanged: a
    file declares many theorems, and loading it again for each took a tenth of a second."""
    stamp = _file_state(origin)
    known = _LOADED.get(origin)
    if known is not None and stamp is not None and known[0] == stamp:
        return known[1]
    found = symbolic.discover([origin], load_files=_load_contained).by_name()
    _LOADED[origin] = (stamp, found)
    return found


def _file_state(origin: str) -> tuple | None:
    with contextlib.suppress(OSError):
        status = os.stat(origin)
        return status.st_mtime_ns, status.st_size, status.st_ino
    return None


def _load_contained(paths):
    return [load_contained(path) for path in paths]


@dataclass
class _Job:
    """A theorem given to a worker; its ``budget`` counts from the worker's first message."""

    theorem: object
    budget: float
    collected: Collected = field(default_factory=Collected)
    begun: float | None = None

    def __post_init__(self):
        self.assigned = time.monotonic()

    @property
    def deadline(self) -> float:
        if self.begun is None:
            return self.assigned + STARTUP_ALLOWANCE + self.budget
        return self.begun + self.budget

    def elapsed(self) -> float:
        """Seconds the theorem has taken, from its worker's first message when there was one."""
        return time.monotonic() - (self.begun if self.begun is not None else self.assigned)


@dataclass(eq=False)
class _Worker:
    """A worker process that checks one theorem after another; replaced if it dies or hangs.

    Reusing workers saves each theorem the start-up of a Python process that imports SymPy,
    JAX and MLX (about a second here); a death or a kill still loses only the theorem in flight.
    """

    process: multiprocessing.process.BaseProcess
    connection: object
    job: _Job | None = None

    def assign(self, theorem, budget: float) -> None:
        self.job = _Job(theorem, budget)
        self.connection.send((theorem.origin, theorem.name))


def run_isolated(theorems, options, check: Check, jobs: int, budget: float, state) -> None:
    """Check ``theorems`` in up to ``jobs`` worker processes, each theorem within ``budget``
    seconds; ``state.start(theorem)`` and ``state.finish(theorem, collected)`` follow them."""
    context = multiprocessing.get_context("spawn")
    pending = deque(slowest_first(theorems))
    workers: list[_Worker] = []
    seconds: dict[str, float] = {}
    try:
        while pending or any(w.job for w in workers):
            for worker in _idle(workers, context, (options, check), jobs, len(pending)):
                worker.assign(pending.popleft(), budget)
                state.start(worker.job.theorem)
            for worker, alive in _poll([w for w in workers if w.job]):
                job, worker.job = worker.job, None
                if not alive:
                    _stop(worker)
                    workers.remove(worker)
                state.finish(job.theorem, job.collected)
                seconds[job.theorem.name] = job.elapsed()
    finally:
        remember_timings(seconds)
        for worker in workers:
            _stop(worker, politely=worker.job is None)


def _idle(workers: list[_Worker], context, arguments: tuple, jobs: int, wanted: int):
    """Workers ready for a task, starting new ones up to ``jobs`` while there is work."""
    idle = [w for w in workers if w.job is None][:wanted]
    while len(workers) < jobs and len(idle) < wanted:
        worker = _spawn(context, arguments)
        workers.append(worker)
        idle.append(worker)
    return idle


def _spawn(context, arguments: tuple) -> _Worker:
    """A worker running ``worker_main(pipe, *arguments, now)`` (the options and the check)."""
    ours, theirs = context.Pipe(duplex=True)
    process = context.Process(target=worker_main, args=(theirs, *arguments, time.time()),
                              daemon=True)
    process.start()
    theirs.close()  # so the worker's exit shows as end-of-file on our side
    return _Worker(process, ours)


def _poll(busy: list[_Worker]) -> list[tuple[_Worker, bool]]:
    """Read every message that is ready; return (worker, still usable) for each job that has
    finished, or whose worker died or overran its time."""
    nearest = min(w.job.deadline for w in busy)
    by_connection = {w.connection: w for w in busy}
    ready = wait(list(by_connection), timeout=max(0.0, nearest - time.monotonic()))
    ended = []
    for connection in ready:
        worker = by_connection[connection]
        over, alive = _receive(worker)
        if over:
            ended.append((worker, alive))
    now = time.monotonic()
    for worker in busy:
        if all(worker is not w for w, _ in ended) and now >= worker.job.deadline:
            worker.job.collected.fail(
                f"worker killed: no result within the {worker.job.budget:g} s limit")
            ended.append((worker, False))
    return ended


def _receive(worker: _Worker) -> tuple[bool, bool]:
    """Take one message: (is the job over, is the worker still usable)."""
    collected = worker.job.collected
    try:
        message = worker.connection.recv()
        if worker.job.begun is None:
            worker.job.begun = time.monotonic()
        collected.take(message)
    except Exception:  # end of file, or a message cut short by the worker's death
        if not collected.done and collected.failure is None:
            collected.fail(_death(worker.process))
        return True, False
    return collected.done or collected.failure is not None, True


def _death(process) -> str:
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
