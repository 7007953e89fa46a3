"""check_kernel: every property x dtype x device of one kernel, each a Hypothesis search whose
failure is shrunk to a small case and reported with a replay command."""

from __future__ import annotations

import dataclasses
import sys
import time
import types
from collections.abc import Callable, Iterable, Iterator, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

import numpy as np
from hypothesis import reject

from attnproof.numeric import (
    DERANDOMIZED_SEED,
    MINIMUM_DECIDED_CASES,
    CellStatus,
    draw_each,
    find_failure,
    settle_cell,
)
from attnproof.numeric.route import Evidence, Failure, Unsupported
from attnproof.symbolic import format_named

from . import _mechanism as mechanisms
from . import _precision as precision
from . import _regimes as regimes
from ._cases import Case, instance
from ._declaration import Kernel
from ._frameworks import (
    cell_devices,
    dtype_unavailable_reason,
    framework,
    precision_format,
    unavailable_reason,
)
from ._programs import Programs, compiled_twice, counted
from ._properties import PROPERTIES, Property, as_declared, property_named
from ._run import LIMIT, CaseResult, run_case
from ._warnings import kept_with

if TYPE_CHECKING:
    from attnproof.symbolic import Format

    from ._frameworks import Framework
    from ._precision import Estimate

# what is told of each case before it runs, ``on_case(case, dtype)`` (its return is ignored)
OnCase: TypeAlias = Callable[[Case, str], object]

# a cell conforms only after this many decided cases: the evidence rule, stated with the
# numeric records' in the driver, which settles every cell (``settle_cell``)
MIN_DECIDED = MINIMUM_DECIDED_CASES
# a cell whose kernel refused this many cases and ran none is n/a without drawing more (each
# refusal is a call into the framework; Hypothesis would otherwise draw hundreds)
REFUSALS_BEFORE_NA = 50
DEFAULT_EXAMPLES = 20


@dataclass
class Cell:
    """One kernel x property x dtype x device: the verdict, and what a failure looks like."""

    property: str
    dtype: str
    device: str
    status: CellStatus
    # error over the reference's (floor included, see _run._compare) of the case shown: the
    # counterexample when the cell fails, else the worst case
    ratio: float | None = None
    # the largest error over the proved bound of the declared precision, over the decided
    # cases that have one (``_proved``): reported beside the rule, never deciding the cell
    bound_ratio: float | None = None
    # the precision the kernel behaves like in this cell (``_precision.estimate``): declared,
    # bits, unit roundoff, whether less precise than declared; None with too few decided cases
    precision: Estimate | None = None
    # the regimes its cases reached (``_regimes``): cases per regime, n_k's residues per tile
    regimes: dict[str, Any] = field(default_factory=dict)
    cases: int = 0
    decided: int = 0
    # cases the kernel refused (``Refused``: outside what it supports), and the first reason
    refused: int = 0
    refusal: str = ""
    # what the property asks that some decided cases could not judge: name -> {cases, why}
    # (``CaseResult.unchecked``), listed with the cells set aside
    unchecked: dict[str, dict[str, Any]] = field(default_factory=dict)
    conventions: dict[str, str] = field(default_factory=dict)
    # the first failure found, shrunk (its ``mechanism`` among its keys), and its replay command
    counterexample: dict[str, Any] | None = None
    replay: str | None = None
    # the failures of other mechanisms (``_mechanism``) the cell searched for after its first,
    # each {mechanism, counterexample, replay}: a second defect is never shrunk away behind it
    other_failures: list[dict[str, Any]] = field(default_factory=list)
    # the warnings the kernel raised in its calls (``_warnings``): category, message, where,
    # count; never printed on the terminal, where they would bury the matrix
    kernel_warnings: list[dict[str, Any]] = field(default_factory=list)
    # the distinct shapes the cell's calls used, and the programs the framework compiled for
    # them or read from its persistent cache (``_programs``); all zeros for a cell that
    # never called the kernel (a skipped one)
    programs: dict[str, Any] = field(default_factory=lambda: Programs().to_json())
    # the shapes themselves, (b, h, h_kv, n_q, n_k, d_k, d_v): counted over the kernel's
    # cells, never written out
    _shapes: list[tuple[int, ...]] = field(default_factory=list, repr=False)
    reason: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        self.status = CellStatus(self.status)

    def to_json(self) -> dict[str, Any]:
        return {k: str(v) if k == "status" else v for k, v in self.__dict__.items()
                if not k.startswith("_")}


