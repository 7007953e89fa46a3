"""Numeric route of spectral claims (symbolic/kinds/spectral.py): each matrix of the statement is
compiled and evaluated on the backend in the record's dtype for batches of drawn inputs (the
structured draws included: zero matrices, repeated rows, kernels), and the backend's own SVD
gives its singular values.

Each singular value is known only to within δ = L · eps · (‖A‖_F + ‖|A|‖_F) (L the checker's truth
limit for the dtype, ``format_truth_ulps``; |A| the abs-scale of the matrix's expression):
rounding while forming A moves each entry by about eps times its abs-scale, and a backward-stable
SVD moves each singular value by about eps ‖A‖. So σ_max and σ_min become intervals
[σ − δ, σ + δ] ∩ [0, ∞) (σ_min is exactly 0 for a matrix with fewer rows than columns), a
condition number the interval [max(1, σ_max⁻/σ_min⁺), σ_max⁺/σ_min⁻] (∞ where σ_min⁻ = 0), and
each side of the claim is evaluated in interval arithmetic, by the one as-written evaluator
(``IntervalWalk``), every operation rounded outwards. An instance fails only when the
intervals exclude the relation (lhs⁻ > rhs⁺ for ≤, disjoint for =); it is undecided when a side
is unbounded without being ∞ itself (the format cannot tell a tiny σ_min from 0), and passes
otherwise. Never scaled by size.

Only float64 and float32 are checked: the SVDs of NumPy and JAX do not accept float16 or
bfloat16.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic import Spectral
from attnproof.symbolic.kinds.spectral import ConditionNumber, SingularMax, SpectralTerm
from attnproof.symbolic.route import AsWritten

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
    from attnproof.symbolic.route import Env, InputKey

    from .. import Compiled, Profile
    from ..route import Backend, Where

# per instance, the lower and upper ends of an interval
Interval = tuple[np.ndarray, np.ndarray]
# one term's matrices, singular values and their δ, per instance
Spectrum = tuple[np.ndarray, np.ndarray, np.ndarray]


@numeric_route(Spectral)
def check(theorem: Theorem, where: Where, profile: Profile,
          seed: int | None = None) -> Evidence:
    """Search for an instance whose intervals exclude the claim."""
    checker = _Checker(theorem, where.row, where.dtype, where.device, where.mode)
    batch = where.effort(profile).batch

    def passed(seen: Evidence) -> str:
        undecided = (f"; {seen.undecided} instances undecided (a smallest singular value "
                     "within rounding of 0 leaves a side unbounded)" if seen.undecided else "")
        return (f"lhs {checker.claim.relation_text} rhs held within the intervals of every "
                f"instance ({where.row.name} SVD); {checker.tolerance_words()}{undecided}")

    return check_structures(theorem, where, profile, seed, StructureRoute(
        run=lambda structure: checker.run(structure, batch),
        judge=lambda outcome: Judged(int((~outcome.undecided).sum()),
                                     int(outcome.undecided.sum()),
                                     fails=bool(outcome.failing.any())),
        counterexample=checker.describe,
        failure_reason=lambda _, example, __: f"{checker.claim.relation_text} fails by more "
                                              f"than rounding: {example['found']}",
        passed=passed))


class _Outcome:
    def __init__(self, arrays: dict[str, np.ndarray | int],
                 spectra: dict[SpectralTerm, Spectrum], sides: tuple[Interval, Interval],
                 failing: np.ndarray, undecided: np.ndarray) -> None:
        self.arrays, self.spectra, self.sides = arrays, spectra, sides
        self.failing, self.undecided = failing, undecided


class _Checker:
    def __init__(self, theorem: Theorem, row: Backend, dtype: Format, device: str,
                 mode: str) -> None:
        # the route of Spectral: the driver's lookup says so
        self.theorem, self.claim, self.row, self.dtype, self.mode = (
            theorem, cast(Spectral, theorem.claim), row, dtype, mode)
        self.module = row.load()
        self.device = row.devices()[device]
        self.xp = row.namespace(self.module, dtype)
        self.terms = self.claim.terms()
        common: Statements = dict(inputs=theorem.inputs, definitions=theorem.definitions)
        self.values: dict[SpectralTerm, Compiled] = {
            t: compile_expression(t.matrix, (t.row, t.column), target=row.target, **common)
            for t in self.terms}
        self.scales: dict[SpectralTerm, Compiled] = {
            t: compile_expression(t.matrix, (t.row, t.column), abs_scale=True, target="numpy",
                                  **common) for t in self.terms}
        measured = row.measured_as(dtype)
        self.eps = measured.epsilon
        self.limit = format_truth_ulps(measured)
        self._evaluators: dict[tuple[object, ...], Callable[[dict[str, Array]], Array]] = {}

    # -- evaluation ---------------------------------------------------------------------------

    def run(self, structure: strategies.Structure, batch: int) -> _Outcome:
        arrays = strategies.fill_batch(self.theorem, structure, batch)
        sizes = {**structure.size_map, "batch": batch}
        intervals: dict[SpectralTerm, Interval] = {}
        spectra: dict[SpectralTerm, Spectrum] = {}
        broken = np.zeros(batch, bool)
        for term in self.terms:
            matrices = self._matrices(term, arrays, sizes)
            with np.errstate(all="ignore"):
                scale = np.asarray(self.scales[term](np, arrays, sizes), np.float64)
                size = _frobenius(matrices) + _frobenius(scale)
            finite = np.isfinite(matrices).all(axis=(-2, -1)) & np.isfinite(size)
            broken |= ~finite
            singular = self._svd(np.where(finite[:, None, None], matrices, 0.0))
            delta = np.where(finite, self.limit * self.eps * size, np.inf)
            spectra[term] = (matrices, singular, delta)
            intervals[term] = _term_interval(term, singular, delta, matrices.shape[-2:])
        scalars = {s.name: np.asarray(arrays[s.name], np.float64) * np.ones(batch)
                   for s in self.theorem.scalars}
        walk = IntervalWalk(IntervalArithmetic(scalars, batch), structure.size_map, intervals)
        with np.errstate(all="ignore"):
            lhs, rhs = walk.eval(self.claim.lhs, {}), walk.eval(self.claim.rhs, {})
        failing = _fails(self.claim.relation_text, lhs, rhs) | broken
        undecided = ~failing & (_unbounded(lhs) | _unbounded(rhs))
        return _Outcome(arrays, spectra, (lhs, rhs), failing, undecided)

    def _matrices(self, term: SpectralTerm, arrays: dict[str, np.ndarray | int],
                  sizes: dict[str, int]) -> np.ndarray:
        with self.row.scope(self.device):
            placed = {k: (self.row.place(self.xp, v, self.dtype.storage, self.device)
                          if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}
            traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
            with np.errstate(all="ignore"):
                values = self._evaluator(term, placed, sizes)(traced)
        return np.asarray(to_numpy(values), np.float64)

    def _evaluator(self, term: SpectralTerm, placed: dict[str, Array],
                   sizes: dict[str, int]) -> Callable[[dict[str, Array]], Array]:
        statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
        key = (term, tuple(sorted(sizes.items())), statics)
        if key not in self._evaluators:
            def matrix(traced: dict[str, Array]) -> Array:
                return self.values[term](self.xp, {**traced, **dict(statics)}, sizes)

            self._evaluators[key] = self.row.compile(matrix) if self.mode == "jit" else matrix
        return self._evaluators[key]

    def _svd(self, matrices: np.ndarray) -> np.ndarray:
        """Singular values, largest first, by the backend's own SVD in the record's dtype."""
        return np.asarray(backend_linalg(self.row, self.module, self.xp, self.device, self.dtype,
                                         "svd", matrices, compute_uv=False), np.float64)

    # -- words -----------------------------------------------------------------------------------

    def tolerance_words(self) -> str:
        return (f"each singular value within delta = {self.limit:g} * eps * (||A||_F + "
                f"||abs-scale of A||_F), eps = {self.eps:.3g}")

    def describe(self, structure: strategies.Structure, outcome: _Outcome) -> dict[str, object]:
        instance = int(np.argwhere(outcome.failing)[0][0])
        (lhs_lo, lhs_hi), (rhs_lo, rhs_hi) = outcome.sides
        terms = {}
        for term, (matrices, singular, delta) in outcome.spectra.items():
            terms[str(term.func.__name__) + f" of {_short(matrices[instance])}"] = (
                f"singular values {_short(singular[instance])} (within {delta[instance]:.3g})")
        found = (f"lhs in [{lhs_lo[instance]:.6g}, {lhs_hi[instance]:.6g}], rhs in "
                 f"[{rhs_lo[instance]:.6g}, {rhs_hi[instance]:.6g}]")
        return {"sizes": structure.size_map,
                "values": {k: _short(v) for k, v in
                           strategies.instance_at(outcome.arrays, instance).items()},
                "terms": terms, "found": found}


# -- intervals -------------------------------------------------------------------------------------


def _term_interval(term: SpectralTerm, singular: np.ndarray, delta: np.ndarray,
                   shape: tuple[int, ...]) -> Interval:
    """The interval of one term per instance, from the singular values and their δ."""
    rows, columns = shape
    large = singular[:, 0] if singular.shape[-1] else np.zeros(len(delta))
    large_lo, large_hi = np.maximum(large - delta, 0.0), large + delta
    if rows < columns:  # fewer rows than columns: σ_min over the columns is 0 exactly
        small_lo = small_hi = np.zeros(len(delta))
    else:
        small = singular[:, columns - 1]
        small_lo, small_hi = np.maximum(small - delta, 0.0), small + delta
    if isinstance(term, SingularMax):
        return large_lo, large_hi
    if not isinstance(term, ConditionNumber):
        return small_lo, small_hi
    with np.errstate(all="ignore"):
        lo = np.where(small_hi > 0, np.maximum(1.0, large_lo / small_hi), np.inf)
        hi = np.where(small_lo > 0, large_hi / small_lo, np.inf)
    return lo, hi


class IntervalArithmetic:
    """The one as-written evaluator's arithmetic on intervals (lo, hi) per instance over the
    extended reals: each operation's result rounded outwards by one ulp at each end (a literal
    too, where the format does not hold it exactly), an undefined combination (∞ − ∞, 0 · ∞,
    the root of a negative number) widened to (−∞, ∞). The scalars are points."""

    decides_conditions = False

    def __init__(self, scalars: dict[str, np.ndarray], batch: int) -> None:
        self.scalars, self.batch = scalars, batch

    def point(self, value: float) -> Interval:
        full = np.full(self.batch, value)
        return full, full

    def literal(self, value: sp.Expr) -> Interval:
        number = float(value)
        if not value.is_finite or sp.Rational(number) == sp.Rational(value):
            return self.point(number)
        return _outward(*self.point(number))

    def exact(self, value: int) -> Interval:
        return self.literal(sp.Integer(value))

    size = exact

    def input(self, key: InputKey) -> Interval:
        value = self.scalars[str(key)]
        return value, value

    def add(self, a: Interval, b: Interval) -> Interval:
        return _outward(*_widened(a[0] + b[0], a[1] + b[1]))

    # x − max(…) is x + (−max(…)): no rounding of its own to know about on intervals
    subtract_maximum = add

    def negate(self, value: Interval) -> Interval:
        return -value[1], -value[0]

    def multiply(self, a: Interval, b: Interval) -> Interval:
        products = np.stack([a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]])
        return _outward(*_widened(products.min(axis=0), products.max(axis=0),
                                  np.isnan(products).any(axis=0)))

    def divide(self, a: Interval, b: Interval) -> Interval:
        return self.multiply(a, _outward(*_reciprocal(*b)))

    def sqrt(self, value: Interval) -> Interval:
        lo, hi = value
        roots = np.sqrt(np.maximum(lo, 0.0)), np.sqrt(np.maximum(hi, 0.0))
        return _outward(*_widened(*roots, lo < 0))

    def exp(self, value: Interval) -> Interval:
        return _outward(np.exp(value[0]), np.exp(value[1]))

    def log(self, value: Interval) -> Interval:
        lo, hi = value
        return _outward(*_widened(np.log(np.maximum(lo, 0.0)), np.log(np.maximum(hi, 0.0)),
                                  lo < 0))

    def maximum(self, operands: list[Interval], expr: sp.Expr, env: Env) -> Interval:
        return (np.max([lo for lo, _ in operands], axis=0),
                np.max([hi for _, hi in operands], axis=0))

    def power(self, base: Interval, exponent: sp.Expr) -> Interval:
        """base**exponent for an integer or half-integer exponent, as one operation: an even
        power of an interval across 0 starts at 0 (x · x, two operands, would not know that
        they are one)."""
        return _outward(*_power(base, exponent))


class IntervalWalk(AsWritten[IntervalArithmetic]):
    """A side of a spectral claim evaluated as written on intervals: a spectral term is its
    interval, and a power one operation (``IntervalArithmetic.power``); every other node by the
    evaluator's own rule."""

    def __init__(self, arithmetic: IntervalArithmetic, sizes: dict[str, int],
                 terms: dict[SpectralTerm, Interval]) -> None:
        super().__init__(arithmetic, sizes, fixed={})
        self.terms = terms

    def _rule_SpectralTerm(self, expr: SpectralTerm, env: Env) -> Interval:
        return self.terms[expr]

    def _rule_Pow(self, expr: sp.Pow, env: Env) -> Interval:
        return self.arithmetic.power(self.eval(expr.base, env), expr.exp)


