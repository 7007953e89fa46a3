"""The numeric route of ``GreaterOrEqual`` and ``Greater`` (symbolic/kinds/inequality.py).

``lhs ≥ rhs`` is what the compiled search already checks for the built-in ``AtLeast``: float64
truth on a reference backend (lhs may fall below rhs by at most ``TRUTH_ULPS`` of the
abs-scale), each side's stability in lower formats, a shrunk witness on failure, and the mpmath
ground truth. Both claims run that search on the same sides, so a false inequality fails it.

``lhs > rhs`` needs more: in every configuration, a second Hypothesis search evaluates the sides
in float64 on the record's backend and counts the instances where lhs − rhs exceeds the rounding
bound (``TRUTH_ULPS`` ulps of the abs-scale) and those within it, which float64 cannot tell from
equality (ELU(x) + 1 at x = −40 rounds to 0). Those are counted as undecided, never as passed;
"passed" needs ``MINIMUM_DECIDED`` instances decided strictly. An instance with lhs = rhs and an
abs-scale of 0 had no rounding at all (x² at x = 0): that is equality, and fails the record.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING

import numpy as np

from attnproof.symbolic import Greater, GreaterOrEqual

from ..route import (
    REFERENCE_DTYPE,
    TRUTH_ULPS,
    Evidence,
    Failure,
    draw_each,
    effort_for,
    evaluate_reference,
    evidence,
    numeric_route,
    run_search,
    runner_for,
    strategies,
    would_pass,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Evaluated, Runner, Where


@numeric_route(Greater, GreaterOrEqual)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    """lhs ≥ rhs by the compiled search, then strictness for ``Greater``."""
    as_at_least = _as_at_least(theorem)
    runner = runner_for(as_at_least, where.row, where.device, where.mode)
    seen = run_search(as_at_least, runner, where.dtype, profile, seed=seed)[0]
    if not getattr(theorem.claim, "strict", False) or not would_pass(seen):
        return seen
    # strictness is decided in float64 on this backend, whatever the record's format: a
    # format's own rounding cannot show that lhs − rhs stays above 0
    return _check_strictness(as_at_least, runner, where.dtype, profile, seen)


@functools.lru_cache(maxsize=256)
def _as_at_least(theorem: Theorem) -> Theorem:
    """The same theorem with the built-in ``AtLeast`` claim on the same sides (cached, so its
    compiled programs serve every configuration)."""
    return theorem.claim.searched_as(theorem)


@dataclasses.dataclass
class _Strictness:
    strict: int = 0
    near_equal: int = 0
    first_near: dict[str, object] | None = None
    # a row where lhs = rhs exactly with an abs-scale of 0: no rounding happened, so this is
    # equality itself, which refutes a strict claim
    first_equal: dict[str, object] | None = None


def _check_strictness(theorem: Theorem, runner: Runner, dtype: Format, profile: Profile,
                      seen: Evidence) -> Evidence:
    """A strict claim's decided instances are those where float64 shows lhs − rhs above its
    rounding bound; the ≥ search's instances are named in the description. The structures are
    drawn from the ≥ search's seed, so its replay draws them again."""
    effort = effort_for(runner, dtype, profile)
    counts = _Strictness()

    def count(structure: strategies.Structure) -> None:
        _count(evaluate_reference(runner, structure, effort.batch), effort.batch, counts)

    assert seen.seed is not None  # run_search records the seed it drew from
    draw_each(strategies.from_theorem(theorem, profile), count, effort.examples, seen.seed)
    if counts.first_equal is not None:
        return seen.concluding(Failure({"values": counts.first_equal, "lhs_minus_rhs": "0",
                                        "why": "lhs = rhs exactly in float64 (abs-scale 0: "
                                               "every term exact), so lhs > rhs fails"},
                                       "strictness refuted by exact equality"))
    passed = seen.passed
    assert passed is not None  # strictness is checked only where the ≥ search would pass
    described = dataclasses.replace(passed, description=_joined(
        passed.description, f"lhs ≥ rhs on {seen.instances} instance(s) in {dtype}",
        _strictness_reason(counts)))
    return dataclasses.replace(seen, instances=counts.strict,
                               undecided=seen.undecided + counts.near_equal, outcome=described)


def _count(evaluated: Evaluated, batch: int, counts: _Strictness) -> None:
    """Per row: every entry's lhs − rhs above the rounding bound (strict), or some entry within
    it (undecided). Rows the ≥ search would leave out (not finite, not kept) are left out."""
    reference = evaluated.reference
    rows, scale = evidence.decidable(reference, batch)
    if evaluated.valid is not None:
        rows &= evaluated.valid
    finite_scale = np.where(np.isfinite(scale), scale, 0.0)
    bound = (TRUTH_ULPS * REFERENCE_DTYPE.epsilon * finite_scale
             + REFERENCE_DTYPE.smallest_normal)
    with np.errstate(invalid="ignore", over="ignore"):
        gap = np.asarray(reference["lhs"], np.float64) - np.asarray(reference["rhs"], np.float64)
    above = np.broadcast_to(gap > bound, np.broadcast_shapes(gap.shape, bound.shape))
    strict_rows = above.reshape(batch, -1).all(axis=1) & rows
    exact_zero = np.broadcast_to((gap <= 0) & (finite_scale == 0),
                                 np.broadcast_shapes(gap.shape, bound.shape))
    equal_rows = exact_zero.reshape(batch, -1).any(axis=1) & rows
    if counts.first_equal is None and equal_rows.any():
        counts.first_equal = _row_inputs(evaluated, int(np.flatnonzero(equal_rows)[0]))
    near_rows = rows & ~strict_rows
    counts.strict += int(strict_rows.sum())
    counts.near_equal += int(near_rows.sum())
    if counts.first_near is None and near_rows.any():
        counts.first_near = _row_inputs(evaluated, int(np.flatnonzero(near_rows)[0]))


def _row_inputs(evaluated: Evaluated, row: int) -> dict[str, object]:
    return {k: np.asarray(v)[row].tolist()
            for k, v in evaluated.inputs.items() if isinstance(v, np.ndarray)}


def _strictness_reason(counts: _Strictness) -> str:
    text = (f"strictness in float64: {counts.strict} instance(s) with lhs − rhs above "
            f"{TRUTH_ULPS:g} ulps of the abs-scale")
    if counts.near_equal:
        text += (f"; {counts.near_equal} within that rounding bound of equality, undecided "
                 f"(first at {_short(counts.first_near)})")
    return text


def _short(values: object, limit: int = 160) -> str:
    text = str(values)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _joined(*parts: str | None) -> str | None:
    return "; ".join(p for p in parts if p) or None