@dataclass
class Conformance:
    """The conformance of one kernel: its declaration and one cell per checked combination."""

    kernel: str
    framework: str
    declared: dict[str, Any]
    cells: list[Cell]
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """No failing cell, and no convention read differently in two dtypes or devices (a
        declaration states one convention for every dtype: there is no form to declare them
        per dtype, so a difference is the kernel's, never allowed)."""
        return not self.failures() and not self.convention_findings()

    def failures(self) -> list[Cell]:
        return [c for c in self.cells if c.status.failing]

    def cell(self, prop: str, dtype: str, device: str = "cpu") -> Cell:
        return next(c for c in self.cells if (c.property, c.dtype, c.device) == (prop, dtype,
                                                                                   device))

    def to_markdown(self) -> str:
        """This kernel's matrix, conventions and failures, as in reports/kernels/."""
        from ._matrix import to_markdown

        return to_markdown([self])

    def precision(self) -> dict[tuple[str, str], Estimate]:
        """Per (device, dtype), the precision the kernel behaves like over the rows of every
        cell that conforms or whose failures are numerical (``precision_left_out``), where any
        such cell has an estimate."""
        found: dict[tuple[str, str], Estimate] = {}
        for device, dtype in dict.fromkeys((c.device, c.dtype) for c in self.cells):
            estimates = [c.precision for c in self.cells
                         if (c.device, c.dtype) == (device, dtype) and c.precision
                         and precision_left_out(c) is None]
            compute = estimates[0]["declared"] if estimates else None
            # (compute is the first estimate's wherever there are estimates)
            estimate = precision.pooled(estimates, format_named(dtype),
                                        precision_format(cast(str, compute))) if estimates \
                else None
            if estimate is not None:
                found[(device, dtype)] = estimate
        return found

    def precision_left_out(self) -> list[dict[str, str]]:
        """The cells left out of the precision estimates, each with why."""
        return [{"property": c.property, "dtype": c.dtype, "device": c.device, "why": why}
                for c in self.cells if (why := precision_left_out(c)) is not None]

    def convention_findings(self) -> list[dict[str, Any]]:
        """Each convention one property read differently in two dtypes or devices (zeros in
        float32, NaN in float64), with where each value was read (``conventions_apart``)."""
        return conventions_apart(self.cells)

    def programs(self) -> dict[str, Any]:
        """Over every cell: the distinct shapes called at, the programs compiled and read from
        the persistent compilation cache, the seconds compiling, and how many of the
        checker's jitted signatures were compiled more than once (0 where each (shape,
        dtype, keywords) compiled at most once)."""
        cells = [c.programs for c in self.cells if c.programs]
        return {"shapes": len({tuple(s) for c in self.cells for s in c._shapes}),
                **{name: sum(c[name] for c in cells)
                   for name in ("compiled", "loaded", "compiled_twice")},
                **{name: round(sum(c[name] for c in cells), 3)
                   for name in ("compile_seconds", "call_seconds")}}

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "framework": self.framework, "declared": self.declared,
                "seconds": round(self.seconds, 2), "ok": self.ok,
                "programs": self.programs(),
                "precision": {f"{device} {dtype}": estimate for (device, dtype), estimate
                              in self.precision().items()},
                "precision_left_out": self.precision_left_out(),
                "convention_findings": self.convention_findings(),
                "cells": [c.to_json() for c in self.cells]}


def precision_left_out(cell: Cell) -> str | None:
    """Why ``cell``'s rows are left out of the precision estimates (its own and the pooled
    one), None where they count: only a cell that conforms or whose every failure is
    numerical (finite errors, judged against the reference and the proved bound) tells the
    precision it computes in. NaN where the truth is finite, a raise, a wrong layout, a broken
    declaration or convention say nothing of it, and their rows (a GQA head mapped wrongly,
    rows of garbage beside NaN ones) would read as a kernel of a few bits."""
    status = str(cell.status)
    if status in mechanisms.NOT_NUMERICAL:
        return mechanisms.NOT_NUMERICAL[status]
    if not cell.status.failing:  # conforms, or no verdict: nothing failed
        return None
    found = [(cell.counterexample or {}).get("mechanism"),
             *(other.get("mechanism") for other in cell.other_failures)]
    return next((why for why in map(mechanisms.not_numerical_reason, found) if why), None)


