"""What a batch of float64 values can decide, and how much evidence a record needs.

* **The truth decides what is undefined.** A row is *undecided* (left out, and counted) only
  where the statement's own value is NaN or ±∞ in float64: its sides that run no code but the
  statement's (``TRUTH_SIDES``). Where those are finite and a side computed by code (an
  ``implementation=``, a backend's autodiff: ``CODE_SIDES``) is NaN or ±∞, the code is wrong
  there: the row fails, it is never set aside. Inf against inf is not "0 ulps apart" either.
* **An error scale is a finite positive number, or nothing.** Where the abs-scale is NaN or ±∞
  (log 0 = −∞ under a mask, 0·∞), the entry is measured against the larger magnitude of the
  values compared instead; where that is not finite either, the row is undecided. The scale
  never becomes a zero or an infinite tolerance.
* **"Passed" needs evidence.** A record reads "passed" only when at least
  ``MINIMUM_DECIDED`` instances were decided; otherwise "too few instances (n)".
"""

from __future__ import annotations

import numpy as np

# A record whose undecided rows pass this share of everything it drew says so in its verdict.
UNDECIDED_SHARE_NOTED = 0.10
# keys of an evaluated reference that are error bounds, not values of a side
BOUNDS = ("scale", "exponent_scale", "largest")
# sides that evaluate the statement itself, and sides that run code to be judged against them
TRUTH_SIDES = ("rhs", "lhs", "sympy")
CODE_SIDES = ("implementation", "autodiff")


def sides(values: dict) -> dict:
    """The evaluated sides (lhs, rhs, autodiff, implementation, ...) of a batch."""
    return {k: v for k, v in values.items() if k not in BOUNDS}


def truth_sides(values: dict) -> dict:
    """The sides that evaluate the statement itself (no user code, no autodiff)."""
    return {k: v for k, v in values.items() if k in TRUTH_SIDES}


def code_sides(values: dict) -> dict:
    """The sides computed by code that the statement judges."""
    return {k: v for k, v in values.items() if k in CODE_SIDES}


def finite_rows(values: dict, batch: int) -> np.ndarray:
    """Rows of a batch where every side of ``values`` is finite in every entry."""
    finite = np.ones(batch, dtype=bool)
    for value in sides(values).values():
        array = np.asarray(value, np.float64).reshape(batch, -1)
        finite &= np.isfinite(array).all(axis=1)
    return finite


def non_finite_rows(values: dict, batch: int) -> np.ndarray:
    """Rows of a batch where some side of ``values`` is NaN or ±∞ in some entry."""
    return ~finite_rows(values, batch)


def usable_scale(values: dict) -> np.ndarray:
    """The abs-scale, with every non-finite entry replaced by the larger magnitude of the
    statement's own sides there (NaN where that is not finite either: the row is then
    undecided). Code sides never set a scale: a NaN from code must fail, not excuse itself."""
    scale = np.asarray(values["scale"], np.float64)
    bad = ~np.isfinite(scale)
    if not bad.any():
        return scale
    with np.errstate(invalid="ignore"):
        magnitude = np.zeros_like(scale)
        for value in truth_sides(values).values():
            magnitude = np.maximum(magnitude, np.abs(np.broadcast_to(
                np.asarray(value, np.float64), scale.shape)))
    return np.where(bad, magnitude, scale)  # a NaN or ±∞ magnitude stays non-finite


def decidable(reference: dict, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows the statement's own float64 values decide, and the usable abs-scale: every
    truth side finite and a finite error scale. Code sides play no part here."""
    scale = usable_scale(reference)
    rows = finite_rows(truth_sides(reference), batch) & scale_rows(scale)
    return rows, scale


def scale_rows(scale: np.ndarray) -> np.ndarray:
    """Rows whose every entry has a finite error scale."""
    return np.isfinite(scale.reshape(scale.shape[0], -1)).all(axis=1)


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


def undecided_share(undecided: int, instances: int) -> float:
    """The share of a record's drawn rows that no float64 value decided."""
    drawn = undecided + instances
    return undecided / drawn if drawn else 0.0
