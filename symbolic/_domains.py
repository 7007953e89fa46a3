"""Where the values of dimensions, tensors and scalars live.

A domain is declared once, on the symbol. The provers read its SymPy assumptions (a temperature
is positive, a probability is positive); the numeric side draws values from it. A domain holds
only numbers and names, never an array library, so ``symbolic`` stays free of backends.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol


class Domain:
    """Base of all value domains."""

    def sympy_assumptions(self) -> dict[str, bool]:
        return {"real": True}

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Sizes:
    """The sizes a dimension takes (inclusive). ``low`` is the domain's minimum for every route:
    the claim is asserted, proved, searched and refuted only at sizes ≥ ``low``. ``high`` is
    where numeric draws and exact searches stop; a proof "for all sizes" holds beyond it."""

    low: int = 1
    high: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.low <= self.high:
            raise ValueError(f"Sizes needs 1 <= low <= high, got {self.low}..{self.high}")


class _Dimension(Protocol):
    """What the sizes read of a dimension (a ``Dim``: symbolic/_language.py imports this module)."""

    @property
    def name(self) -> str: ...

    @property
    def sizes(self) -> Sizes: ...


class _Dimensioned(Protocol):
    """What the sizes read of a statement: its dimensions (a ``Theorem``)."""

    @property
    def dims(self) -> Sequence[_Dimension]: ...


def size_assignments(theorem: _Dimensioned, largest: int) -> Iterator[dict[str, int]]:
    """Every size map inside the declared domains (``Sizes(low, high)`` of each dimension) with
    every size at most ``largest`` and one of them equal to it."""
    names = [d.name for d in theorem.dims]
    ranges = [range(d.sizes.low, min(largest, d.sizes.high) + 1) for d in theorem.dims]
    for sizes in itertools.product(*ranges):
        if sizes and max(sizes) == largest:
            yield dict(zip(names, sizes, strict=True))


def size_steps(theorem: _Dimensioned, count: int) -> range:
    """The values of "largest size" a bounded route walks through: ``count`` of them from the
    smallest one the domains hold (1, 2, 3 when every dimension starts at 1), none past the
    largest one they hold."""
    dims = theorem.dims
    if not dims:  # nothing has a size: no bounded route applies
        return range(0)
    start = max(d.sizes.low for d in dims)
    # past every dimension's maximum a step holds no size map: it would prove nothing
    return range(start, min(start + count, max(d.sizes.high for d in dims) + 1))


def search_steps(theorem: _Dimensioned, count: int) -> range:
    """The values of "largest size" an exact search walks through: ``size_steps``, or ``count``
    rounds of fresh values when nothing has a size."""
    return size_steps(theorem, count) if theorem.dims else range(1, count + 1)


def domain_note(theorem: _Dimensioned) -> str:
    """What a method says of the domain when a dimension's declared minimum is above 1, e.g.
    "; sizes n_k ≥ 2 (declared)", or it has one size ("two = 2", which the provers substitute):
    the claim is asserted, searched and refuted only there."""
    floors = [f"{d.name} = {d.sizes.low}" if d.sizes.low == d.sizes.high
              else f"{d.name} ≥ {d.sizes.low}" for d in theorem.dims
              if d.sizes.low > 1 or d.sizes.low == d.sizes.high]
    return f"; sizes {', '.join(floors)} (declared)" if floors else ""


@dataclass(frozen=True)
class Real(Domain):
    """Real entries drawn uniformly from [low, high], with occasional large magnitudes."""

    low: float = -3.0
    high: float = 3.0

    def describe(self) -> str:
        return f"real in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Positive(Domain):
    """Strictly positive entries drawn log-uniformly from [low, high]."""

    low: float = 1e-2
    high: float = 1e2

    def sympy_assumptions(self) -> dict[str, bool]:
        return {"real": True, "positive": True}

    def describe(self) -> str:
        return f"positive in [{self.low:g}, {self.high:g}] (log-uniform)"


@dataclass(frozen=True)
class Simplex(Domain):
    """A probability distribution over the tensor's last axis: positive entries summing to 1."""

    def sympy_assumptions(self) -> dict[str, bool]:
        return {"real": True, "positive": True}

    def describe(self) -> str:
        return "positive, sums to 1 over the last axis"


@dataclass(frozen=True)
class Mask(Domain):
    """An attention mask: each entry 0 (masked) or 1 (kept). Softmax weights a masked entry 0,
    and a row with every entry masked gets zero weights, as PyTorch's
    scaled_dot_product_attention gives since 2.5. The provers use that an entry is its own
    square; numeric checks draw causal, padding and fully masked rows on purpose."""

    def sympy_assumptions(self) -> dict[str, bool]:
        return {"real": True, "nonnegative": True}

    def describe(self) -> str:
        return "0 (masked) or 1 (kept)"


@dataclass(frozen=True)
class Integer(Domain):
    """An integer parameter such as a block size, drawn from [low, high]."""

    low: int = 1
    high: int = 8

    def sympy_assumptions(self) -> dict[str, bool]:
        if self.low > 0:
            return {"integer": True, "positive": True}
        return {"integer": True, "nonnegative": True} if self.low == 0 else {"integer": True}

    def describe(self) -> str:
        return f"integer in [{self.low}, {self.high}]"