def conventions_apart(cells: Iterable[Cell]) -> list[dict[str, Any]]:
    """Each convention read differently in two dtypes or devices by one property's cells: a
    finding, {convention, values: value -> ["device dtype", ...], properties, finding}. Cells
    of one property are compared, never two properties: what a property draws can change a
    reading (NaN garbage in the V of a kernel returning the mean of V), and a case-to-case
    difference within one cell already fails that cell."""
    cells = list(cells)
    one_device = len({c.device for c in cells}) == 1
    apart: dict[str, dict[str, Any]] = {}
    for (prop, name), read in _conventions_read(cells).items():
        if len(read) < 2:
            continue
        finding = apart.setdefault(name, {"convention": name, "values": {}, "properties": []})
        finding["properties"].append(prop)
        for value, places in read.items():
            shown = finding["values"].setdefault(value, [])
            shown += [p for p in places if p not in shown]
    for finding in apart.values():
        finding["finding"] = f"{finding['convention']}: " + ", ".join(
            f"{value} in {', '.join(_place(p, one_device) for p in places)}"
            for value, places in finding["values"].items())
    return list(apart.values())


def _conventions_read(cells: list[Cell]) -> dict[tuple[str, str], dict[str, list[str]]]:
    """Per (property, convention), each value read and the "device dtype" cells reading it."""
    read: dict[tuple[str, str], dict[str, list[str]]] = {}
    for cell in cells:
        for name, value in cell.conventions.items():
            places = read.setdefault((cell.property, name), {}).setdefault(value, [])
            places.append(f"{cell.device} {cell.dtype}")
    return read


def _place(place: str, one_device: bool) -> str:
    return place.split(" ", 1)[1] if one_device else place


def check_kernel(kernel: Kernel, *, properties: Iterable[str] | None = None,
                 dtypes: Iterable[str] | None = None, devices: Iterable[str] | None = None,
                 examples: int = DEFAULT_EXAMPLES, spec: str | None = None,
                 progress: Callable[[Cell], object] | None = None,
                 on_case: OnCase | None = None, budget: float | None = None,
                 seed: int | None = None) -> Conformance:
    """Check ``kernel`` for every property (or those named) in every dtype and device it
    declares (or those named): a kernel is *checked*, never proved. Everything runs in this
    process (``attnproof kernels`` runs each cell in a worker: ``_isolated``).

    ``spec`` ("module:attribute" or a library name) makes the replay commands runnable;
    ``progress(cell)`` is called after each cell, ``on_case(case, dtype)`` before each case.
    ``budget``: seconds for the whole kernel; a cell not begun by then is skipped, saying so.
    ``seed``: draw other cases, from this seed (None: the same cases in every run).
    """
    started = time.perf_counter()
    cells = []
    for planned in planned_cells(kernel, properties, dtypes, devices, budget):
        if planned.absent is not None:  # not run here: skipped before any search
            cells.append(planned.skipped())
        else:
            cells.append(check_cell(kernel, planned.prop, planned.dtype, planned.device,
                                    examples, spec, on_case, seed))
        if progress is not None:
            progress(cells[-1])
    return Conformance(kernel.name, kernel.framework, declared(kernel), cells,
                       time.perf_counter() - started)


@dataclass(frozen=True)
class PlannedCell:
    """A cell to check: its property, dtype and device, and why it is skipped (None: it runs)."""

    prop: Property
    dtype: str
    device: str
    absent: str | None

    def skipped(self) -> Cell:
        assert self.absent is not None  # a planned cell is skipped only for a reason
        return Cell(self.prop.name, self.dtype, self.device, CellStatus.SKIPPED,
                    reason=self.absent)


