"""Numeric route of the linear-algebra claims (symbolic/kinds/linalg.py): the matrix is compiled
and evaluated on the backend in the record's dtype for batches of drawn inputs (the structured
draws of ``_strategies`` included: zero matrices, repeated rows, vectors in a kernel), then the
backend's own eigen solver (definiteness, on the symmetric part (A + Aᵀ)/2, which has the same
quadratic form) or SVD (rank) decides each instance.

Tolerance, per instance: tol = L · eps · (‖A‖_F + ‖|A|‖_F), with L the checker's truth limit for
the dtype (``format_truth_ulps``, 4096 ulps in float64), eps the epsilon of the dtype that
measures the backend (float32's for MLX float64) and |A| the abs-scale of the matrix's
expression (its terms in absolute value, evaluated in float64 NumPy): rounding while forming A
moves each entry by at most about eps times its abs-scale, and a backward-stable eigen solver or
SVD moves eigenvalues and singular values by at most about eps ‖A‖. Never scaled by size.

* positive semi-definite: λ_min ≥ −tol; positive definite: λ_min > tol; rank ≤ k: at most k
  singular values exceed tol.

Only float64 and float32 are checked: the eigen solvers and SVDs of NumPy and JAX do not accept
float16 or bfloat16, and a claim about a matrix's spectrum is not an evaluation-order stability
question that a lower format could answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np

from attnproof.symbolic import PositiveDefinite, PositiveSemidefinite, RankAtMost

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
    to_numpy,
)
from ._evaluate import Statements, backend_linalg

if TYPE_CHECKING:
    from attnproof.symbolic import Format, Theorem

    from .. import Profile
    from ..route import Backend, Where

# the claims this route checks, and those of them about definiteness
Definiteness = PositiveDefinite | PositiveSemidefinite
MatrixClaim = PositiveDefinite | PositiveSemidefinite | RankAtMost


@numeric_route(PositiveDefinite, PositiveSemidefinite, RankAtMost)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    """Search for an instance where the claim fails beyond the tolerance."""
    checker = _Checker(theorem, where.row, where.dtype, where.device, where.mode)
    batch = where.effort(profile).batch
    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=lambda structure: checker.run(structure, batch),
        judge=lambda outcome: Judged(
            int(outcome.failing.size), worst_ulps=float(np.max(outcome.ulps, initial=0.0)),
            fails=bool(outcome.failing.any())),
        counterexample=checker.describe,
        failure_reason=lambda _, example, __: f"{checker.test_words()} fails: "
                                              f"{example['found']}",
        passed=lambda _: f"{checker.test_words()} held on every instance; "
                         f"{checker.tolerance_words()}"))


class _Outcome:
    """Per instance (and batch-index value): the spectrum, the tolerance, whether it failed."""

    def __init__(self, arrays: dict[str, np.ndarray | int], sizes: dict[str, int],
                 matrices: np.ndarray, spectrum: np.ndarray, tolerance: np.ndarray,
                 failing: np.ndarray, ulps: np.ndarray) -> None:
        self.arrays, self.sizes, self.matrices = arrays, sizes, matrices
        self.spectrum, self.tolerance, self.failing, self.ulps = (
            spectrum, tolerance, failing, ulps)


class _Checker:
    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        # the route of the matrix claims: the driver's lookup says so
        self.theorem, self.claim, self.row, self.dtype = (
            theorem, cast(MatrixClaim, theorem.claim), row, dtype)
        self.kind = type(self.claim).__name__
        self.module = row.load()
        self.device = row.devices()[device]
        self.xp = row.namespace(self.module, dtype)
        self.mode = mode
        self._evaluators: dict[tuple[object, ...], Callable[[dict[str, Array]], Array]] = {}
        self.batch_indices = self.claim.batch_indices()
        out = (*self.batch_indices, self.claim.row, self.claim.column)
        common: Statements = dict(inputs=theorem.inputs, definitions=theorem.definitions)
        self.value = compile_expression(self.claim.matrix, out, target=row.target, **common)
        self.scale = compile_expression(self.claim.matrix, out, abs_scale=True, target="numpy",
                                        **common)
        measured = row.measured_as(dtype)
        self.eps = measured.epsilon
        self.limit = format_truth_ulps(measured)

    # -- evaluation ---------------------------------------------------------------------------

    def run(self, structure: strategies.Structure, batch: int) -> _Outcome:
        arrays = strategies.fill_batch(self.theorem, structure, batch)
        sizes = {**structure.size_map, "batch": batch}
        matrices = self._matrices(arrays, sizes)
        with np.errstate(all="ignore"):
            scale = np.asarray(self.scale(np, arrays, sizes), np.float64)
            size = _frobenius(matrices) + _frobenius(scale)
        tolerance = self.limit * self.eps * size
        spectrum = self._spectrum(matrices)
        failing, ulps = self._judge(spectrum, tolerance, size, structure.size_map)
        failing |= ~np.isfinite(size)  # a non-finite matrix never passes
        return _Outcome(arrays, structure.size_map, matrices, spectrum, tolerance, failing, ulps)

    def _matrices(self, arrays: dict[str, np.ndarray | int],
                  sizes: dict[str, int]) -> np.ndarray:
        """(batch, *batch-index sizes, rows, columns) in float64, evaluated in the dtype."""
        with self.row.scope(self.device):
            placed = {k: (self.row.place(self.xp, v, self.dtype.storage, self.device)
                          if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
            traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
            with np.errstate(all="ignore"):
                values = self._evaluator(placed, sizes)(traced)
        return to_numpy(values)

    def _evaluator(self, placed: dict[str, Array],
                   sizes: dict[str, int]) -> Callable[[dict[str, Array]], Array]:
        """The compiled matrix as a function of the arrays; jitted once per shape in jit mode.
        Integer scalars are static, as they are for the compiled search."""
        statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
        key = (tuple(sorted(sizes.items())), statics)
        if key not in self._evaluators:
            def matrix(traced: dict[str, Array]) -> Array:
                return self.value(self.xp, {**traced, **dict(statics)}, sizes)

            self._evaluators[key] = self.row.compile(matrix) if self.mode == "jit" else matrix
        return self._evaluators[key]

    def _spectrum(self, matrices: np.ndarray) -> np.ndarray:
        """Eigenvalues of the symmetric part (definiteness) or singular values (rank), computed
        by the backend's own solver in the record's dtype; non-finite matrices give NaN."""
        finite = np.isfinite(matrices).all(axis=(-2, -1))
        safe = np.where(finite[..., None, None], matrices, 0.0)
        if self.kind == "RankAtMost":
            values = self._backend_svd(safe)
        else:
            values = self._backend_eigvalsh((safe + np.swapaxes(safe, -1, -2)) / 2)
        return np.where(finite[..., None], values, np.nan)

    def _backend_eigvalsh(self, symmetric: np.ndarray) -> np.ndarray:
        return backend_linalg(self.row, self.module, self.xp, self.device, self.dtype,
                              "eigvalsh", symmetric)

    def _backend_svd(self, matrices: np.ndarray) -> np.ndarray:
        return backend_linalg(self.row, self.module, self.xp, self.device, self.dtype, "svd",
                              matrices, compute_uv=False)

    # -- deciding --------------------------------------------------------------------------------

    def _judge(self, spectrum: np.ndarray, tolerance: np.ndarray, size: np.ndarray,
               sizes: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """Failing instances, and each one's worst value in ulps (eps · (‖A‖_F + ‖|A|‖_F))."""
        unit = self.eps * np.where(size > 0, size, 1.0)
        with np.errstate(all="ignore"):
            if self.kind == "RankAtMost":
                bound = cast(RankAtMost, self.claim).bound_at(sizes)  # by its kind
                above = (spectrum > tolerance[..., None]).sum(axis=-1)
                failing = above > bound
                beyond = np.sort(spectrum, axis=-1)[..., ::-1][..., bound:]
                ulps = np.max(beyond, axis=-1, initial=0.0) / unit
            else:
                least = np.min(spectrum, axis=-1)
                strict = cast(Definiteness, self.claim).strict  # by its kind
                failing = least <= tolerance if strict else least < -tolerance
                ulps = np.maximum(-least, 0.0) / unit
        failing = failing | np.isnan(spectrum).any(axis=-1)
        return failing, np.where(np.isfinite(ulps), ulps, np.inf)

    # -- words -----------------------------------------------------------------------------------

    def test_words(self) -> str:
        if self.kind == "RankAtMost":
            return (f"rank <= {cast(RankAtMost, self.claim).bound} (count of singular values "
                    f"above tol, {self.row.name} SVD)")
        relation = "> tol" if cast(Definiteness, self.claim).strict else ">= -tol"
        return (f"least eigenvalue of (A + A^T)/2 {relation} ({self.row.name} eigvalsh)")

    def tolerance_words(self) -> str:
        return (f"tol = {self.limit:g} * eps * (||A||_F + ||abs-scale of A||_F), eps = "
                f"{self.eps:.3g}")

    def describe(self, structure: strategies.Structure, outcome: _Outcome) -> dict[str, object]:
        position = tuple(np.argwhere(outcome.failing)[0])
        instance, batch_values = position[0], position[1:]
        matrix = outcome.matrices[position]
        spectrum = outcome.spectrum[position]
        inputs = strategies.instance_at(outcome.arrays, instance)
        found: dict[str, object] = {
            "sizes": structure.size_map,
            "indices": {str(i.label): int(v)
                        for i, v in zip(self.batch_indices, batch_values, strict=True)},
            "values": {k: _short(v) for k, v in inputs.items()},
            "matrix": _short(matrix),
            "tolerance": f"{float(outcome.tolerance[position]):.3g}",
        }
        if self.kind == "RankAtMost":
            above = int((spectrum > outcome.tolerance[position]).sum())
            found["singular values"] = _short(spectrum)
            rank = cast(RankAtMost, self.claim)  # by its kind
            found["found"] = (f"{above} singular values above tol, bound "
                              f"{rank.bound} = {rank.bound_at(structure.size_map)}")
        else:
            found["eigenvalues"] = _short(spectrum)
            found["found"] = f"least eigenvalue {float(np.min(spectrum)):.6g}"
        return found


def _frobenius(values: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(np.square(values), axis=(-2, -1)))


def _short(value: object) -> str:
    array = np.asarray(value, dtype=np.float64)
    return np.array2string(array, precision=4, suppress_small=True, max_line_width=200)
