"""A sum normal form for index expressions, and the zero test built on it.

Plain ``simplify`` cannot decide identities over symbolic sizes: it leaves index-range
``Piecewise`` terms, does not see that a sum over ``j`` equals the same sum over ``k``, and can
crash inside ``sum_simplify``. This module rewrites an expression so that equal sums become
syntactically equal atoms:

* sums split over addition, index-free factors move out, nested sums merge, denominators
  under a sum are factored;
* ``KroneckerDelta(k, e)`` under a sum over ``k`` is eliminated by substituting ``k = e``,
  only when ``e`` provably lies in the range of ``k``;
* ``exp`` of a sum becomes a product of exps; ``log`` of a product of positive factors becomes
  a sum of logs, ``log(exp(x))`` becomes ``x``;
* ``cos`` and ``sin`` of a sum (or of an integer multiple) are written out by angle addition,
  and every ``sin(x)**2`` becomes ``1 - cos(x)**2``, so a polynomial in the cosines and sines
  of the same angles has one spelling;
* an indicator [j ≤ e] under a sum over ``j`` becomes the sum's limit (Σ_{j ≤ e}), only
  when ``e`` provably lies where that is exact; an indicator is its own square; a fully masked
  row Π_k (1 − [c(k)]) is 0 where c holds at an end of the range or at an index inside it;
* bound indices are renamed canonically; sums over adjacent ranges are split at common points,
  along one index of a sum over several, and a piece of one term is that term (Σ_{j ≤ i} is
  Σ_{j ≤ i−1} plus the term at i);
* assumptions such as "p sums to 1" replace the matching sum by 1, and the entries of a 0/1
  mask obey what 0/1 entries do (``_MaskFacts``).

Every rewrite is an equality, so a zero residual is a proof. The converse does not hold: a
nonzero residual means "not proved", never "false".
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.core.relational import Relational

from ._vocabulary import AllMasked, Indicator

Range = tuple[sp.Expr, sp.Expr]


# -- entry points ---------------------------------------------------------------------------


def carry_out_derivatives(expr: sp.Expr) -> sp.Expr:
    """Evaluate every ``Derivative`` by differentiation, without evaluating any ``Sum``."""
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    if isinstance(expr, sp.Derivative):
        inner = carry_out_derivatives(expr.expr)
        for variable, count in expr.variable_count:
            for _ in range(count):
                inner = inner.diff(variable)
        return inner
    return expr.func(*(carry_out_derivatives(arg) for arg in expr.args))


def residual(expr: sp.Expr, simplex_bases: Iterable[sp.IndexedBase] = (),
             mask_bases: Iterable[sp.IndexedBase] = ()) -> sp.Expr:
    """The normal form of ``expr`` after cancellation: zero means ``expr`` is identically 0.

    ``simplex_bases`` are tensors whose entries sum to 1 over their last axis; ``mask_bases``
    are tensors whose entries are 0 or 1 (see :class:`_MaskFacts`).
    """
    # by name: instantiating sizes rewrites a base's shape, not what its entries are
    masks = frozenset(str(b.label) for b in mask_bases)
    expr = normalize(expr, {})
    if masks:  # a mask entry's powers under a sum: m² = m there too, then the sum's own form
        reduced = _mask_powers_reduced(expr, masks)
        expr = normalize(reduced, {}) if reduced != expr else expr
    expr = _canonicalize_deltas(expr)
    atoms = _Atoms(frozenset(simplex_bases), masks)
    flat = atoms.atomize(expr)
    facts = _MaskFacts(masks, atoms)
    reduced = sp.cancel(sp.together(facts.apply(idempotent(on_unit_circle(sp.expand(flat))))))
    if reduced.has(sp.sin, Indicator):  # cancelling can multiply them together again
        numerator, denominator = sp.fraction(reduced)
        reduced = idempotent(on_unit_circle(sp.expand(numerator))) / denominator
    if masks:  # cancelling can multiply mask entries together again
        numerator, denominator = sp.fraction(reduced)
        reduced = facts.apply(sp.expand(numerator), denominator) / denominator
    return atoms.restore(reduced)


def _mask_powers_reduced(expr: sp.Expr, masks: frozenset[str]) -> sp.Expr:
    """``expr`` with every integer power m**k (k > 1) of a 0/1 mask entry written m, at any
    depth: the products a sum's expanded term makes, such as m·(m·v + (1 − m)·c), leave them
    where the polynomial facts of ``_MaskFacts`` do not reach."""
    def is_mask_power(e: sp.Basic) -> bool:
        return (isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 1
                and isinstance(e.base, sp.Indexed) and str(e.base.base.label) in masks)

    return expr.replace(is_mask_power, lambda e: e.base)


class _MaskFacts:
    """What the entries of 0/1 masks (named in ``masks``) satisfy, applied to an expanded
    polynomial in atoms:

    * an entry is its own square, ``m**k = m``;
    * so is a fully-masked indicator Π_k (1 − m[r, k]) (a Π atom);
    * Π_k (1 − m[r, k]) · m[r, e] = 0 for ``e`` in the range of ``k``, and likewise times a sum
      whose every term carries ``m[r, k']`` with ``k'`` bound over part of that range: the
      indicator is 1 only where every such entry is 0.
    """

    def __init__(self, masks: frozenset[str], atoms: _Atoms) -> None:
        self._masks, self._atoms = masks, atoms

    def apply(self, expr: sp.Expr, denominator: sp.Expr = sp.S.One) -> sp.Expr:
        """``expr`` with the facts applied; ``denominator`` is what each term is divided by."""
        if not self._masks:
            return expr
        expr = sp.expand(expr.replace(self._is_idempotent_power, lambda e: e.base))
        return sp.Add(*(t for t in sp.Add.make_args(expr)
                        if not self._vanishes(t / denominator)))

    def _is_idempotent_power(self, e: sp.Basic) -> bool:
        if not (isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 1):
            return False
        return self._is_mask_entry(e.base) or self._atoms.indicator(e.base) is not None

    def _is_mask_entry(self, e: sp.Basic) -> bool:
        return isinstance(e, sp.Indexed) and str(e.base.label) in self._masks

    def _vanishes(self, term: sp.Expr) -> bool:
        """Π · (a factor that is 0 where Π is 1) — unless the term also divides by such a
        factor, where it is undefined rather than 0."""
        powers = [f.as_base_exp() for f in sp.Mul.make_args(term)]
        numerator = [base for base, exponent in powers if exponent.is_positive]
        denominator = [base for base, exponent in powers if exponent.is_negative]
        for factor in numerator:
            indicator = self._atoms.indicator(factor)
            if indicator is None:
                continue
            if any(self._kept_in(f, indicator) for f in numerator) and not any(
                    self._kept_in(f, indicator) for f in denominator):
                return True
        return False

    def _kept_in(self, factor: sp.Expr, indicator: sp.Product) -> bool:
        """Whether ``factor`` is 0 wherever ``indicator`` (Π_k (1 − m[r, k])) is 1."""
        (variable, lower, upper), = indicator.limits
        entry = 1 - indicator.function
        if self._is_mask_entry(factor):
            at = _same_row(factor, entry, variable)
            return at is not None and _within(at, lower, upper, {})
        total = self._atoms.value(factor)
        if not isinstance(total, sp.Sum):
            return False
        inner = dict((v, (lo, hi)) for v, lo, hi in total.limits)
        for f in sp.Mul.make_args(total.function):
            at = _same_row(f, entry, variable) if self._is_mask_entry(f) else None
            if at in inner and _within(at, lower, upper, inner):
                return True
        return False


def _same_row(entry: sp.Indexed, pattern: sp.Indexed, variable: sp.Symbol) -> sp.Expr | None:
    """The index ``entry`` has where ``pattern`` has ``variable``, if the two are the same
    tensor and agree everywhere else; else None."""
    if entry.base.label != pattern.base.label or len(entry.indices) != len(pattern.indices):
        return None
    position = [n for n, i in enumerate(pattern.indices) if i == variable]
    if len(position) != 1:
        return None
    others = [(a, b) for n, (a, b) in enumerate(zip(entry.indices, pattern.indices, strict=True))
              if n != position[0]]
    if any(a != b or b.has(variable) for a, b in others):
        return None
    return entry.indices[position[0]]


# A concrete range longer than this stays a sum (still exact, just not written out).
_LARGEST_WRITTEN_OUT = 16


def written_out(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every summation over a concrete range (integer bounds, as a dimension of
    one declared size leaves) replaced by its terms, innermost first."""
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, (sp.Indexed, sp.Idx)):
        return expr
    args = [written_out(arg) for arg in expr.args]
    if not isinstance(expr, sp.Sum):
        return expr.func(*args)
    function = args[0]
    kept: list[tuple[sp.Expr, sp.Expr, sp.Expr]] = []
    for variable, lower, upper in expr.limits:  # innermost first
        bounds_of_kept = [b for _, lo, hi in kept for b in (lo, hi)]
        concrete = lower.is_Integer and upper.is_Integer and upper - lower < _LARGEST_WRITTEN_OUT
        if not concrete or any(b.has(variable) for b in bounds_of_kept):
            kept.append((variable, lower, upper))
            continue
        values = range(int(lower), int(upper) + 1)
        function = sp.Add(*(function.xreplace({variable: v}) for v in values))
    return sp.Sum(function, *kept) if kept else function