def planned_cells(kernel: Kernel, properties: Iterable[str] | None = None,
                  dtypes: Iterable[str] | None = None, devices: Iterable[str] | None = None,
                  budget: float | None = None) -> Iterator[PlannedCell]:
    """Each cell of ``kernel`` to check, in the matrix's order (property, dtype, device). Lazy,
    so that the ``budget`` (seconds from the first cell) is read as each cell is about to
    begin: a cell not begun in time is skipped, saying so."""
    started = time.perf_counter()
    chosen = [property_named(p) for p in properties] if properties else list(PROPERTIES)
    where = cell_devices(kernel, devices)
    for prop in chosen:
        for dtype in dtypes or kernel.dtypes:
            # a dtype the framework's configuration, as the user has it, cannot hold (JAX's
            # float64 with x64 off): skipped, saying which setting, never run in another dtype
            unheld = dtype_unavailable_reason(kernel, format_named(dtype))
            for device, absent in where:
                absent = absent or unheld
                spent = time.perf_counter() - started
                if absent is None and budget is not None and spent > budget:
                    absent = f"not begun: the time budget of {budget:g} s was spent"
                yield PlannedCell(prop, dtype, device, absent)


def declared(kernel: Kernel) -> dict[str, Any]:
    return {"layout": kernel.layout if isinstance(kernel.layout, str) else dict(kernel.layout),
            "mask": kernel.mask if isinstance(kernel.mask, str) else list(kernel.mask),
            "causal_argument": kernel.causal_argument,
            "scale_argument": kernel.scale_argument, "fully_masked": kernel.fully_masked,
            "causal_alignment": kernel.causal_alignment,
            "gradients": kernel.gradients if kernel.gradients in (None, "autodiff") else "vjp",
            "fully_masked_lse": kernel.fully_masked_lse, "masked_inputs": kernel.masked_inputs,
            "bias_argument": kernel.bias_argument, "bias_scaled": kernel.bias_scaled,
            "returns_lse": kernel.returns_lse, "merge": kernel.merge is not None,
            "gqa": kernel.gqa, "mqa": kernel.mqa, "gqa_mapping": kernel.gqa_mapping,
            "mask_fill": kernel.mask_fill, "always_causal": kernel.always_causal,
            "lse_base": kernel.lse_base, "dropout_argument": kernel.dropout_argument,
            "sinks_argument": kernel.sinks_argument, "window_argument": kernel.window_argument,
            "window_form": kernel.window_form,
            "packed": kernel.packed, "cu_seqlens_arguments": list(kernel.cu_seqlens_arguments),
            "segment_ids_arguments": list(kernel.segment_ids_arguments),
            "max_seqlen_arguments": None if kernel.max_seqlen_arguments is None
            else list(kernel.max_seqlen_arguments),
            "paged": kernel.paged, "page_sizes": list(kernel.page_sizes),
            "cache_layout": kernel.cache_layout, "paged_arguments": list(kernel.paged_arguments),
            "dtypes": list(kernel.dtypes),
            "compute": {d: kernel.compute_for(format_named(d)).name for d in kernel.dtypes},
            "compute_on": {kind: dict(per_dtype) for kind, per_dtype in kernel.compute_on.items()},
            "devices": list(kernel.devices), "mode": kernel.mode,
            "enable_x64": kernel.enable_x64}


def check_cell(kernel: Kernel, prop: Property, dtype: str, device: str, examples: int,
               spec: str | None = None, on_case: OnCase | None = None,
               seed: int | None = None) -> Cell:
    """The cell of ``prop`` in ``dtype`` (a name of the kernel's declaration, as a cell
    records it; its format is read here, once) on ``device``."""
    started = time.perf_counter()
    cell = Cell(prop.name, dtype, device, CellStatus.SKIPPED)
    programs, twice = Programs(), compiled_twice()
    try:
        # the kernel's own warnings go to the report, not the terminal
        with kept_with(cell), counted(programs):
            return _checked(cell, kernel, prop, format_named(dtype), device, examples, spec,
                            on_case, seed)
    finally:
        cell.seconds = round(time.perf_counter() - started, 3)
        cell.programs = programs.to_json(compiled_twice() - twice)
        cell._shapes = sorted(programs.shapes)


