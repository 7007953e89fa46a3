"""Whether a kernel's output stays within the proved error bound of the precision it declares.

The catalog proves, for every n and every block size b, the error of the block-wise (flash)
algorithm evaluated in a format with unit roundoff u (``theorems/rounding.py``,
``online_softmax_blockwise_error_bound``): |ŷ − y| ≤ ((1 + γ_K)·e^X − 1)·A, with A the row's
abs-scale Σ_j A_ij |V_je|, K = 2·c_exp + 2b + 2(⌈n/b⌉ − 1)(c_exp + 2) and X = 2u·spread. A
kernel does not say its block size, so the bound used is the largest over block sizes, at
b = 1 (for n ≥ 2, K(b) ≤ K(1) for every b: 2(b − 1) is less than the 2(c_exp + 2)(n − ⌈n/b⌉)
the larger blocks save). Two more roundings are the kernel's and enter as the analysis
prescribes:

* the scores: the kernel computes s_ij = scale·Σ_a q_ia k_ja itself, off by at most
  δ_ij = γ_(d_k + 1)·scale·Σ_a |q_ia||k_ja| (d_k products, d_k − 1 additions, the scale); a score
  off by δ moves its weight by a factor e^(±δ) and the row's spread by at most 2δ, so
  X = 2u(spread + 2δ) + 2δ with δ the row's largest;
* the output: computed in ``compute`` and rounded to ``dtype`` at the end, one more rounding,
  |fl(ŷ) − y| ≤ (B + u_dtype(1 + B))·A;
* inputs of a wider ``dtype`` than ``compute``: rounded into it first, q and k two more
  roundings in a score, v one more in every term.

u and c_exp are the rounding model's for the kernel's framework and compute precision
(``numeric/_rounding.ROUNDING_MODEL``, checked on every catalog run); a framework
without a model, a score bias or modification (outside the proved statement), or a row whose
count·u ≥ 1 gets no bound. The ratio is reported beside the conformance rule, not instead of
it: a kernel above 1 computes less accurately than any block-wise evaluation the model allows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

import numpy as np
import sympy as sp

from attnproof.numeric import ROUNDING_MODEL
from attnproof.symbolic.kinds.error_bound import c_exp as c_exp_symbol

from ._truth import Inputs

if TYPE_CHECKING:
    from attnproof.symbolic import Format
    from attnproof.symbolic.kinds.error_bound import ErrorBound


class _RoundingModel(Protocol):
    """What the bound reads of a row of ``ROUNDING_MODEL``: the unit roundoff, and exp's
    accuracy in units of it."""

    @property
    def u(self) -> float: ...
    @property
    def c_exp(self) -> int: ...


@functools.cache
def count_any_block() -> Callable[..., Any]:
    """The proved count at block size 1, as a function of n (the row's kept keys) and c_exp."""
    from attnproof.theorems import rounding

    # the theorem's claim is an ErrorBound (theorems/rounding.py declares it so)
    claim = cast("ErrorBound", rounding.online_softmax_blockwise_error_bound.claim)
    count = claim.count.subs(rounding.b, 1)
    return sp.lambdify((rounding.n, c_exp_symbol), count, "numpy")


def row_bounds(x: Inputs, dtype: Format, compute: Format, framework: str) -> np.ndarray | None:
    """The proved bound B of each query row (b, h, n_q), relative to the row's abs-scale A
    (NaN for a row without one); None where no bound applies."""
    model = ROUNDING_MODEL.get((framework, compute.name))
    if model is None or x.bias is not None or x.score_mod is not None:
        return None
    return _bound(x, model, dtype, compute)


def bound_ratio(x: Inputs, out: np.ndarray, exact: np.ndarray, size: np.ndarray, dtype: Format,
                compute: Format, framework: str, rows: np.ndarray,
                bound: np.ndarray | None = None) -> float | None:
    """The largest |out − exact| over the proved bound, over the rows that have one
    (``bound``: :func:`row_bounds`, when already computed)."""
    if bound is None:
        bound = row_bounds(x, dtype, compute, framework)  # (b, h, n_q), NaN where none
    if bound is None:
        return None
    with np.errstate(all="ignore"):
        limit = (bound[..., None] * size)
        ratio = np.abs(out - exact) / limit
    usable = rows & np.isfinite(bound)
    ratio = np.where(np.isfinite(ratio), ratio, np.inf)[usable]
    return float(ratio.max()) if ratio.size else None


def _bound(x: Inputs, model: _RoundingModel, dtype: Format, compute: Format) -> np.ndarray:
    k = np.repeat(x.k, x.group, axis=1)
    scores = x.scale * np.einsum("bhqd,bhkd->bhqk", x.q, k)
    magnitudes = abs(x.scale) * np.einsum("bhqd,bhkd->bhqk", np.abs(x.q), np.abs(k))
    u = model.u
    d_k = x.q.shape[-1]
    # inputs of a wider format are rounded into the compute precision first: q and k once
    # each (two more roundings in a score), v once (one more in a term)
    narrowed = compute.unit_roundoff > dtype.unit_roundoff
    delta = (_gamma(d_k + 1 + 2 * narrowed, u)
             * np.max(np.where(x.keep, magnitudes, 0.0), axis=-1))
    kept_scores_high = np.max(np.where(x.keep, scores, -np.inf), axis=-1)
    kept_scores_low = np.min(np.where(x.keep, scores, np.inf), axis=-1)
    spread = kept_scores_high - kept_scores_low
    n = x.keep.sum(axis=-1)
    count = count_any_block()(n, model.c_exp) + narrowed
    with np.errstate(all="ignore"):
        gamma = np.where(count * u < 1, count * u / (1 - count * u), np.nan)
        exponent = 2 * u * (spread + 2 * delta) + 2 * delta
        bound = gamma + (1 + gamma) * np.expm1(exponent)
    if compute != dtype:  # the output rounded once more, into the declared precision
        unit = dtype.unit_roundoff
        bound = bound + unit * (1 + bound)
    return np.where(n > 0, bound, np.nan)


def _gamma(count: int, u: float) -> float:
    return count * u / (1 - count * u)