# -- the normal form ------------------------------------------------------------------------


def normalize(expr: sp.Expr, ranges: Mapping[sp.Symbol, Range]) -> sp.Expr:
    """Rewrite ``expr`` bottom-up into the sum normal form (see the module docstring)."""
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, (sp.Indexed, sp.Idx)):
        return expr
    if isinstance(expr, sp.Sum):
        return _normalize_sum(expr, ranges)
    if _keeps_an_entry(expr, ranges):
        return sp.S.Zero
    args = [normalize(arg, ranges) for arg in expr.args]
    if isinstance(expr, sp.exp):
        return _split_exp(args[0])
    if isinstance(expr, sp.log):
        return _split_log(args[0])
    if isinstance(expr, (sp.cos, sp.sin)):
        return _split_angle(expr.func, args[0])
    return expr.func(*args)


def _normalize_sum(expr: sp.Sum, ranges: Mapping[sp.Symbol, Range]) -> sp.Expr:
    function = expr.function
    limits = list(expr.limits)
    inner_ranges = dict(ranges)
    for variable, lower, upper in limits:
        inner_ranges[variable] = (lower, upper)
    result = normalize(function, inner_ranges)
    for variable, lower, upper in limits:
        inner_ranges.pop(variable)
        result = _sum_over(result, variable, lower, upper, {**ranges, **inner_ranges})
    return result


