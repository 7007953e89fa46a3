"""Numeric route of ``Limit``: convergence along a sequence of the limit variable, at a rate.

For a limit over a row of scores, rows are drawn on a grid of 13 values evenly spaced over the
tensor's declared range (so ties are frequent and distinct entries differ by at least a grid
step), in three shapes: the row's smallest size, its largest and one between. Each row is
evaluated at every point of the sequence T = 2^0, 2^-1, …, 2^-11 (limit at 0; a format whose
largest value S/T would pass stops earlier) or T = 2^0, …, 2^15 (limit at ∞; float16 reaches
65504). The expression is evaluated on the backend in the dtype; the claimed limit exactly from
the row, in float64. At every point the error must stay within the rate the kind states, plus
rounding:

- at 0: |f(T) − L| ≤ n (r/T + 2 + 2 log n) e^{−g/T}, with n the row size, r the row's range and
  g the gap between its maximum and the next value (no bound but rounding when every entry is a
  maximum). Softmax weights and their entropy converge so (the weights of lower entries are at
  most e^{−g/T}, each adds at most (r/T + log n) e^{−g/T} to the entropy);
- at ∞: |f(T) − L| ≤ 2 r/T once r/T ≤ 1 (|softmax − 1/n| ≤ e^{r/T} − 1, log n − H ≤ r/T).

A limit in scalars only uses the rate its claim states (``rate=``), along x = 2^-k or 2^k.
Rounding allowed: 8 ε (1 + |L|)(1 + log n) in the dtype's unit roundoff ε, never widened.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from attnproof.symbolic import Limit

from ..route import Evidence, Failure, numeric_route
from ._evaluate import draw_uniform, epsilon, evaluate
from ._row_values import row_function

# the sequence: exponents k of 2^-k (limit at 0) or 2^k (limit at ∞)
TOWARD_ZERO = tuple(range(0, 12))
TOWARD_INFINITY = tuple(range(0, 16))
ROWS_PER_SHAPE = 48
GRID_STEPS = 12  # rows take 13 values evenly spaced over the tensor's range


@numeric_route(Limit)
def check(theorem, where, profile, seed=None) -> Evidence:
    row, dtype, device, mode = where
    claim = theorem.claim
    rng = np.random.default_rng(0 if seed is None else seed)
    points = _points(claim)
    if claim.row is None:
        checked = _check_scalar(theorem, row, dtype, device, mode, rng, points)
    else:
        points = _reachable(points, claim, _largest_score(theorem, claim), dtype)
        checked = _check_rows(theorem, row, dtype, device, mode, rng, points)
    failed, counterexample, instances, worst = checked
    # the error at the sequence's last point: rounding alone at T = 2^-11 (every rate at 0 is
    # below rounding there), rounding plus what the rate still allows elsewhere
    seen = Evidence(examples=3 if claim.row is not None else 1, instances=instances,
                    worst_ulps=worst / epsilon(row, dtype))
    direction = "2^-" if not claim.at_infinity else "2^"
    sequence = f"{claim.variable} = 2^0, {direction}1 … {direction}{points[-1]}"
    if len(points) < len(_points(claim)):
        sequence += f" (S/T beyond that overflows {dtype})"
    if failed:
        seen.failure = Failure(counterexample, (
            f"convergence along {sequence}: {failed} instance(s) outside the stated rate "
            f"({_rate_text(claim)}) plus rounding"))
        return seen
    seen.description = (f"convergence along {sequence} on {instances} instances: every error "
                        f"within {_rate_text(claim)} plus 8 ε (1 + |L|)(1 + log n)")
    return seen


def _points(claim) -> np.ndarray:
    exponents = TOWARD_INFINITY if claim.at_infinity else TOWARD_ZERO
    return np.array(exponents)


def _sequence(claim, points) -> np.ndarray:
    powers = 2.0 ** points.astype(float)
    return float(claim.point) + (1 / powers) if not claim.at_infinity else powers


def _rate_text(claim) -> str:
    if claim.row is None:
        return f"|f − L| ≤ {claim.rate}"
    if claim.at_infinity:
        return "|f − L| ≤ 2 r/T"
    return "|f − L| ≤ n (r/T + 2 + 2 log n) e^{−g/T}"


def _rounding(eps: float, limit: np.ndarray, size: int) -> np.ndarray:
    return 8 * eps * (1 + np.abs(limit)) * (1 + math.log(size))


# -- a limit over rows of scores ------------------------------------------------------------


def _shapes(theorem, claim, rng) -> list[dict]:
    """Three shapes: the row's smallest size, its largest, one between; other axes random."""
    row_dim = str(claim.row.indices[-1].upper + 1)
    shapes = []
    for which in ("low", "high", "between"):
        sizes = {}
        for dim in theorem.dims:
            low, high = dim.sizes.low, dim.sizes.high
            if dim.name == row_dim:
                sizes[dim.name] = {"low": low, "high": high}.get(which) or int(
                    rng.integers(low, high + 1))
            else:
                sizes[dim.name] = int(rng.integers(low, high + 1))
        shapes.append(sizes)
    return shapes


