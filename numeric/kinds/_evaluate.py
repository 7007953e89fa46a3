"""Shared by the numeric routes of the claim kinds (limit, series, existence, implication, ...):
evaluating one expression of a theorem on a backend, in a dtype, on a batch of inputs."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
import sympy as sp

from attnproof.symbolic import Positive

from ..route import (
    Array,
    ArrayModule,
    Backend,
    NativeDevice,
    compile_expression,
    run_route_program,
    to_numpy,
)

if TYPE_CHECKING:
    from attnproof.symbolic import Defined, Domain, Format, Scalar, Tensor, Theorem
    from attnproof.symbolic.route import Env

    from .. import Compiled
    from ..route import Array, ArrayModule, NativeDevice


class Statements(TypedDict):
    """The keywords of ``compile_expression`` a route passes on to each of its statements: the
    theorem's inputs and definitions."""

    inputs: Sequence[Tensor | Scalar]
    definitions: Sequence[Defined]


class TargetedStatements(Statements):
    """... and the compiler target, where every statement is compiled for the same one."""

    target: str


def backend_linalg(row: Backend, module: ArrayModule, xp: ArrayModule, device: NativeDevice,
                   dtype: Format, name: str, matrices: np.ndarray, **keywords: Any) -> np.ndarray:
    """``module.linalg.<name>(matrices, **keywords)`` on the backend's device, the matrices
    placed in ``dtype``, as NumPy; on the CPU stream where the backend's solvers run only there
    (MLX's SVD and eigen solvers)."""
    with row.scope(device):
        placed = row.place(xp, matrices, dtype.storage, device)
        if row.linalg_on_cpu:
            keywords["stream"] = module.cpu
        return to_numpy(getattr(module.linalg, name)(placed, **keywords))


def evaluate(theorem: Theorem, expr: sp.Expr, out: Sequence[sp.Idx], row: Backend, dtype: Format,
             device: str, mode: str, arrays: dict[str, np.ndarray],
             sizes: dict[str, int]) -> np.ndarray:
    """``expr`` compiled for ``row``'s array module and evaluated on ``arrays`` (float64 NumPy
    arrays with a leading batch axis), placed in ``dtype``; the result as float64 NumPy."""
    compiled = compile_expression(expr, out, inputs=theorem.inputs,
                                  definitions=theorem.definitions, target=row.target)
    xp = row.namespace(row.load(), dtype)
    return run_compiled(row, xp, compiled, arrays, sizes, dtype, device, mode, theorem.name)


def run_compiled(row: Backend, xp: ArrayModule, compiled: Compiled,
                 arrays: dict[str, np.ndarray], sizes: dict[str, int], dtype: Format, device: str,
                 mode: str, owner: str) -> np.ndarray:
    """A compiled statement run on ``row``'s device: ``arrays`` (float64 NumPy) placed in
    ``dtype``, jitted in jit mode; the result as float64 NumPy. ``owner`` names the theorem
    whose route runs it, under which its compiled program is stored."""
    place = row.devices()[device]
    with row.scope(place):
        placed = {k: row.place(xp, v, dtype.storage, place) for k, v in arrays.items()}
        with np.errstate(all="ignore"):  # overflow shows up as inf/nan and is judged there
            if mode != "jit":
                return to_numpy(compiled(xp, placed, sizes))
            shape = tuple(sorted(sizes.items()))
            run = _jitted(row, dtype, compiled, shape, xp)
            if not row.stores_executables:
                return to_numpy(run(placed))
            return to_numpy(run_route_program(f"{owner}.{mode}", f"{compiled.source}\n{shape}",
                                              run, placed, place))