def _sum_over(function: sp.Expr, variable: sp.Symbol, lower: sp.Expr, upper: sp.Expr,
              ranges: Mapping[sp.Symbol, Range]) -> sp.Expr:
    """Σ over ``variable`` in [lower, upper] of an already normalized ``function``."""
    count = upper - lower + 1
    if count.is_zero:
        return sp.S.Zero
    total = []
    for term in sp.Add.make_args(idempotent(on_unit_circle(sp.expand(function)))):
        total.append(_sum_term(term, variable, lower, upper, count, ranges))
    return sp.Add(*total)


def _sum_term(term: sp.Expr, variable: sp.Symbol, lower: sp.Expr, upper: sp.Expr,
              count: sp.Expr, ranges: Mapping[sp.Symbol, Range]) -> sp.Expr:
    outside: list[sp.Expr] = []
    inside: list[sp.Expr] = []
    for factor in _factors(term):
        (inside if variable in factor.free_symbols else outside).append(factor)
    if not inside:
        return sp.Mul(*outside) * count
    restricted = _limits_from_indicator(inside, variable, lower, upper, ranges)
    if restricted is not None:
        rest, lower, upper = restricted
        return _sum_term(sp.Mul(*outside, *rest), variable, lower, upper, upper - lower + 1,
                         ranges)
    delta_value = _delta_partner(inside, variable)
    if delta_value is not None and _within(delta_value, lower, upper, ranges):
        rest = [f for f in inside if not _is_delta_on(f, variable, delta_value)]
        substituted = sp.Mul(*rest).xreplace({variable: delta_value})
        return sp.Mul(*outside) * normalize(substituted, ranges)
    return sp.Mul(*outside) * _merged_sum(inside, (variable, lower, upper))


def _limits_from_indicator(
    inside: list[sp.Expr], variable: sp.Symbol, lower: sp.Expr, upper: sp.Expr,
    ranges: Mapping[sp.Symbol, Range],
) -> tuple[list[sp.Expr], sp.Expr, sp.Expr] | None:
    """(the other factors, new lower, new upper) when a factor is an indicator on ``variable``
    that narrows its range exactly: Σ_{j=lo}^{hi} [j ≤ e] f = Σ_{j=lo}^{e} f for every
    lo − 1 ≤ e ≤ hi (the empty sum at e = lo − 1), and likewise for j ≥ e; else None."""
    for factor in inside:
        bound = _indicator_bound(factor, variable)
        if bound is None:
            continue
        side, value, kept = bound
        if side == "upper" and _within(value, lower - 1, upper, ranges):
            new = (lower, value)
        elif side == "lower" and _within(value, lower, upper + 1, ranges):
            new = (value, upper)
        else:
            continue
        return [f for f in inside if f is not factor] + [kept], *new
    return None


