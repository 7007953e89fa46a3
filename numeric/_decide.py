"""Deciding one batch: per-entry errors in ulps against their limits (float64 truth on a reference
backend; elsewhere each side's stability and lhs vs rhs within the format), and the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from . import _evidence as evidence
from ._plan import Evaluated, Plan, Runner, evaluate_reference, is_reference
from ._tolerance import (
    REFERENCE_DTYPE,
    STABILITY_ULPS,
    TRUTH_ULPS,
    error_ulps,
    format_truth_ulps,
    representable,
    shortfall_ulps,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from ._strategies import Structure


@dataclass
class Outcome:
    """Per-batch verdict; ``errors`` maps a comparison to per-entry ulps, ``limits`` to its limit.

    Comparison names say what was compared: ``lhs vs rhs`` (float64 truth), ``lhs in float16``
    (stability of one side), ``lhs vs rhs in float16`` (truth in that format).
    """

    worst: float
    failing_row: int | None
    comparison: str | None
    low: dict | None
    errors: dict
    limits: dict
    invisible: float = 0.0  # float64 truth error a format could not see (not decisive)
    format_ratio: float = 0.0  # largest format-truth error over its limit, for targeting
    instances: int = 0
    undecided: int = 0  # rows left out: the statement's float64 value or its scale is not finite
    # the failure is code that is NaN or ±∞ in float64 where the statement is finite: a
    # counterexample in any format, not an instability of the format
    refutes: bool = False
    # rows whose exact values (or exponents' rounding) lie outside this format's range: not
    # evaluated in it, since no formula can hold them there
    out_of_range: int = 0
    evaluated: Evaluated | None = None  # the batch as evaluated (moved by ``Theorem.at``)

    # read of a decided batch: ``decide`` sets ``evaluated`` on every outcome it returns
    @property
    def reference(self) -> dict:
        assert self.evaluated is not None
        return self.evaluated.reference

    @property
    def inputs(self) -> dict:
        assert self.evaluated is not None
        return self.evaluated.inputs

    @property
    def valid(self) -> np.ndarray | None:
        assert self.evaluated is not None
        return self.evaluated.valid


def decide(runner: Runner, structure: Structure, batch: int, dtype: Format,
           arrays: dict | None = None) -> Outcome:
    """Evaluate one batch for ``structure`` in ``dtype`` (and float64) and decide it."""
    evaluated = evaluate_reference(runner.reference_for(dtype), structure, batch, arrays)
    reference, valid = evaluated.reference, evaluated.valid
    # the statement's own float64 values decide which rows count (``_evidence``): where they
    # are not finite the row is undecided; a code side's NaN never excuses itself
    decidable, scale = evidence.decidable(reference, batch)
    undecided = int((~decidable if valid is None else valid & ~decidable).sum())
    valid = _and(valid, decidable)
    evaluated.valid = valid
    scale = np.where(np.isfinite(scale), scale, 1.0)  # only where the row is left out anyway
    truth = truth_errors(runner.plan, reference, scale, REFERENCE_DTYPE)
    low, out_of_range = None, 0
    if is_reference(runner.row, dtype):
        errors, limits = truth, dict.fromkeys(truth, TRUTH_ULPS)
    else:
        measure = runner.row.measured_as(dtype)
        held = representable(reference["exponent_scale"], reference["largest"], measure)
        low = runner.evaluate(evaluated.inputs, evaluated.sizes, dtype, with_scale=False)
        held &= ~underflow_decides(runner.reference_for(dtype), evaluated, reference, low, scale,
                                   measure, batch)
        out_of_range = int((valid & ~held).sum())
        valid = valid & held
        evaluated.valid = valid
        errors, limits = _format_errors(runner.plan, low, reference, scale, dtype, measure)
    faults = {name: rows & valid for name, rows in code_faults(reference, low, batch).items()}
    errors = {k: _only_valid(v, valid) for k, v in errors.items()}
    outcome = verdict(errors, limits, low, is_reference(runner.row, dtype),
                      _fault_comparisons(faults, low, dtype))
    if low is not None and outcome.failing_row is None:
        outcome.invisible = _worst({k: _only_valid(v, valid) for k, v in truth.items()},
                                   TRUTH_ULPS)
    outcome.instances = int(valid.sum())
    outcome.undecided = undecided
    outcome.out_of_range = out_of_range
    outcome.evaluated = evaluated
    return outcome


def underflow_decides(reference_runner: Runner, evaluated: Evaluated, reference: dict, low: dict,
                      scale: np.ndarray, measure: Format, batch: int) -> np.ndarray:
    """Rows where the format lost an entry to underflow and nothing else: an entry made only of
    exponentials that may fall below ``measure``'s normal range (or of weights e/Σ below it:
    e under n·tiny, n the longest dimension, since Σ lies in [1, n] once the row's maximum is
    subtracted): flushing those exponentials in float64 (as XLA and MLX flush on CPUs) moves the
    entry by more than one ulp at its own scale, the format's value there is nearer the flushed
    value than the exact one (it lost them too), and no entry of the row moves by one ulp at
    the row's largest scale. Such an entry (a gradient of 1e-36 beside entries of 1e2) has no
    digits the format can hold, so the componentwise model (every operation off by at most u
    relative) does not apply to it, as it does not to a row that overflows: the row is not an
    instance of the format. Where flushing moves the row as a whole (a softmax whose every
    exponential underflows, 0/0) the row stays in and is judged: that is the formula's
    instability."""
    eps, tiny = measure.epsilon, measure.smallest_normal
    # a weight e/Σ falls below the range when e < Σ·tiny, and a sum of n exponentials after the
    # row's maximum is subtracted lies in [1, n]: exponentials below n·tiny may vanish
    longest = max((v for k, v in evaluated.sizes.items() if k != "batch"), default=1)
    threshold = tiny * max(longest, 1)
    rows = np.zeros(batch, dtype=bool)
    # a row's exponents are at most its exponent scale in magnitude, and one shifted by the
    # row's maximum (s − max) at most twice that: only rows where that reaches −log(threshold)
    # are evaluated again
    reach = np.asarray(reference["exponent_scale"], np.float64).reshape(batch, -1).max(axis=1)
    maybe = 2 * reach >= -np.log(threshold)
    if not maybe.any():
        return rows
    flushed = reference_runner.evaluate_flushed(_rows_of(evaluated.inputs, maybe),
                                                {**evaluated.sizes, "batch": int(maybe.sum())},
                                                threshold)
    entry_scale = _rows_of({"scale": np.broadcast_to(scale, np.shape(reference["rhs"]))},
                           maybe)["scale"]
    for name, value in evidence.sides(flushed).items():
        if name in reference and name in low:
            exact = _rows_of({name: reference[name]}, maybe)[name]
            computed = _rows_of({name: low[name]}, maybe)[name]
            rows[maybe] |= _only_a_lost_entry_moves(value, exact, computed, entry_scale, eps,
                                                    tiny)
    return rows


def _rows_of(arrays: dict, chosen: np.ndarray) -> dict:
    """The chosen rows of a batch's arrays (an Integer input, a Python int, is kept)."""
    return {k: (np.asarray(v)[chosen] if np.ndim(v) else v) for k, v in arrays.items()}


