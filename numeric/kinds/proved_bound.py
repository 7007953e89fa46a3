"""Low-precision verdicts from proved error bounds, where the running error analysis covers
both sides of an equation.

In float16 or bfloat16 the calibrated tolerance (``_tolerance.format_truth_ulps``) allows a
difference of about the abs-scale itself, so a claim false in float64 may be invisible there
("not-decisive"). Where each side has a bound proved by ``symbolic/kinds/error_bound.derive``
(every size, the rounding model declared for this backend and format), a true equation's two
sides, each evaluated as written from the same rounded inputs, can differ by at most
B_lhs·A_lhs + B_rhs·A_rhs (each side's bound times its scale: |y|, its abs-scale, or 1 through
log). That is a limit proved, not calibrated:

* a claim false in float64 whose sides differ by more is refuted in this format too;
* a claim true in float64 whose sides differ by more breaks the rounding model, and the record
  says so loudly ("inconsistent");
* otherwise the record says the sides stayed within the proved bound, and how close they came.

Only equations without user code, whose inputs (tensors and scalars) are drawn from a real or
positive range, are judged this way; the instances are drawn inside those ranges, rounded into
the format, and evaluated as the error-bound route evaluates (sums left to right, one call per
operation).
Rows whose exact intermediates leave the format's normal range, that take exp past where the
backend's is finite, where a count·u ≥ 1, or where the backend's own exp or log broke the
declared model (a finding about the backend, named in the record), are outside the model and
not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp
from hypothesis import currently_in_test_context, target

from attnproof.symbolic import Equals, Positive, Real, Scalar, Tensor, TheoremError
from attnproof.symbolic.kinds import error_bound as analysis
from attnproof.symbolic.route import claim_expressions

from ..route import (
    BACKEND_FINDING,
    ROUNDING_MODEL,
    Evidence,
    Failure,
    Inconsistent,
    find_failure,
    format_judge,
    strategies,
)
from . import error_bound as route

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Backend, Rounding

# each side's expression, and the claim of its derived bound
Side = tuple[sp.Expr, analysis.ErrorBound | analysis.AbsoluteErrorBound]

# batches the judge draws: sizes and a seed each, from the compiled search's seed, climbing toward
# the largest |lhs − rhs| / bound; a jitting backend compiles each operation once per shape
JUDGED_BATCHES = 8


@dataclass
class Comparison:
    """The two sides against their proved bound: instances inside the model, the largest
    |lhs − rhs| / (B_lhs·A_lhs + B_rhs·A_rhs), and the first instance above it."""

    instances: int = 0
    worst: float = 0.0
    violation: dict[str, object] | None = None
    breaches: int = 0  # instances above the bound where the backend's exp or log broke the model
    first_breach: str | None = None


def bounded_sides(theorem: Theorem) -> list[Side] | None:
    """Each side's expression and a claim of its derived bound, or None where the analysis
    or the draws do not cover the equation."""
    # the draws must stand for the statement's assumptions: no code, no hook that moves an
    # instance onto the claim's domain, no assumed facts the draws could break
    if (type(theorem.claim) is not Equals or theorem.implementation is not None
            or theorem.at is not None or theorem.given):
        return None
    if not all(isinstance(x, (Tensor, Scalar)) and type(x.domain) in (Real, Positive)
               for x in theorem.inputs):
        return None
    dims = {d.name: d.symbol for d in theorem.dims}
    sides = []
    for _, written in claim_expressions(theorem.claim):
        expr = theorem.expand(written)
        if not _plain_indices(expr):
            return None
        try:
            derived = analysis.derive(expr, dims)
        except TheoremError:
            return None
        sides.append((expr, _as_claim(expr, derived)))
    return sides


def _plain_indices(expr: sp.Expr) -> bool:
    """Every entry read at plain indices (X[i, j]), which the as-written evaluation reads; index
    arithmetic (X[t, h·D + c]) and constant indices it does not."""
    return all(isinstance(index, (sp.Idx, sp.Symbol))
               for entry in expr.atoms(sp.Indexed) for index in entry.indices)


def _as_claim(expr: sp.Expr, derived: analysis.Relative | analysis.Scaled | analysis.Absolute
              ) -> analysis.ErrorBound | analysis.AbsoluteErrorBound:
    if isinstance(derived, analysis.Absolute):
        return analysis.AbsoluteErrorBound(expr, bound=derived.bound)
    return analysis.ErrorBound(expr, count=derived.count, exponent=derived.exponent,
                               relative_to="abs-scale" if isinstance(derived, analysis.Scaled)
                               else "value")


def compare(theorem: Theorem, row: Backend, dtype: Format, device: str, profile: Profile,
            seed: int) -> Comparison | None:
    """Both sides evaluated as written in ``dtype`` against their proved bounds, on batches the
    driver's search draws from ``seed`` (a violation is shrunk to the smallest sizes)."""
    sides = bounded_sides(theorem)
    model = ROUNDING_MODEL.get((row.name, dtype.name))
    if sides is None or model is None:
        return None
    out = list(theorem.free_indices)
    evaluation = route.Evaluation(theorem, row, dtype, device, out=out)
    comparison = Comparison()

    def violates(structure: strategies.Structure) -> bool:
        sizes = dict(structure.size_map)
        arrays = _draw(theorem, sizes, np.random.default_rng(structure.seed),
                       evaluation.dtype_numpy)
        with np.errstate(all="ignore"):
            worst, violation = _compare_batch(comparison, evaluation, sides, model, sizes,
                                              arrays)
        if currently_in_test_context():
            target(min(worst, 1e300), label="|lhs − rhs| / proved bound")
        if violation is None:
            return False
        comparison.violation = violation  # the last one found is the shrunk one
        return True

    find_failure(strategies.from_theorem(theorem, profile), violates, JUDGED_BATCHES, seed,
                 targets=True)
    return comparison