def _checked(cell: Cell, kernel: Kernel, prop: Property, dtype: Format, device: str,
             examples: int, spec: str | None, on_case: OnCase | None,
             seed: int | None = None) -> Cell:
    reason = unavailable_reason(kernel.framework) or dtype_unavailable_reason(kernel, dtype)
    if reason is not None:  # not run here: skipped before any search
        cell.status, cell.reason = CellStatus.SKIPPED, reason
        return cell
    not_applicable = prop.unsupported(kernel)
    failed_as = "fail"  # what the kernel did in the failing case, if one fails
    if not_applicable is not None:
        seen = Evidence(outcome=Unsupported(not_applicable))
    else:
        found = _search(kernel, prop, dtype, device, examples, cell, on_case, seed)
        seen = Evidence(examples=cell.cases, instances=cell.decided)
        if found:
            first, *others = found
            failed_as = first.result.status
            seen = seen.concluding(_failed(cell, kernel, prop, dtype, device, spec, first,
                                           others))
            if others:
                seen = seen.noting(f"{len(others)} more failure{'s' * (len(others) > 1)} of "
                                   "other mechanisms: " + "; ".join(map(_in_a_line, others)))
        elif cell.refused and cell.refused == cell.cases:
            seen = seen.concluding(Unsupported(f"the kernel refused every case "
                                               f"({cell.refused}): {cell.refusal}"))
        if cell.refused and cell.refused < cell.cases:
            seen = seen.noting(f"{cell.refused} of {cell.cases} cases refused by the kernel: "
                               f"{cell.refusal}")
        seen = seen.noting(*(unchecked_words(name, entry, cell.decided)
                             for name, entry in cell.unchecked.items()))
    settle_cell(cell, seen, failed_as)
    if precision_left_out(cell) is not None:  # a failure that is not numerical: its estimate
        cell.precision = None  # would say nothing of the precision (``precision_left_out``)
    return cell


def _failed(cell: Cell, kernel: Kernel, prop: Property, dtype: Format, device: str,
            spec: str | None, first: Found, others: list[Found]) -> Failure:
    """The failure of the first failing case, with the cell's counterexample and replay
    command filled in (each other mechanism's beside it)."""
    cell.ratio = first.result.ratio  # the counterexample's: the matrix and replay agree
    spec = spec or _spec_of(kernel)
    cell.counterexample = counterexample(kernel, first, dtype, device)
    cell.replay = replay_command(spec, prop.name, dtype.name, device, first.case)
    cell.other_failures = [{"mechanism": other.mechanism.to_json(),
                            "counterexample": counterexample(kernel, other, dtype, device),
                            "replay": replay_command(spec, prop.name, dtype.name, device,
                                                     other.case)}
                           for other in others]
    return Failure(cell.counterexample, first.result.message, replay=cell.replay)


def unchecked_words(name: str, entry: dict[str, Any], decided: int) -> str:
    """"dsinks not judged in 20 of 20 decided cases: the kernel's own backward ..."."""
    return f"{name} not judged in {entry['cases']} of {decided} decided cases: {entry['why']}"


def _in_a_line(found: Found) -> str:
    """A further failure in the cell's reason: its mechanism and its message's first line (a
    raise's traceback is in its counterexample)."""
    message = (found.result.message.splitlines() or [""])[0]
    return f"{mechanisms.words(found.mechanism.to_json())} ({message})"


def counterexample(kernel: Kernel, found: Found, dtype: Format, device: str) -> dict[str, Any]:
    """A failing case as the cell reports it: its case, sizes, ratio, message, mechanism, the
    failure's detail and the inputs the kernel was given."""
    case, result = found.case, found.result
    return {"case": case.to_json(), "sizes": case.sizes(), "ratio": result.ratio,
            "message": result.message, "mechanism": found.mechanism.to_json(), **result.detail,
            "inputs": inputs_shown(kernel, case, dtype, device)}


# An input with at most this many entries is shown whole in a counterexample; a larger one by
# its shape, range and first entries (the replay command rebuilds it exactly).
SHOWN_ENTRIES = 64


