"""Numeric routes of ``Exists`` and ``NotExists``.

``Exists``: the identity the stated witness makes, checked as any identity is (the compiled
search on this backend and dtype); a claim without a witness has none.

``NotExists``: per instance the other inputs are drawn once and the ``for_all`` inputs many times
(structured draws, then plain ones from their domains, more draws than the unknown has entries);
lhs − rhs, affine in the unknown's entries, is evaluated in the record's dtype at the unknown 0
and at each basis tensor, and the unknown fitted by least squares (float64). A largest residual
within L · eps · scale (L the checker's truth limit for the dtype, scale the largest |lhs| or
|rhs| at the fit) is a tensor that makes lhs = rhs at every draw: the claim fails there. A larger
residual is a set of draws no tensor fits, which shows the claim at that instance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np

from attnproof.symbolic import Exists, NotExists, Positive, Real
from attnproof.symbolic.route import ordered_free_indices

from ..route import (
    Array,
    Evidence,
    Judged,
    StructureRoute,
    check_structures,
    compile_expression,
    format_truth_ulps,
    numeric_route,
    run_search,
    runner_for,
    strategies,
)
from ._evaluate import TargetedStatements, run_kept

if TYPE_CHECKING:
    from attnproof.symbolic import Domain, Format, Theorem

    from .. import Compiled, Profile
    from ..route import Backend, Where



@numeric_route(Exists)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    identity = theorem.claim.searched_as(theorem)
    runner = runner_for(identity, where.row, where.device, where.mode)
    return run_search(identity, runner, where.dtype, profile, seed=seed)[0]


# -- negated existence: a least-squares fit of the unknown ----------------------------------------

# draws of the for_all inputs per instance: the unknown's entry count plus this many, structured,
# and as many plus FRESH_DRAWS more drawn plainly from their domains (uniform, log-uniform)
EXTRA_DRAWS = 2
FRESH_DRAWS = 32


@numeric_route(NotExists)
def check_not_exists(theorem: Theorem, where: Where, profile: Profile,
                     seed: int | None = None) -> Evidence:
    """Per instance (the other inputs drawn once), fit the unknown by least squares to lhs = rhs
    over many draws of the ``for_all`` inputs: a fit within rounding on every draw is a tensor
    that exists there (the claim fails); a residual beyond it is a set of draws no tensor fits
    (the claim holds at that instance)."""
    fit = _Fit(theorem, where.row, where.dtype, where.device, where.mode)
    instances = max(100, where.effort(profile).batch // 2)
    claim = cast(NotExists, theorem.claim)  # the route of NotExists: the driver's lookup says so
    unknown = claim.unknown.name
    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=lambda structure: fit.run(structure, instances),
        judge=lambda outcome: Judged(int(outcome["decided"].sum()),
                                     int((~outcome["decided"]).sum()),
                                     fails=bool(outcome["exists"].any())),
        counterexample=fit.describe,
        failure_reason=lambda _, example, __: f"{unknown} exists: {example['found']}",
        passed=lambda _: f"no {unknown} fits lhs = rhs at the draws of "
                         f"{', '.join(x.name for x in claim.for_all)} of any instance "
                         f"(least squares, residual above {fit.limit:g} * eps * scale)"))


class _Outcome(TypedDict):
    """One structure's fit, per instance: whether a tensor fits, whether it was decided, the
    residual and solution; the arrays drawn and the draws per instance."""

    exists: np.ndarray
    decided: np.ndarray
    residuals: np.ndarray
    solutions: list[np.ndarray | None]
    arrays: dict[str, np.ndarray | int]
    draws: int


class _Fit:
    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        # the route of NotExists: the driver's lookup says so
        self.claim = cast(NotExists, theorem.claim)
        self.theorem, self.row, self.dtype, self.mode = theorem, row, dtype, mode
        self.module = row.load()
        self.device = row.devices()[device]
        self.xp = row.namespace(self.module, dtype)
        self.out = ordered_free_indices(self.claim.claim.lhs, self.claim.claim.rhs)
        inputs = (*theorem.inputs, self.claim.unknown)
        common: TargetedStatements = dict(inputs=inputs, definitions=theorem.definitions,
                                      target=row.target)
        self.sides: list[Compiled] = [compile_expression(side, self.out, **common)
                                      for side in (self.claim.claim.lhs, self.claim.claim.rhs)]
        self.varying = {x.name for x in self.claim.for_all}
        measured = row.measured_as(dtype)
        self.eps = measured.epsilon
        self.limit = format_truth_ulps(measured)
        self._evaluators: dict[tuple[object, ...], Callable[[dict[str, Array]], Array]] = {}

    def run(self, structure: strategies.Structure, instances: int) -> _Outcome:
        sizes = structure.size_map
        shape = tuple(sizes[d.name] for d in self.claim.unknown.dims)
        unknowns = int(np.prod(shape))
        structured_draws = unknowns + EXTRA_DRAWS
        draws = structured_draws + unknowns + FRESH_DRAWS
        rows = instances * draws
        arrays = strategies.fill_batch(self.theorem, structure, rows)
        rng = np.random.default_rng(structure.seed + 1)
        for x in self.theorem.inputs:
            value = arrays[x.name]
            if not isinstance(value, np.ndarray):
                continue
            if x.name in self.varying:  # the fresh draws: plainly from the domain
                fresh = value.reshape(instances, draws, *value.shape[1:])
                fresh[:, structured_draws:] = _plain(x.domain, fresh[:, structured_draws:].shape,
                                                     rng)
                arrays[x.name] = fresh.reshape(value.shape)
            else:  # the same value for every draw of an instance
                arrays[x.name] = np.repeat(value[::draws], draws, axis=0)
        values = []
        for column in range(unknowns + 1):
            basis = np.zeros((rows, unknowns))
            if column:
                basis[:, column - 1] = 1.0
            arrays[self.claim.unknown.name] = basis.reshape(rows, *shape)
            lhs, rhs = (self._evaluate(k, arrays, {**sizes, "batch": rows}) for k in (0, 1))
            values.append((lhs.reshape(instances, -1), rhs.reshape(instances, -1)))
        lhs0, rhs0 = values[0]
        constant = rhs0 - lhs0  # lhs − rhs is affine in A: D(0) + Σ_j a_j (D(e_j) − D(0)) = 0
        jacobian = np.stack([(lhs - rhs) - (lhs0 - rhs0) for lhs, rhs in values[1:]], axis=-1)
        exists = np.zeros(instances, bool)
        decided = np.zeros(instances, bool)
        residuals = np.full(instances, np.nan)
        solutions: list[np.ndarray | None] = []
        for k in range(instances):
            finite = np.isfinite(constant[k]).all() and np.isfinite(jacobian[k]).all()
            if not finite:
                solutions.append(None)
                continue
            solution, *_ = np.linalg.lstsq(jacobian[k], constant[k], rcond=None)
            fitted = jacobian[k] @ solution
            residual = np.max(np.abs(constant[k] - fitted), initial=0.0)
            scale = max(np.max(np.abs(lhs0[k]), initial=0.0), np.max(np.abs(rhs0[k]), initial=0.0),
                        np.max(np.abs(fitted), initial=0.0))
            tolerance = self.limit * self.eps * scale
            residuals[k], decided[k] = residual, True
            exists[k] = residual <= tolerance
            solutions.append(solution.reshape(shape))
        return {"exists": exists, "decided": decided, "residuals": residuals,
                "solutions": solutions, "arrays": arrays, "draws": draws}

    def _evaluate(self, side: int, arrays: dict[str, np.ndarray | int],
                  sizes: dict[str, int]) -> np.ndarray:
        return run_kept(self.row, self.xp, self.device, self.dtype, self.mode, self._evaluators,
                        side, self.sides[side], arrays, sizes)

    def describe(self, structure: strategies.Structure, outcome: _Outcome) -> dict[str, object]:
        k = int(np.argwhere(outcome["exists"])[0][0])
        first = strategies.instance_at(outcome["arrays"], k * outcome["draws"])
        fixed = {n: _short(v) for n, v in first.items()
                 if n not in self.varying and n != self.claim.unknown.name}
        found = (f"{self.claim.unknown.name} = {_short(outcome['solutions'][k])} fits lhs = rhs "
                 f"at all {outcome['draws']} draws of "
                 f"{', '.join(x.name for x in self.claim.for_all)} (largest residual "
                 f"{outcome['residuals'][k]:.3g})")
        return {"sizes": structure.size_map, "values": fixed, "found": found}


def _plain(domain: Domain, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Entries drawn plainly from a domain: uniform on a real range, log-uniform on a positive
    one; other domains as the strategies draw them."""
    if isinstance(domain, Real):
        return rng.uniform(domain.low, domain.high, shape)
    if isinstance(domain, Positive):
        return np.exp(rng.uniform(np.log(domain.low), np.log(domain.high), shape))
    return strategies.tensor_values(domain, shape, rng)


def _short(value: object) -> str:
    array = np.asarray(value, dtype=np.float64)
    return np.array2string(array, precision=4, suppress_small=True, max_line_width=200)
