"""Deciding one batch: per-entry errors in ulps against their limits (float64 truth on a reference
backend; elsewhere each side's stability and lhs vs rhs within the format), and the verdict."""

from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def reference(self) -> dict:
        return self.evaluated.reference

    @property
    def inputs(self) -> dict:
        return self.evaluated.inputs

    @property
    def valid(self) -> np.ndarray | None:
        return self.evaluated.valid


def decide(runner: Runner, structure, batch: int, dtype: str, arrays=None) -> Outcome:
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
        out_of_range = int((valid & ~held).sum())
        valid = valid & held
        evaluated.valid = valid
        low = runner.evaluate(evaluated.inputs, evaluated.sizes, dtype, with_scale=False)
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


def _fault_comparisons(faults: dict, low: dict | None, dtype: str) -> dict:
    """The comparison each code side's faults fail, named as the errors are."""
    suffix = "" if low is None else f" in {dtype}"
    return {f"{name} vs rhs{suffix}": rows for name, rows in faults.items()}


def truth_errors(plan: Plan, values: dict, scale, dtype: str) -> dict:
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


def _format_errors(plan, low: dict, reference: dict, scale, dtype: str, measure: str):
    """Stability of each side in ``dtype`` against float64, and truth within the format."""
    errors, limits = {}, {}
    for name, value in low.items():
        side_scale = evidence.autodiff_scale(scale) if name == "autodiff" else scale
        errors[f"{name} in {dtype}"] = error_ulps(value, float64_side(reference, name),
                                                  side_scale, measure)
        limits[f"{name} in {dtype}"] = STABILITY_ULPS
    for name, error in truth_errors(plan, low, scale, measure).items():
        errors[f"{name} in {dtype}"] = error
        limits[f"{name} in {dtype}"] = format_truth_ulps(measure)
    return errors, limits


def float64_side(reference: dict, name: str):
    """The float64 value a side in a lower format is measured against. NumPy, the reference
    for MLX, has no autodiff: SymPy's derivative is the same value."""
    return reference.get(name, reference.get("sympy"))


def _and(valid, more):
    return more if valid is None else valid & more


def _only_valid(errors: np.ndarray, valid) -> np.ndarray:
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


def _truth(theorem, lhs, rhs, scale, dtype):
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
    rows = set()
    for name, error in outcome.errors.items():
        worst = error.reshape(error.shape[0], -1).max(axis=1)
        rows |= set(np.flatnonzero(worst > outcome.limits[name]))
    return rows
