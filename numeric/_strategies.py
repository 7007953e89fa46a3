"""Hypothesis strategies inferred from a theorem, and the batches of instances they seed.

Hypothesis draws the structure of an example (a size for each dimension, each Integer scalar,
a seed); a NumPy PRNG seeded from it fills a whole batch of float64 instances, evaluated in one
vectorized call. Sizes come from a small set of distinct values so a jitting backend compiles
few shapes; the thorough profile draws them from the whole declared range.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from symbolic import Integer, Positive, Real, Scalar, Simplex, Tensor

LARGE_ROW_FRACTION = 1 / 8
# Large rows are rescaled so that their largest entry has magnitude 100 > 88.7, where exp
# overflows float32: a missing max-shift shows up as inf instead of hiding behind small
# logits. Row 0 of every batch is large, so every batch has one.
LARGE_ROW_MAGNITUDE = 100.0
SIMPLEX_FLOOR = 1e-3
# Temperatures are kept this far (in log) from 1, where a missing beta would be invisible.
AWAY_FROM_ONE = 0.1


@dataclass(frozen=True)
class Profile:
    name: str
    examples: int
    batch: int
    derandomize: bool
    free_sizes: bool
    shrink_examples: int

    @property
    def instances(self) -> int:
        return self.examples * self.batch


_PROFILES = {
    "quick": (4, 64, False, 20),
    "default": (8, 128, False, 40),
    "thorough": (100, 256, True, 200),
}


def profile(name: str | None = None) -> Profile:
    """The profile named, else ``$ATTNPROOF_PROFILE``, else "default"; CI=true derandomizes."""
    name = name or os.environ.get("ATTNPROOF_PROFILE", "default")
    if name not in _PROFILES:
        raise ValueError(f"unknown profile {name!r}; choose from {sorted(_PROFILES)}")
    examples, batch, free_sizes, shrink = _PROFILES[name]
    ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    return Profile(name, examples, batch, ci, free_sizes, shrink)


@dataclass(frozen=True)
class Structure:
    """What Hypothesis draws per example; the batch itself is a function of it."""

    sizes: tuple[tuple[str, int], ...]
    integers: tuple[tuple[str, int], ...]
    seed: int

    @property
    def size_map(self) -> dict[str, int]:
        return dict(self.sizes)

    @property
    def integer_map(self) -> dict[str, int]:
        return dict(self.integers)


def integer_scalars(theorem) -> tuple[Scalar, ...]:
    return tuple(s for s in theorem.scalars if isinstance(s.domain, Integer))


def from_theorem(theorem, chosen: Profile) -> st.SearchStrategy[Structure]:
    """Structures for ``theorem``: sizes per dimension, Integer scalars, a seed."""
    dims = theorem.dims
    if chosen.free_sizes:
        sizes = st.tuples(*(st.integers(d.sizes.low, d.sizes.high) for d in dims))
    else:
        sizes = st.sampled_from(_size_variants(dims))
    integers = st.tuples(*(_integer_values(s.domain, chosen) for s in integer_scalars(theorem)))
    names = [d.name for d in dims]
    int_names = [s.name for s in integer_scalars(theorem)]
    return st.builds(
        lambda size_values, int_values, seed: Structure(
            tuple(zip(names, size_values, strict=True)),
            tuple(zip(int_names, int_values, strict=True)), seed),
        sizes, integers, st.integers(0, 2**32 - 1),
    )


def _size_variants(dims) -> list[tuple[int, ...]]:
    """Two shapes: small distinct sizes (2, 3, 4, ...) and larger ones (5, 6, 7, ...), clamped."""
    variants = []
    for start in (2, 5):
        sizes = tuple(min(d.sizes.high, max(d.sizes.low, start + n)) for n, d in enumerate(dims))
        if sizes not in variants:
            variants.append(sizes)
    return variants


def _integer_values(domain: Integer, chosen: Profile) -> st.SearchStrategy[int]:
    if chosen.free_sizes:
        return st.integers(domain.low, domain.high)
    values = sorted({min(domain.high, max(domain.low, v)) for v in (2, 3)})
    return st.sampled_from(values)


# -- filling a batch ----------------------------------------------------------------------


def fill_batch(theorem, structure: Structure, batch: int) -> dict[str, np.ndarray | int]:
    """``batch`` float64 instances: tensors (batch, *shape), scalars (batch,), Integers as int."""
    rng = np.random.default_rng(structure.seed)
    sizes = structure.size_map
    arrays: dict[str, np.ndarray | int] = {}
    for item in theorem.inputs:
        if isinstance(item, Tensor):
            shape = (batch, *(sizes[d.name] for d in item.dims))
            arrays[item.name] = _tensor_values(item.domain, shape, rng)
        elif isinstance(item.domain, Integer):
            arrays[item.name] = structure.integer_map[item.name]
        else:
            arrays[item.name] = _scalar_values(item.domain, batch, rng)
    return arrays


def _tensor_values(domain, shape, rng) -> np.ndarray:
    if isinstance(domain, Simplex):
        weights = _log_uniform(SIMPLEX_FLOOR, 1.0, shape, rng)
        return weights / weights.sum(axis=-1, keepdims=True)
    if isinstance(domain, Positive):
        return _log_uniform(domain.low, domain.high, shape, rng)
    if isinstance(domain, Real):
        values = rng.uniform(domain.low, domain.high, shape)
        large = rng.random(shape[0]) < LARGE_ROW_FRACTION
        large[0] = True
        peaks = np.abs(values[large]).reshape(int(large.sum()), -1).max(axis=1)
        factors = LARGE_ROW_MAGNITUDE / np.maximum(peaks, 1e-12)
        values[large] *= factors.reshape((-1,) + (1,) * (values.ndim - 1))
        return values
    raise NotImplementedError(f"no strategy for tensor domain {domain!r}")


def _scalar_values(domain, batch, rng) -> np.ndarray:
    if isinstance(domain, Positive):
        return _away_from_one(_log_uniform(domain.low, domain.high, (batch,), rng), domain)
    if isinstance(domain, Real):
        return rng.uniform(domain.low, domain.high, batch)
    raise NotImplementedError(f"no strategy for scalar domain {domain!r}")


def _log_uniform(low, high, shape, rng) -> np.ndarray:
    return np.exp(rng.uniform(math.log(low), math.log(high), shape))


def _away_from_one(values: np.ndarray, domain: Positive) -> np.ndarray:
    near = np.abs(np.log(values)) < AWAY_FROM_ONE
    pushed = np.where(values * math.exp(2 * AWAY_FROM_ONE) <= domain.high,
                      values * math.exp(2 * AWAY_FROM_ONE), values * math.exp(-2 * AWAY_FROM_ONE))
    return np.where(near, pushed, values)


# -- readable witnesses -------------------------------------------------------------------


def entry_count(theorem, instance: dict) -> int:
    return sum(np.size(instance[x.name]) for x in _drawn(theorem))


def simplified(theorem, instance: dict, keep: list[bool]) -> dict:
    """``instance`` with every entry whose ``keep`` flag is False replaced by a rounder value."""
    flags = iter(keep)
    result = dict(instance)
    for item in _drawn(theorem):
        values = np.array(instance[item.name], dtype=np.float64)
        flat = values.reshape(-1)
        for n in range(flat.size):
            if not next(flags):
                flat[n] = _rounder(flat[n], item.domain)
        if isinstance(item.domain, Simplex):
            values = values / values.sum(axis=-1, keepdims=True)
        result[item.name] = values
    return result


def _drawn(theorem):
    return [x for x in theorem.inputs if not isinstance(x.domain, Integer)]


def _rounder(value: float, domain) -> float:
    if isinstance(domain, Real):
        return float(np.round(value))
    digits = -int(math.floor(math.log10(abs(value))))
    rounded = round(value, digits)
    return rounded if rounded > 0 else value