def _draw(theorem: Theorem, sizes: dict[str, int], rng: np.random.Generator,
          numpy_dtype: np.dtype) -> dict[str, np.ndarray]:
    """Inputs inside their declared ranges (uniform, or log-uniform for positive ones), rounded
    into the format: the model assumes inputs are numbers of the format."""
    arrays = {}
    for value in theorem.inputs:  # tensors, and scalars with one entry per instance
        shape = (route.INSTANCES_PER_EXAMPLE,
                 *(sizes[d.name] for d in getattr(value, "dims", ())))
        domain = cast(Real | Positive, value.domain)  # bounded_sides admits only these two
        low, high = domain.low, domain.high
        drawn = (np.exp(rng.uniform(np.log(low), np.log(high), shape))
                 if isinstance(value.domain, Positive) else rng.uniform(low, high, shape))
        arrays[value.name] = drawn.astype(numpy_dtype).astype(np.float64)
    return arrays


def _compare_batch(comparison: Comparison, evaluation: route.Evaluation,
                   sides: list[Side], model: Rounding, sizes: dict[str, int],
                   arrays: dict[str, np.ndarray]) -> tuple[float, dict[str, object] | None]:
    """Count one batch's instances inside the model into ``comparison``: its largest ratio,
    and its first instance above the bound (None when none is)."""
    batch = route.instances(arrays)
    watch = evaluation.range_watch(batch)
    computed: list[np.ndarray] = []
    limit: np.ndarray | float = 0.0
    for _, claim in sides:
        side = evaluation.bounded(claim, model, sizes, arrays, watch)
        computed.append(side.computed)
        limit = limit + np.asarray(side.bound * side.scale, np.float64)
    difference = np.abs(computed[0] - computed[1])
    shape = np.broadcast_shapes(difference.shape, np.shape(limit))
    difference = np.broadcast_to(difference, shape).reshape(batch, -1)
    limit = np.broadcast_to(limit, shape).reshape(batch, -1)
    ratio = np.where(difference == 0, 0.0, difference / limit)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    inside = ~watch.outside & np.isfinite(limit).all(axis=1)
    # above the bound where the backend's own exp or log broke the model: outside it too, a
    # finding about the backend (``Evaluation.breaches``), not a disagreement of the routes
    breaches = evaluation.breaches(watch, np.flatnonzero(inside & (ratio.max(axis=1) > 1.0)),
                                   model)
    if breaches:
        comparison.breaches += len(breaches)
        comparison.first_breach = comparison.first_breach or next(iter(breaches.values()))
        inside[list(breaches)] = False
    ratio = ratio[inside]
    comparison.instances += int(inside.sum())
    if not ratio.size:
        return 0.0, None
    worst = float(ratio.max())
    comparison.worst = max(comparison.worst, worst)
    rows = np.flatnonzero(inside)
    bad = np.flatnonzero(ratio.max(axis=1) > 1.0)
    if not bad.size:
        return worst, None
    row, entry = int(rows[bad[0]]), int(ratio[bad[0]].argmax())
    return worst, {
        "sizes": sizes,
        "inputs": {k: np.round(v[row], 6).tolist() for k, v in arrays.items()},
        "|lhs − rhs| as written": float(difference[row, entry]),
        "proved bound of the two sides' rounding": float(limit[row, entry]),
    }


@format_judge
def judge(seen: Evidence, theorem: Theorem, row: Backend, dtype: Format, device: str,
          false_in_float64: bool, profile: Profile) -> Evidence:
    """A lower format's evidence decided or annotated with the proved bound, where one exists:
    a violation is a failure where float64 is false, an inconsistency where it is true. Its
    batches are drawn from the search's seed, so the record's replay draws them again."""
    assert seen.seed is not None  # the compiled search's evidence records its seed
    comparison = compare(theorem, row, dtype, device, profile, seen.seed)
    if comparison is None or comparison.instances == 0:
        return seen
    within = (f"as written in {dtype}, lhs − rhs reached {comparison.worst:.3g} of the proved "
              f"bound of their rounding over {comparison.instances} instances")
    if comparison.first_breach is not None:
        seen = seen.noting(f"{BACKEND_FINDING}{route.breach_heading(row)}"
                           f"{comparison.first_breach}; {comparison.breaches} instance(s) where "
                           "it did are set aside as outside the model")
    if comparison.violation is None:
        return seen.noting(f"within the proved bound: {within}")
    if false_in_float64:
        # not an instability: the claim is false, seen in this format
        return seen.concluding(Failure(comparison.violation, (
            f"false in float64, and refuted in {dtype} too: its two sides, evaluated as "
            f"written, differ by more than the proved bound of their rounding ({within})"),
            refutes=True))
    return seen.concluding(Inconsistent(
        f"true in float64 but its two sides, evaluated as written in {dtype}, differ by more "
        f"than the proved bound of their rounding ({within}): the rounding model declared "
        f"for {row.name} {dtype} does not hold", comparison.violation))
