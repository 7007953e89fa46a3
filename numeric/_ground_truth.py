"""Exact references: the claim evaluated with mpmath at 50 digits, and finite differences.

The float64 reference is itself only float64. For small sizes the expanded claim (definitions,
vocabulary and derivatives written out by SymPy, every sum unrolled) is evaluated with mpmath on
a few instances per record, and the record reports how far float64 strays from it, in ulps.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import mpmath
import numpy as np
import numpy.typing as npt
import sympy as sp

from attnproof.symbolic import (
    Indicator,
    Integer,
    ReduceMax,
    ReduceMin,
    Scalar,
    Tensor,
)
from attnproof.symbolic._theorem import free_indices

from . import _strategies as strategies
from ._plan import Evaluated, Plan, Runner, at_claimed_point, evaluate_reference, plan_for, wrt_name
from ._tolerance import FINITE_DIFFERENCE_ROUNDING_ULPS, REFERENCE_DTYPE, error_ulps

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem
    from attnproof.symbolic._kind import TwoSided

DIGITS = 50
SIZE = 2  # every dimension at this size (clamped to its range): unrolled sums stay small
INSTANCES = 2


def ground_truth_error(runner: Runner, structure: strategies.Structure,
                       evaluated: Evaluated | None = None) -> float | None:
    """Worst float64 error (ulps at the abs-scale) of ``runner``'s float64 values against mpmath
    on ``INSTANCES`` instances: those of ``evaluated`` (a batch of small sizes), else
    fresh ones at size ``SIZE`` seeded like ``structure``. None if the claim has no exact form
    here (an ``implementation`` has no SymPy lhs; its rhs is still compared)."""
    theorem = runner.plan.theorem
    if evaluated is None:
        structure = strategies.Structure(_small_sizes(theorem), structure.integers,
                                         structure.seed)
        evaluated = evaluate_reference(runner, structure, INSTANCES)
    try:
        exact = _exact_sides(theorem, structure.sizes)
    except (NotImplementedError, TypeError, ValueError, KeyError):
        return None
    reference, arrays = evaluated.reference, evaluated.inputs
    worst = 0.0
    for n in range(min(INSTANCES, len(reference["scale"]))):
        if evaluated.valid is not None and not evaluated.valid[n]:
            continue
        instance = strategies.instance_at(arrays, n)
        for name in reference.keys() - {"scale", "exponent_scale", "largest"}:
            side = "rhs" if name == "rhs" else "lhs"
            if exact.get(side) is None:
                continue
            truth = _exact_values(exact[side], instance)
            if truth is None:
                continue
            worst = max(worst, _finite_error(reference[name][n], truth, reference["scale"][n]))
    return worst


def _exact_values(function: Callable[[dict], np.ndarray], instance: dict) -> np.ndarray | None:
    """The 50-digit values of one instance, or None where the statement as written has no
    real value there (0/0, a complex logarithm): such an instance cannot be compared."""
    try:
        return function(instance)
    except (ZeroDivisionError, TypeError, ValueError, OverflowError):
        return None


def _finite_error(reference: npt.ArrayLike, truth: npt.ArrayLike, scale: npt.ArrayLike) -> float:
    """Worst error over the entries where float64, the exact value and the abs-scale are all
    finite: a NaN or ±∞ (in either) says nothing about float64's accuracy."""
    reference = np.asarray(reference, np.float64)
    truth = np.asarray(truth, np.float64).reshape(reference.shape)
    scale = np.broadcast_to(np.asarray(scale, np.float64), reference.shape)
    comparable = np.isfinite(reference) & np.isfinite(truth) & np.isfinite(scale)
    if not comparable.any():
        return 0.0
    error = error_ulps(reference[comparable], truth[comparable], scale[comparable],
                       REFERENCE_DTYPE)
    return float(error.max(initial=0.0))


def _small_sizes(theorem: Theorem) -> tuple[tuple[str, int], ...]:
    dims = theorem.dims
    sizes = strategies.flat_sizes_from_factors(
        dims, tuple(min(d.sizes.high, max(d.sizes.low, SIZE)) for d in dims))
    return tuple((d.name, n) for d, n in zip(dims, sizes, strict=True))


@functools.lru_cache(maxsize=128)
def _exact_sides(theorem: Theorem, sizes: tuple) -> dict:
    """``side -> instance -> float64 array`` of its entries computed at ``DIGITS`` digits."""
    plan = plan_for(theorem, "numpy")
    claim = cast("TwoSided", theorem.claim)  # a planned claim has two sides (``plan_for``)
    sides = {"rhs": sp.sympify(claim.rhs)}
    if theorem.implementation is None:
        sides["lhs"] = sp.sympify(claim.lhs)
    return {name: _exact_function(theorem, theorem.expand(expr), plan.out, dict(sizes))
            for name, expr in sides.items()}


_UNFLATTENED = sp.Function("unflattened")  # the identity, evaluated as a term of its own