def _draw_scores(theorem, claim, sizes, rng) -> np.ndarray:
    """Rows on a grid of GRID_STEPS + 1 values spanning the tensor's declared range, so ties
    are frequent and distinct entries differ by at least one grid step."""
    tensor = next(t for t in theorem.tensors if t.name == str(claim.row.base))
    low, high = _score_range(theorem, claim)
    shape = (ROWS_PER_SHAPE, *(sizes[d.name] for d in tensor.dims))
    step = (high - low) / GRID_STEPS
    scores = low + step * rng.integers(0, GRID_STEPS + 1, size=shape)
    if claim.unique_maximum:  # raise the first maximum of each row by half a grid step
        flat = scores.reshape(-1, shape[-1])
        flat[np.arange(len(flat)), flat.argmax(axis=1)] += step / 2
        scores = flat.reshape(shape)
    return scores


def _score_range(theorem, claim) -> tuple[float, float]:
    tensor = next(t for t in theorem.tensors if t.name == str(claim.row.base))
    return getattr(tensor.domain, "low", -3.0), getattr(tensor.domain, "high", 3.0)


def _largest_score(theorem, claim) -> float:
    low, high = _score_range(theorem, claim)
    return max(abs(low), abs(high)) + (high - low) / GRID_STEPS


def _reachable(points: np.ndarray, claim, magnitude: float, dtype: str) -> np.ndarray:
    """The points whose temperature keeps S/T within a quarter of the dtype's largest finite
    value: a smaller T overflows the format itself, which says nothing about the limit."""
    largest = float(np.finfo(np.float32 if dtype == "bfloat16" else dtype).max)
    return points[_sequence(claim, points) >= 4 * magnitude / largest]