def inputs_shown(kernel: Kernel, case: Case, dtype: Format, device: str) -> dict[str, Any]:
    """The q, k, v (and the keep-mask) a failing case gave the kernel, as its checks drew them
    (rounded to ``dtype``), so a counterexample can be read without running its replay."""
    x = instance(case, dtype, kernel.compute_for(dtype, device),
                 kernel.causal_alignment or "upper_left")
    return {name: _shown(array) for name, array in
            (("q", x.q), ("k", x.k), ("v", x.v), ("keep", x.keep))}


def _shown(array: np.ndarray) -> list[Any] | dict[str, Any]:
    if array.size <= SHOWN_ENTRIES:
        return array.tolist()
    flat = array.reshape(-1)
    summary: dict[str, Any] = {"shape": list(array.shape), "first": flat[:8].tolist()}
    if array.dtype != bool:
        summary |= {"min": float(flat.min()), "max": float(flat.max())}
    return summary


class _AllRefused(BaseException):  # noqa: N818 -- ends the search without a shrink
    """So many cases refused and none run that the cell is n/a: drawing on costs time."""


class _ShrinkSpent(BaseException):  # noqa: N818 -- ends a further search's shrink
    """A further search has shrunk its failure for as many calls as it may."""


class Found(NamedTuple):
    """A failing case, shrunk, with its result and mechanism."""

    case: Case
    result: CaseResult
    mechanism: mechanisms.Mechanism


def _search(kernel: Kernel, prop: Property, dtype: Format, device: str, examples: int, cell: Cell,
            on_case: OnCase | None, seed: int | None = None) -> list[Found]:
    """The driver's search over this property's cases (``find_failure``): its explicit cases
    first, in order, then ``examples`` drawn ones; the first failing case, shrunk, then up to
    MAX_COUNTEREXAMPLES - 1 failures of other mechanisms (``_other_failures``); empty when none
    failed or the kernel refused them all. The cell's precision estimate is taken from the
    cases before the first failure."""
    fw = framework(kernel.framework)
    seed = DERANDOMIZED_SEED if seed is None else seed  # None: the same cases in every run
    first = _find(kernel, fw, prop, dtype, device, examples, cell, on_case, seed)
    if first is not None and _estimate_of(cell)["cases"] < MIN_DECIDED:
        # cut short by the failure: draw on, for the precision estimate only
        _precision_pass(kernel, fw, prop, dtype, device, examples, cell, seed, on_case)
    estimate = _estimate_of(cell)
    estimate["stopped"] = True  # the further searches are shrinks again: never counted
    if estimate["cases"] >= MIN_DECIDED:
        cell.precision = precision.estimate(estimate["sums"], dtype,
                                            kernel.compute_for(dtype, device))
    if first is None:
        return []
    return [first, *_other_failures(kernel, fw, prop, dtype, device, examples, cell, on_case,
                                    seed, first)]


# a cell keeps at most this many counterexamples, each of another mechanism (``_mechanism``)
MAX_COUNTEREXAMPLES = 3


def _other_failures(kernel: Kernel, fw: Framework, prop: Property, dtype: Format, device: str,
                    examples: int, cell: Cell, on_case: OnCase | None, seed: int,
                    first: Found) -> list[Found]:
    """Failures whose mechanism differs from every one kept, each from a search of its own:
    the property's explicit cases, then ``examples`` drawn ones from a seed derived from the
    cell's, the failure found shrunk for at most ``examples`` calls more. The searches stop at
    the first that finds none, so a failing cell runs at most MAX_COUNTEREXAMPLES - 1 of them,
    and a conforming one none."""
    kept = [first]
    for number in range(1, MAX_COUNTEREXAMPLES):
        other = _find(kernel, fw, prop, dtype, device, examples, cell, on_case,
                      further_seed(seed, number), {found.mechanism for found in kept},
                      shrink_calls=examples)
        if other is None:
            break
        kept.append(other)
    return kept[1:]


def further_seed(seed: int, number: int) -> int:
    """The seed of a cell's further search ``number``: derived from the cell's, so that it
    draws other cases than the first search, the same ones in every run."""
    return (seed + number * 0x9E3779B9) % 2**32