def _only_a_lost_entry_moves(value: np.ndarray, exact: np.ndarray, computed: np.ndarray,
                             entry_scale: np.ndarray, eps: float, tiny: float) -> np.ndarray:
    """Per row: some entry moved by more than one ulp at its own scale when the exponentials
    were flushed, and the format's value there is nearer the flushed one than the exact one
    (the format lost them too); and no entry moved by one ulp at the row's largest scale."""
    rows = np.shape(exact)[0] if np.ndim(exact) else 0
    value, exact, computed = (np.asarray(a, np.float64) for a in (value, exact, computed))
    shape = np.broadcast_shapes(value.shape, exact.shape, computed.shape, np.shape(entry_scale))
    value, exact, computed = (np.broadcast_to(a, shape).reshape(rows, -1)
                              for a in (value, exact, computed))
    own = np.broadcast_to(np.asarray(entry_scale, np.float64), shape).reshape(rows, -1)
    row_scale = np.nanmax(np.where(np.isfinite(own), own, np.nan), axis=1, initial=0.0)
    with np.errstate(invalid="ignore"):
        change = np.abs(value - exact)
        lost = np.abs(computed - value) < np.abs(computed - exact)
        componentwise = ((change > eps * own + tiny) & lost).any(axis=1)
        negligible = (change <= eps * row_scale[:, None] + tiny).all(axis=1)
    return componentwise & negligible


def code_faults(reference: dict, low: dict | None, batch: int) -> dict:
    """Per code side, the rows where it is NaN or ±∞ in float64 (and, for a lower format, in
    that format too): wherever the statement is finite there, the code is wrong in exact
    arithmetic, not merely rounded: a counterexample in any format. A side that is finite in
    float64 and overflows only in a lower format is an instability, judged as one."""
    faults = {}
    for name, value in evidence.code_sides(reference).items():
        rows = evidence.non_finite_rows({name: value}, batch)
        if low is not None and name in low:
            rows &= evidence.non_finite_rows({name: low[name]}, batch)
        faults[name] = rows
    return faults


def _fault_comparisons(faults: dict, low: dict | None, dtype: Format) -> dict:
    """The comparison each code side's faults fail, named as the errors are."""
    suffix = "" if low is None else f" in {dtype}"
    return {f"{name} vs rhs{suffix}": rows for name, rows in faults.items()}


