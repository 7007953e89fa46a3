"""What the reshape and permutation routes share: a batch per structure that the driver draws
and shrinks, the inputs, and the comparison of two sides.

Both routes evaluate the two sides of an identity on batches of random inputs, each side built
with the backend's own array operations (reshape, transpose, concatenate, gather), and decide
with the tolerance model of ``numeric/_tolerance.py``: truth in float64 on a reference backend
(|lhs − rhs| ≤ TRUTH_ULPS · eps · abs-scale), and in any other format the two sides in that
format within ``format_truth_ulps``, each side within STABILITY_ULPS of its float64 value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from attnproof.symbolic import FLOAT64, Integer

from ..route import (
    STABILITY_ULPS,
    TRUTH_ULPS,
    Array,
    Backend,
    Evidence,
    Judged,
    StructureRoute,
    check_structures,
    error_ulps,
    format_truth_ulps,
    strategies,
    structured,
    to_numpy,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Dim, Format, Tensor, Theorem

    from .. import Profile
    from ..route import Where

BATCH = 64


def draw_inputs(theorem: Theorem, tensors: Iterable[Tensor], shapes: dict[str, tuple[int, ...]],
                rng: np.random.Generator, batch: int) -> dict[str, np.ndarray | int]:
    """Every tensor in ``tensors`` and every scalar drawn as the compiled search draws them
    (``_strategies``: the declared range, large and tied rows, structured patterns, kernels),
    with a leading batch axis; Integer scalars one value for the batch."""
    arrays: dict[str, np.ndarray | int] = {}
    for tensor in tensors:
        arrays[tensor.name] = strategies.tensor_values(
            tensor.domain, (batch, *shapes[tensor.name]), rng)
    for scalar in theorem.scalars:
        if isinstance(scalar.domain, Integer):
            arrays[scalar.name] = int(rng.integers(scalar.domain.low, scalar.domain.high + 1))
        else:
            arrays[scalar.name] = strategies.scalar_values(scalar.domain, batch, rng)
    return structured.into_kernels(theorem, arrays, rng)


@dataclass
class Batch:
    """One batch's values, as NumPy float64: each side in the dtype checked, and in float64
    from the same (rounded) inputs, with the abs-scale."""

    lhs: np.ndarray
    rhs: np.ndarray
    lhs64: np.ndarray
    rhs64: np.ndarray
    scale: np.ndarray


def compare(batch: Batch, dtype: Format, row: Backend) -> tuple[np.ndarray, np.ndarray, float]:
    """Per row: decided (finite), failed, and the worst error in ulps of the measured format."""
    count = batch.lhs.shape[0]
    values = [np.asarray(v, np.float64).reshape(count, -1)
              for v in (batch.lhs, batch.rhs, batch.lhs64, batch.rhs64, batch.scale)]
    lhs, rhs, lhs64, rhs64, scale = values
    # only float64 decides which rows count: a side that overflows in a lower format where
    # float64 is finite is an instability, measured as an infinite error below
    decided = np.all(np.isfinite(np.concatenate([lhs64, rhs64, scale], axis=1)), axis=1)
    if row.reference and dtype == FLOAT64:
        error = error_ulps(lhs, rhs, scale, FLOAT64)
        failed = decided & (error.max(axis=1, initial=0.0) > TRUTH_ULPS)
        return decided, failed, _worst(error, decided)
    measured = row.measured_as(dtype)
    error = error_ulps(lhs, rhs, scale, measured)
    unstable = np.maximum(error_ulps(lhs, lhs64, scale, measured),
                          error_ulps(rhs, rhs64, scale, measured))
    failed = decided & ((error.max(axis=1, initial=0.0) > format_truth_ulps(measured))
                        | (unstable.max(axis=1, initial=0.0) > STABILITY_ULPS))
    return decided, failed, _worst(error, decided)


def false_in_float64(batch: Batch) -> bool:
    """Whether the float64 sides of some finite row differ beyond TRUTH_ULPS."""
    count = batch.lhs64.shape[0]
    lhs, rhs, scale = (np.asarray(v, np.float64).reshape(count, -1)
                       for v in (batch.lhs64, batch.rhs64, batch.scale))
    finite = np.all(np.isfinite(np.concatenate([lhs, rhs, scale], axis=1)), axis=1)
    error = error_ulps(lhs, rhs, scale, FLOAT64)
    return bool(np.any(finite & (error.max(axis=1, initial=0.0) > TRUTH_ULPS)))


def _worst(error: np.ndarray, decided: np.ndarray) -> float:
    kept = error[decided]
    return float(kept.max(initial=0.0)) if kept.size else 0.0


def worst_entry(batch: Batch, row_index: int, out_names: list[str]) -> dict[str, object]:
    """The entry of one failing row where the sides differ most, as short strings."""
    lhs = np.asarray(batch.lhs[row_index], np.float64)
    rhs = np.asarray(batch.rhs[row_index], np.float64)
    with np.errstate(invalid="ignore"):
        gap = np.nan_to_num(np.abs(lhs - rhs), nan=np.inf)
    at = np.unravel_index(int(np.argmax(gap)), gap.shape) if gap.shape else ()
    return {"indices": {n: int(v) for n, v in zip(out_names, at, strict=True)},
            "lhs": f"{float(lhs[at]):.6g}", "rhs": f"{float(rhs[at]):.6g}"}


def search_batches(theorem: Theorem, where: Where, profile: Profile, seed: int | None,
                   evaluate: Callable[[dict[str, int], np.random.Generator], Batch],
                   describe_row: Callable[[dict[str, int], Batch, int], dict[str, object]],
                   description: str, dims: Iterable[Dim] | None = None) -> Evidence:
    """Batches of ``BATCH`` instances, one per structure (sizes and a seed) that the driver's
    :func:`check_structures` draws (sizes of ``dims``, else of the theorem's), counts and
    shrinks, until one fails; then, where none failed, the largest and the smallest sizes.
    ``evaluate(sizes, rng) -> Batch`` draws its inputs from ``rng``, seeded by the structure, so
    that the shrunk structure, and a rerun from the record's seed, draw the same instances;
    ``describe_row(sizes, batch, row_index)`` gives a failing row's counterexample."""
    row, dtype = where.row, where.dtype

    def run(structure: strategies.Structure) -> Batch:
        with np.errstate(all="ignore"):  # overflow is measured, not warned about
            return evaluate(structure.size_map, np.random.default_rng(structure.seed))

    def judge(batch: Batch) -> Judged:
        decided, failed, worst = compare(batch, dtype, row)
        fails = bool(failed.any())
        return Judged(int(decided.sum()), int((~decided).sum()), worst, fails,
                      indecisive=not fails and false_in_float64(batch))

    def searched(seen: Evidence) -> str:
        return (f"{description}; {seen.examples} batches of {BATCH} instances, their sizes "
                "and seeds drawn and shrunk by Hypothesis, then the largest and smallest "
                "sizes where none failed")

    def first_failing(batch: Batch) -> int:
        return int(np.flatnonzero(compare(batch, dtype, row)[1])[0])

    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=run,
        judge=judge,
        counterexample=lambda structure, batch: {
            **describe_row(structure.size_map, batch, first_failing(batch)), "dtype": dtype},
        failure_reason=lambda seen, _, batch: (
            f"{searched(seen)}; {_what_failed(batch, first_failing(batch), dtype)}"),
        passed=searched,
        indecisive_reason=lambda seen: (f"{searched(seen)}; false in float64 but within "
                                        f"{dtype}'s rounding: this format cannot decide the "
                                        "claim"),
        dims=None if dims is None else tuple(dims),
        extremes=True))


def _what_failed(batch: Batch, row_index: int, dtype: Format) -> str:
    sides_in_format = np.concatenate([np.ravel(batch.lhs[row_index]),
                                      np.ravel(batch.rhs[row_index])])
    if not np.all(np.isfinite(sides_in_format)):
        return f"a side is not finite in {dtype} where float64 is (unstable)"
    single = Batch(*(np.asarray(v)[row_index:row_index + 1] for v in (
        batch.lhs64, batch.rhs64, batch.lhs64, batch.rhs64, batch.scale)))
    if false_in_float64(single):
        return "the sides differ"
    return f"the sides differ beyond {dtype}'s rounding, or a side strays from float64"


def host(arrays: dict[str, Array]) -> dict[str, np.ndarray | int]:
    return {name: value if isinstance(value, int) else to_numpy(value)
            for name, value in arrays.items()}


def to_host(array: Array) -> np.ndarray:
    return to_numpy(array)