def _row_bound(claim, scores: np.ndarray, temperature: np.ndarray) -> np.ndarray:
    """The stated rate per row of ``scores`` (instances, ..., n) at each temperature."""
    n = scores.shape[-1]
    top = scores.max(axis=-1)
    spread = top - scores.min(axis=-1)
    below = np.where(scores < top[..., None], scores, -np.inf).max(axis=-1)
    gap = np.where(np.isfinite(below), top - below, np.inf)
    t = temperature.reshape(-1, *([1] * (scores.ndim - 2)))
    if claim.at_infinity:
        return np.where(spread / t <= 1, 2 * spread / t, np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        decay = np.where(np.isfinite(gap), np.exp(-gap / t), 0.0)
        return n * (spread / t + 2 + 2 * math.log(n)) * decay


def _check_rows(theorem, row, dtype, device, mode, rng, points):
    claim = theorem.claim
    eps = epsilon(row, dtype)
    temperatures = _sequence(claim, points)
    failed, counterexample, instances, worst = 0, None, 0, 0.0
    out = theorem.free_indices
    for sizes in _shapes(theorem, claim, rng):
        scores = _draw_scores(theorem, claim, sizes, rng)
        batch = np.repeat(scores, len(temperatures), axis=0)
        temperature = np.tile(temperatures, len(scores))
        arrays = {str(claim.row.base): batch, str(claim.variable): temperature}
        arrays.update(_other_scalars(theorem, claim, len(batch), rng))
        found = evaluate(theorem, claim.expr, out, row, dtype, device, mode, arrays,
                         {**sizes, "batch": len(batch)})
        limit = row_function(theorem, claim, claim.value, out)(batch, sizes)
        error = np.abs(found - limit)
        allowed = _row_bound(claim, batch, temperature)
        allowed = _broadcast_bound(allowed, error) + _rounding(eps, limit, scores.shape[-1])
        bad = ~(error <= allowed)  # NaN fails
        instances += len(scores)
        worst = max(worst, _final_error(error, temperature == temperatures[-1]))
        by_instance = bad.reshape(len(scores), len(temperatures), -1)
        failed += int(by_instance.any(axis=(1, 2)).sum())
        if counterexample is None and bad.any():
            index = tuple(np.argwhere(bad)[-1])  # at the smallest distance to the point
            counterexample = _describe_row(claim, sizes, batch, temperature, found, limit,
                                           allowed, index)
    return failed, counterexample, instances, worst


def _broadcast_bound(bound: np.ndarray, error: np.ndarray) -> np.ndarray:
    """The bound per row (batch, leading axes) against the error (batch, leading, [row])."""
    while bound.ndim < error.ndim:
        bound = bound[..., None]
    return bound


def _describe_row(claim, sizes, batch, temperature, found, limit, allowed, index) -> dict:
    instance = index[0]
    leading = index[1:len(claim.row.indices)]
    scores = batch[instance][leading] if leading else batch[instance]
    return {
        "sizes": sizes,
        "entry": ", ".join(map(str, index[1:])),
        str(claim.variable): f"{temperature[instance]:.6g}",
        "row": "(" + ", ".join(f"{x:g}" for x in np.ravel(scores)) + ")",
        "lhs": f"{found[index]:.6g}",
        "limit": f"{limit[index]:.6g}",
        "allowed": f"{allowed[index]:.3g}",
    }


def _other_scalars(theorem, claim, batch: int, rng) -> dict:
    """Scalars other than the limit variable, drawn from their domains."""
    drawn = {}
    for scalar in theorem.scalars:
        if scalar.symbol == claim.variable:
            continue
        drawn[scalar.name] = draw_uniform(scalar.domain, (batch,), rng)
    return drawn


# -- a limit in scalars only ------------------------------------------------------------------


def _check_scalar(theorem, row, dtype, device, mode, rng, points):
    claim = theorem.claim
    values = _sequence(claim, points)
    repeats = 128  # instances, each along the whole sequence
    variable = np.tile(values, repeats)
    arrays = {str(claim.variable): variable}
    arrays.update(_other_scalars(theorem, claim, len(variable), rng))
    sizes = {"batch": len(variable)}
    found = evaluate(theorem, claim.expr, (), row, dtype, device, mode, arrays, sizes)
    scalars = {s.symbol: arrays[s.name] for s in theorem.scalars}
    limit = _lambdified(claim.value, scalars)
    rate = _lambdified(claim.rate, scalars)
    error = np.abs(found - limit)
    allowed = rate + _rounding(epsilon(row, dtype), limit, 1)
    bad = ~(error <= allowed)
    counterexample = None
    for k in np.flatnonzero(bad)[-1:]:
        counterexample = {str(claim.variable): f"{variable[k]:.6g}", "lhs": f"{found[k]:.6g}",
                          "limit": f"{limit[k]:.6g}", "allowed": f"{allowed[k]:.3g}"}
    worst = _final_error(error, variable == values[-1])
    return int(bad.reshape(repeats, -1).any(axis=1).sum()), counterexample, repeats, worst


def _final_error(error: np.ndarray, last: np.ndarray) -> float:
    """The largest finite error at the sequence's last point: what max_error_ulps reports."""
    final = error[last]
    return float(np.max(np.where(np.isfinite(final), final, 0.0), initial=0.0))


def _lambdified(expr, scalars: dict) -> np.ndarray:
    symbols = sorted(scalars, key=str)
    function = sp.lambdify(symbols, expr, "numpy")
    with np.errstate(all="ignore"):
        value = function(*(scalars[s] for s in symbols))
    return np.broadcast_to(np.asarray(value, dtype=float), next(iter(scalars.values())).shape)
