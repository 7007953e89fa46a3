"""The tolerance model: every constant the numeric checker decides with, in one place.

Errors are measured per entry in units of the dtype's epsilon times the entry's abs-scale (the
same expression evaluated with absolute values of every term), never relative to the largest
entry and never scaled by array size:

    ulps = |a - b| / (eps(dtype) * abs_scale + tiny(dtype))        bits = log2(1 + ulps)

``tiny`` (the smallest normal number) keeps entries whose exact value underflows from counting
as infinitely wrong.

Why 2**12: in float64, true theorems from the tutorial needed at most 321 eps * abs-scale, and
false ones produced at least 1e13 (DESIGN.md, "Numeric checker"). 4096 sits more than ten times
above the first and nine orders of magnitude below the second, so neither a true theorem with
a long reduction nor a near-miss false one lands on the wrong side. The same constant bounds
each side's low-precision error against its own float64 value: a missing stability rewrite or
an overflow produces inf/nan or errors far beyond it, while honest rounding stays well inside.
"""

from __future__ import annotations

import numpy as np

TRUTH_ULPS = 2.0**12
STABILITY_ULPS = 2.0**12


def finfo(dtype: str):
    """``finfo`` for any dtype name NumPy or ml_dtypes knows (float16, bfloat16, ...)."""
    try:
        return np.finfo(np.dtype(dtype))
    except TypeError:
        import ml_dtypes

        return ml_dtypes.finfo(getattr(ml_dtypes, dtype))


def error_ulps(a: np.ndarray, b: np.ndarray, scale: np.ndarray, dtype: str) -> np.ndarray:
    """Per-entry distance between ``a`` and ``b`` in ulps of ``dtype`` at ``scale``; nan -> inf."""
    info = finfo(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        distance = np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))
        same = np.asarray(a) == np.asarray(b)
        ulps = distance / (float(info.eps) * np.asarray(scale, np.float64) + float(info.tiny))
    ulps = np.where(same, 0.0, ulps)
    return np.where(np.isnan(ulps), np.inf, ulps)


def shortfall_ulps(lhs: np.ndarray, rhs: np.ndarray, scale: np.ndarray, dtype: str) -> np.ndarray:
    """For ``lhs >= rhs``: how far ``lhs`` falls below ``rhs``, in ulps (0 when it holds)."""
    below = np.where(np.asarray(lhs) >= np.asarray(rhs), np.asarray(rhs), np.asarray(lhs))
    return error_ulps(below, rhs, scale, dtype)


def bits(ulps: float) -> float:
    return float(np.log2(1.0 + ulps))