def _find(kernel: Kernel, fw: Framework, prop: Property, dtype: Format, device: str,
          examples: int, cell: Cell, on_case: OnCase | None, seed: int,
          known: Set[mechanisms.Mechanism] = frozenset(),
          shrink_calls: int | None = None) -> Found | None:
    """One search: the first failing case whose mechanism is not one of ``known``, shrunk
    while it stays one (for at most ``shrink_calls`` calls after it is found, when given);
    None when none was, or the kernel refused every case. Every case run is tallied in the
    cell."""
    last: list[Found] = []
    calls_after_found = [0]

    def fails(case: Case) -> bool:
        if last and shrink_calls is not None:
            calls_after_found[0] += 1
            if calls_after_found[0] > shrink_calls:
                raise _ShrinkSpent
        if on_case is not None:
            on_case(case, dtype.name)
        result = run_case(kernel, fw, prop, case, dtype, device)
        _tally(cell, result)
        if result.status == "refused":  # not a case of this kernel: draw another instead
            if cell.decided == 0 and cell.refused >= REFUSALS_BEFORE_NA:
                raise _AllRefused
            reject()
        if not result.failed:
            return False
        found = Found(case, result, mechanisms.mechanism_of(case, result))
        if found.mechanism in known:  # a failure already kept: not the one searched for
            return False
        last[:] = [found]  # the last accepted case is the shrunk one: shrinking only improves
        return True

    try:
        find_failure(prop.strategy(kernel), fails, examples, seed, prop.explicit_cases(kernel))
    except _AllRefused:  # the kernel refused every case drawn: n/a
        return None
    except _ShrinkSpent:  # the smallest failure found in the calls it had
        pass
    return last[0] if last else None


def _estimate_of(cell: Cell) -> dict[str, Any]:
    """The precision estimate's sums and case count: over the cases drawn before the first
    failure (the shrinking that follows tries small cases over and over)."""
    return cell.__dict__.setdefault("_estimate", {"sums": None, "cases": 0, "stopped": False})


def _count_precision(estimate: dict[str, Any], result: CaseResult, stop: bool = True) -> None:
    if estimate["stopped"]:
        return
    if result.status in ("pass", "fail") and result.precision is not None:
        estimate["sums"] = precision.add(estimate["sums"], result.precision)
        estimate["cases"] += 1
    estimate["stopped"] = stop and result.failed


def _precision_pass(kernel: Kernel, fw: Framework, prop: Property, dtype: Format, device: str,
                    examples: int, cell: Cell, seed: int, on_case: OnCase | None) -> None:
    """Cases drawn as a search draws them, run to the end whatever they give, for the precision
    estimate only: a cell that fails at its first case still gets one."""
    estimate = cell.__dict__["_estimate"] = {"sums": None, "cases": 0, "stopped": False}

    def measure(case: Case) -> None:
        if on_case is not None:  # a worker names the case it runs, should the kernel crash
            on_case(case, dtype.name)
        result = run_case(kernel, fw, prop, case, dtype, device)
        if result.status == "refused":
            reject()
        _count_precision(estimate, result, stop=False)

    try:
        draw_each(prop.strategy(kernel), measure, examples, seed, prop.explicit_cases(kernel))
    except Exception:  # noqa: BLE001 -- an estimate cut short, never a verdict changed
        return


def _tally(cell: Cell, result: CaseResult) -> None:
    cell.cases += 1
    regimes.tally(cell.regimes, result.regimes)
    if result.status == "refused":
        cell.refused += 1
        cell.refusal = cell.refusal or result.message
        return
    if result.status == "undecided":
        return
    cell.decided += 1
    for name, why in result.unchecked.items():
        cell.unchecked.setdefault(name, {"cases": 0, "why": why})["cases"] += 1
    if result.ratio is not None and (cell.ratio is None or result.ratio > cell.ratio):
        cell.ratio = result.ratio
    if result.bound_ratio is not None and (cell.bound_ratio is None
                                           or result.bound_ratio > cell.bound_ratio):
        cell.bound_ratio = result.bound_ratio
    for name, value in result.conventions.items():
        first = cell.conventions.setdefault(name, value)
        if value != first and not result.failed:
            result.status = "fail"
            result.message = (f"{name}: inconsistent convention, {first} in one case and "
                              f"{value} in another")
            # a convention broken, not an error: its mechanism says so (``_mechanism``)
            result.detail = {**result.detail, "convention": name}
    _count_precision(_estimate_of(cell), result)


