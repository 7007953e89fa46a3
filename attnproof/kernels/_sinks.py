"""Attention sinks: a logit s_h per query head added to every row's softmax denominator,
a_ij = e^{x_ij} / (e^{s_h} + Σ_k e^{x_ik}), and the lse log(e^{s_h} + Σ_k e^{x_ik}).

This is the softmax over the keys with the sink appended as one more key, whose score is s_h
and whose value is 0, and the truth is built that way: the masking statements' truth of the
instance with that key appended (its score through the bias, its K and V rows zero, kept by
every row), and the appended key's rows of dK and dV left out. The catalog proves what the
sink does to the weights, the lse and a split-KV merge (``theorems/production_features.py``);
the appended key itself the prover reaches only for small sizes, so
``tests/kernels/test_sinks_windows.py`` holds this truth to the sink written in the
denominator, output, lse and gradients.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ._truth import Inputs

# how a case's sink values are drawn per head, from the lse of the head's rows: comparable to
# them (e^s about Σ e^x: the sink takes a share of every row), far above them (the sink takes
# most of the weight), far below them (the sink takes none: a kernel that drops it still
# conforms, so binding cases are what decide), or each head its own of these
SINKS = ("comparable", "dominant", "negligible", "mixed")
SINK_KINDS = SINKS[:3]
# how far above or below the rows' lse a dominant or negligible sink lies
DOMINANT_ABOVE = (2.0, 6.0)
NEGLIGIBLE_BELOW = (40.0, 80.0)


def sink_values(kind: str, lse: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(h,): one sink logit per query head, from ``lse`` (b, h, n_q) of the rows without it."""
    heads = lse.shape[1]
    kinds = rng.choice(SINK_KINDS, size=heads) if kind == "mixed" else [kind] * heads
    return np.array([_one(str(k), lse[:, h], rng) for h, k in enumerate(kinds)])


def _one(kind: str, lse: np.ndarray, rng: np.random.Generator) -> float:
    finite = lse[np.isfinite(lse)]
    if finite.size == 0:  # no row keeps a key: any sink takes all the weight
        return float(rng.standard_normal())
    if kind == "comparable":
        return float(np.median(finite) + rng.standard_normal())
    if kind == "dominant":
        return float(np.max(finite) + rng.uniform(*DOMINANT_ABOVE))
    return float(np.min(finite) - rng.uniform(*NEGLIGIBLE_BELOW))


def with_sink_key(x: Inputs) -> Inputs:
    """The instance ``x`` (an ``Inputs`` with sinks) as the catalog's statement reads it: one
    more key, last, of score s_h in every row of head h (a bias column; K and V rows zero),
    kept by every row; the arrays the kernel received (``given``) are not the truth's."""
    assert x.sinks is not None  # an instance with sinks: _run calls this only for those
    b, h, n_q, n_k = x.keep.shape
    zero_key = np.zeros((*x.k.shape[:2], 1, x.k.shape[3]))
    zero_value = np.zeros((*x.v.shape[:2], 1, x.v.shape[3]))
    bias = np.zeros((b, h, n_q, n_k)) if x.bias is None else np.asarray(x.bias, np.float64)
    column = np.broadcast_to(x.sinks[None, :, None, None], (b, h, n_q, 1))
    return dataclasses.replace(
        x, k=np.concatenate([x.k, zero_key], axis=2), v=np.concatenate([x.v, zero_value], 2),
        keep=np.concatenate([x.keep, np.ones((b, h, n_q, 1), dtype=bool)], axis=-1),
        bias=np.concatenate([bias, column], axis=-1), sinks=None, given=None, sink_key=True)


KEY_ROWS = ("dk", "dv")


def without_sink_key(values: dict, n_k: int) -> dict:
    """``values`` per output with the appended key's rows of dK and dV left out (each value an
    array or a tuple of arrays whose third axis is the keys)."""
    def cut(value: np.ndarray | tuple[np.ndarray, ...]) -> np.ndarray | tuple[np.ndarray, ...]:
        if isinstance(value, tuple):
            return tuple(a[:, :, :n_k] for a in value)
        return value[:, :, :n_k]

    return {name: cut(value) if name in KEY_ROWS else value for name, value in values.items()}
