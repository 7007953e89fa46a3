"""Numeric route of statistical claims: Monte Carlo with a fixed seed and a stated interval.

At a few sizes of every dimension (its smallest, 2 and its largest), the fixed inputs drawn
once from their domains, ``SAMPLES`` independent draws of every random tensor (NumPy's PCG64
with a fixed seed, float64, then rounded to the record's dtype and placed on its backend and
device) go through the statistic, compiled as any statement is (``_compiler``), in one batched
call on the backend. The sample mean, or the
sample variance, of each entry of the statistic is then compared in float64 with the claimed
value at those sizes: the record fails when the claimed value lies outside the 99.9% interval
estimate ± 3.29 standard errors (for the variance the standard error is √((m₄ − s⁴)/N), m₄
the sample fourth central moment). With a fixed seed the verdict is reproducible; a true claim
falls outside its interval with probability 0.1% per entry checked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic.kinds.statistical import Expectation, Variance, at_sizes

from ..route import (
    Evidence,
    Failure,
    Passed,
    compile_expression,
    error_ulps,
    numeric_route,
    numpy_place,
)
from ._evaluate import TargetedStatements, draw_uniform, run_compiled

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem
    from attnproof.symbolic.kinds.statistical import Law

    from .. import Profile
    from ..route import Backend, Where

# the claims this route checks
Statistic = Expectation | Variance

SAMPLES = 20_000
Z_999 = 3.2905  # two-sided 99.9% quantile of the standard normal
BASE_SEED = 20261123
ENTRIES_CHECKED = 4  # per size: the statistic's first entries (they are exchangeable)


@numeric_route(Expectation, Variance)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    row, dtype, device, mode = where.row, where.dtype, where.device, where.mode
    claim = cast(Statistic, theorem.claim)  # the route of both: the driver's lookup says so
    xp = row.namespace(row.load(), dtype)
    statistic = theorem.expand(claim.statistic)
    out = theorem.free_indices
    compiled = compile_expression(statistic, out, inputs=theorem.inputs,
                                  definitions=theorem.definitions, target=row.target)
    rng = np.random.default_rng(BASE_SEED if seed is None else seed)
    checked, worst = 0, 0.0
    failure: dict[str, object] | None = None
    for sizes in _size_choices(theorem):
        samples = _samples(theorem, claim.law, sizes, rng)
        shapes = {**sizes, "batch": SAMPLES}
        # every sample of the statistic, in one batched call on the backend: (N, entries)
        values = run_compiled(row, xp, compiled, samples, shapes, dtype, device, mode,
                              theorem.name).reshape(SAMPLES, -1)
        if not np.all(np.isfinite(values)):
            failure = {"sizes": sizes, "values": "a sample of the statistic is not finite"}
            break
        worst = max(worst, _rounding_ulps(theorem, row, dtype, statistic, out, samples, shapes,
                                          values))
        failure = _compare(theorem, claim, sizes, values, out, samples)
        if failure is not None and claim.random:
            failure["fixed"] = {x.name: np.asarray(samples[x.name][0]).round(6).tolist()
                                for x in theorem.inputs if x not in claim.random}
        checked += 1
        if failure is not None:
            break
    fixed = ("; the other inputs fixed, drawn once per size from their domains"
             if claim.random else "")
    description = (f"Monte Carlo, {SAMPLES} samples per size (seeded PCG64, {_drawn(claim.law)}"
                   f"{fixed}), sizes {_size_text(theorem)}: the claimed "
                   f"{'mean' if isinstance(claim, Expectation) else 'variance'} inside the "
                   "99.9% interval estimate ± 3.29 standard errors of the first "
                   f"{ENTRIES_CHECKED} entries")
    return Evidence(examples=checked, instances=checked * SAMPLES, worst_ulps=worst,
                    outcome=Passed(description) if failure is None else Failure(failure,
                                                                                description))


def _rounding_ulps(theorem: Theorem, row: Backend, dtype: Format, statistic: sp.Expr,
                   out: Sequence[sp.Idx], samples: dict[str, np.ndarray],
                   shapes: dict[str, int], values: np.ndarray) -> float:
    """The backend's rounding: the worst distance of its samples of the statistic from NumPy's
    float64 evaluation on the same (dtype-rounded) inputs, in ulps of the dtype at the
    statistic's abs-scale. Only a measurement: the verdict is the interval's."""
    rounded = {name: numpy_place(np, value, dtype.storage, None).astype(np.float64)
               for name, value in samples.items()}
    kwargs: TargetedStatements = dict(inputs=theorem.inputs, definitions=theorem.definitions,
                                      target="numpy")
    reference = compile_expression(statistic, out, **kwargs)(np, rounded, shapes)
    scale = compile_expression(statistic, out, abs_scale=True, **kwargs)(np, rounded, shapes)
    ulps = error_ulps(values, np.reshape(reference, (SAMPLES, -1)),
                      np.reshape(scale, (SAMPLES, -1)), row.measured_as(dtype))
    return float(np.max(ulps))


def _drawn(law: Law) -> str:
    if law.sampler == "sign":
        return "±1 entries"
    drawn = f"Gaussian entries, mean {law.mean}, variance {law.variance}"
    return drawn + (": the claim covers every law with these moments" if law.name == "any" else "")


def _size_choices(theorem: Theorem) -> list[dict[str, int]]:
    """Every dimension at its smallest size, at 2, and at its largest, together."""
    choices = []
    for pick in (lambda s: s.low, lambda s: min(max(2, s.low), s.high), lambda s: s.high):
        sizes = {d.name: pick(d.sizes) for d in theorem.dims}
        if sizes not in choices:
            choices.append(sizes)
    return choices


def _size_text(theorem: Theorem) -> str:
    return "; ".join(", ".join(f"{k} = {v}" for k, v in s.items()) for s in _size_choices(theorem))


def _samples(theorem: Theorem, law: Law, sizes: dict[str, int],
             rng: np.random.Generator) -> dict[str, np.ndarray]:
    """SAMPLES draws of every random tensor; each fixed input (a tensor not in ``random=``, a
    scalar) drawn once from its domain and the same in every sample."""
    # the route of the statistical claims: the driver's lookup says so
    random = {t.name for t in cast(Statistic, theorem.claim).random_tensors(theorem)}
    found = {}
    for item in theorem.inputs:
        if item.name in random:
            continue
        shape = tuple(sizes[d.name] for d in getattr(item, "dims", ()))
        fixed = draw_uniform(item.domain, (1, *shape), rng)
        found[item.name] = np.broadcast_to(fixed, (SAMPLES, *shape)).copy()
    for tensor in theorem.tensors:
        if tensor.name not in random:
            continue
        shape = (SAMPLES, *(sizes[d.name] for d in tensor.dims))
        if law.sampler == "sign":
            draw = rng.choice(np.array([-1.0, 1.0]), size=shape)
        else:
            draw = rng.normal(float(law.mean), math.sqrt(float(law.variance)), size=shape)
        found[tensor.name] = draw
    return found


def _compare(theorem: Theorem, claim: Statistic, sizes: dict[str, int], values: np.ndarray,
             out: Sequence[sp.Idx], samples: dict[str, np.ndarray]) -> dict[str, object] | None:
    for position in range(min(ENTRIES_CHECKED, values.shape[1])):
        indices = _index_values(out, sizes, position)
        value = at_sizes(theorem.expand(claim.value), sizes, indices)
        claimed = float(sp.N(_at_fixed_inputs(value, samples)))
        estimate, error = _estimate(claim, values[:, position])
        low, high = estimate - Z_999 * error, estimate + Z_999 * error
        if not low <= claimed <= high:
            return {"sizes": sizes, "indices": indices, "law": claim.law.name,
                    "samples": SAMPLES, "estimate": f"{estimate:.6g}",
                    "interval_99.9%": f"[{low:.6g}, {high:.6g}]", "claimed": f"{claimed:.6g}"}
    return None


def _at_fixed_inputs(value: sp.Expr, samples: dict[str, np.ndarray]) -> sp.Expr:
    """The claimed value at the fixed inputs' drawn values (the first sample's: all agree)."""
    entries = {x: float(samples[str(x.base)][(0, *map(int, x.indices))])
               for x in value.atoms(sp.Indexed)}
    symbols = {s: float(samples[s.name][0]) for s in value.free_symbols  # scalars only
               if getattr(s, "name", None) in samples and np.ndim(samples[s.name][0]) == 0}
    return value.xreplace({**entries, **symbols})


def _index_values(out: Sequence[sp.Idx], sizes: dict[str, int], position: int) -> dict[str, int]:
    extents = [sizes.get(str(i.upper + 1), 1) for i in out]
    values = np.unravel_index(position, extents) if extents else ()
    return {str(i.label): int(v) for i, v in zip(out, values, strict=True)}


def _estimate(claim: Statistic, x: np.ndarray) -> tuple[float, float]:
    """The sample mean or variance and its standard error."""
    n = len(x)
    centred = x - x.mean()
    variance = float(np.mean(centred**2))
    if isinstance(claim, Expectation):
        return float(x.mean()), math.sqrt(variance / n)
    fourth = float(np.mean(centred**4))
    return variance * n / (n - 1), math.sqrt(max(fourth - variance**2, 0.0) / n)