def _exact_function(theorem: Theorem, expr: sp.Expr, out: tuple,
                    sizes: dict) -> Callable[[dict], np.ndarray]:
    """Every entry of ``expr`` at ``sizes`` as one mpmath function of the input arrays. Sums stay
    sums (lambdify loops over them), far cheaper than SymPy unrolling them with ``doit``; the
    free indices stay symbols too, arguments of one function called once per entry (rewriting
    and printing the expression once per entry took most of the reference's time)."""
    dims = {sp.Symbol(name, integer=True, positive=True): n for name, n in sizes.items()}
    ranges = [range(sizes[str(i.upper + 1)]) if isinstance(i, sp.Idx) else range(1) for i in out]
    labels = [str(i.label) for i in out]
    at = {str(i.label): sp.Symbol(f"_at_{i.label}", integer=True) for i in free_indices(expr)}
    entry = expr.xreplace({i: at[str(i.label)] for i in free_indices(expr)}).xreplace(dims)
    # maxima, minima and products (a masked softmax's "row fully masked" factor) over known ranges;
    # a product stays one term: flattened into Σ + 1 − m, 50 digits would lose a small Σ
    entry = entry.replace(lambda x: isinstance(x, (ReduceMax, ReduceMin)), lambda x: x.doit())
    entry = entry.replace(lambda x: isinstance(x, sp.Product),
                          lambda x: _UNFLATTENED(x.doit()))
    bases = sorted({a.base for a in entry.atoms(sp.Indexed)}, key=str)
    positions = [at[label] for label in labels if label in at]
    symbols = sorted({s for s in entry.free_symbols
                      if isinstance(s, sp.Symbol) and not isinstance(s, sp.Idx)}
                     - {b.label for b in bases} - set(positions), key=str)
    function = sp.lambdify(bases + symbols + positions, entry,
                           modules=[{_UNFLATTENED.__name__: lambda value: value,
                                     Indicator.__name__: lambda holds: 1 if holds else 0},
                                    "mpmath"])

    def evaluate(instance: dict) -> np.ndarray:
        with mpmath.workdps(DIGITS):
            arguments: list[np.ndarray | int | mpmath.mpf] = [_mp_array(instance[str(b.label)])
                                                              for b in bases]
            arguments += [_scalar(instance, s) for s in symbols]
            values = [function(*arguments, *(v for label, v in zip(labels, where, strict=True)
                                             if label in at))
                      for where in itertools.product(*ranges)]
        return np.array([_real(v) for v in values], dtype=np.float64)

    return evaluate


def _real(value: mpmath.mpf | mpmath.mpc) -> float:
    """A real mpmath value as a float (±∞ and NaN included); a complex one raises TypeError."""
    if isinstance(value, mpmath.mpc):
        if value.imag != 0:
            raise TypeError("the statement has a complex value here")
        value = value.real
    return float(value)


def _mp_array(values: npt.ArrayLike) -> np.ndarray:
    return np.vectorize(mpmath.mpf, otypes=[object])(np.asarray(values, np.float64))


def _scalar(instance: dict, symbol: sp.Symbol) -> int | mpmath.mpf:
    if symbol.name not in instance:
        raise ValueError(f"no value for {symbol}")
    value = instance[symbol.name]
    return int(value) if isinstance(value, int) else mpmath.mpf(float(np.asarray(value)))


# -- finite differences, the tie-breaker ---------------------------------------------------


@dataclass(frozen=True)
class FiniteDifference:
    """A central difference and a bound on its distance from the true derivative."""

    estimate: float
    step: float
    uncertainty: float


def finite_difference(plan: Plan, instance: dict, entry: dict, sizes: dict) -> FiniteDifference:
    """Central difference of the primal's entry along the differentiated input's entry, in
    float64 on NumPy, with step cbrt(eps) * max(1, |x|), and its uncertainty (see
    ``FINITE_DIFFERENCE_ROUNDING_ULPS``)."""
    theorem = plan.theorem
    primal = plan_for(theorem, "numpy").primal
    assert primal is not None  # a derivative claim's plan, the only one differentiated
    arrays: dict = {item.name: _one_row(item, instance[item.name]) for item in theorem.inputs}
    arrays, _ = at_claimed_point(theorem, arrays)
    name = wrt_name(plan)
    position = (0,) + tuple(entry[str(i.label)] for i in getattr(plan.wrt, "indices", ()))
    out = (0,) + tuple(entry[str(i.label)] for i in primal.out)
    x = float(arrays[name][position])
    eps = REFERENCE_DTYPE.epsilon
    step = float(np.cbrt(eps)) * max(1.0, abs(x))
    sizes = {**sizes, "batch": 1}

    def at(value: float) -> float:
        moved = np.array(arrays[name], dtype=np.float64)
        moved[position] = value
        with np.errstate(all="ignore"):
            return float(primal(np, {**arrays, name: moved}, sizes)[out])

    def central(h: float) -> tuple[float, float]:
        upper, lower = x + h, x - h
        ends = at(upper), at(lower)
        return (ends[0] - ends[1]) / (upper - lower), max(abs(ends[0]), abs(ends[1]))

    (fine, size), (coarse, _) = central(step), central(2 * step)
    rounding = FINITE_DIFFERENCE_ROUNDING_ULPS * eps * size / step
    return FiniteDifference(fine, step, abs(fine - coarse) + rounding)


def _one_row(item: Tensor | Scalar, value: np.ndarray | int) -> np.ndarray | int:
    if isinstance(item.domain, Integer):
        return value
    array = np.asarray(value, dtype=np.float64)
    return array[None] if isinstance(item, Tensor) else array.reshape(1)
