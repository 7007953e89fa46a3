"""What a batch of float64 values can decide, and how much evidence a record needs.

* **Non-finite values decide nothing.** A comparison where either side is NaN or ±∞ in float64
  never counts as passed (inf against inf is not "0 ulps apart"). Such a row is counted as
  *undecided* and left out; the search goes on with the rows whose values are finite.
* **An error scale is a finite positive number, or nothing.** Where the abs-scale is NaN or ±∞
  (log 0 = −∞ under a mask, 0·∞), the entry is measured against the larger magnitude of the
  values compared instead; where that is not finite either, the row is undecided. The scale
  never becomes a zero or an infinite tolerance.
* **"Passed" needs evidence.** A record reads "passed" only when at least
  ``MINIMUM_DECIDED`` instances were decided; otherwise "too few instances (n)".
"""

from __future__ import annotations

import numpy as np

MINIMUM_DECIDED = 100
# keys of an evaluated reference that are error bounds, not values of a side
BOUNDS = ("scale", "exponent_scale", "largest")


def sides(values: dict) -> dict:
    """The evaluated sides (lhs, rhs, autodiff, implementation, ...) of a batch."""
    return {k: v for k, v in values.items() if k not in BOUNDS}


def finite_rows(values: dict, batch: int) -> np.ndarray:
    """Rows of a batch where every side is finite in every entry."""
    finite = np.ones(batch, dtype=bool)
    for value in sides(values).values():
        array = np.asarray(value, np.float64).reshape(batch, -1)
        finite &= np.isfinite(array).all(axis=1)
    return finite


def usable_scale(values: dict) -> np.ndarray:
    """The abs-scale, with every non-finite entry replaced by the larger magnitude of the
    sides compared there (NaN where that is not finite either: the row is then undecided)."""
    scale = np.asarray(values["scale"], np.float64)
    bad = ~np.isfinite(scale)
    if not bad.any():
        return scale
    with np.errstate(invalid="ignore"):
        magnitude = np.zeros_like(scale)
        for value in sides(values).values():
            magnitude = np.maximum(magnitude, np.abs(np.broadcast_to(
                np.asarray(value, np.float64), scale.shape)))
    return np.where(bad, magnitude, scale)  # a NaN or ±∞ magnitude stays non-finite


def scale_rows(scale: np.ndarray) -> np.ndarray:
    """Rows whose every entry has a finite error scale."""
    return np.isfinite(scale.reshape(scale.shape[0], -1)).all(axis=1)


def too_few(decided: int) -> str | None:
    """Why a record without a failure cannot read "passed", or None if it can."""
    if decided < MINIMUM_DECIDED:
        return (f"too few instances ({decided}): a record passes only with at least "
                f"{MINIMUM_DECIDED} decided instances")
    return None


def autodiff_scale(scale: np.ndarray) -> np.ndarray:
    """The error scale for a backend's autodiff. The abs-scale describes the closed form, whose
    terms all vanish at some entries (a masked key's gradient is exactly 0); autodiff reaches
    such an entry through the whole computation (a max-shift whose gradient cancels only up to
    rounding when scores tie), so its rounding there is that of the instance's other entries.
    An abs-scale of exactly 0 would make that rounding (6e-17) read as 1e291 ulps: a zero
    tolerance. Entries with a zero abs-scale take the largest abs-scale of their instance."""
    rows = scale.reshape(scale.shape[0], -1).max(axis=1, initial=0.0)
    largest = rows.reshape((-1,) + (1,) * (scale.ndim - 1))
    return np.where(scale > 0, scale, largest)