def _indicator_bound(factor: sp.Expr, variable: sp.Symbol
                     ) -> tuple[str, sp.Expr, sp.Expr] | None:
    """("upper" or "lower", e, 1) for an indicator [variable <=/</>=/> e]."""
    if not isinstance(factor, Indicator) or not isinstance(factor.condition, Relational):
        return None
    condition, kept = factor.condition, sp.S.One
    if condition.rhs.has(variable) and not condition.lhs.has(variable):
        condition = condition.reversed
    if condition.lhs != variable or condition.rhs.has(variable):
        return None
    value = condition.rhs
    return {"<=": ("upper", value, kept), "<": ("upper", value - 1, kept),
            ">=": ("lower", value, kept), ">": ("lower", value + 1, kept)
            }.get(condition.rel_op)


def _keeps_an_entry(expr: sp.Expr, ranges: Mapping[sp.Symbol, Range]) -> bool:
    """Π_{k=lo}^{hi} (1 − [k ≤ e]) is 0 when some k in range has k ≤ e: e ≥ lo for every value
    e takes (likewise k ≥ e when e ≤ hi): a row of an index mask that keeps an entry. So is any
    nonempty product whose factor at k = lo or k = hi is 0 for every value of the other symbols
    (Π_k (1 − [k mod s = 0]): the mask keeps k = 0)."""
    if not (isinstance(expr, sp.Product) and len(expr.limits) == 1):
        return False
    (variable, lower, upper), = expr.limits
    if (upper - lower).is_nonnegative and any(
            expr.function.xreplace({variable: point}) == 0
            for point in _points_in_range(expr.function, variable, lower, upper, ranges)):
        return True  # a factor vanishes in range: [j mod k = 0] keeps j = 0, [⌊i/B⌋ = ⌊j/B⌋] j = i
    bound = _indicator_bound(1 - expr.function, variable)
    if bound is None:
        return False
    side, value, _ = bound
    value_range = _range_of(value, ranges)
    if value_range is None:
        return False
    low, high = value_range
    if not (upper - lower).is_nonnegative:  # an empty product is 1
        return False
    if side == "upper":
        return bool((low - lower).is_nonnegative)
    return bool((upper - high).is_nonnegative)


def _points_in_range(function: sp.Expr, variable: sp.Symbol, lower: sp.Expr, upper: sp.Expr,
                     ranges: Mapping[sp.Symbol, Range]) -> list[sp.Expr]:
    """Values ``variable`` takes in [lower, upper] for every value of the other symbols: the
    ends, and each other index in ``function`` whose range lies inside."""
    others = [x for x in function.free_symbols | function.atoms(sp.Idx)
              if x != variable and getattr(x, "is_integer", False)
              and (x in ranges or isinstance(x, sp.Idx))]
    inside = [x for x in sorted(others, key=sp.default_sort_key)
              if _within(x, lower, upper, ranges)]
    return [lower, upper, *inside]


def idempotent(expr: sp.Expr) -> sp.Expr:
    """An expanded polynomial with every power of an indicator reduced to the indicator, and
    every term with an indicator and its negation ([c][¬c] = 0) dropped."""
    def is_indicator_power(e: sp.Basic) -> bool:
        return (isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp > 1
                and isinstance(e.base, Indicator))

    if not expr.has(Indicator):
        return expr
    expr = sp.expand(expr.replace(is_indicator_power, lambda e: e.base))
    return sp.Add(*(t for t in sp.Add.make_args(expr) if not _contradicts_itself(t)))


def _contradicts_itself(term: sp.Expr) -> bool:
    conditions = {f.condition for f in sp.Mul.make_args(term) if isinstance(f, Indicator)}
    return any(sp.Not(c) in conditions for c in conditions)


def _merged_sum(inside: list[sp.Expr], limit: tuple[sp.Symbol, sp.Expr, sp.Expr]) -> sp.Expr:
    """A sum over ``limit`` of the product ``inside``, merging inner sums into one multi-sum."""
    inner_sums = [f for f in inside if isinstance(f, sp.Sum)]
    others = [f for f in inside if not isinstance(f, sp.Sum)]
    bound = [lim[0] for s in inner_sums for lim in s.limits]
    if not inner_sums or len(set(bound)) != len(bound) or limit[0] in bound:
        return sp.Sum(sp.Mul(*inside), limit)
    limits = [lim for s in inner_sums for lim in s.limits] + [limit]
    function = sp.Mul(*others, *(s.function for s in inner_sums))
    return sp.Sum(sp.expand(function), *limits)


