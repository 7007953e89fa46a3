"""IEEE 754 arithmetic on enclosures: every value a float format can produce, exactly.

An ``Enclosure`` holds the set of results an operation can give in a format: a closed interval
of the extended reals (endpoints are values of the format, ±∞ included) and whether NaN is
possible; an empty interval with ``nan`` set means the result is NaN for certain. A point
(lo = hi) is one value. Endpoints are computed with outward rounding at 300 bits and then
rounded to nearest into the format; rounding to nearest is monotone, so the rounded endpoints
enclose every rounded result (operations are assumed correctly rounded, as IEEE 754 requires
for + − × ÷ and recommends for exp and log).

The special values follow IEEE 754: ∞ − ∞ = NaN, 0 · ∞ = NaN, 0/0 = ∞/∞ = NaN, x/0 = ±∞,
exp(−∞) = 0, log 0 = −∞, log of a negative number = NaN, and NaN propagates through every
operation, max included (IEEE 754-2019 ``maximum``). Zero is unsigned here: x/0 for x ≠ 0 is
enclosed as ±∞, which is sound and only less precise than tracking the sign of zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mpmath
from mpmath import iv, mpf

from ..route import INF, PRECISION, Format

if TYPE_CHECKING:
    from collections.abc import Callable


# which value an enclosure is, when known: its source and whether it was negated
Identity = tuple[object, bool]


@dataclass(frozen=True)
class Enclosure:
    """Every result a format can produce here: a real interval (None: no real result) and
    whether NaN is possible. ``source`` names where a value came from (an input entry, a
    literal), so a difference of a value with itself or with a maximum it belongs to can be
    known exactly; ``maximum`` is set on the value of a maximum taken in one case of the case
    analysis: (the identity of the operand that attains it, the identities of all operands)."""

    lo: mpf | None
    hi: mpf | None
    nan: bool = False
    source: object = None
    maximum: tuple[Identity | None, tuple[Identity | None, ...]] | None = None
    negated: bool = False

    @property
    def identity(self) -> Identity | None:
        """Which value this is, when known: its source and whether it was negated."""
        return None if self.source is None else (self.source, self.negated)

    @property
    def is_nan(self) -> bool:
        return self.lo is None

    @property
    def is_point(self) -> bool:
        return self.lo is not None and self.lo == self.hi and not self.nan

    def describe(self) -> str:
        if self.is_nan:
            return "nan"
        if self.lo == self.hi:
            text = _number(self.lo)
        else:
            text = f"[{_number(self.lo)}, {_number(self.hi)}]"
        return f"{text} or nan" if self.nan else text


def _number(x: mpf) -> str:
    if mpmath.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return mpmath.nstr(x, 8)


NAN = Enclosure(None, None, True)


def point(x: float | mpf) -> Enclosure:
    return Enclosure(mpf(x), mpf(x))


def interval(lo: float | mpf | None, hi: float | mpf, nan: bool = False) -> Enclosure:
    if lo is None:
        return NAN
    return Enclosure(mpf(lo), mpf(hi), nan)


def rounded(value: Enclosure, fmt: Format) -> Enclosure:
    """The enclosure after rounding its endpoints into ``fmt`` (monotone, so sound)."""
    if value.is_nan:
        return NAN
    return Enclosure(fmt.round(value.lo), fmt.round(value.hi), value.nan, value.source,
                     value.maximum, value.negated)


def union(a: Enclosure, b: Enclosure) -> Enclosure:
    nan = a.nan or b.nan
    if a.is_nan:
        return Enclosure(b.lo, b.hi, True) if not b.is_nan else NAN
    if b.is_nan:
        return Enclosure(a.lo, a.hi, True)
    assert a.lo is not None and a.hi is not None  # neither is NaN: both have two ends
    assert b.lo is not None and b.hi is not None
    return Enclosure(min(a.lo, b.lo), max(a.hi, b.hi), nan)


# -- operations: exact enclosures before rounding -------------------------------------------


def _directed(operation: Callable[..., mpf], x: mpf, y: mpf, rounding: str) -> mpf:
    with mpmath.workprec(PRECISION):
        return operation(x, y, prec=PRECISION, rounding=rounding)


def negate(a: Enclosure) -> Enclosure:
    if a.is_nan:
        return NAN
    assert a.lo is not None and a.hi is not None  # not NaN: it has two ends
    return Enclosure(-a.hi, -a.lo, a.nan, a.source, a.maximum, not a.negated)


def add(a: Enclosure, b: Enclosure) -> Enclosure:
    """a + b; ∞ + (−∞) is NaN."""
    if a.is_nan or b.is_nan:
        return NAN
    opposite = (a.hi == INF and b.lo == -INF) or (a.lo == -INF and b.hi == INF)
    if opposite and a.is_point and b.is_point:
        return NAN
    lo = -INF if (a.lo == -INF or b.lo == -INF) else _directed(mpmath.fadd, a.lo, b.lo, "f")
    hi = INF if (a.hi == INF or b.hi == INF) else _directed(mpmath.fadd, a.hi, b.hi, "c")
    return Enclosure(lo, hi, a.nan or b.nan or opposite)


def _product(x: mpf, y: mpf, rounding: str) -> mpf:
    if x == 0 or y == 0:  # 0 · ±∞ stands for the limits of finite products here: 0
        return mpf(0)
    if mpmath.isinf(x) or mpmath.isinf(y):
        return INF if (x > 0) == (y > 0) else -INF
    return _directed(mpmath.fmul, x, y, rounding)


def _contains(a: Enclosure, x: float | mpf) -> bool:
    if a.is_nan:
        return False
    assert a.lo is not None and a.hi is not None  # not NaN: it has two ends
    return a.lo <= x <= a.hi


def _has_infinity(a: Enclosure) -> bool:
    return not a.is_nan and (a.lo == -INF or a.hi == INF)


def multiply(a: Enclosure, b: Enclosure) -> Enclosure:
    """a · b; 0 · ±∞ is NaN."""
    if a.is_nan or b.is_nan:
        return NAN
    zero_times_infinity = ((_contains(a, 0) and _has_infinity(b))
                           or (_contains(b, 0) and _has_infinity(a)))
    if zero_times_infinity and a.is_point and b.is_point:
        return NAN
    corners = [(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    lo = min(_product(x, y, "f") for x, y in corners)
    hi = max(_product(x, y, "c") for x, y in corners)
    return Enclosure(lo, hi, a.nan or b.nan or zero_times_infinity)


def _quotient(x: mpf, y: mpf, rounding: str) -> mpf | None:
    if mpmath.isinf(x) and mpmath.isinf(y):
        return None  # ∞/∞: NaN, accounted for apart
    if mpmath.isinf(y):
        return mpf(0)
    if y == 0:
        return None
    if mpmath.isinf(x):
        return INF if (x > 0) == (y > 0) else -INF
    return _directed(mpmath.fdiv, x, y, rounding)


def divide(a: Enclosure, b: Enclosure) -> Enclosure:
    """a / b; 0/0 and ∞/∞ are NaN, x/0 is ±∞ for x ≠ 0 (the sign of zero is not tracked)."""
    if a.is_nan or b.is_nan:
        return NAN
    zero_over_zero = _contains(a, 0) and _contains(b, 0)
    infinity_over_infinity = _has_infinity(a) and _has_infinity(b)
    nan = a.nan or b.nan or zero_over_zero or infinity_over_infinity
    if a.is_point and b.is_point and (zero_over_zero or infinity_over_infinity):
        return NAN
    if _contains(b, 0):
        if a.is_point and a.lo == 0:  # 0/y = 0 for every y ≠ 0
            return Enclosure(mpf(0), mpf(0), nan)
        return Enclosure(-INF, INF, nan)
    quotients = [_quotient(x, y, r) for x in (a.lo, a.hi) for y in (b.lo, b.hi) for r in "fc"]
    values = [v for v in quotients if v is not None]
    if infinity_over_infinity:  # ∞/y ranges over everything between the finite quotients
        values += [mpf(0)]
    if not values:
        return NAN
    return Enclosure(min(values), max(values), nan)


def exp(a: Enclosure) -> Enclosure:
    if a.is_nan:
        return NAN
    return Enclosure(_exp(a.lo, "a"), _exp(a.hi, "b"), a.nan)


def _exp(x: mpf, end: str) -> mpf:
    if x == -INF:
        return mpf(0)
    if x == INF:
        return INF
    iv.prec = PRECISION
    return getattr(iv.exp(iv.mpf(x)), end)


def log(a: Enclosure) -> Enclosure:
    """log; NaN below 0, −∞ at 0."""
    if a.is_nan:
        return NAN
    assert a.lo is not None and a.hi is not None  # not NaN: it has two ends
    if a.hi < 0:
        return NAN
    nan = a.nan or a.lo < 0
    return Enclosure(_log(max(a.lo, mpf(0)), "a"), _log(a.hi, "b"), nan)


def _log(x: mpf, end: str) -> mpf:
    if x == 0:
        return -INF
    if x == INF:
        return INF
    iv.prec = PRECISION
    return getattr(iv.log(iv.mpf(x)), end)


def sqrt(a: Enclosure) -> Enclosure:
    if a.is_nan:
        return NAN
    assert a.lo is not None and a.hi is not None  # not NaN: it has two ends
    if a.hi < 0:
        return NAN
    nan = a.nan or a.lo < 0
    iv.prec = PRECISION
    lo = mpf(0) if a.lo <= 0 else (a.lo if mpmath.isinf(a.lo) else iv.sqrt(iv.mpf(a.lo)).a)
    hi = INF if a.hi == INF else iv.sqrt(iv.mpf(a.hi)).b
    return Enclosure(lo, hi, nan)


def maximum(operands: list[Enclosure]) -> Enclosure:
    """IEEE 754-2019 maximum: NaN if any operand is NaN."""
    if any(o.is_nan for o in operands):
        return NAN
    # none is NaN, so every end is a number: the tests only say so to the type checker
    return Enclosure(max(o.lo for o in operands if o.lo is not None),
                     max(o.hi for o in operands if o.hi is not None),
                     any(o.nan for o in operands))


def difference_with_itself(a: Enclosure) -> Enclosure:
    """x − x: 0 for finite x, NaN for ±∞ (∞ − ∞)."""
    if a.is_nan:
        return NAN
    assert a.lo is not None and a.hi is not None  # not NaN: it has two ends
    finite = a.lo > -INF and a.hi < INF
    if not finite and a.lo == a.hi:
        return NAN
    return Enclosure(mpf(0), mpf(0), a.nan or not finite)