def truth_errors(plan: Plan, values: dict, scale: np.ndarray, dtype: Format) -> dict:
    """Every derivation of the lhs against the rhs, and autodiff against SymPy, in ``dtype``."""
    errors = {}
    for name in plan.lhs_names:
        if name in values:
            side_scale = evidence.autodiff_scale(scale) if name == "autodiff" else scale
            errors[f"{name} vs rhs"] = _truth(plan.theorem, values[name], values["rhs"],
                                              side_scale, dtype)
    if "autodiff" in values and "sympy" in values:
        errors["autodiff vs sympy"] = error_ulps(values["autodiff"], values["sympy"],
                                                 evidence.autodiff_scale(scale), dtype)
    return errors


def _format_errors(plan: Plan, low: dict, reference: dict, scale: np.ndarray, dtype: Format,
                   measure: Format) -> tuple[dict, dict]:
    """Stability of each side in ``dtype`` against float64, and truth within the format."""
    errors: dict[str, np.ndarray] = {}
    limits: dict[str, float] = {}
    for name, value in low.items():
        side_scale = evidence.autodiff_scale(scale) if name == "autodiff" else scale
        errors[f"{name} in {dtype}"] = error_ulps(value, float64_side(reference, name),
                                                  side_scale, measure)
        limits[f"{name} in {dtype}"] = STABILITY_ULPS
    for name, error in truth_errors(plan, low, scale, measure).items():
        errors[f"{name} in {dtype}"] = error
        limits[f"{name} in {dtype}"] = format_truth_ulps(measure)
    return errors, limits


def float64_side(reference: dict, name: str) -> np.ndarray:
    """The float64 value a side in a lower format is measured against. NumPy, the reference
    for MLX, has no autodiff: SymPy's derivative is the same value."""
    # never None: the float64 values hold every side a lower format has, or (for autodiff)
    # SymPy's derivative in its place
    return cast(np.ndarray, reference.get(name, reference.get("sympy")))


def _and(valid: np.ndarray | None, more: np.ndarray) -> np.ndarray:
    return more if valid is None else valid & more


def _only_valid(errors: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    if valid is None:
        return errors
    return np.where(valid.reshape((-1,) + (1,) * (errors.ndim - 1)), errors, 0.0)


def _worst(errors: dict, limit: float) -> float:
    """The largest error beyond ``limit`` (0 when every comparison is within it)."""
    worst = max((float(v.max(initial=0.0)) for v in errors.values()), default=0.0)
    return worst if worst > limit else 0.0


# How a comparison of the two sides measures the claim's truth, by ``Claim.truth_measure``:
# an identity's distance, an inequality lhs >= rhs's shortfall (lhs above rhs is no error).
TRUTH_MEASURES = {"distance": error_ulps, "shortfall": shortfall_ulps}


def _truth(theorem: Theorem, lhs: np.ndarray, rhs: np.ndarray, scale: np.ndarray,
           dtype: Format) -> np.ndarray:
    return TRUTH_MEASURES[theorem.claim.truth_measure](lhs, rhs, scale, dtype)


def is_stability(comparison: str) -> bool:
    return " vs " not in comparison


def verdict(errors: dict, limits: dict, low: dict | None, deciding_truth: bool,
            faults: dict | None = None) -> Outcome:
    """The first comparison beyond its limit (and its first row) fails the batch; a code side
    that is not finite where the statement is (``faults``: comparison -> rows) fails it first."""
    per_row = {k: v.reshape(v.shape[0], -1).max(axis=1, initial=0.0) for k, v in errors.items()}
    reported = [k for k in per_row if deciding_truth or is_stability(k)]
    worst = max((float(per_row[k].max(initial=0.0)) for k in reported), default=0.0)
    ratio = max((float(per_row[k].max(initial=0.0)) / limits[k] for k in per_row
                 if not deciding_truth and not is_stability(k)), default=0.0)
    for name, rows in (faults or {}).items():
        bad = np.flatnonzero(rows)
        if bad.size and name in per_row:
            return Outcome(float(per_row[name][bad[0]]), int(bad[0]), name, low, errors,
                           limits, format_ratio=ratio, refutes=True)
    for name, rows in per_row.items():
        bad = np.flatnonzero(rows > limits[name])
        if bad.size:  # the error that refuted the claim is the record's worst, in any format
            return Outcome(max(worst, float(rows.max())), int(bad[0]), name, low, errors,
                           limits, format_ratio=ratio)
    return Outcome(worst, None, None, low, errors, limits, format_ratio=ratio)


def failing_rows(outcome: Outcome) -> set[int]:
    rows: set[int] = set()
    for name, error in outcome.errors.items():
        worst = error.reshape(error.shape[0], -1).max(axis=1)
        rows |= set(np.flatnonzero(worst > outcome.limits[name]).tolist())  # as Python ints
    return rows
