"""Hypothesis strategies inferred from a theorem, and the batches of instances they seed.

Hypothesis draws the structure of an example (a size for each dimension, each Integer scalar,
a seed); a NumPy PRNG seeded from it fills a whole batch of float64 instances, evaluated in one
vectorized call. Sizes come from a small set of distinct values (the ends of each range among
them) so a jitting backend compiles few shapes; the thorough profile draws them from the whole
declared range. Integer scalars are drawn from their whole range in every profile. Structured
draws (``_structured``) reach the measure-zero sets where claims typically fail.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
from hypothesis import strategies as st

from attnproof.symbolic import Integer, Mask, Positive, Real, Scalar, Simplex, Tensor

from . import _structured as structured
from ._profiles import Effort, Profile
from ._profiles import profile as profile  # the search and the backend table read it here

if TYPE_CHECKING:
    from attnproof.symbolic import Dim, Domain, Theorem

LARGE_ROW_FRACTION = 1 / 8
# Large rows are rescaled so that their largest entry has magnitude 100 > 88.7, where exp
# overflows float32: a missing max-shift shows up as inf instead of hiding behind small
# logits. Row 0 of every batch is large, so every batch has one.
LARGE_ROW_MAGNITUDE = 100.0
# In this fraction of rows the largest entry along the last axis is repeated: ties at the
# maximum are where a max-shift or an argmax-based shortcut would go wrong.
TIED_ROW_FRACTION = 1 / 8
SIMPLEX_FLOOR = 1e-3
# Temperatures are kept this far (in log) from 1, where a missing beta would be invisible.
AWAY_FROM_ONE = 0.1
# Masks: each instance draws one pattern, with these probabilities (the rest keep each entry
# with probability MASK_KEEP): nothing masked, causal (key j kept for query i when j <= i, the
# tutorial's (57)), padding (the keys past a random length masked in every row). Then one row
# (along the leading axes) is fully masked in this fraction of instances, and always in the
# first instance of a batch, where every weight must be 0.
MASK_KEEP = 0.7
MASK_PATTERN_FRACTIONS = {"none": 1 / 8, "causal": 1 / 8, "padding": 1 / 8}
FULLY_MASKED_FRACTION = 1 / 8


# A theorem with Integer scalars (a block size) fixes them per example, for the whole batch:
# its records spread the same instances over this many times more examples, smaller batches.
INTEGER_SPREAD = 4
SMALLEST_SPREAD_BATCH = 64


def spread(effort: Effort, theorem: Theorem) -> Effort:
    """``effort`` for ``theorem``: as many instances, over more examples when it has Integer
    scalars, so that more of their values are tried."""
    if not integer_scalars(theorem) or effort.batch < 2 * SMALLEST_SPREAD_BATCH:
        return effort
    factor = min(INTEGER_SPREAD, effort.batch // SMALLEST_SPREAD_BATCH)
    return Effort(effort.examples * factor, effort.batch // factor)


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


def integer_scalars(theorem: Theorem) -> tuple[Scalar, ...]:
    return tuple(s for s in theorem.scalars if isinstance(s.domain, Integer))


def integer_domain(scalar: Scalar) -> Integer:
    """The domain of one of :func:`integer_scalars`' scalars, as the Integer it is."""
    return cast(Integer, scalar.domain)  # integer_scalars keeps only Integer domains


