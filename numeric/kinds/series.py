"""Numeric route of ``Series``: |lhs − rhs| / η^(k+1) stays bounded as η → 0.

Batches of instances (the other inputs drawn from their domains; each batch's sizes and seed
drawn, and a failing one shrunk, by the driver's ``check_structures``) are evaluated at
η = 2^-1, 2^-2, …, 2^-K. If lhs − rhs = O(η^(k+1)), the ratio |lhs − rhs| / η^(k+1) tends to the
coefficient of η^(k+1); if a coefficient of order ≤ k is nonzero the ratio at least doubles at
each halving of η. The stated rate: at every η from 2^-4 on, the ratio stays within twice its
largest value at η = 2^-1 … 2^-3, plus rounding 32 ε (|lhs| + |rhs| + 1) / η^(k+1). K is the
largest exponent at which that rounding term stays below 10^-3, at least 6 and at most 16: a
claim false at one order then exceeds the rate by a factor 2^(K−3) / 2 ≥ 4.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np

from attnproof.symbolic import Series, Simplex

from ..route import Evidence, Judged, StructureRoute, check_structures, numeric_route
from ._evaluate import draw_uniform, evaluate

if TYPE_CHECKING:
    from attnproof.symbolic import Domain, Theorem

    from .. import Profile
    from ..route import Where, strategies

INSTANCES = 128
EARLY = 3  # the ratio's reference: its largest value over η = 2^-1 … 2^-EARLY
GROWTH = 2.0


@numeric_route(Series)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    claim = cast(Series, theorem.claim)  # the route of Series: the driver's lookup says so
    walk = _Walk(theorem, where)
    power = claim.order + 1
    sequence = f"{claim.variable} = 2^-1 … 2^-{walk.exponents[-1]}"
    rate = (f"|lhs − rhs| / {claim.variable}^{power} within {GROWTH:g}× its largest value at "
            f"{claim.variable} = 2^-1 … 2^-{EARLY}, plus 32 ε (|lhs| + |rhs| + 1) / "
            f"{claim.variable}^{power}")

    def counterexample(structure: strategies.Structure, outcome: _Outcome) -> dict[str, Any]:
        instance, step, entry = np.argwhere(outcome.bad)[-1]
        return _describe(claim, structure, outcome, instance, step + EARLY, entry, walk.steps)

    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=walk.run,
        judge=lambda outcome: Judged(INSTANCES, worst_ulps=outcome.last_error / walk.eps,
                                     fails=bool(outcome.bad.any())),
        counterexample=counterexample,
        failure_reason=lambda _, __, outcome: (
            f"along {sequence}: {int(outcome.bad.any(axis=(1, 2)).sum())} instance(s) whose "
            f"ratio grows past the stated rate ({rate})"),
        passed=lambda seen: (
            f"along {sequence} on {seen.instances} instances ({seen.examples} batches of "
            f"{INSTANCES}, their sizes and seeds drawn and shrunk by Hypothesis): {rate}; the "
            f"largest ratio at the last step is {walk.largest_last_ratio:.3g}")))


class _Outcome(NamedTuple):
    arrays: dict[str, np.ndarray]
    lhs: np.ndarray  # (INSTANCES, steps, entries)
    rhs: np.ndarray
    ratio: np.ndarray
    allowed: np.ndarray
    bad: np.ndarray  # (INSTANCES, steps after EARLY, entries)
    last_error: float  # the largest |lhs − rhs| at the smallest η


class _Walk:
    """One batch of INSTANCES instances per structure, each walked along η = 2^-1 … 2^-K."""

    def __init__(self, theorem: Theorem, where: Where) -> None:
        self.theorem, self.where = theorem, where
        self.claim = cast(Series, theorem.claim)  # the route of Series: the driver's lookup
        self.eps = where.row.measured_as(where.dtype).epsilon
        self.exponents = np.arange(1, _last_exponent(self.eps, self.claim.order) + 1)
        self.steps = 2.0 ** -self.exponents.astype(float)
        self.largest_last_ratio = 0.0  # the largest finite ratio at the last step, every run


    def run(self, structure: strategies.Structure) -> _Outcome:
        theorem, claim, steps = self.theorem, self.claim, self.steps
        where = self.where
        row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
        sizes = structure.size_map
        arrays = _draw(theorem, claim, sizes, np.random.default_rng(structure.seed))
        batch = {k: np.repeat(v, len(steps), axis=0) for k, v in arrays.items()}
        batch[str(claim.variable)] = np.tile(steps, INSTANCES)
        shape = {**sizes, "batch": INSTANCES * len(steps)}
        out = theorem.free_indices
        lhs = evaluate(theorem, claim.lhs, out, row, dtype, device, mode, batch, shape)
        rhs = evaluate(theorem, claim.rhs, out, row, dtype, device, mode, batch, shape)
        power = claim.order + 1
        per_step = (INSTANCES, len(steps), -1)
        lhs, rhs = lhs.reshape(per_step), rhs.reshape(per_step)
        with np.errstate(all="ignore"):
            ratio = np.abs(lhs - rhs) / steps[None, :, None] ** power
            rounding = 32 * self.eps * (np.abs(lhs) + np.abs(rhs) + 1)
            rounding = rounding / steps[None, :, None] ** power
            reference = np.nanmax(ratio[:, :EARLY], axis=1, keepdims=True)
        allowed = GROWTH * reference + rounding
        bad = ~(ratio[:, EARLY:] <= allowed[:, EARLY:])  # NaN fails
        # |lhs − rhs| at the smallest η: the series' remainder plus rounding
        last_error = float(np.max(np.abs(lhs - rhs)[:, -1], initial=0.0))
        last = ratio[:, -1][np.isfinite(ratio[:, -1])]
        self.largest_last_ratio = max(self.largest_last_ratio, float(np.max(last, initial=0.0)))
        return _Outcome(arrays, lhs, rhs, ratio, allowed, bad, last_error)


def _last_exponent(eps: float, order: int) -> int:
    """The largest K with 32 ε / 2^(-K (order + 1)) ≤ 10^-3, clamped to [6, 16]."""
    exponent = math.floor(math.log2(1e-3 / (32 * eps)) / (order + 1))
    return max(6, min(16, exponent))


def _draw(theorem: Theorem, claim: Series, sizes: dict[str, int],
          rng: np.random.Generator) -> dict[str, np.ndarray]:
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


def _uniform(domain: Domain, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if isinstance(domain, Simplex):
        return rng.uniform(0.05, 1.0, size=shape)
    return draw_uniform(domain, shape, rng)


def _describe(claim: Series, structure: strategies.Structure, outcome: _Outcome,
              instance: int, step: int, entry: int, steps: np.ndarray) -> dict[str, object]:
    values = {name: np.round(np.asarray(v[instance]), 6).tolist()
              for name, v in outcome.arrays.items()}
    sizes = {"sizes": {k: str(v) for k, v in structure.size_map.items()}} \
        if structure.size_map else {}
    return {
        **sizes,
        "values": {k: str(v) for k, v in values.items()},
        str(claim.variable): f"{steps[step]:.6g}",
        "lhs": f"{outcome.lhs[instance, step, entry]:.9g}",
        "rhs": f"{outcome.rhs[instance, step, entry]:.9g}",
        "ratio": f"{outcome.ratio[instance, step, entry]:.6g}",
        "allowed": f"{outcome.allowed[instance, step, entry]:.6g}",
    }