def _factors(term: sp.Expr) -> list[sp.Expr]:
    """Multiplicative factors of a term, with exps of sums split, delta powers reduced and
    denominators factored."""
    factors = []
    for factor in sp.Mul.make_args(term):
        base, exponent = factor.as_base_exp()
        if isinstance(base, sp.KroneckerDelta) and exponent.is_positive:
            factors.append(base)
        elif isinstance(factor, sp.exp):
            factors.extend(sp.exp(t) for t in sp.Add.make_args(sp.expand(factor.args[0])))
        elif isinstance(base, sp.Sum) and exponent.is_Integer and exponent > 1:
            # (Σ f)^k is k copies of Σ f, each with its own bound names, so they can merge
            factors.extend(_fresh_bound_names(base) for _ in range(int(exponent)))
        elif isinstance(base, sp.Add) and exponent.is_negative:
            factors.extend(_factored_denominator(base, exponent))
        else:
            factors.append(factor)
    return factors


def _fresh_bound_names(total: sp.Sum) -> sp.Sum:
    """``total`` with every bound index renamed to a fresh dummy (the same sum)."""
    renames = {v: sp.Dummy(v.name, integer=True) for v, _, _ in total.limits}
    limits = [(renames[v], lo.xreplace(renames), hi.xreplace(renames))
              for v, lo, hi in total.limits]
    return sp.Sum(total.function.xreplace(renames), *limits)


def _factored_denominator(base: sp.Add, exponent: sp.Expr) -> list[sp.Expr]:
    """``expand`` multiplies a denominator out ((Σ + Π)**2 becomes Σ**2 + 2ΣΠ + Π**2) and
    leaves constants inside it (c·Σ + c·Π): factoring restores one canonical spelling, and
    index-free constants become factors of their own, free to leave a sum."""
    return list(sp.Mul.make_args(sp.factor(base) ** exponent))


def _delta_partner(factors: Iterable[sp.Expr], variable: sp.Symbol) -> sp.Expr | None:
    for factor in factors:
        if isinstance(factor, sp.KroneckerDelta):
            a, b = factor.args[:2]
            if a == variable and not b.has(variable):
                return b
            if b == variable and not a.has(variable):
                return a
    return None


def _is_delta_on(factor: sp.Expr, variable: sp.Symbol, value: sp.Expr) -> bool:
    return isinstance(factor, sp.KroneckerDelta) and set(factor.args[:2]) == {variable, value}


def _within(value: sp.Expr, lower: sp.Expr, upper: sp.Expr,
            ranges: Mapping[sp.Symbol, Range]) -> bool:
    """Whether ``lower <= value <= upper`` holds for every value the index can take."""
    value_range = _range_of(value, ranges)
    if value_range is None:
        return False
    low, high = value_range
    return bool((low - lower).is_nonnegative) and bool((upper - high).is_nonnegative)


def _range_of(value: sp.Expr, ranges: Mapping[sp.Symbol, Range]) -> Range | None:
    constant, rest = value.as_coeff_Add()
    if constant != 0 and constant.is_Integer:  # e + c: the range of e, shifted
        shifted = _range_of(rest, ranges)
        return None if shifted is None else (shifted[0] + constant, shifted[1] + constant)
    if value in ranges:
        return ranges[value]
    if isinstance(value, sp.Idx) and value.lower is not None:
        return (value.lower, value.upper)
    if value.is_Integer:
        return (value, value)
    return None


def _split_exp(argument: sp.Expr) -> sp.Expr:
    return sp.Mul(*(sp.exp(t) for t in sp.Add.make_args(sp.expand(argument))))


def _split_log(argument: sp.Expr) -> sp.Expr:
    """log of a product of positive factors as a sum of logs; log(exp(x)) = x for real x."""
    if isinstance(argument, sp.exp) and argument.args[0].is_real:
        return argument.args[0]
    if isinstance(argument, sp.Mul) and all(is_positive(f) for f in argument.args):
        return sp.Add(*(_split_log(f) for f in argument.args))
    if isinstance(argument, sp.Pow) and is_positive(argument.base) and argument.exp.is_real:
        return argument.exp * _split_log(argument.base)
    return sp.log(argument)


# cos(k x) for an integer k is written out by angle addition up to this |k|; beyond, it stays
# an atom of its own (the rewrite may then miss a proof, never fake one)
_LARGEST_MULTIPLE = 8


def _split_angle(function: type[sp.Function], argument: sp.Expr) -> sp.Expr:
    """cos or sin of ``argument`` by angle addition, down to angles that are single terms
    with no integer multiple: cos(a + b) = cos a cos b − sin a sin b,
    sin(a + b) = sin a cos b + cos a sin b."""
    terms = sp.Add.make_args(sp.expand(argument))
    if len(terms) == 1:
        coefficient, angle = terms[0].as_coeff_Mul()
        if not (coefficient.is_Integer and 1 < abs(coefficient) <= _LARGEST_MULTIPLE):
            return function(argument)
        first, rest = sp.sign(coefficient) * angle, (coefficient - sp.sign(coefficient)) * angle
    else:
        first, rest = terms[0], sp.Add(*terms[1:])
    cos_a, sin_a = _split_angle(sp.cos, first), _split_angle(sp.sin, first)
    cos_b, sin_b = _split_angle(sp.cos, rest), _split_angle(sp.sin, rest)
    if function is sp.cos:
        return sp.expand(cos_a * cos_b - sin_a * sin_b)
    return sp.expand(sin_a * cos_b + cos_a * sin_b)


