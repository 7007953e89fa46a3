"""The claimed value of a limit over a row of scores, evaluated exactly from each drawn row.

A limit's value may say which entries are maxima (an indicator or ``Piecewise`` of
``Eq(S[i, j], rowmax(S[i, k], k))``, a product over earlier keys for the first of them), which
the array compiler does not spell; writing it out symbolically per size is slow. It is
evaluated by the one "as written" evaluator (``AsWritten``, ``symbolic/_as_written.py``) with
an arithmetic of float64 NumPy columns, every row at once: the value is a function of the
entries of one row (``Limit.validate`` checks that), so an entry ``S[i, k]`` is column k of
the rows, and a condition is decided per row (equality of scores drawn on a grid of
half-integers is exact).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np
import sympy as sp

from attnproof.symbolic.route import AsWritten, loop_key

from ..route import Array
from ._evaluate import ArrayArithmetic

if TYPE_CHECKING:
    from attnproof.symbolic import Limit, Theorem
    from attnproof.symbolic.route import InputKey

_COMPARE = {"==": operator.eq, "!=": operator.ne, "<=": operator.le, "<": operator.lt,
            ">=": operator.ge, ">": operator.gt}


def row_function(theorem: Theorem, claim: Limit, expr: sp.Expr, out: Sequence[sp.Idx]
                 ) -> Callable[[np.ndarray, dict[str, int]], np.ndarray]:
    """``f(scores, sizes)``: ``expr`` for every row of ``scores`` (batch, *leading, n), shaped
    (batch, *sizes of ``out``)."""
    expr = theorem.expand_definitions(expr)
    # a limit over a row of scores: the route walks rows only where the claim names one
    row = cast("sp.Indexed", claim.row)
    leading = row.indices[:-1]
    if tuple(out[:len(leading)]) != tuple(leading) or len(out) > len(leading) + 1:
        raise NotImplementedError(f"the free indices {out} are not the row's {row.indices}")
    loops_row = len(out) == len(leading) + 1
    # the rows are flattened: a leading index names no column, so any value of it will do
    at_row = {loop_key(index): sp.Integer(0) for index in leading}

    def function(scores: np.ndarray, sizes: dict[str, int]) -> np.ndarray:
        rows = scores.reshape(-1, scores.shape[-1])
        evaluation = AsWritten(RowArithmetic(rows), sizes, fixed={})
        with np.errstate(all="ignore"):
            if loops_row:
                columns = [evaluation.eval(expr, {**at_row, loop_key(out[-1]): sp.Integer(k)})
                           for k in range(rows.shape[-1])]
                result = np.stack([np.broadcast_to(c, len(rows)) for c in columns], axis=-1)
                return result.reshape(scores.shape)
            result = np.broadcast_to(evaluation.eval(expr, at_row), len(rows))
        return result.reshape(scores.shape[:-1])

    return function


class RowArithmetic(ArrayArithmetic):
    """Exact float64 values of every row at once (a column per entry); conditions decided per
    row."""

    decides_conditions = True

    def __init__(self, rows: np.ndarray) -> None:
        super().__init__(np)
        self.rows = rows

    def literal(self, value: sp.Expr) -> float:
        return float(value)

    def exact(self, value: int) -> float:
        return float(value)

    def size(self, value: int) -> float:
        return float(value)

    def input(self, key: InputKey) -> np.ndarray:
        if isinstance(key, str):
            raise NotImplementedError(f"the limit's value depends on {key}")
        _, indices = key
        return self.rows[:, indices[-1]]

    def divide(self, a: Array, b: Array) -> Array:
        # literals here are Python floats, and 1.0 / 0.0 raises where a row's value is ±inf
        return np.divide(a, b)

    def power(self, base: Array, exponent: Array) -> Array:
        return np.power(np.asarray(base, dtype=float), exponent)

    def compare(self, relation: str, a: Array, b: Array) -> Array:
        return _COMPARE[relation](a, b)

    def both(self, a: Array, b: Array) -> Array:
        return np.logical_and(a, b)

    def either(self, a: Array, b: Array) -> Array:
        return np.logical_or(a, b)

    def negation(self, value: Array) -> Array:
        return np.logical_not(value)

    def select(self, holds: Array, a: Array, b: Array) -> Array:
        return np.where(holds, a, b)