def _spec_of(kernel: Kernel) -> str | None:
    """``module:attribute`` of an importable module holding ``kernel`` itself, if any."""
    for module_name in dict.fromkeys((getattr(kernel.fn, "__module__", None),
                                      *sorted(n for n in sys.modules if n != "__main__"))):
        module = sys.modules.get(module_name or "")
        spec = _attribute_holding(module, kernel) if module is not None else None
        if spec is not None:
            return spec
    return None


def _attribute_holding(module: types.ModuleType, kernel: Kernel) -> str | None:
    attributes = vars(module)  # not getattr: a module's own __getattr__ may load things
    if attributes.get("__name__") == "__main__" or attributes.get("__file__") is None:
        return None  # a script or an interactive session: nothing to import it from
    names = [n for n, value in attributes.items() if value is kernel]
    return f"{attributes['__name__']}:{min(names)}" if names else None


def replay_command(spec: str | None, prop: str, dtype: str, device: str, case: Case) -> str:
    """A shell command when the kernel can be imported, else a Python snippet to paste where
    ``kernel`` is defined."""
    if spec is not None:
        return (f"attnproof replay {prop} --kernel {spec} --dtype {dtype} --device {device} "
                f"--case '{case.to_json()}'")
    return ("from attnproof.kernels import Case, replay\n"
            f"print(replay(kernel, {prop!r}, {dtype!r}, Case.from_json({case.to_json()!r}), "
            f"device={device!r}))  # kernel: the Kernel checked")


def replay(kernel: Kernel, prop: str, dtype: str, case: Case, device: str = "cpu") -> CaseResult:
    """Run one case again, as a replay command does. A case the checker printed always runs; one
    written by hand, or replayed on another kernel, that asks what the check would never ask of
    this kernel is a ValueError saying what (``unaskable``), not a verdict on the kernel."""
    checked = property_named(prop)
    refused = unaskable(kernel, checked, case)
    if refused is not None:
        raise ValueError(f"kernel {kernel.name!r}, property {prop!r}: {refused}; a replay asks "
                         "only what the property draws and the declaration lets it ask")
    return run_case(kernel, framework(kernel.framework), checked, case, format_named(dtype),
                    device)


def unaskable(kernel: Kernel, prop: Property, case: Case) -> str | None:
    """Why the check never asks ``kernel`` for ``case`` under ``prop``, if it never does: the
    property does not apply to the kernel (its cell reads n/a), or the case asks for what the
    declaration does not take (a field ``as_declared`` would change, a mask, heads grouped).
    Run anyway, such a case would read as the kernel's failure, or pass a property the kernel
    does not have. (A dtype the kernel does not declare stays askable: ``check_kernel`` runs
    one that its caller names, so its replays must run too.)"""
    not_applicable = prop.unsupported(kernel)
    if not_applicable is not None:
        return f"the property does not apply ({not_applicable})"
    declared = as_declared(kernel, case)
    changed = [f.name for f in dataclasses.fields(Case)
               if getattr(declared, f.name) != getattr(case, f.name)]
    if changed:
        return (f"the case sets {', '.join(changed)}, which the kernel's declaration does not "
                "let a case set")
    # a paged kernel takes no mask, and is given a padding mask as its sequences' lengths
    paged_lengths = case.mask == "padding" and kernel.paged is not None
    if case.mask not in ("none", "causal") and not kernel.takes_mask and not paged_lengths:
        return f"the case has a {case.mask} mask, and the kernel takes no mask"
    if case.mask_kind is not None and case.mask_kind not in kernel.mask_kinds:
        return f"the case's mask is {case.mask_kind}, not one the kernel takes"
    if case.mask == "causal" and not (kernel.takes_mask or kernel.takes_causal
                                      or kernel.always_causal):
        return "the case is causal, and the kernel takes no mask nor causal flag"
    grouped = case.kv_heads != case.heads
    if grouped and not (kernel.gqa or (case.kv_heads == 1 and kernel.shares_one_kv_head)):
        return (f"the case has {case.kv_heads} K/V heads for {case.heads} query heads, and the "
                "kernel declares no grouped heads")
    return None


__all__ = ["LIMIT", "Cell", "Conformance", "check_kernel", "replay"]