def from_theorem(theorem: Theorem, chosen: Profile,
                 dims: Iterable[Dim] | None = None) -> st.SearchStrategy[Structure]:
    """Structures for ``theorem``: sizes per dimension (of ``dims``, else the theorem's), Integer
    scalars, a seed. Every value of every declared range is reachable in every profile; Integer
    scalars are drawn given the sizes, so that block sizes that do and do not divide a length
    both come up."""
    dims = theorem.dims if dims is None else tuple(dims)
    if chosen.free_sizes:
        sizes = st.tuples(*(st.integers(d.sizes.low, d.sizes.high) for d in dims))
    else:
        sizes = st.sampled_from(_size_variants(dims))
    names = [d.name for d in dims]
    int_scalars = integer_scalars(theorem)
    int_names = [s.name for s in int_scalars]

    def with_integers(size_values: tuple[int, ...]) -> st.SearchStrategy[tuple]:
        integers = st.tuples(*(integer_values(integer_domain(s), size_values)
                               for s in int_scalars))
        return st.tuples(st.just(size_values), integers)

    return st.builds(
        lambda drawn, seed: Structure(
            tuple(zip(names, flat_sizes_from_factors(dims, drawn[0]), strict=True)),
            tuple(zip(int_names, drawn[1], strict=True)), seed),
        sizes.flatmap(with_integers), st.integers(0, 2**32 - 1),
    )


def corner_structures(theorem: Theorem) -> list[Structure]:
    """Examples every record of a theorem with Integer scalars runs first, whatever the
    profile: every size at its maximum, each Integer at the largest value below the largest
    size that does not divide it (several blocks, the last one partial), then at its high end.
    An Integer fixes a whole batch, so random draws alone cover its range only slowly."""
    scalars = integer_scalars(theorem)
    if not scalars:
        return []
    dims = theorem.dims
    highest = flat_sizes_from_factors(dims, tuple(d.sizes.high for d in dims))
    sizes = tuple((d.name, n) for d, n in zip(dims, highest, strict=True))
    longest = max((d.sizes.high for d in dims), default=1)
    corners: list[Structure] = []
    for pick in (_largest_non_divisor, lambda domain, n: domain.high):
        integers = tuple((s.name, pick(integer_domain(s), longest)) for s in scalars)
        corner = Structure(sizes, integers, seed=len(corners))
        if corner.integers not in [c.integers for c in corners]:
            corners.append(corner)
    return corners


def extreme_structures(theorem: Theorem, dims: Sequence[Dim], seed: int) -> list[Structure]:
    """Every size (and Integer scalar) at its largest, then every one at its smallest, with
    seeds following ``seed``: the two structures a search runs where Hypothesis's few examples
    drew no failure (``search_structures(extremes=True)``), since a lower format shows a claim's
    falsity only beyond its rounding, often only at the largest sizes."""
    found: list[Structure] = []
    for end in ("high", "low"):
        sizes = flat_sizes_from_factors(dims, tuple(getattr(d.sizes, end) for d in dims))
        named = tuple((d.name, n) for d, n in zip(dims, sizes, strict=True))
        integers = tuple((s.name, getattr(s.domain, end)) for s in integer_scalars(theorem))
        if (named, integers) not in [(s.sizes, s.integers) for s in found]:
            found.append(Structure(named, integers, (seed + 1 + len(found)) % 2**32))
    return found


def _largest_non_divisor(domain: Integer, n: int) -> int:
    for value in range(min(domain.high, n - 1), domain.low - 1, -1):
        if value >= 2 and n % value:
            return value
    return domain.high


def _size_variants(dims: Sequence[Dim]) -> list[tuple[int, ...]]:
    """Four shapes, clamped to each range: small distinct sizes (2, 3, 4, ...), larger ones
    (5, 6, 7, ...), every size at its maximum and every size at its minimum (1). Few shapes,
    because a jitting backend compiles once per shape. Size 1 comes last: Hypothesis tries the
    first variant first, and many slips (a missing 1/sqrt(d)) vanish there."""
    variants = []
    for sizes in (_sized(dims, 2), _sized(dims, 5), tuple(d.sizes.high for d in dims),
                  tuple(d.sizes.low for d in dims)):
        sizes = flat_sizes_from_factors(dims, sizes)
        if sizes not in variants:
            variants.append(sizes)
    return variants


