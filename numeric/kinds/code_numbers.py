"""Numeric route of worked numbers from code: the demo run on the backend, in the record's dtype.

The demo's data (float64, as its code makes them) are rounded to the dtype and placed on the
backend and device; its code runs on the backend's own array functions; each value is compared
with its printed text at the printed precision (±half a unit in the last printed place, in
float64 after the run); a value that misses fails the record. When NumPy's float64 run rounds
to every printed text, the reason says the miss is this format's rounding only: an instability
of the format (a theorem declares it with ``unstable_in=``), not a refutation, which float64
decides.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from attnproof.symbolic import FLOAT64
from attnproof.symbolic.kinds.code_numbers import FromCode

from ..route import (
    Array,
    ArrayModule,
    Backend,
    Evidence,
    Failure,
    NativeDevice,
    Passed,
    error_ulps,
    is_truth,
    numeric_route,
    to_numpy,
    truth_row,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Where


class Arrays:
    """The namespace a demo is written against, over one backend and dtype."""

    def __init__(self, row: Backend, module: ArrayModule, dtype: Format,
                 device: NativeDevice) -> None:
        self._row, self._module, self._dtype, self._device = row, module, dtype, device

    def asarray(self, value: object) -> Array:
        return self._row.place(self._module, np.asarray(value, dtype=np.float64),
                               self._dtype.storage, self._device)

    def constant(self, value: object) -> Array:
        return self.asarray(value)

    def sqrt(self, value: Array) -> Array:
        return self._module.sqrt(value)

    def sum(self, value: Array) -> Array:
        return self._module.sum(value)

    def mean(self, value: Array) -> Array:
        return self._module.mean(value)


def run(claim: FromCode, row: Backend, dtype: Format, device: str,
        mode: str = "eager") -> list[float]:
    """The demo's values on ``row`` in ``dtype``, as float64 numbers; in mode ``jit`` the demo
    is compiled whole (JAX's eager mode compiles each operation on its own, ten times the
    time)."""
    module = row.namespace(row.load(), dtype)
    place = row.devices()[device]
    arrays = Arrays(row, module, dtype, place)
    with row.scope(place):
        data = {k: arrays.asarray(v) for k, v in claim.draws().items()}
        compute = row.compile(_demo(claim, arrays)) if mode == "jit" else _demo(claim, arrays)
        return [float(to_numpy(v)) for v in compute(data)]


def _demo(claim: FromCode, arrays: Arrays) -> Callable[[dict[str, Array]], tuple[Array, ...]]:
    def demo(data: dict[str, Array]) -> tuple[Array, ...]:
        return tuple(claim.evaluate(arrays, data))

    return demo


def rounds_to(value: float, printed: str) -> bool:
    """|value − printed| ≤ half a unit in the printed last place (value finite)."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return bool(np.isfinite(value)) and abs(value - float(printed)) <= 0.5 * 10.0**-decimals


@numeric_route(FromCode)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
    claim = cast(FromCode, theorem.claim)  # the route of FromCode: the driver's lookup says so
    values = run(claim, row, dtype, device, mode)
    wrong = {label: f"{value:.10g}, printed {text}"
             for label, value, text in zip(claim.labels, values, claim.printed, strict=True)
             if not rounds_to(value, text)}
    reference = run(claim, truth_row(), FLOAT64, "cpu")
    ulps = error_ulps(np.array(values), np.array(reference), np.abs(np.array(reference)),
                      row.measured_as(dtype))
    shown = ", ".join(f"{label} = {value:.6g}" for label, value in zip(claim.labels, values,
                                                                       strict=True))
    description = (f"the demo's code run on {row.name} in {dtype} ({shown}), each value "
                   "compared with its printed text at the printed precision")
    seen = Evidence(examples=1, instances=len(values), worst_ulps=float(np.max(ulps)))
    if not wrong:
        return seen.concluding(Passed(description, fixed_inputs=(
            "fixed inputs: the demo's data are fixed by its code, and each of its printed "
            "values was compared")))
    reason = description
    if not is_truth(row, dtype) and all(
            rounds_to(v, t) for v, t in zip(reference, claim.printed, strict=True)):
        reason += (f"; NumPy float64 rounds to every printed text, so only {dtype}'s "
                   "rounding moves a value across a printed digit: an instability of "
                   "this format (declare it with unstable_in=)")
    return seen.concluding(Failure(wrong, reason))
