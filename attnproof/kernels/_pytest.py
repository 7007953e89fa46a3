"""Kernel conformance as pytest tests: one test per property × dtype × device, so a kernel's
suite reports each cell on its own line and runs in parallel under ``pytest -n auto``; and a
proved tolerance in place of a hand-tuned one in a kernel's own tests.

    @pytest.mark.parametrize("cell", conformance_cells(my_kernel))
    def test_my_kernel(cell):
        assert_conforms(cell)

    def test_my_kernel_on_my_inputs():
        assert_attention_close(my_attention(q, k, v), q, k, v, compute="float32")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

import pytest

from attnproof.numeric import CellStatus, NumericStatus
from attnproof.report.view import format_number

from ._check import DEFAULT_EXAMPLES, Cell, Conformance, cell_devices, check_cell, declared
from ._declaration import Kernel
from ._mechanism import words as mechanism_words
from ._precision import words as precision_words
from ._properties import PROPERTIES, property_named
from ._tolerance import Tolerance, proved_tolerance

if TYPE_CHECKING:
    from _pytest.mark.structures import ParameterSet  # what pytest.param returns

    from ._frameworks import Array

# pytest's record_property fixture: (name, value) -> None
RecordProperty: TypeAlias = Callable[[str, object], None]


@dataclass(frozen=True)
class KernelCell:
    """What one conformance test checks: a kernel, one property, one dtype, one device."""

    kernel: Kernel
    property: str
    dtype: str
    device: str
    examples: int
    spec: str | None
    absent: str | None = None  # why this device cannot run here (the test skips, saying so)

    def __str__(self) -> str:
        return f"{self.kernel.name}-{self.property}-{self.dtype}-{self.device}"


def conformance_cells(kernel: Kernel, *, properties: Iterable[str] | None = None,
                      dtypes: Sequence[str] | None = None, devices: Iterable[str] | None = None,
                      examples: int = DEFAULT_EXAMPLES,
                      spec: str | None = None) -> list[ParameterSet]:
    """``pytest.param``s, one per property × dtype × device the kernel declares (or those
    named), with readable ids such as ``my_attention-forward-float32-cpu``. A device word
    stands for each present device it covers (``gpu`` on a machine with two: ``gpu:0`` and
    ``gpu:1``); one this machine lacks is one test that skips, naming the devices present."""
    names = [property_named(p).name for p in properties] if properties else \
        [p.name for p in PROPERTIES]
    where = cell_devices(kernel, list(devices or kernel.devices))
    cells = [KernelCell(kernel, name, dtype, device, examples, spec, absent)
             for name in names for dtype in (dtypes or kernel.dtypes)
             for device, absent in where]
    return [pytest.param(cell, id=str(cell)) for cell in cells]


# the key under which a cell's record travels with its test's report (``record_property``), to
# the plugin's controller, which writes the session's conformance matrix
KERNEL_KEY = "attnproof.kernel"


def assert_conforms(cell: KernelCell, record_property: RecordProperty | None = None) -> None:
    """Run one cell; skip where it cannot run or does not apply, fail with the shrunk
    counterexample and the replay command where the kernel does not conform. With pytest's
    ``record_property``, the cell's record goes with the test's report, so that the plugin
    writes the session's conformance matrix (``reports/pytest/kernels/``)."""
    if cell.absent is not None:  # not run here: skipped before any search
        _record(record_property, cell, Cell(cell.property, cell.dtype, cell.device,
                                            CellStatus.SKIPPED, reason=cell.absent))
        pytest.skip(cell.absent)
    result = check_cell(cell.kernel, property_named(cell.property), cell.dtype, cell.device,
                        cell.examples, cell.spec)
    _record(record_property, cell, result)
    if result.status.record_status == NumericStatus.SKIPPED:  # n/a, or not run here
        pytest.skip(result.reason or "not applicable to this kernel")
    if result.status != CellStatus.CONFORMS:  # a failure, or too few decided cases to conform
        pytest.fail(_explain(result), pytrace=False)


def _record(record_property: RecordProperty | None, cell: KernelCell, result: Cell) -> None:
    if record_property is not None:
        record_property(KERNEL_KEY, json.dumps({
            "kernel": cell.kernel.name, "framework": cell.kernel.framework,
            "declared": declared(cell.kernel), "cell": result.to_json()}))


def conformance_from_records(records: Iterable[str]) -> list[Conformance]:
    """The conformance of each kernel, from its cells' records (``KERNEL_KEY``) in the order
    they came: what the plugin's controller writes."""
    kernels: dict[tuple, Conformance] = {}
    for text in records:
        record = json.loads(text)
        key = (record["kernel"], record["framework"])
        if key not in kernels:
            kernels[key] = Conformance(record["kernel"], record["framework"],
                                       record["declared"], [])
        kernels[key].cells.append(Cell(**record["cell"]))
        kernels[key].seconds += record["cell"].get("seconds", 0.0)
    return list(kernels.values())


def _explain(result: Cell) -> str:
    lines = [f"{result.property} in {result.dtype} on {result.device}: {result.status}"]
    if result.reason:
        lines.append(result.reason)
    if result.ratio is not None:
        lines.append(f"error {format_number(result.ratio)}x the reference's (the case shown)")
    if result.precision:
        lines.append(f"precision: {precision_words(result.precision)} (over the cell's "
                     f"{result.precision['rows']:,} rows)")
    if result.counterexample:
        lines.append(f"counterexample: {result.counterexample}")
    if result.replay:
        lines.append(f"replay: {result.replay}")
    for other in result.other_failures:  # each further defect, with its own replay
        lines += [f"another failure ({mechanism_words(other['mechanism'])}): "
                  f"{other['counterexample']}", f"replay: {other['replay']}"]
    return "\n".join(lines)


def assert_attention_close(out: Array, q: Array, k: Array, v: Array,
                           **options: Any) -> Tolerance:
    """Fail the test, with the derivation of the tolerance and the worst entry, where the
    attention output ``out`` lies farther from the exact output of ``q, k, v`` than the
    proved tolerance (:func:`attnproof.kernels.proved_tolerance`, which takes ``options``:
    mask, causal, scale, dtype, compute, framework, layout); return the tolerance."""
    tolerance = proved_tolerance(q, k, v, **options)
    message = tolerance.failure(out)
    if message:
        pytest.fail(message, pytrace=False)
    return tolerance