def flat_sizes_from_factors(dims: Sequence[Dim], sizes: tuple[int, ...]) -> tuple[int, ...]:
    """``sizes`` with every flat dimension (H·D) whose factors are among ``dims`` set to the
    product of theirs: a tensor over H·D read at h·D + c needs exactly that many entries."""
    by_name = {d.name: n for d, n in zip(dims, sizes, strict=True)}
    result = []
    for dim, size in zip(dims, sizes, strict=True):
        factors = [f.name for f in getattr(dim, "factors", ())]
        if factors and all(f in by_name for f in factors):
            size = 1
            for f in factors:
                size *= by_name[f]
        result.append(size)
    return tuple(result)


def _sized(dims: Sequence[Dim], start: int) -> tuple[int, ...]:
    return tuple(min(d.sizes.high, max(d.sizes.low, start + n)) for n, d in enumerate(dims))


def integer_values(domain: Integer, sizes: Iterable[int] = ()) -> st.SearchStrategy[int]:
    """Any value of ``domain`` (the same in every profile), half the time one of its
    interesting values: both ends of the range, and for each drawn size n every value from 2 to
    n - 1 (block sizes that do and do not divide n, with at least two blocks)."""
    return st.one_of(st.sampled_from(interesting_integers(domain, sizes)),
                     st.integers(domain.low, domain.high))


def interesting_integers(domain: Integer, sizes: Iterable[int] = ()) -> list[int]:
    values = {domain.low, domain.high}
    for n in sizes:
        values |= {v for v in range(max(domain.low, 2), min(domain.high, n - 1) + 1)}
    return sorted(values)


# -- filling a batch ----------------------------------------------------------------------


def fill_batch(theorem: Theorem, structure: Structure,
               batch: int) -> dict[str, np.ndarray | int]:
    """``batch`` float64 instances: tensors (batch, *shape), scalars (batch,), Integers as int."""
    rng = np.random.default_rng(structure.seed)
    sizes = structure.size_map
    arrays: dict[str, np.ndarray | int] = {}
    for item in theorem.inputs:
        if isinstance(item, Tensor):
            shape = (batch, *(sizes[d.name] for d in item.dims))
            arrays[item.name] = tensor_values(item.domain, shape, rng)
        elif isinstance(item.domain, Integer):
            arrays[item.name] = structure.integer_map[item.name]
        else:
            arrays[item.name] = scalar_values(item.domain, batch, rng)
    return structured.into_kernels(theorem, arrays, rng)


def instance_at(arrays: dict, row: int) -> dict:
    """Row ``row`` of a batch from :func:`fill_batch`: every array indexed, Integers as they are."""
    return {k: (v[row] if isinstance(v, np.ndarray) else v) for k, v in arrays.items()}


def edge_draws(domain: Domain) -> str | None:
    """In words, what a tensor of ``domain`` is drawn with beyond its declared range."""
    if isinstance(domain, Mask):
        patterns = ", ".join(f"{name} (1 in {round(1 / f)})"
                             for name, f in MASK_PATTERN_FRACTIONS.items())
        return (f"patterns {patterns}, else entries kept with probability {MASK_KEEP:g}; then a "
                f"fully masked row (1 in {round(1 / FULLY_MASKED_FRACTION)} instances, and the "
                "first of every batch)")
    if not isinstance(domain, Real):
        return None
    return (f"instances scaled so the largest entry is ±{LARGE_ROW_MAGNITUDE:g} (1 in "
            f"{round(1 / LARGE_ROW_FRACTION)}, and the first of every batch), instances "
            f"whose maximum along the last axis is tied (1 in {round(1 / TIED_ROW_FRACTION)}), "
            f"and {structured.describe()}")


def tensor_values(domain: Domain, shape: tuple[int, ...],
                  rng: np.random.Generator) -> np.ndarray:
    """Entries of a tensor of ``shape`` (batch axis first) drawn from its domain, structured
    patterns included."""
    if isinstance(domain, Mask):
        return _mask_values(shape, rng)
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
        values = structured.apply_patterns(values, domain, rng, keep=large)
        return _tie_maxima(values, rng)
    raise NotImplementedError(f"no strategy for tensor domain {domain!r}")