def _power(base: Interval, exponent: sp.Expr) -> Interval:
    """base**exponent for an integer or half-integer exponent."""
    lo, hi = base
    if exponent.is_Rational and exponent.q == 2:  # x^(p/2) = (√x)^p, √ of a nonnegative x
        roots = np.sqrt(np.maximum(lo, 0.0)), np.sqrt(np.maximum(hi, 0.0))
        return _power(_widened(*roots, lo < 0), sp.Integer(exponent.p))
    if exponent < 0:
        lo, hi = _reciprocal(lo, hi)
        exponent = -exponent
    n = int(exponent)
    if n % 2:
        return lo**n, hi**n
    low = np.where(lo >= 0, lo**n, np.where(hi <= 0, hi**n, 0.0))
    return low, np.maximum(np.abs(lo), np.abs(hi)) ** n


def _reciprocal(lo: np.ndarray, hi: np.ndarray) -> Interval:
    """1/x over [lo, hi]; 1/0 = ∞ for a nonnegative quantity (κ = σ_max/σ_min = ∞ at σ_min = 0),
    an interval across 0 widens to (−∞, ∞)."""
    positive = lo > 0
    negative = hi < 0
    from_zero = (lo == 0) & (hi >= 0)
    new_lo = np.where(positive | negative, 1.0 / hi, np.where(from_zero, 1.0 / hi, -np.inf))
    new_hi = np.where(positive | negative, 1.0 / lo, np.inf)
    new_lo = np.where(from_zero & (hi == 0), np.inf, new_lo)
    return new_lo, new_hi