def on_unit_circle(expr: sp.Expr) -> sp.Expr:
    """An expanded polynomial with every sin(x)**k (k ≥ 2) written as
    sin(x)**(k mod 2) · (1 − cos(x)**2)**(k div 2), expanded: sines of degree at most one."""
    def is_square_of_sine(e: sp.Basic) -> bool:
        return (isinstance(e, sp.Pow) and isinstance(e.base, sp.sin) and e.exp.is_Integer
                and e.exp >= 2)

    def reduced(e: sp.Pow) -> sp.Expr:
        k = int(e.exp)
        return e.base ** (k % 2) * (1 - sp.cos(e.base.args[0]) ** 2) ** (k // 2)

    if not expr.has(sp.sin):
        return expr
    return sp.expand(expr.replace(is_square_of_sine, reduced))


def is_positive(expr: sp.Expr) -> bool:
    """Whether ``expr`` is positive by its form alone (exponentials, nonempty sums and
    products of positive terms); False means "not shown", not "nonpositive"."""
    if expr.is_positive:
        return True
    if isinstance(expr, sp.exp):
        return bool(expr.args[0].is_real)
    if isinstance(expr, sp.Sum):
        nonempty = all((upper - lower).is_nonnegative for _, lower, upper in expr.limits)
        return nonempty and all(is_positive(f) for f in sp.Mul.make_args(expr.function))
    if isinstance(expr, sp.Pow):
        return is_positive(expr.base) and bool(expr.exp.is_real)
    if isinstance(expr, sp.Mul):
        return all(is_positive(f) for f in expr.args)
    return False


def is_nonnegative(expr: sp.Expr) -> bool:
    """Whether ``expr`` ≥ 0 by its form alone: what ``is_positive`` shows, entries declared
    nonnegative (a mask's, a distribution's), a fully-masked indicator Π_k (1 − m_k) (0 or 1),
    and sums, products and powers of such; a reciprocal needs a positive base, such as a
    masked softmax's denominator. False means "not shown"."""
    if is_positive(expr) or expr.is_nonnegative:
        return True
    if isinstance(expr, AllMasked):
        return True
    if isinstance(expr, (sp.Add, sp.Mul)):
        return all(is_nonnegative(a) for a in expr.args)
    if isinstance(expr, sp.Sum):
        return is_nonnegative(expr.function)
    if isinstance(expr, sp.Pow) and expr.exp.is_real:
        if expr.exp.is_negative:
            return is_positive(expr.base) or _is_masked_total(expr.base)
        return is_nonnegative(expr.base)
    return False


def _is_masked_total(expr: sp.Expr) -> bool:
    """Whether ``expr`` is Π_k (1 − m_k) + Σ_k m_k·p_k with every p_k > 0 over one range: a
    masked softmax's denominator, which is positive, since the indicator is 1 exactly where
    every m_k is 0 and the sum has a positive term otherwise."""
    if not isinstance(expr, sp.Add) or len(expr.args) != 2:
        return False
    indicators = [a for a in expr.args if isinstance(a, AllMasked)]
    totals = [a for a in expr.args if isinstance(a, sp.Sum)]
    if len(indicators) != 1 or len(totals) != 1 or len(totals[0].limits) != 1:
        return False
    (indicator,), (total,) = indicators, totals
    (k, low, high), = indicator.limits
    (j, lower, upper), = total.limits
    if (low, high) != (lower, upper):
        return False
    entry = 1 - indicator.function
    factors = list(sp.Mul.make_args(total.function.xreplace({j: k})))
    if entry not in factors:
        return False
    factors.remove(entry)
    return all(is_positive(f) for f in factors)


# -- Kronecker deltas between free indices ---------------------------------------------------


def _canonicalize_deltas(expr: sp.Expr) -> sp.Expr:
    """In each term, δ(a, b)·f(b) becomes δ(a, b)·f(a), with a the smaller name."""
    terms = []
    for term in sp.Add.make_args(sp.expand(expr)):
        deltas = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.KroneckerDelta)]
        rest = sp.Mul(*(f for f in sp.Mul.make_args(term) if not isinstance(f, sp.KroneckerDelta)))
        for delta in deltas:
            a, b = sorted(delta.args[:2], key=sp.default_sort_key)
            rest = rest.xreplace({b: a})
        terms.append(sp.Mul(*deltas) * rest)
    return sp.Add(*terms)


