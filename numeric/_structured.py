"""Structured draws: instances on the measure-zero sets where claims typically fail.

Continuous draws never land on a zero vector, a singular matrix, a vector in a matrix's kernel,
a one-hot row or the end of a range; a claim false only there would pass. So in a fraction of
the instances of every batch, each Real tensor takes one pattern (zeros, repeated rows: rank
one, one-hot rows, range ends), scalars take the ends of their range, and a vector and a matrix
sharing its axis are moved so that the matrix maps the vector to 0. Ties along the last axis
and fully masked rows are drawn by ``_strategies`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attnproof.symbolic import Positive, Real, Tensor

if TYPE_CHECKING:
    from attnproof.symbolic import Theorem

# each a fraction of a batch's instances, drawn independently per tensor
PATTERN_FRACTIONS = {"zeros": 1 / 32, "repeated rows": 1 / 16, "one-hot rows": 1 / 16,
                     "range ends": 1 / 32}
RANGE_END_FRACTION = 1 / 16  # scalars at an end of their range
KERNEL_FRACTION = 1 / 16  # instances where a matrix maps a vector to 0


def describe() -> str:
    patterns = ", ".join(f"{name} (1 in {round(1 / f)})" for name, f in PATTERN_FRACTIONS.items())
    return (f"structured instances: {patterns}; scalars at an end of their range (1 in "
            f"{round(1 / RANGE_END_FRACTION)}); a vector in the kernel of a matrix over the same "
            f"axis (1 in {round(1 / KERNEL_FRACTION)})")


def apply_patterns(values: np.ndarray, domain: Real, rng: np.random.Generator,
                   keep: np.ndarray) -> np.ndarray:
    """``values`` (batch, ...) with a pattern in some instances; rows flagged ``keep`` (the
    large ones, which must stay large) are left alone."""
    start, draw = 0.0, rng.random(values.shape[0])
    for name, fraction in PATTERN_FRACTIONS.items():
        chosen = (draw >= start) & (draw < start + fraction) & ~keep
        start += fraction
        if chosen.any():
            values[chosen] = _pattern(name, values[chosen], domain, rng)
    return values


def _pattern(name: str, values: np.ndarray, domain: Real,
             rng: np.random.Generator) -> np.ndarray:
    if name == "zeros":
        return np.zeros_like(values)
    if name == "range ends":
        return np.where(rng.random(values.shape) < 0.5, domain.low, domain.high)
    if values.ndim < 2:  # a scalar per instance: no rows
        return values
    if name == "repeated rows":  # every row along the leading axes equals the first
        lead = values.reshape(values.shape[0], -1, values.shape[-1])[:, :1]
        return np.broadcast_to(lead, values.reshape(values.shape[0], -1,
                                                    values.shape[-1]).shape).reshape(
            values.shape).copy()
    if name == "one-hot rows":
        hot = rng.integers(0, values.shape[-1], size=values.shape[:-1])
        scale = np.abs(values).max(axis=-1, initial=0.0)
        one_hot = np.zeros_like(values)
        np.put_along_axis(one_hot, hot[..., None], np.maximum(scale, 1.0)[..., None], axis=-1)
        return one_hot
    raise ValueError(f"unknown pattern {name!r}")


def range_ends(values: np.ndarray, domain: Real | Positive,
               rng: np.random.Generator) -> np.ndarray:
    """Scalars (batch,) with some instances at ``domain.low`` or ``domain.high``."""
    at_end = rng.random(values.shape[0]) < RANGE_END_FRACTION
    ends = np.where(rng.random(values.shape[0]) < 0.5, domain.low, domain.high)
    return np.where(at_end, ends, values)


def into_kernels(theorem: Theorem, arrays: dict, rng: np.random.Generator) -> dict:
    """For each Real vector v and Real tensor M whose last axis is v's, in some instances move
    M's rows off v: M v = 0 (M is then singular, v in its kernel)."""
    tensors = [t for t in theorem.inputs if isinstance(t, Tensor) and isinstance(t.domain, Real)
               and not isinstance(t.domain, Positive)]
    vectors = [t for t in tensors if len(t.dims) == 1]
    for vector in vectors:
        for matrix in tensors:
            if len(matrix.dims) < 2 or matrix.dims[-1].name != vector.dims[0].name:
                continue
            v, m = arrays[vector.name], arrays[matrix.name]
            chosen = rng.random(v.shape[0]) < KERNEL_FRACTION
            chosen[0] = False  # the first instance stays large
            if chosen.any():
                m = m.copy()
                m[chosen] = _project_off(m[chosen], v[chosen])
                arrays[matrix.name] = m
    return arrays


def _project_off(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Each row of each matrix minus its component along the instance's vector."""
    norms = np.einsum("bd,bd->b", vectors, vectors)
    unit = vectors / np.sqrt(np.where(norms > 0, norms, 1.0))[:, None]
    flat = matrices.reshape(matrices.shape[0], -1, matrices.shape[-1])
    along = np.einsum("brd,bd->br", flat, unit)
    return (flat - along[..., None] * unit[:, None, :]).reshape(matrices.shape)