def _outward(lo: np.ndarray, hi: np.ndarray) -> Interval:
    """[lo, hi] widened by one ulp at each end: it holds the exact result of the operation
    whose rounded ends these are."""
    return np.nextafter(lo, -np.inf), np.nextafter(hi, np.inf)


def _widened(lo: np.ndarray, hi: np.ndarray,
             undefined: np.ndarray | None = None) -> Interval:
    bad = np.isnan(lo) | np.isnan(hi)
    if undefined is not None:
        bad = bad | undefined
    return np.where(bad, -np.inf, lo), np.where(bad, np.inf, hi)


def _fails(relation: str, lhs: Interval, rhs: Interval) -> np.ndarray:
    (lhs_lo, lhs_hi), (rhs_lo, rhs_hi) = lhs, rhs
    if relation == "=":
        return (lhs_lo > rhs_hi) | (rhs_lo > lhs_hi)
    if relation == "<=":
        return lhs_lo > rhs_hi
    return lhs_lo >= rhs_hi


def _unbounded(side: Interval) -> np.ndarray:
    lo, hi = side
    return ((hi == np.inf) & (lo < np.inf)) | (lo == -np.inf) | np.isnan(lo) | np.isnan(hi)


def _frobenius(values: np.ndarray) -> np.ndarray:
    return np.sqrt(np.sum(np.square(values), axis=(-2, -1)))


def _short(value: object) -> str:
    array = np.asarray(value, dtype=np.float64)
    return np.array2string(array, precision=4, suppress_small=True, max_line_width=200)