# -- atoms: canonical sums and exponentials ------------------------------------------------


class _Atoms:
    """Replaces canonical sums and exps by symbols so that ``cancel`` sees a rational function."""

    def __init__(self, simplex_bases: frozenset[sp.IndexedBase], masks: frozenset[str]) -> None:
        self._simplex_bases, self._masks = simplex_bases, masks
        self._symbol_of: dict[sp.Basic, sp.Symbol] = {}
        self._value_of: dict[sp.Symbol, sp.Expr] = {}

    def atomize(self, expr: sp.Expr) -> sp.Expr:
        expr = _canonical_bound_names(expr, 0)
        split = _split_at_common_points(expr)
        if split != expr:  # a piece of one term leaves a sum over fewer indices: named anew
            expr = _canonical_bound_names(split, 0)
        return self._replace(expr)

    def restore(self, expr: sp.Expr) -> sp.Expr:
        return expr.xreplace(self._value_of)

    def value(self, atom: sp.Basic) -> sp.Expr | None:
        return self._value_of.get(atom)

    def indicator(self, atom: sp.Basic) -> sp.Product | None:
        """The product behind a Π atom (a fully-masked indicator), else None."""
        value = self._value_of.get(atom)
        return value if isinstance(value, sp.Product) else None

    def _is_indicator(self, expr: sp.Basic) -> bool:
        """Π_k (1 − m[..., k]) over one index, for a 0/1 mask m."""
        if not isinstance(expr, sp.Product) or len(expr.limits) != 1:
            return False
        entry = 1 - expr.function
        return isinstance(entry, sp.Indexed) and str(entry.base.label) in self._masks

    def _replace(self, expr: sp.Basic) -> sp.Basic:
        if isinstance(expr, sp.Sum):
            if self._sums_to_one(expr):
                return sp.S.One
            return self._symbol(expr, "Σ")
        if self._is_indicator(expr):  # one atom, whichever Product subclass spelled it
            return self._symbol(sp.Product(*expr.args), "Π")
        if isinstance(expr, sp.exp):
            return sp.Mul(*(self._exp_atom(t) for t in sp.Add.make_args(sp.expand(expr.args[0]))))
        if not expr.args or isinstance(expr, (sp.Indexed, sp.Idx)):
            return expr
        return expr.func(*(self._replace(arg) for arg in expr.args))

    def _sums_to_one(self, s: sp.Sum) -> bool:
        """Σ_k p[..., k] over the whole last axis of a simplex tensor p."""
        if len(s.limits) != 1 or not isinstance(s.function, sp.Indexed):
            return False
        variable, lower, upper = s.limits[0]
        p = s.function
        if p.base not in self._simplex_bases or p.indices[-1] != variable:
            return False
        return lower == 0 and upper + 1 == p.base.shape[-1]

    def _exp_atom(self, term: sp.Expr) -> sp.Expr:
        coefficient, core = term.as_coeff_Mul()
        if not coefficient.is_Rational:
            coefficient, core = sp.S.One, term
        return self._symbol(sp.exp(core), "E") ** coefficient

    def _symbol(self, value: sp.Basic, prefix: str) -> sp.Symbol:
        if value not in self._symbol_of:
            symbol = sp.Symbol(f"{prefix}{len(self._symbol_of)}", positive=prefix == "E")
            self._symbol_of[value] = symbol
            self._value_of[symbol] = value
        return self._symbol_of[value]


def _canonical_bound_names(expr: sp.Expr, depth: int) -> sp.Expr:
    """Rename bound indices to names fixed by nesting depth, trying each order of limits."""
    if not isinstance(expr, sp.Basic) or not expr.args or isinstance(expr, (sp.Indexed, sp.Idx)):
        return expr
    if not isinstance(expr, ExprWithLimits):
        return expr.func(*(_canonical_bound_names(arg, depth) for arg in expr.args))
    candidates = []
    variables = {lim[0] for lim in expr.limits}
    dependent = any(bound.free_symbols & variables for lim in expr.limits for bound in lim[1:])
    # limits that refer to other bound indices must keep their order to keep their meaning
    orders = [expr.limits] if dependent else itertools.permutations(expr.limits)
    for order in orders:
        names = {lim[0]: sp.Symbol(f"_c{depth}_{n}", integer=True) for n, lim in enumerate(order)}
        function = _canonical_bound_names(expr.function.xreplace(names), depth + 1)
        limits = [(names[v], lo.xreplace(names), hi.xreplace(names)) for v, lo, hi in expr.limits]
        if not dependent:
            limits.sort(key=lambda lim: lim[0].name)
        candidates.append(expr.func(function, *limits))
    return min(candidates, key=sp.srepr)


