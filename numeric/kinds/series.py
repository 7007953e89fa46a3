"""Numeric route of ``Series``: |lhs − rhs| / η^(k+1) stays bounded as η → 0.

Every instance (the other inputs drawn from their domains) is evaluated on the backend at
η = 2^-1, 2^-2, …, 2^-K. If lhs − rhs = O(η^(k+1)), the ratio |lhs − rhs| / η^(k+1) tends to the
coefficient of η^(k+1); if a coefficient of order ≤ k is nonzero the ratio at least doubles at
each halving of η. The stated rate: at every η from 2^-4 on, the ratio stays within twice its
largest value at η = 2^-1 … 2^-3, plus rounding 32 ε (|lhs| + |rhs| + 1) / η^(k+1). K is the
largest exponent at which that rounding term stays below 10^-3, at least 6 and at most 16: a
claim false at one order then exceeds the rate by a factor 2^(K−3) / 2 ≥ 4.
"""

from __future__ import annotations

import math

import numpy as np

from attnproof.symbolic import Series, Simplex

from ..route import Evidence, Failure, numeric_route
from ._evaluate import draw_uniform, epsilon, evaluate

INSTANCES = 128
EARLY = 3  # the ratio's reference: its largest value over η = 2^-1 … 2^-EARLY
GROWTH = 2.0


@numeric_route(Series)
def check(theorem, where, profile, seed=None) -> Evidence:
    row, dtype, device, mode = where
    claim = theorem.claim
    rng = np.random.default_rng(0 if seed is None else seed)
    eps = epsilon(row, dtype)
    exponents = np.arange(1, _last_exponent(eps, claim.order) + 1)
    steps = 2.0 ** -exponents.astype(float)
    sizes = _sizes(theorem, rng)
    arrays = _draw(theorem, claim, sizes, rng)
    batch = {k: np.repeat(v, len(steps), axis=0) for k, v in arrays.items()}
    batch[str(claim.variable)] = np.tile(steps, INSTANCES)
    shape = {**sizes, "batch": INSTANCES * len(steps)}
    out = theorem.free_indices
    lhs = evaluate(theorem, claim.lhs, out, row, dtype, device, mode, batch, shape)
    rhs = evaluate(theorem, claim.rhs, out, row, dtype, device, mode, batch, shape)
    power = claim.order + 1
    per_step = (INSTANCES, len(steps), -1)
    ratio = (np.abs(lhs - rhs).reshape(per_step) / steps[None, :, None] ** power)
    rounding = (32 * eps * (np.abs(lhs) + np.abs(rhs) + 1)).reshape(per_step)
    rounding = rounding / steps[None, :, None] ** power
    reference = np.nanmax(ratio[:, :EARLY], axis=1, keepdims=True)
    allowed = GROWTH * reference + rounding
    bad = ~(ratio[:, EARLY:] <= allowed[:, EARLY:])  # NaN fails
    finite = ratio[:, -1][np.isfinite(ratio[:, -1])]
    # |lhs − rhs| at the smallest η: the series' remainder plus rounding, in ulps of the dtype
    seen = Evidence(examples=1, instances=INSTANCES, worst_ulps=float(np.max(
        np.abs(lhs - rhs).reshape(per_step)[:, -1], initial=0.0)) / eps)
    sequence = f"{claim.variable} = 2^-1 … 2^-{exponents[-1]}"
    rate = (f"|lhs − rhs| / {claim.variable}^{power} within {GROWTH:g}× its largest value at "
            f"{claim.variable} = 2^-1 … 2^-{EARLY}, plus 32 ε (|lhs| + |rhs| + 1) / "
            f"{claim.variable}^{power}")
    if bad.any():
        instance, step, entry = np.argwhere(bad)[-1]
        step += EARLY
        seen.failure = Failure(
            _describe(theorem, claim, arrays, instance, steps[step],
                      lhs.reshape(per_step)[instance, step, entry],
                      rhs.reshape(per_step)[instance, step, entry],
                      ratio[instance, step, entry], allowed[instance, step, entry]),
            f"along {sequence}: {int(bad.any(axis=(1, 2)).sum())} instance(s) whose ratio grows "
            f"past the stated rate ({rate})")
        return seen
    limit = float(np.max(finite, initial=0.0))
    seen.description = (f"along {sequence} on {INSTANCES} instances: {rate}; the largest ratio "
                        f"at the last step is {limit:.3g}")
    return seen


def _last_exponent(eps: float, order: int) -> int:
    """The largest K with 32 ε / 2^(-K (order + 1)) ≤ 10^-3, clamped to [6, 16]."""
    exponent = math.floor(math.log2(1e-3 / (32 * eps)) / (order + 1))
    return max(6, min(16, exponent))


def _sizes(theorem, rng) -> dict:
    return {d.name: int(rng.integers(d.sizes.low, d.sizes.high + 1)) for d in theorem.dims}


def _draw(theorem, claim, sizes: dict, rng) -> dict:
    """One value per instance for every input but the series variable, from its domain."""
    arrays = {}
    for scalar in theorem.scalars:
        if scalar.symbol != claim.variable:
            arrays[scalar.name] = _uniform(scalar.domain, (INSTANCES,), rng)
    for tensor in theorem.tensors:
        shape = (INSTANCES, *(sizes[d.name] for d in tensor.dims))
        values = _uniform(tensor.domain, shape, rng)
        if isinstance(tensor.domain, Simplex):
            values = values / values.sum(axis=-1, keepdims=True)
        arrays[tensor.name] = values
    return arrays


def _uniform(domain, shape, rng) -> np.ndarray:
    if isinstance(domain, Simplex):
        return rng.uniform(0.05, 1.0, size=shape)
    return draw_uniform(domain, shape, rng)


def _describe(theorem, claim, arrays, instance, step, lhs, rhs, ratio, allowed) -> dict:
    values = {name: np.round(np.asarray(v[instance]), 6).tolist() for name, v in arrays.items()}
    return {
        "values": {k: str(v) for k, v in values.items()},
        str(claim.variable): f"{step:.6g}",
        "lhs": f"{lhs:.9g}",
        "rhs": f"{rhs:.9g}",
        "ratio": f"{ratio:.6g}",
        "allowed": f"{allowed:.6g}",
    }
