"""Numeric route of ``Limit``: convergence along a sequence of the limit variable, at a rate.

For a limit over a row of scores, rows are drawn on a grid of 13 values evenly spaced over the
tensor's declared range (so ties are frequent and distinct entries differ by at least a grid
step), 48 rows a batch, each batch's sizes and seed drawn (and a failing one shrunk) by the
driver's ``check_structures``, then every size at its largest and its smallest where none
failed. Each row is evaluated at every point of the sequence T = 2^0, 2^-1, …, 2^-11 (limit
at 0; a format whose largest value S/T would pass stops earlier) or T = 2^0, …, 2^15 (limit
at ∞; float16 reaches 65504). The expression is evaluated on the backend in the dtype; the
claimed limit exactly from the row, in float64. At every point the error must stay within the
rate the kind states, plus rounding:

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
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import sympy as sp

from attnproof.symbolic import Limit

from ..route import Evidence, Judged, StructureRoute, check_structures, numeric_route
from ._evaluate import draw_uniform, evaluate
from ._row_values import row_function

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Where, strategies

# the sequence: exponents k of 2^-k (limit at 0) or 2^k (limit at ∞)
TOWARD_ZERO = tuple(range(0, 12))
TOWARD_INFINITY = tuple(range(0, 16))
ROWS_PER_SHAPE = 48  # rows of scores per structure
SCALAR_INSTANCES = 128  # a limit in scalars: instances per structure, each along the sequence
GRID_STEPS = 12  # rows take 13 values evenly spaced over the tensor's range


@numeric_route(Limit)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype = where.row, where.dtype
    claim = cast(Limit, theorem.claim)  # the route of Limit: the driver's lookup says so
    points = _points(claim)
    if claim.row is not None:
        points = _reachable(points, claim, _largest_score(theorem, claim), dtype)
    walk: _RowWalk | _ScalarWalk = (_RowWalk if claim.row is not None
                                    else _ScalarWalk)(theorem, where, points)

    eps = row.measured_as(dtype).epsilon
    # the error at the sequence's last point: rounding alone at T = 2^-11 (every rate at 0 is
    # below rounding there), rounding plus what the rate still allows elsewhere
    direction = "2^-" if not claim.at_infinity else "2^"
    sequence = f"{claim.variable} = 2^0, {direction}1 … {direction}{points[-1]}"
    if len(points) < len(_points(claim)):
        sequence += f" (S/T beyond that overflows {dtype})"
    # the row's smallest and largest sizes run too where no drawn one failed: ties and a
    # single entry are what a row-size-dependent rate misses
    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=walk.run,
        judge=lambda outcome: Judged(outcome.instances, worst_ulps=outcome.worst / eps,
                                     fails=outcome.failed > 0),
        # a failing run names its counterexample
        counterexample=lambda _, outcome: cast("dict[str, Any]", outcome.counterexample),
        failure_reason=lambda _, __, outcome: (
            f"convergence along {sequence}: {outcome.failed} instance(s) outside the stated "
            f"rate ({_rate_text(claim)}) plus rounding"),
        passed=lambda seen: (
            f"convergence along {sequence} on {seen.instances} instances ({seen.examples} "
            f"batches, their sizes and seeds drawn and shrunk by Hypothesis): every error "
            f"within {_rate_text(claim)} plus 8 ε (1 + |L|)(1 + log n)"),
        extremes=claim.row is not None))


class _Outcome(NamedTuple):
    failed: int  # instances outside the rate
    counterexample: dict[str, object] | None
    instances: int
    worst: float  # the largest finite error at the sequence's last point


def _points(claim: Limit) -> np.ndarray:
    exponents = TOWARD_INFINITY if claim.at_infinity else TOWARD_ZERO
    return np.array(exponents)


def _sequence(claim: Limit, points: np.ndarray) -> np.ndarray:
    powers = 2.0 ** points.astype(float)
    return float(claim.point) + (1 / powers) if not claim.at_infinity else powers


def _rate_text(claim: Limit) -> str:
    if claim.row is None:
        return f"|f − L| ≤ {claim.rate}"
    if claim.at_infinity:
        return "|f − L| ≤ 2 r/T"
    return "|f − L| ≤ n (r/T + 2 + 2 log n) e^{−g/T}"


def _rounding(eps: float, limit: np.ndarray, size: int) -> np.ndarray:
    return 8 * eps * (1 + np.abs(limit)) * (1 + math.log(size))


# -- a limit over rows of scores ------------------------------------------------------------


def _draw_scores(theorem: Theorem, claim: Limit, sizes: dict[str, int],
                 rng: np.random.Generator) -> np.ndarray:
    """Rows on a grid of GRID_STEPS + 1 values spanning the tensor's declared range, so ties
    are frequent and distinct entries differ by at least one grid step."""
    row = cast("sp.Indexed", claim.row)  # a limit over a row of scores: the only one drawn so
    tensor = next(t for t in theorem.tensors if t.name == str(row.base))
    low, high = _score_range(theorem, claim)
    shape = (ROWS_PER_SHAPE, *(sizes[d.name] for d in tensor.dims))
    step = (high - low) / GRID_STEPS
    scores = low + step * rng.integers(0, GRID_STEPS + 1, size=shape)
    if claim.unique_maximum:  # raise the first maximum of each row by half a grid step
        flat = scores.reshape(-1, shape[-1])
        flat[np.arange(len(flat)), flat.argmax(axis=1)] += step / 2
        scores = flat.reshape(shape)
    return scores


def _score_range(theorem: Theorem, claim: Limit) -> tuple[float, float]:
    row = cast("sp.Indexed", claim.row)  # a limit over a row of scores: the only one drawn so
    tensor = next(t for t in theorem.tensors if t.name == str(row.base))
    return getattr(tensor.domain, "low", -3.0), getattr(tensor.domain, "high", 3.0)


def _largest_score(theorem: Theorem, claim: Limit) -> float:
    low, high = _score_range(theorem, claim)
    return max(abs(low), abs(high)) + (high - low) / GRID_STEPS


def _reachable(points: np.ndarray, claim: Limit, magnitude: float, dtype: Format) -> np.ndarray:
    """The points whose temperature keeps S/T within a quarter of the dtype's largest finite
    value: a smaller T overflows the format itself, which says nothing about the limit."""
    largest = dtype.largest
    return points[_sequence(claim, points) >= 4 * magnitude / largest]


def _row_bound(claim: Limit, scores: np.ndarray, temperature: np.ndarray) -> np.ndarray:
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


class _Walk:
    """A claim evaluated along its sequence (``sequence``: the limit variable's values) on one
    batch per structure; ``run(structure)`` gives the batch's :class:`_Outcome`."""

    def __init__(self, theorem: Theorem, where: Where, points: np.ndarray) -> None:
        self.theorem, self.where = theorem, where
        self.claim = cast(Limit, theorem.claim)  # the route of Limit: the driver's lookup
        self.sequence = _sequence(self.claim, points)


class _RowWalk(_Walk):
    """One batch of ROWS_PER_SHAPE rows of scores per structure, each row evaluated at every
    point of the sequence."""

    def run(self, structure: strategies.Structure) -> _Outcome:
        theorem, claim, temperatures = self.theorem, self.claim, self.sequence
        where = self.where
        row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
        sizes = structure.size_map
        rng = np.random.default_rng(structure.seed)
        scores = _draw_scores(theorem, claim, sizes, rng)
        batch = np.repeat(scores, len(temperatures), axis=0)
        temperature = np.tile(temperatures, len(scores))
        scored = cast("sp.Indexed", claim.row)  # a row walk is a limit over a row of scores
        arrays = {str(scored.base): batch, str(claim.variable): temperature}
        arrays.update(_other_scalars(theorem, claim, len(batch), rng))
        out = theorem.free_indices
        found = evaluate(theorem, claim.expr, out, row, dtype, device, mode, arrays,
                         {**sizes, "batch": len(batch)})
        limit = row_function(theorem, claim, claim.value, out)(batch, sizes)
        error = np.abs(found - limit)
        allowed = _row_bound(claim, batch, temperature)
        eps = row.measured_as(dtype).epsilon
        allowed = _broadcast_bound(allowed, error) + _rounding(eps, limit, scores.shape[-1])
        bad = ~(error <= allowed)  # NaN fails
        by_instance = bad.reshape(len(scores), len(temperatures), -1)
        counterexample = None
        if bad.any():
            index = tuple(np.argwhere(bad)[-1])  # at the smallest distance to the point
            counterexample = _describe_row(claim, sizes, batch, temperature, found, limit,
                                           allowed, index)
        return _Outcome(int(by_instance.any(axis=(1, 2)).sum()), counterexample, len(scores),
                        _final_error(error, temperature == temperatures[-1]))


def _broadcast_bound(bound: np.ndarray, error: np.ndarray) -> np.ndarray:
    """The bound per row (batch, leading axes) against the error (batch, leading, [row])."""
    while bound.ndim < error.ndim:
        bound = bound[..., None]
    return bound


def _describe_row(claim: Limit, sizes: dict[str, int], batch: np.ndarray,
                  temperature: np.ndarray, found: np.ndarray, limit: np.ndarray,
                  allowed: np.ndarray, index: tuple[int, ...]) -> dict[str, object]:
    instance = index[0]
    row = cast("sp.Indexed", claim.row)  # a row's failure: a limit over a row of scores
    leading = index[1:len(row.indices)]
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


def _other_scalars(theorem: Theorem, claim: Limit, batch: int,
                   rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Scalars other than the limit variable, drawn from their domains."""
    drawn = {}
    for scalar in theorem.scalars:
        if scalar.symbol == claim.variable:
            continue
        drawn[scalar.name] = draw_uniform(scalar.domain, (batch,), rng)
    return drawn


# -- a limit in scalars only ------------------------------------------------------------------


class _ScalarWalk(_Walk):
    """SCALAR_INSTANCES instances per structure, each along the whole sequence."""

    def run(self, structure: strategies.Structure) -> _Outcome:
        theorem, claim, values = self.theorem, self.claim, self.sequence
        where = self.where
        row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
        variable = np.tile(values, SCALAR_INSTANCES)
        arrays = {str(claim.variable): variable}
        arrays.update(_other_scalars(theorem, claim, len(variable),
                                     np.random.default_rng(structure.seed)))
        sizes = {"batch": len(variable)}
        found = evaluate(theorem, claim.expr, (), row, dtype, device, mode, arrays, sizes)
        scalars = {s.symbol: arrays[s.name] for s in theorem.scalars}
        limit = _lambdified(claim.value, scalars)
        rate = _lambdified(claim.rate, scalars)
        error = np.abs(found - limit)
        allowed = rate + _rounding(row.measured_as(dtype).epsilon, limit, 1)
        bad = ~(error <= allowed)
        counterexample: dict[str, object] | None = None
        for k in np.flatnonzero(bad)[-1:]:
            counterexample = {str(claim.variable): f"{variable[k]:.6g}",
                              "lhs": f"{found[k]:.6g}", "limit": f"{limit[k]:.6g}",
                              "allowed": f"{allowed[k]:.3g}"}
        return _Outcome(int(bad.reshape(SCALAR_INSTANCES, -1).any(axis=1).sum()),
                        counterexample, SCALAR_INSTANCES,
                        _final_error(error, variable == values[-1]))


def _final_error(error: np.ndarray, last: np.ndarray) -> float:
    """The largest finite error at the sequence's last point: what max_error_ulps reports."""
    final = error[last]
    return float(np.max(np.where(np.isfinite(final), final, 0.0), initial=0.0))


def _lambdified(expr: sp.Expr, scalars: dict[sp.Symbol, np.ndarray]) -> np.ndarray:
    symbols = sorted(scalars, key=str)
    function = sp.lambdify(symbols, expr, "numpy")
    with np.errstate(all="ignore"):
        value = function(*(scalars[s] for s in symbols))
    return np.broadcast_to(np.asarray(value, dtype=float), next(iter(scalars.values())).shape)
