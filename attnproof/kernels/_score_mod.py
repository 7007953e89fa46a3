"""Score modifications a kernel applies between its scores and its softmax: a declared
``score_mod(score, batch, head, i, j)`` written in SymPy, or soft-capping c·tanh(s/c).

The expression is the mathematics; its value and its derivative with respect to the score are
evaluated in float64 from it, so the truth's backward pass is the chain rule through the
declared function, not through the kernel's own code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import sympy as sp

SYMBOLS = sp.symbols("score batch head i j", real=True)
POSITIONS = frozenset(SYMBOLS[3:])


@dataclass(frozen=True)
class ScoreMod:
    """A score modification f: its expression in :data:`SYMBOLS`, and as functions of
    (score, batch, head, i, j): f, f' = df/dscore, f' with each term taken in absolute value
    (its size, against which evaluating it rounds: 1 + tanh² for 1 - tanh²), and f''."""

    expression: sp.Expr
    value: Callable
    slope: Callable
    slope_size: Callable
    curvature: Callable

    @property
    def reads_positions(self) -> bool:
        """Whether the value depends on i or j (so a half of the keys cannot be run alone)."""
        return bool(self.expression.free_symbols & POSITIONS)

    def on(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(value, slope) at ``scores`` (b, h, n_q, n_k), each score at its own indices,
        evaluated in the scores' own precision (float32 scores: float32 arithmetic, as a plain
        kernel's, with the same cancellation in 1 - tanh²)."""
        grids = np.meshgrid(*(np.arange(n, dtype=scores.dtype) for n in scores.shape),
                            indexing="ij", sparse=True)
        with np.errstate(all="ignore"):
            return (np.broadcast_to(self.value(scores, *grids), scores.shape),
                    np.broadcast_to(self.slope(scores, *grids), scores.shape))

    def slope_sensitivity(self, scores: np.ndarray) -> np.ndarray:
        """The size of f'(s)'s terms plus |s f''(s)|: what evaluating f' and rounding s by eps
        relative move f' by, in units of eps; a plain kernel's backward cannot do better."""
        grids = np.meshgrid(*(np.arange(n, dtype=scores.dtype) for n in scores.shape),
                            indexing="ij", sparse=True)
        with np.errstate(all="ignore"):
            size, curvature = (np.broadcast_to(f(scores, *grids), scores.shape)
                               for f in (self.slope_size, self.curvature))
            return np.abs(size) + np.abs(scores * curvature)


@functools.cache
def from_callable(score_mod: Callable) -> ScoreMod:
    """The :class:`ScoreMod` of ``score_mod`` called once with SymPy symbols.

    Raises:
        TypeError: when it does not return a SymPy expression of those symbols.
    """
    expression = sp.sympify(score_mod(*SYMBOLS))
    if not isinstance(expression, sp.Expr) or not expression.free_symbols <= set(SYMBOLS):
        raise TypeError(f"returned {expression!r}, not an expression of {SYMBOLS}")
    slope = sp.diff(expression, SYMBOLS[0])
    curvature = sp.diff(slope, SYMBOLS[0])
    return ScoreMod(expression, *(sp.lambdify(SYMBOLS, e, "numpy")
                                  for e in (expression, slope, _size(slope), curvature)))


def _size(expression: sp.Expr) -> sp.Expr:
    """``expression`` with every sum's terms and every product's factors in absolute value."""
    if expression.is_Add or expression.is_Mul:
        return expression.func(*(_size(a) for a in expression.args))
    if expression.is_Pow and expression.exp.is_Integer:
        return _size(expression.base) ** expression.exp
    return sp.Abs(expression)


@functools.cache
def softcap(cap: float) -> ScoreMod:
    """cap·tanh(score/cap)."""
    return from_callable(functools.partial(_capped, cap))


def _capped(cap: float, score: sp.Expr, batch: sp.Symbol, head: sp.Symbol, i: sp.Symbol,
            j: sp.Symbol) -> sp.Expr:
    return cap * sp.tanh(score / cap)