def run_kept(row: Backend, xp: ArrayModule, device: NativeDevice, dtype: Format, mode: str,
             kept: dict[tuple[object, ...], Callable[[dict[str, Array]], Array]],
             name: object, compiled: Compiled, arrays: dict[str, np.ndarray | int],
             sizes: dict[str, int]) -> np.ndarray:
    """``compiled`` on ``arrays`` (float64 NumPy arrays, Python ints for Integer inputs) placed
    in ``dtype`` on ``device`` (the backend's device object), jitted in jit mode once per
    ``name``, sizes and integers and kept in ``kept`` (the caller's, for its checks); the
    result as float64 NumPy."""
    with row.scope(device):
        placed = {k: (row.place(xp, v, dtype.storage, device) if isinstance(v, np.ndarray) else v)
                  for k, v in arrays.items()}
        traced = {k: v for k, v in placed.items() if hasattr(v, "shape")}
        statics = tuple(sorted((k, v) for k, v in placed.items() if not hasattr(v, "shape")))
        key = (name, tuple(sorted(sizes.items())), statics)
        if key not in kept:
            def value(traced: dict[str, Array],
                      statics: tuple[tuple[str, Array], ...] = statics) -> Array:
                return compiled(xp, {**traced, **dict(statics)}, sizes)

            kept[key] = row.compile(value) if mode == "jit" else value
        with np.errstate(all="ignore"):
            result = kept[key](traced)
    return np.asarray(to_numpy(result), np.float64)


@functools.lru_cache(maxsize=1024)
def _jitted(row: Backend, dtype: Format, compiled: Compiled, sizes: tuple[tuple[str, int], ...],
            xp: ArrayModule) -> Callable[[dict[str, Array]], Array]:
    """One jitted program per expression, sizes and format, kept for the process: a backend
    caches what it compiled per jitted function, so a function made afresh for every call
    would be traced and lowered again each time. (``xp`` follows from ``row`` and ``dtype``.)"""
    bound = dict(sizes)
    return row.compile(lambda traced: compiled(xp, traced, bound))


def draw_uniform(domain: Domain, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Values from a domain: log-uniform for ``Positive``, uniform on [low, high] otherwise."""
    if isinstance(domain, Positive):
        return np.exp(rng.uniform(math.log(domain.low), math.log(domain.high), size=shape))
    return rng.uniform(getattr(domain, "low", -1.0), getattr(domain, "high", 1.0), size=shape)


class ArrayArithmetic:
    """The element-wise operations of an arithmetic of ``AsWritten`` (the one as-written
    evaluator, ``symbolic/_as_written.py``) on the array module ``xp``: each operation one call,
    the maximum and minimum NaN-propagating. A route's arithmetic adds how its literals and
    inputs become arrays (IEEE values: a backend's arrays in a dtype; a limit's row values:
    float64 rows; the error bounds: arrays along axes, ``_along_axes.py``)."""

    # a condition is decided by the fixed inputs and the indices (a limit's rows decide theirs)
    decides_conditions = False

    def __init__(self, xp: ArrayModule) -> None:
        self.xp = xp

    def seen(self, value: Array) -> Array:
        """Every result passes here: an arithmetic that watches its intermediate values (the
        error bounds' range watch) looks at it."""
        return value

    def add(self, a: Array, b: Array) -> Array:
        return self.seen(a + b)

    # x − max(…) is x + (−max(…)) in floating point
    def subtract_maximum(self, x: Array, minus_max: Array) -> Array:
        return self.add(x, minus_max)

    def negate(self, value: Array) -> Array:
        return -value

    def multiply(self, a: Array, b: Array) -> Array:
        return self.seen(a * b)

    def divide(self, a: Array, b: Array) -> Array:
        return self.seen(a / b)

    def sqrt(self, value: Array) -> Array:
        return self.seen(self.xp.sqrt(value))

    def exp(self, value: Array) -> Array:
        return self.seen(self.xp.exp(value))

    def log(self, value: Array) -> Array:
        return self.seen(self.xp.log(value))

    def absolute(self, value: Array) -> Array:
        return self.seen(self.xp.abs(value))

    def maximum(self, operands: Sequence[Array], expr: sp.Expr | None = None,
                env: Env | None = None) -> Array:
        return _pairwise(self.xp.maximum, operands)

    def minimum(self, operands: Sequence[Array]) -> Array:
        return _pairwise(self.xp.minimum, operands)


def _pairwise(extremum: Callable[[Array, Array], Array], operands: Sequence[Array]) -> Array:
    """The operands' maximum or minimum, one pair at a time: NaN-propagating, as IEEE 754-2019
    maximum and minimum."""
    total = operands[0]
    for item in operands[1:]:
        total = extremum(total, item)
    return total