def _mask_values(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """0/1 entries, (batch, ..., keys): a pattern per instance, then fully masked rows."""
    values = (rng.random(shape) < MASK_KEEP).astype(np.float64)
    draw, start = rng.random(shape[0]), 0.0
    for name, fraction in MASK_PATTERN_FRACTIONS.items():
        chosen = (draw >= start) & (draw < start + fraction)
        values[chosen] = _mask_pattern(name, shape, rng)[chosen]
        start += fraction
    fully_masked = rng.random(shape[0]) < FULLY_MASKED_FRACTION
    fully_masked[0] = True
    if values.ndim > 2:
        values[fully_masked, 0] = 0.0  # the first row along the leading axes
    else:
        values[fully_masked] = 0.0
    return values


def _mask_pattern(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """The pattern ``name`` for every instance of a batch of ``shape`` (batch, ..., keys)."""
    keys = np.arange(shape[-1])
    if name == "none" or (name == "causal" and len(shape) < 3):
        kept = np.ones(shape, dtype=bool)
    elif name == "causal":  # key j kept for query i when j <= i, over the last two axes
        kept = keys[None, :] <= np.arange(shape[-2])[:, None]
    elif name == "padding":  # each instance keeps its first `length` keys, in every row
        length = rng.integers(1, shape[-1] + 1, size=shape[0])
        kept = keys < length.reshape((-1,) + (1,) * (len(shape) - 1))
    else:
        raise ValueError(f"unknown mask pattern {name!r}")
    return np.broadcast_to(kept, shape).astype(np.float64)


def _tie_maxima(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    tied = rng.random(values.shape[0]) < TIED_ROW_FRACTION
    if values.ndim > 1 and values.shape[-1] > 1:
        peak = values[tied].max(axis=-1)
        values[tied, ..., 0] = peak
    return values


def scalar_values(domain: Domain, batch: int, rng: np.random.Generator) -> np.ndarray:
    """``batch`` values of a scalar drawn from its domain, range ends among them."""
    if isinstance(domain, Positive):
        values = _away_from_one(_log_uniform(domain.low, domain.high, (batch,), rng), domain)
        return structured.range_ends(values, domain, rng)
    if isinstance(domain, Real):
        return structured.range_ends(rng.uniform(domain.low, domain.high, batch), domain, rng)
    raise NotImplementedError(f"no strategy for scalar domain {domain!r}")


def _log_uniform(low: float, high: float, shape: tuple[int, ...],
                 rng: np.random.Generator) -> np.ndarray:
    return np.exp(rng.uniform(math.log(low), math.log(high), shape))


def _away_from_one(values: np.ndarray, domain: Positive) -> np.ndarray:
    near = np.abs(np.log(values)) < AWAY_FROM_ONE
    pushed = np.where(values * math.exp(2 * AWAY_FROM_ONE) <= domain.high,
                      values * math.exp(2 * AWAY_FROM_ONE), values * math.exp(-2 * AWAY_FROM_ONE))
    return np.where(near, pushed, values)


# -- readable witnesses -------------------------------------------------------------------


def entry_count(theorem: Theorem, instance: dict) -> int:
    return sum(np.size(instance[x.name]) for x in _drawn(theorem))


def simplified(theorem: Theorem, instance: dict, keep: list[bool]) -> dict:
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


def _drawn(theorem: Theorem) -> list[Tensor | Scalar]:
    return [x for x in theorem.inputs if not isinstance(x.domain, Integer)]


def _rounder(value: float, domain: Domain) -> float:
    if isinstance(domain, Mask):
        return value  # already 0 or 1
    if isinstance(domain, Real):
        return float(np.round(value))
    digits = -int(math.floor(math.log10(abs(value))))
    rounded = round(value, digits)
    return rounded if rounded > 0 else value
