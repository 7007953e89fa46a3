"""The tolerance model: every constant the numeric checker (and the kernel checker, at the end)
decides with, in one place.

Errors are measured per entry in units of the dtype's epsilon times the entry's abs-scale (the
same expression evaluated with absolute values of every term), never relative to the largest
entry and never scaled by array size:

    ulps = |a - b| / (eps(dtype) * abs_scale + tiny(dtype))        bits = log2(1 + ulps)

``tiny`` (the smallest normal number) keeps entries whose exact value underflows from counting
as infinitely wrong.

Three comparisons, three limits, all in ulps of the dtype being measured:

* truth, in float64: lhs against rhs, both float64 on a backend trusted as the reference.
  ``TRUTH_ULPS = 2**12``: true theorems of the tutorial needed at most 321 eps * abs-scale and
  false ones produced at least 1e13 (DESIGN.md, "Numeric checker"); 4096 sits more than ten times
  above the first and nine orders of magnitude below the second.
* stability, in a lower precision: each side in that dtype against the same side in float64.
  Honest rounding of inputs and operations stays within a few dozen ulps of the abs-scale (the
  abs-scale already carries the amplification by |logits|); a missing stability rewrite or an
  overflow gives inf/nan or errors orders of magnitude beyond. ``STABILITY_ULPS = 2**7``: over
  20 seeds of every true claim on NumPy, JAX and MLX in every format, the worst check needed
  0.24 of its limit (``python scripts/calibrate.py``). The bound is kept this tight because it
  also sets how small an error each format can still see (below).
* truth in that format: lhs against rhs, both in the lower dtype. If both sides are stable and
  the claim is true, the triangle inequality bounds the difference by
  ``2 * STABILITY_ULPS + TRUTH_ULPS * eps(float64) / eps(dtype)`` (``format_truth_ulps``), so
  exceeding it refutes the claim *in that format* and can never be a false alarm. A claim false
  in float64 whose difference stays below that bound is invisible in the format: the record
  says "not-decisive" instead of passing or failing (typically bfloat16, whose bound is ~2x the
  abs-scale).

Each backend states which dtype's epsilon measures each of its dtypes (``Backend.accuracy``):
MLX float64 on CPU computes ``exp`` in float32 (relative error 7e-6 near 76, overflow above 88),
so it is measured with float32's epsilon and is never the reference.
"""

from __future__ import annotations

import numpy as np

from attnproof.symbolic import FLOAT64, Format

# the format truth is decided in
REFERENCE_DTYPE = FLOAT64
TRUTH_ULPS = 2.0**12
STABILITY_ULPS = 2.0**7


def format_truth_ulps(dtype: Format) -> float:
    """The largest lhs-rhs difference in ``dtype`` a true claim with stable sides can show."""
    if dtype == REFERENCE_DTYPE:
        return TRUTH_ULPS
    carried = TRUTH_ULPS * REFERENCE_DTYPE.epsilon / dtype.epsilon
    return 2 * STABILITY_ULPS + carried


def representable(exponent_scale: np.ndarray, largest: np.ndarray, dtype: Format) -> np.ndarray:
    """Rows ``dtype`` can evaluate at all, whatever the formula: every exponent's rounding error
    (eps * its abs-scale) stays below 1, so no exponential is off by a factor e from rounding
    alone, and every value and abs-scale fits in range. Beyond, errors are no longer first
    order and the abs-scale bounds nothing: scores of 1e3 lose all their softmax digits in
    bfloat16, and S / T = 100 / 1e-3 overflows float16."""
    exponents_fine = dtype.epsilon * np.asarray(exponent_scale, np.float64) <= 1.0
    return exponents_fine & (np.asarray(largest, np.float64) <= dtype.largest)


def error_ulps(a: np.ndarray, b: np.ndarray, scale: np.ndarray, dtype: Format) -> np.ndarray:
    """Per-entry distance between ``a`` and ``b`` in ulps of ``dtype`` at ``scale``; nan -> inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        distance = np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))
        same = np.asarray(a) == np.asarray(b)
        ulps = distance / (dtype.epsilon * np.asarray(scale, np.float64) + dtype.smallest_normal)
    ulps = np.where(same, 0.0, ulps)
    return np.where(np.isnan(ulps), np.inf, ulps)


def shortfall_ulps(lhs: np.ndarray, rhs: np.ndarray, scale: np.ndarray,
                   dtype: Format) -> np.ndarray:
    """For ``lhs >= rhs``: how far ``lhs`` falls below ``rhs``, in ulps (0 when it holds)."""
    below = np.where(np.asarray(lhs) >= np.asarray(rhs), np.asarray(rhs), np.asarray(lhs))
    return error_ulps(below, rhs, scale, dtype)


def bits(ulps: float) -> float:
    return float(np.log2(1.0 + ulps))


# Finite differences (the tie-breaker between derivations): a central difference with step
# h = cbrt(eps) * max(1, |x|) has truncation error ~h**2 and rounding error ~eps / h. Each
# estimate carries its own uncertainty: the change from the same difference at step 2h (four
# times the truncation error, so three times this estimate's) plus the rounding of the primal,
# allowed FINITE_DIFFERENCE_ROUNDING_ULPS of its value at each end. A bound relative to the
# abs-scale instead (TRUTH_ULPS * eps**(-1/3)) cannot tell a derivation off by 50% in a
# saturated softmax, where the abs-scale dwarfs the entry.
FINITE_DIFFERENCE_ROUNDING_ULPS = TRUTH_ULPS

# Kernel conformance (``attnproof kernels``): a kernel conforms when its worst absolute error is
# at most KERNEL_LIMIT times the plain reference's at its declared precision, plus a floor of
# KERNEL_FLOOR_ULPS ulps (flash-attention's tests: 2x, and an absolute floor of a few ulps). The
# floor is measured against the output's largest magnitude (the sum of its terms' absolute
# values), in ulps of the output's format plus ulps of the computing format times the
# softmax's condition (1 + the largest |score|): where the reference's arithmetic happens to
# follow the truth's (float64 against float64), its own error is 0 and only the floor tells
# rounding from a defect.
KERNEL_LIMIT = 2.0
KERNEL_FLOOR_ULPS = 4.0
# a fully masked row is read as zeros or the mean of V when within this many ulps of it
KERNEL_CONVENTION_ULPS = 16.0