def _split_at_common_points(expr: sp.Expr) -> sp.Expr:
    """Split sums of the same summand at each other's endpoints.

    A cut may fall on an endpoint (an empty piece), so only ``lower <= cut <= upper + 1``
    must be provable.

    Σ_{0}^{q-1} f and Σ_{0}^{p-1} f, Σ_{p}^{q-1} f then share the pieces [0, p) and [p, q),
    so the identity Σ_{0}^{p-1} f + Σ_{p}^{q-1} f = Σ_{0}^{q-1} f becomes visible to ``cancel``.
    A sum over several indices is cut along one of them when its other limits are the same
    (Σ_f Σ_{j ≤ i} against Σ_f Σ_{j ≤ i−1}: nested sums merged, as a causal state read through
    a feature sum becomes). A piece of one term is that term: Σ_{j ≤ i} cut at i is
    Σ_{j ≤ i−1} plus the term at i, the step of a running sum's recurrence.
    """
    sums = [s for s in expr.atoms(sp.Sum) if _independent_limits(s)]
    points: dict[tuple, set[sp.Expr]] = {}
    for s in sums:
        for position, (_, lower, upper) in enumerate(s.limits):
            points.setdefault(_along(s, position), set()).update({lower, upper + 1})
    replacements = {}
    for s in sums:
        for position, (_, lower, upper) in enumerate(s.limits):
            cuts = _ordered_cuts(points[_along(s, position)], lower, upper + 1)
            if cuts is not None and len(cuts) > 2:
                replacements[s] = sp.Add(*(_piece(s, position, a, b - 1)
                                           for a, b in itertools.pairwise(cuts)))
                break
    return expr.xreplace(replacements) if replacements else expr


def _independent_limits(total: sp.Sum) -> bool:
    """No limit depends on another of the sum's own indices (each can be cut alone)."""
    bound = {v for v, _, _ in total.limits}
    return all(not ((sp.sympify(lo).free_symbols | sp.sympify(hi).free_symbols) & bound)
               for _, lo, hi in total.limits)


def _along(total: sp.Sum, position: int) -> tuple:
    """What a sum must share with another to be cut along its limit at ``position``: the
    summand, that limit's variable and every other limit."""
    return (total.function, total.limits[position][0],
            total.limits[:position] + total.limits[position + 1:])


def _piece(total: sp.Sum, position: int, lower: sp.Expr, upper: sp.Expr) -> sp.Expr:
    """``total`` with its limit at ``position`` narrowed to [lower, upper]; one term where
    lower = upper (the variable put in, the other limits kept)."""
    variable = total.limits[position][0]
    others = total.limits[:position] + total.limits[position + 1:]
    if (upper - lower).is_zero:
        term = total.function.xreplace({variable: lower})
        # factors that no longer depend on a bound index leave the sum again
        return normalize(sp.Sum(term, *others), {}) if others else term
    limits = list(total.limits)
    limits[position] = (variable, lower, upper)
    return sp.Sum(total.function, *limits)


def _ordered_cuts(points: Iterable[sp.Expr], start: sp.Expr, stop: sp.Expr
                  ) -> list[sp.Expr] | None:
    inner = [
        p for p in points
        if p not in (start, stop) and _nonnegative(p - start) and _nonnegative(stop - p)
    ]
    try:
        ordered = sorted(inner, key=functools.cmp_to_key(_compare))
    except _Unordered:
        return None
    return [start, *ordered, stop]


def _nonnegative(expr: sp.Expr) -> bool:
    """``expr`` ≥ 0 for every value its indices take: known from the assumptions, or with every
    index written as its lowest value plus a nonnegative number (i ≥ 0 for an index i)."""
    if expr.is_nonnegative:
        return True
    lowest = {i: i.lower + sp.Dummy(nonnegative=True, integer=True) for i in expr.atoms(sp.Idx)
              if i.lower is not None and i.lower.is_Integer}
    return bool(lowest) and bool(expr.xreplace(lowest).is_nonnegative)


class _Unordered(Exception):
    pass


def _compare(a: sp.Expr, b: sp.Expr) -> int:
    difference = a - b
    if difference.is_zero:
        return 0
    if difference.is_nonnegative:
        return 1
    if difference.is_nonpositive:
        return -1
    raise _Unordered
