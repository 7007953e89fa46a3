"""The claimed value of a limit over a row of scores, evaluated exactly from each drawn row.

A limit's value may say which entries are maxima (an indicator or ``Piecewise`` of
``Eq(S[i, j], rowmax(S[i, k], k))``, a product over earlier keys for the first of them), which
the array compiler does not spell; writing it out symbolically per size is slow. This
evaluates it directly in float64 NumPy over every row at once: the value is a function of the
entries of one row (``Limit.validate`` checks that), and equality of scores drawn on a grid of
half-integers is exact.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
import sympy as sp

from attnproof.symbolic import Indicator, ReduceMax, ReduceMin

_RELATIONS = {sp.Eq: operator.eq, sp.Ne: operator.ne, sp.Le: operator.le, sp.Lt: operator.lt,
              sp.Ge: operator.ge, sp.Gt: operator.gt}
_FUNCTIONS = {sp.log: np.log, sp.exp: np.exp, sp.Abs: np.abs, sp.sqrt: np.sqrt}


def row_function(theorem, claim, expr, out) -> Callable[[np.ndarray, dict], np.ndarray]:
    """``f(scores, sizes)``: ``expr`` for every row of ``scores`` (batch, *leading, n), shaped
    (batch, *sizes of ``out``)."""
    expr = theorem.expand_definitions(expr)
    leading = claim.row.indices[:-1]
    if tuple(out[:len(leading)]) != tuple(leading) or len(out) > len(leading) + 1:
        raise NotImplementedError(f"the free indices {out} are not the row's {claim.row.indices}")
    loops_row = len(out) == len(leading) + 1

    def function(scores: np.ndarray, sizes: dict) -> np.ndarray:
        rows = scores.reshape(-1, scores.shape[-1])
        values = _Evaluator(rows, sizes)
        if loops_row:
            columns = [values.of(expr, {out[-1]: k}) for k in range(rows.shape[-1])]
            result = np.stack([np.broadcast_to(c, len(rows)) for c in columns], axis=-1)
            return result.reshape(scores.shape)
        result = np.broadcast_to(values.of(expr, {}), len(rows))
        return result.reshape(scores.shape[:-1])

    return function


class _Evaluator:
    def __init__(self, rows: np.ndarray, sizes: dict):
        self.rows, self.sizes = rows, sizes

    def of(self, expr, env: dict):
        with np.errstate(all="ignore"):
            return self._value(expr, env)

    def _index(self, expr, env) -> int:
        value = self._value(expr, env)
        return int(value)

    def _value(self, expr, env):  # noqa: C901 - one branch per node kind
        if expr in env:
            return env[expr]
        if isinstance(expr, sp.Idx) and expr.label in env:
            return env[expr.label]
        if expr.is_Number or expr in (sp.true, sp.false):
            return float(expr) if expr.is_Number else bool(expr)
        if isinstance(expr, sp.Symbol):
            if expr.name in self.sizes:
                return self.sizes[expr.name]
            raise NotImplementedError(f"the limit's value depends on {expr}")
        if isinstance(expr, sp.Indexed):
            return self.rows[:, self._index(expr.indices[-1], env)]
        if isinstance(expr, (sp.Sum, sp.Product, ReduceMax, ReduceMin)):
            return self._reduce(expr, env)
        if isinstance(expr, sp.Piecewise):
            return self._piecewise(expr, env)
        if isinstance(expr, Indicator):
            return np.where(self._value(expr.condition, env), 1.0, 0.0)
        if isinstance(expr, (sp.And, sp.Or)):
            combine = np.logical_and if isinstance(expr, sp.And) else np.logical_or
            result = self._value(expr.args[0], env)
            for arg in expr.args[1:]:
                result = combine(result, self._value(arg, env))
            return result
        if isinstance(expr, sp.Not):
            return np.logical_not(self._value(expr.args[0], env))
        if type(expr) in _RELATIONS:
            return _RELATIONS[type(expr)](self._value(expr.lhs, env), self._value(expr.rhs, env))
        if isinstance(expr, sp.Add):
            return sum(self._value(a, env) for a in expr.args)
        if isinstance(expr, sp.Mul):
            product = 1.0
            for factor in expr.args:
                product = product * self._value(factor, env)
            return product
        if isinstance(expr, sp.Pow):
            return np.power(np.asarray(self._value(expr.base, env), dtype=float),
                            self._value(expr.exp, env))
        if isinstance(expr, (sp.Max, sp.Min)):
            pick = np.maximum if isinstance(expr, sp.Max) else np.minimum
            values = [self._value(a, env) for a in expr.args]
            result = values[0]
            for value in values[1:]:
                result = pick(result, value)
            return result
        if type(expr) in _FUNCTIONS:
            return _FUNCTIONS[type(expr)](self._value(expr.args[0], env))
        raise NotImplementedError(f"cannot evaluate {type(expr).__name__} in a limit's value")

    def _reduce(self, expr, env):
        (index, low, high), = expr.limits
        values = [self._value(expr.function, {**env, index: k})
                  for k in range(self._index(low, env), self._index(high, env) + 1)]
        values = [np.broadcast_to(np.asarray(v, dtype=float), len(self.rows)) for v in values]
        if isinstance(expr, ReduceMax):
            return np.max(values, axis=0)
        if isinstance(expr, ReduceMin):
            return np.min(values, axis=0)
        if isinstance(expr, sp.Product):
            return np.prod(values, axis=0) if values else 1.0
        return np.sum(values, axis=0) if values else 0.0

    def _piecewise(self, expr, env):
        result = np.full(len(self.rows), np.nan)
        decided = np.zeros(len(self.rows), dtype=bool)
        for value, condition in expr.args:
            holds = np.broadcast_to(self._value(condition, env), len(self.rows)) & ~decided
            result = np.where(holds, np.broadcast_to(self._value(value, env), len(self.rows)),
                              result)
            decided |= holds
        return result
