"""Exact values for the counterexample search, structured to reach measure-zero sets.

A claim that fails only on a measure-zero set (a zero vector, a tie, a singular matrix, a fully
masked row, the end of a range) is never refuted by values drawn at random. Each attempt of the
exact search therefore fills every tensor with one *pattern*: random small rationals, zeros,
ties (every entry equal), one-hot rows, repeated rows (rank one: singular as soon as there are
two rows), the ends of its range, or a kernel (every matrix row sums to 0 and every vector is
all ones, so each matrix maps each vector to 0). Sizes stay small, so every pattern is exact
and cheap.
"""

from __future__ import annotations

import itertools
import random
from typing import TYPE_CHECKING

import sympy as sp

from ._domains import Integer, Mask, Positive, Real, Simplex

if TYPE_CHECKING:
    from ._domains import Domain
    from ._theorem import Theorem

Entry = tuple[int, ...]  # an entry's position in its tensor

SMALL_VALUES = [sp.Rational(v) for v in ("1", "-1", "2", "1/2", "0", "-2", "3/2", "-1/2", "3")]
POSITIVE_VALUES = [sp.Rational(v) for v in ("2", "1/2", "3", "1/3", "3/2", "5")]
PATTERNS = ("random", "zeros", "ties", "one-hot", "repeated rows", "range ends", "kernel")


def pattern_for(attempt: int) -> str:
    return PATTERNS[attempt % len(PATTERNS)]


def draw_values(theorem: Theorem, sizes: dict[str, int], rng: random.Random,
                attempt: int) -> dict:
    """Exact values for every scalar and tensor entry, keyed by symbol or (name, entry)."""
    pattern = pattern_for(attempt)
    values: dict = {}
    for scalar in theorem.scalars:
        values[scalar.symbol] = scalar_value(scalar.domain, rng, attempt, pattern)
    for tensor in theorem.tensors:
        shape = [sizes[d.name] for d in tensor.dims]
        filled = _tensor(tensor.domain, shape, rng, pattern)
        for entry, value in filled.items():
            values[(tensor.name, tuple(map(sp.Integer, entry)))] = value
    return values


def scalar_value(domain: Domain, rng: random.Random, attempt: int,
                 pattern: str = "random") -> sp.Rational:
    if isinstance(domain, Integer):  # both ends of the range, and values between
        choices = sorted({domain.low, domain.high, min(domain.high, max(domain.low, 2)),
                          rng.randint(domain.low, domain.high)})
        return sp.Integer(choices[attempt % len(choices)])
    if isinstance(domain, Positive):
        if pattern == "range ends":
            return _rational(rng.choice((domain.low, domain.high)))
        choices = _within(domain, POSITIVE_VALUES)
        return choices[attempt % len(choices)]
    if isinstance(domain, Real):
        if pattern == "zeros":
            return _clamped(domain, sp.Integer(0))
        if pattern == "range ends":
            return _rational(rng.choice((domain.low, domain.high)))
    return rng.choice(_within(domain, SMALL_VALUES[:4]))


def _within(domain: Domain, values: list[sp.Rational]) -> list[sp.Rational]:
    """The values a declared range holds (a claim is asserted only there); its ends and middle
    when it holds none of them."""
    if not isinstance(domain, (Real, Positive)):
        return values
    kept = [v for v in values if domain.low <= v <= domain.high]
    if kept:
        return kept
    low, high = _rational(domain.low), _rational(domain.high)
    return [low, high, (low + high) / 2]


def _clamped(domain: Domain, value: sp.Rational) -> sp.Rational:
    """``value`` moved into the declared range, where it lies outside it."""
    if not isinstance(domain, (Real, Positive)):
        return value
    return min(max(value, _rational(domain.low)), _rational(domain.high))


def _tensor(domain: Domain, shape: list[int], rng: random.Random,
            pattern: str) -> dict[Entry, sp.Rational]:
    entries = list(itertools.product(*(range(n) for n in shape)))
    if isinstance(domain, Mask):
        return _mask(entries, shape, rng, pattern)
    base = _base_value(domain, rng) if pattern == "ties" else None
    values = {}
    for entry in entries:
        values[entry] = _entry(domain, entry, shape, rng, pattern, base)
    if pattern == "kernel" and not isinstance(domain, (Positive, Simplex)):
        _into_kernel(values, entries, shape)
        values = {e: _clamped(domain, v) for e, v in values.items()}  # the range first
    if pattern == "repeated rows" and len(shape) >= 2:
        for entry in entries:  # every row along the leading axes equals the first: rank one
            values[entry] = values[(0,) * (len(shape) - 1) + entry[-1:]]
    if isinstance(domain, Simplex):
        _normalize_last_axis(values, entries, shape)
    return values


def _entry(domain: Domain, entry: Entry, shape: list[int], rng: random.Random, pattern: str,
           base: sp.Rational | None) -> sp.Rational:
    positive = isinstance(domain, (Positive, Simplex))
    if pattern == "zeros" and not positive:
        return _clamped(domain, sp.Integer(0))
    if pattern == "ties":
        return base
    if pattern == "one-hot" and shape:
        hot = entry[-1] == (sum(entry[:-1]) % shape[-1])
        if positive:  # as close to one-hot as the domain allows
            return _clamped(domain, POSITIVE_VALUES[4] if hot else POSITIVE_VALUES[3])
        return _clamped(domain, sp.Integer(1) if hot else sp.Integer(0))
    if pattern == "range ends" and isinstance(domain, (Positive, Real)):
        return _rational(rng.choice((domain.low, domain.high)))
    return rng.choice(_within(domain, POSITIVE_VALUES if positive else SMALL_VALUES))


def _into_kernel(values: dict[Entry, sp.Rational], entries: list[Entry],
                 shape: list[int]) -> None:
    """Vectors become all ones; matrix rows lose their mean, so each row is orthogonal to them."""
    if len(shape) == 1:
        values.update(dict.fromkeys(entries, sp.Integer(1)))
        return
    for lead in itertools.product(*(range(n) for n in shape[:-1])):
        row = [(*lead, k) for k in range(shape[-1])]
        mean = sum(values[x] for x in row) / len(row)
        for x in row:
            values[x] = values[x] - mean


def _base_value(domain: Domain, rng: random.Random) -> sp.Rational:
    return rng.choice(_within(domain, POSITIVE_VALUES if isinstance(domain, (Positive, Simplex))
                              else SMALL_VALUES))


def _mask(entries: list[Entry], shape: list[int], rng: random.Random,
          pattern: str) -> dict[Entry, sp.Integer]:
    if pattern in ("zeros", "repeated rows"):  # fully masked, and every row alike
        return dict.fromkeys(entries, sp.Integer(0 if pattern == "zeros" else 1))
    if pattern == "one-hot" and shape:
        return {e: sp.Integer(int(e[-1] == 0)) for e in entries}
    return {e: sp.Integer(rng.choice((0, 1, 1))) for e in entries}


def _normalize_last_axis(values: dict[Entry, sp.Rational], entries: list[Entry],
                         shape: list[int]) -> None:
    for lead in itertools.product(*(range(n) for n in shape[:-1])):
        row = [(*lead, k) for k in range(shape[-1])]
        total = sum(values[x] for x in row)
        for x in row:
            values[x] = values[x] / total


def _rational(value: float) -> sp.Rational:
    return sp.nsimplify(value, rational=True)
