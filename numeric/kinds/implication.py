"""Numeric route of implications (symbolic/kinds/implication.py): batches of drawn inputs (the
structured draws included: zeros, repeated rows and kernels are where low-rank matrices are), the
hypothesis's matrix evaluated on the backend in the record's dtype and its rank read from the
backend's SVD (singular values above tol = L · eps · (‖A‖_F + ‖|A|‖_F), as for ``RankAtMost``),
and on the instances where the hypothesis holds the conclusion's two sides evaluated there too.
The conclusion fails at an instance when lhs − rhs is beyond L · eps · (abs-scale of both sides)
the wrong way (an identity: apart; lhs ≥ rhs: below; a strict lhs > rhs: not above, equality
within rounding included, as for ``PositiveDefinite``). Only instances with the hypothesis count
as decided.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np

from attnproof.symbolic import Implies
from attnproof.symbolic.kinds.implication import relation_of
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
    strategies,
)
from ._evaluate import Statements, backend_linalg, run_kept

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Compiled, Profile
    from ..route import Backend, Where


class _Outcome(TypedDict):
    """One batch: its inputs; per instance whether the hypothesis holds and whether the
    conclusion then fails; the ranks, singular values, lhs − rhs and margins behind them."""

    arrays: dict[str, np.ndarray | int]
    hypothesis: np.ndarray
    failing: np.ndarray
    rank: np.ndarray
    singular: np.ndarray
    difference: np.ndarray
    margin: np.ndarray


@numeric_route(Implies)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    checker = _Checker(theorem, where.row, where.dtype, where.device, where.mode)
    batch = where.effort(profile).batch
    # an instance whose hypothesis fails decides nothing: it is counted undecided
    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=lambda structure: checker.run(structure, batch),
        judge=lambda outcome: Judged(int(outcome["hypothesis"].sum()),
                                     int((~outcome["hypothesis"]).sum()),
                                     fails=bool(outcome["failing"].any())),
        counterexample=checker.describe,
        failure_reason=lambda _, example, __: "the hypothesis holds and the conclusion fails: "
                                              f"{example['found']}",
        passed=lambda seen: "the conclusion held on every instance with the hypothesis "
                            f"({seen.instances}; {seen.undecided} drawn instances lacked it); "
                            f"tol = {checker.limit:g} * eps * scale, eps = {checker.eps:.3g}"))


class _Checker:
    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        self.theorem, self.row, self.dtype, self.mode = theorem, row, dtype, mode
        self.claim = cast(Implies, theorem.claim)  # the route of Implies: the driver's lookup
        self.hypothesis, self.conclusion = self.claim.hypothesis, self.claim.conclusion
        self.relation = relation_of(self.conclusion)
        self.module = row.load()
        self.device = row.devices()[device]
        self.xp = row.namespace(self.module, dtype)
        common: Statements = dict(inputs=theorem.inputs, definitions=theorem.definitions)
        h = self.hypothesis
        self.batch_indices = h.batch_indices()
        out = (*self.batch_indices, h.row, h.column)
        self.compiled: dict[str, Compiled] = {
            "matrix": compile_expression(h.matrix, out, target=row.target, **common)}
        self.scales: dict[str, Compiled] = {
            "matrix": compile_expression(h.matrix, out, abs_scale=True, target="numpy",
                                         **common)}
        sides = ordered_free_indices(self.conclusion.lhs, self.conclusion.rhs)
        for name in ("lhs", "rhs"):
            expr = getattr(self.conclusion, name)
            self.compiled[name] = compile_expression(expr, sides, target=row.target, **common)
            self.scales[name] = compile_expression(expr, sides, abs_scale=True, target="numpy",
                                                   **common)
        measured = row.measured_as(dtype)
        self.eps = measured.epsilon
        self.limit = format_truth_ulps(measured)
        self._evaluators: dict[tuple[object, ...], Callable[[dict[str, Array]], Array]] = {}

    def run(self, structure: strategies.Structure, batch: int) -> _Outcome:
        arrays = strategies.fill_batch(self.theorem, structure, batch)
        sizes = {**structure.size_map, "batch": batch}
        values = {name: self._evaluate(name, arrays, sizes) for name in self.compiled}
        with np.errstate(all="ignore"):
            scales = {name: np.abs(np.asarray(self.scales[name](np, arrays, sizes), np.float64))
                      for name in self.scales}
        matrices = values["matrix"]
        finite = np.isfinite(matrices).all(axis=(-2, -1))
        singular = self._svd(np.where(finite[..., None, None], matrices, 0.0))
        size = _frobenius(matrices) + _frobenius(scales["matrix"])
        tolerance = self.limit * self.eps * size
        rank = (singular > tolerance[..., None]).sum(axis=-1)
        bound = self.hypothesis.bound_at(structure.size_map)
        holds = (rank <= bound) & finite
        holds = holds.reshape(batch, -1).all(axis=1)
        lhs, rhs = (values[k].reshape(batch, -1) for k in ("lhs", "rhs"))
        scale = (scales["lhs"].reshape(batch, -1) + scales["rhs"].reshape(batch, -1))
        margin = self.limit * self.eps * scale
        with np.errstate(all="ignore"):
            difference = lhs - rhs
            if self.relation == "=":
                wrong = np.abs(difference) > margin
            elif self.relation == ">=":
                wrong = difference < -margin
            else:
                wrong = difference <= margin
        wrong |= ~np.isfinite(difference)
        failing = holds & wrong.any(axis=1)
        return {"arrays": arrays, "hypothesis": holds, "failing": failing, "rank": rank,
                "singular": singular, "difference": difference, "margin": margin}

    def _evaluate(self, name: str, arrays: dict[str, np.ndarray | int],
                  sizes: dict[str, int]) -> np.ndarray:
        return run_kept(self.row, self.xp, self.device, self.dtype, self.mode, self._evaluators,
                        name, self.compiled[name], arrays, sizes)

    def _svd(self, matrices: np.ndarray) -> np.ndarray:
        """Singular values, largest first, by the backend's own SVD in the record's dtype."""
        return np.asarray(backend_linalg(self.row, self.module, self.xp, self.device, self.dtype,
                                         "svd", matrices, compute_uv=False), np.float64)

    def describe(self, structure: strategies.Structure, outcome: _Outcome) -> dict[str, object]:
        failing = np.argwhere(outcome["failing"])[:, 0]
        closest = np.abs(outcome["difference"][failing]).min(axis=1)
        k = int(failing[int(np.argmin(closest))])  # the clearest one: lhs - rhs nearest 0
        worst = int(np.argmin(np.abs(outcome["difference"][k])))
        inputs = strategies.instance_at(outcome["arrays"], k)
        found = (f"rank {int(np.max(outcome['rank'][k]))} <= {self.hypothesis.bound} (singular "
                 f"values {_short(outcome['singular'][k])}), and lhs - rhs = "
                 f"{outcome['difference'][k][worst]:.6g} (margin "
                 f"{outcome['margin'][k][worst]:.3g}) where lhs {self.relation} rhs is claimed")
        return {"sizes": structure.size_map,
                "values": {n: _short(v) for n, v in inputs.items()}, "found": found}


def _frobenius(values: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(np.square(values), axis=(-2, -1)))


def _short(value: object) -> str:
    array = np.asarray(value, dtype=np.float64)
    return np.array2string(array, precision=4, suppress_small=True, max_line_width=200)
