"""``attnproof kernels`` with each cell checked in a worker process, so that nothing a kernel
does can end or stall the run.

A kernel is a user's code, often native (a framework, an extension of their own). Run in the
command's own process, a segfault in it ended the command with exit 139, printing and writing
nothing, not even the cells already checked, and a case that never returned stalled it for
good (``--budget`` skips only cells not yet begun). Here the cells run in the workers of
``attnproof prove`` (``attnproof._workers``: spawned, never forked, so that no JAX, MLX or
torch thread is forked), one cell per task, each worker loading the kernel again from its spec
(a kernel need not pickle). A worker names each case before it runs it, and each message
restarts the clock, so ``--case-timeout`` is a limit per case, never per cell: a cell of many
quick cases is never cut. A worker that dies on a case (a segfault, ``os._exit``, the
out-of-memory killer) makes its cell *crashed*, one killed at the limit *timed-out*, each with
the case and its replay command; a fresh worker checks the cells after it, and every cell
checked before it is kept.

The kernels run side by side, up to ``--jobs`` workers (one per CPU, at most 12 per
accelerator, as for ``prove``): each kernel's cells are one lane (``run_in_lanes``), checked in
order by one worker, so that one kernel's cells never race each other on a device and the
programs its framework compiled for a cell serve the next ones. A worker points JAX's
persistent compilation cache at attnproof's cache (``<cache>/jax``, as ``prove``'s workers do)
unless the user has set a cache directory of their own, so a later run reads the programs
back instead of compiling them; ``--no-cache`` turns it off. That is the one setting a worker
makes: JAX keys an entry on the program, its options and JAX's version, so a program read back
is the one it would compile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from attnproof._signals import sigterm_as_interrupt
from attnproof._workers import TimeLimit, run_in_lanes
from attnproof.numeric import CellStatus, settle_cell
from attnproof.numeric.route import Evidence, Failure
from attnproof.symbolic import format_named

from ._cases import Case
from ._check import (
    DEFAULT_EXAMPLES,
    Cell,
    Conformance,
    PlannedCell,
    check_cell,
    declared,
    inputs_shown,
    planned_cells,
    replay_command,
)
from ._declaration import Kernel
from ._frameworks import row_of
from ._properties import property_named
from ._spec import load

if TYPE_CHECKING:
    pass

# Seconds one case may run before its worker is killed. A case of a library kernel takes well
# under a second on a CPU; the first case of a kernel on a device also compiles it (JAX's jit,
# a GPU's autotuning), seconds on a busy machine. The limit is there to stop a hang, and a case
# cut short is a failure of the kernel, so it is generous.
DEFAULT_CASE_TIMEOUT = 120.0


@dataclass(frozen=True)
class CellTask:
    """One cell as a worker is sent it: the kernel by its spec, the cell, its place in the
    matrix."""

    index: int
    kernel: int  # which of the run's kernels (its place in their order)
    spec: str
    property: str
    dtype: str
    device: str
    examples: int


def check_all_isolated(kernels: list[tuple[str, Kernel]], *, jobs: int,
                       properties: Iterable[str] | None = None,
                       dtypes: Iterable[str] | None = None,
                       devices: Iterable[str] | None = None, examples: int = DEFAULT_EXAMPLES,
                       progress: Callable[[Kernel], Callable[[Cell], object] | None] = (
                           lambda kernel: None),
                       budget: float | None = None,
                       case_timeout: float = DEFAULT_CASE_TIMEOUT) -> list[Conformance]:
    """What ``check_kernel`` returns for each of ``kernels`` ((spec, kernel) each), each cell
    checked in a worker with ``case_timeout`` seconds per case, the kernels side by side in up
    to ``jobs`` workers and each kernel's cells one lane. The kernels given, this process's
    copies, plan the cells and show the inputs of a case a worker stopped on; the workers load
    their own from the specs. ``progress(kernel)`` gives the callback told of each of that
    kernel's cells; ``budget`` counts from a kernel's first cell."""
    matrix = _Matrix([_Cells(kernel, spec, progress(kernel)) for spec, kernel in kernels])
    lanes = [cells.to_check(number, planned_cells(cells.kernel, properties, dtypes, devices,
                                                  budget), examples)
             for number, cells in enumerate(matrix.kernels)]
    with sigterm_as_interrupt():  # SIGTERM, like Ctrl-C, ends the workers before the command
        run_in_lanes(lanes, check_in_worker, matrix, jobs,
                     TimeLimit(case_timeout, per_step=True))
    return [cells.conformance() for cells in matrix.kernels]


# -- the worker's side ---------------------------------------------------------------------------


# the kernels this worker has loaded, by spec (and, under a key no spec is, whether the
# compilation cache is set)
_LOADED: dict[str, Kernel | bool] = {}


def check_in_worker(task: CellTask, emit: Callable[[tuple[str, Any]], object]) -> None:
    """One cell's work in a worker: a "loading" message, a "case" message before each case,
    then the checked cell."""
    emit(("loading", task.spec))
    kernel = _loaded(task.spec)
    _compilation_cache(kernel)
    cell = check_cell(kernel, property_named(task.property), task.dtype, task.device,
                      task.examples, task.spec, on_case=lambda case, dtype: emit(("case", case)))
    emit(("cell", cell))


def _loaded(spec: str) -> Kernel:
    """The kernel at ``spec``, loaded once per worker: importing its framework takes seconds."""
    if spec not in _LOADED:
        _LOADED[spec] = load(spec)
    return cast(Kernel, _LOADED[spec])  # a spec's entry is its kernel


def _compilation_cache(kernel: Kernel) -> None:
    """The kernel's framework's persistent compilation cache at attnproof's (its row's
    ``kernel_compilation_cache``: JAX's), once per worker, unless the user has a cache
    directory of their own or caching is off."""
    row = row_of(kernel.framework)
    if row is None or row.kernel_compilation_cache is None or _LOADED.get("compilation cache"):
        return
    _LOADED["compilation cache"] = True
    row.kernel_compilation_cache()


# -- the parent's side ---------------------------------------------------------------------------


@dataclass
class _CellReport:
    """What a worker has said of one cell: each case it began, then the cell it checked."""

    cell: Cell | None = None
    case: Case | None = None  # the case begun last; None while the kernel loads
    cases: int = 0
    done: bool = False
    failure: str | None = None
    stopped_as: str = "crashed"  # the cell's word if its worker stops: crashed or timed-out

    def take(self, message: tuple) -> None:
        """("loading", spec) only starts the clock; ("case", case) names the case begun."""
        kind, data = message
        if kind == "case":
            self.case, self.cases = data, self.cases + 1
        elif kind == "cell":
            self.cell, self.done = data, True
        elif kind == "failure":  # the check raised: the cell cannot be trusted, nor finished
            self.fail(data)

    def fail(self, reason: str) -> None:
        where = "the loading of the kernel" if self.case is None else \
            f"case {self.case.sizes()}"
        self.failure = f"{reason} during {where}"

    def overran(self, seconds: float) -> None:
        self.stopped_as = "timed-out"
        self.fail(f"worker killed: no result within the {seconds:g} s limit per case "
                  "(--case-timeout)")


@dataclass
class _Cells:
    """The cells of one kernel, as its workers check them, kept in the matrix's order."""

    kernel: Kernel
    spec: str
    progress: Callable[[Cell], object] | None
    found: dict[int, Cell] = field(default_factory=dict)
    began: float | None = None  # when its first cell was begun or kept
    ended: float | None = None  # when its last one was

    def to_check(self, number: int, plan: Iterable[PlannedCell],
                 examples: int) -> Iterator[CellTask]:
        """A task per cell that runs here; a skipped cell is kept as the plan reaches it."""
        for index, planned in enumerate(plan):
            if planned.absent is not None:
                self._keep(index, planned.skipped())
            else:
                yield CellTask(index, number, self.spec, planned.prop.name, planned.dtype,
                               planned.device, examples)

    def in_order(self) -> list[Cell]:
        return [self.found[index] for index in sorted(self.found)]

    def conformance(self) -> Conformance:
        seconds = 0.0 if self.began is None else (self.ended or self.began) - self.began
        return Conformance(self.kernel.name, self.kernel.framework, declared(self.kernel),
                           self.in_order(), seconds)

    def message(self, task: CellTask) -> CellTask:
        return task

    def collector(self, task: CellTask) -> _CellReport:
        return _CellReport()

    def start(self, task: CellTask) -> None:
        """Nothing to show yet: a cell is shown once it is checked."""
        self.began = self.began or time.perf_counter()

    def finish(self, task: CellTask, report: _CellReport, seconds: float) -> None:
        stopped = report.failure is not None
        # a worker that did not stop sent its cell: the task ends at a failure or at the cell
        self._keep(task.index, self._stopped(task, report, seconds) if stopped
                   else cast(Cell, report.cell))

    def _keep(self, index: int, cell: Cell) -> None:
        self.found[index] = cell
        self.began = self.began or time.perf_counter()
        self.ended = time.perf_counter()
        if self.progress is not None:
            self.progress(cell)

    def _stopped(self, task: CellTask, report: _CellReport, seconds: float) -> Cell:
        """The cell whose worker stopped: failed by the case it was running, which its replay
        command runs again (in the replaying process: a crash crashes it)."""
        assert report.failure is not None  # ``finish`` asks only where the worker stopped
        cell = Cell(task.property, task.dtype, task.device, CellStatus.SKIPPED,
                    cases=report.cases, seconds=round(seconds, 3))
        if report.case is not None:
            case = report.case
            cell.counterexample = {"case": case.to_json(), "sizes": case.sizes(), "ratio": None,
                                   "message": report.failure,
                                   "inputs": inputs_shown(self.kernel, case,
                                                          format_named(task.dtype),
                                                          task.device)}
            cell.replay = replay_command(self.spec, task.property, task.dtype, task.device,
                                         case)
        seen = Evidence(examples=report.cases,
                        outcome=Failure(cell.counterexample or {}, report.failure,
                                        replay=cell.replay))
        settle_cell(cell, seen, report.stopped_as)
        return cell


@dataclass
class _Matrix:
    """Every kernel's cells, each task's told to its kernel's (``CellTask.kernel``)."""

    kernels: list[_Cells]

    def message(self, task: CellTask) -> CellTask:
        return task

    def collector(self, task: CellTask) -> _CellReport:
        return _CellReport()

    def start(self, task: CellTask) -> None:
        self.kernels[task.kernel].start(task)

    def finish(self, task: CellTask, report: _CellReport, seconds: float) -> None:
        self.kernels[task.kernel].finish(task, report, seconds)
