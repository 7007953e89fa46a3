"""Kernel conformance as pytest tests: one test per property × dtype × device, so a kernel's
suite reports each cell on its own line and runs in parallel under ``pytest -n auto``.

    @pytest.mark.parametrize("cell", conformance_cells(my_kernel))
    def test_my_kernel(cell):
        assert_conforms(cell)
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ._check import DEFAULT_EXAMPLES, FAILING, check_cell
from ._declaration import Kernel
from ._properties import PROPERTIES, property_named


@dataclass(frozen=True)
class KernelCell:
    """What one conformance test checks: a kernel, one property, one dtype, one device."""

    kernel: Kernel
    property: str
    dtype: str
    device: str
    examples: int
    spec: str | None

    def __str__(self) -> str:
        return f"{self.kernel.name}-{self.property}-{self.dtype}-{self.device}"


def conformance_cells(kernel: Kernel, *, properties=None, dtypes=None, devices=None,
                      examples: int = DEFAULT_EXAMPLES, spec: str | None = None) -> list:
    """``pytest.param``s, one per property × dtype × device the kernel declares (or those
    named), with readable ids such as ``my_attention-forward-float32-cpu``."""
    names = [property_named(p).name for p in properties] if properties else \
        [p.name for p in PROPERTIES]
    cells = [KernelCell(kernel, name, dtype, device, examples, spec)
             for name in names for dtype in (dtypes or kernel.dtypes)
             for device in (devices or kernel.devices)]
    return [pytest.param(cell, id=str(cell)) for cell in cells]


def assert_conforms(cell: KernelCell) -> None:
    """Run one cell; skip where it cannot run or does not apply, fail with the shrunk
    counterexample and the replay command where the kernel does not conform."""
    result = check_cell(cell.kernel, property_named(cell.property), cell.dtype, cell.device,
                        cell.examples, cell.spec)
    if result.status in ("skipped", "n/a"):
        pytest.skip(result.reason or "not applicable to this kernel")
    if result.status in (*FAILING, "not decisive"):
        pytest.fail(_explain(result), pytrace=False)
    assert result.status == "conforms", result


def _explain(result) -> str:
    lines = [f"{result.property} in {result.dtype} on {result.device}: {result.status}"]
    if result.reason:
        lines.append(result.reason)
    if result.ratio is not None:
        lines.append(f"error {result.ratio:.3g}x the reference's (the case shown)")
    if result.counterexample:
        lines.append(f"counterexample: {result.counterexample}")
    if result.replay:
        lines.append(f"replay: {result.replay}")
    return "\n".join(lines)
