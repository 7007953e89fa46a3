"""Max-shifting of exponentials in ratios such as ``exp(x_i) / Sum_k exp(x_k)``.

Write each ``exp(c * u)`` of a family (the same ``u`` up to renaming of its indices) as
``exp(c * (u - C)) * M**c``, where ``C`` is the maximum of ``u`` over every index position that
some member of the family sums over. If the whole expression is homogeneous of degree 0 in
``M`` (as softmax, its derivatives and entropy are), ``M`` cancels and may be set to 1: the
value is unchanged and no exponential overflows. A family that does not cancel is left alone.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import cast

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits

from attnproof.symbolic._vocabulary import AllMasked, Indicator

_fresh = itertools.count()


class ReduceMax(sp.Function):
    """``ReduceMax(f, k, ...)``: the maximum of ``f`` over the indices ``k, ...``."""

    is_real = True


class KeptMax(sp.Function):
    """``KeptMax(f, m, k, ...)``: the maximum of ``f`` over ``k, ...`` among the entries a 0/1
    mask ``m`` keeps; over all entries where it keeps none. Shifting a masked softmax by it
    leaves no kept exponential to underflow against a larger masked one."""

    is_real = True


def stabilize_exponentials(expr: sp.Expr) -> sp.Expr:
    expr = _drop_zero_sums(expr)
    occurrences = _exp_occurrences(expr, frozenset())
    families: dict = {}
    for node, bound in occurrences:
        coefficient, rest = node.args[0].as_coeff_Mul()
        canonical, positions = _canonical(rest)
        if canonical is None:
            continue
        family = families.setdefault(canonical, {"members": [], "bound": []})
        family["members"].append((node, coefficient, rest, positions))
        family["bound"].append(bound)
    masked_rows = _fully_masked_rows(expr)
    for family in families.values():
        family["reduced"] = _reduced_positions(family)
        expr = _shift_family(expr, family, masked_rows)
    return expr


def _fully_masked_rows(expr: sp.Expr) -> list[tuple[sp.Expr, sp.Expr]]:
    """(m[..., k], k) for each fully-masked indicator Π_k (1 − m[..., k]) of a masked softmax:
    the mask entry written beside its exponentials, and the index its row runs over; and
    ([lo ≤ k ≤ hi], k) for each sum over part of a row whose limits depend on other indices
    (Σ_{k ≤ i}): the shift is then the largest exponent in that part, so no kept exponential
    underflows against a larger one outside it."""
    found = []
    for node in expr.atoms(AllMasked):
        entry, (bound, _, _) = 1 - node.function, node.limits[0]
        if isinstance(entry, (sp.Indexed, Indicator)) and (entry, bound) not in found:
            found.append((entry, bound))
    for node in expr.atoms(sp.Sum):
        for bound, lower, upper in node.limits:
            if (lower.atoms(sp.Idx) or upper.atoms(sp.Idx)) and len(node.limits) == 1:
                found.append((Indicator(sp.And(bound >= lower, bound <= upper)), bound))
    return found


def _row_indices(entry: sp.Expr, bound: sp.Expr) -> set:
    """The indices a row's mask entry depends on besides the one the row runs over."""
    if isinstance(entry, sp.Indexed):
        return {_key(i) for i in entry.indices if i != bound}
    return {_key(i) for i in entry.atoms(sp.Idx) if _key(i) != _key(bound)}


def _drop_zero_sums(expr: sp.Expr) -> sp.Expr:
    """``Sum(0, ...)`` left by differentiation is 0; otherwise it breaks homogeneity."""
    return expr.replace(lambda x: isinstance(x, sp.Sum) and x.function == 0, lambda x: sp.S.Zero)


def _reduced_positions(family: dict) -> set[int]:
    """Positions some member sums over inside the family; sums around every member don't count."""
    common = frozenset.intersection(*family["bound"])
    reduced: set[int] = set()
    for (_, _, _, positions), bound in zip(family["members"], family["bound"], strict=True):
        own = {label for label, _ in bound - common}
        reduced |= {p for p, index in enumerate(positions) if _key(index) in own}
    return reduced


def _shift_family(expr: sp.Expr, family: dict, masked_rows: list) -> sp.Expr:
    reduced = family["reduced"]
    if not reduced:
        return expr
    marker = sp.Function(f"_M{next(_fresh)}")
    placeholders: dict[int, sp.Expr] = {}
    replacements, shifted = {}, {}
    # exp(−u/T) (Gibbs weights written with energies) peaks where u is smallest: shift by the
    # minimum, else exp(−(u − max u)) overflows; mixed signs keep the maximum as before
    downhill = all(coefficient.is_negative for _, coefficient, _, _ in family["members"])
    for node, coefficient, rest, positions in family["members"]:
        renamed, reduced_indices = _reduced_copy(rest, positions, reduced, placeholders)
        kept = [positions[p] for p in range(len(positions)) if p not in reduced]
        if any(_key(positions[p]) in {_key(k) for k in kept} for p in reduced):
            return expr
        if downhill:
            peak = -_peak(-renamed, reduced_indices, kept, masked_rows)
        else:
            peak = _peak(renamed, reduced_indices, kept, masked_rows)
        replacements[node] = sp.exp(coefficient * (rest - peak)) * marker(*kept) ** coefficient
        shifted[node] = sp.exp(coefficient * (rest - peak))
    candidate = expr.xreplace(replacements)
    if _degree(candidate, marker) != 0:
        return expr
    return expr.xreplace(shifted)


def _peak(renamed: sp.Expr, reduced_indices: list, kept: list, masked_rows: list) -> sp.Expr:
    """The shift: the maximum over the reduced index, over kept entries only where a masked
    softmax's row runs over that index (its mask entry m[i, k] has every other index among the
    exponent's unreduced ones). Any finite shift is exact, by homogeneity; this one also keeps
    the largest kept exponential at exp(0) = 1, so none underflows against a masked one."""
    if len(reduced_indices) == 1:
        unreduced = {_key(index) for index in kept}
        for entry, bound in masked_rows:
            if _row_indices(entry, bound) <= unreduced:
                mask = entry.xreplace({bound: reduced_indices[0]})
                return KeptMax(renamed, mask, *reduced_indices)
    return ReduceMax(renamed, *reduced_indices)


def _reduced_copy(rest: sp.Expr, positions: Sequence[sp.Expr], reduced: set[int],
                  placeholders: dict[int, sp.Expr]) -> tuple[sp.Expr, list[sp.Expr]]:
    """``rest`` with reduced positions' indices replaced by placeholders the family shares."""
    mapping = {}
    for p in sorted(reduced):
        index = positions[p]
        if p not in placeholders:
            lower, upper = (index.lower, index.upper) if isinstance(index, sp.Idx) else (0, None)
            label = sp.Dummy(f"r{p}", integer=True)
            placeholders[p] = sp.Idx(label, (lower, upper)) if upper is not None else label
        mapping[index] = placeholders[p]
    return _replace_indices(rest, positions, mapping), [placeholders[p] for p in sorted(reduced)]


def _replace_indices(rest: sp.Expr, positions: Sequence[sp.Expr], mapping: dict) -> sp.Expr:
    return rest.xreplace({i: mapping[i] for i in positions if i in mapping})


def _key(index: sp.Basic) -> sp.Basic:
    return index.label if isinstance(index, sp.Idx) else index


def _exp_occurrences(expr: sp.Basic, bound: frozenset,
                     path: tuple = ()) -> list[tuple[sp.exp, frozenset]]:
    """Every ``exp`` node with the (label, sum position) pairs of the sums enclosing it."""
    if isinstance(expr, sp.exp):
        return [(expr, bound)] + _exp_occurrences(expr.args[0], bound, path + (0,))
    if isinstance(expr, ExprWithLimits):
        inner = bound | {(_key(limit[0]), path) for limit in expr.limits}
        return _exp_occurrences(expr.function, inner, path + (0,))
    found: list[tuple[sp.exp, frozenset]] = []
    for n, arg in enumerate(getattr(expr, "args", ())):
        found += _exp_occurrences(arg, bound, path + (n,))
    return found


def _canonical(rest: sp.Expr) -> tuple[str | None, Sequence[sp.Expr]]:
    """``rest`` with free indices renamed by position and bound ones canonically, and the free
    indices in that order. Exponents holding an exp, a log or a max are left alone."""
    if rest.has(sp.exp, sp.log, ReduceMax, KeptMax) or not rest.has(sp.Indexed):
        return None, ()
    positions = _free_positions(rest, frozenset())
    if positions is None:
        return None, ()
    mapping = {index: sp.Symbol(f"_p{n}") for n, index in enumerate(positions)}
    return sp.srepr(_rename_bound(rest.xreplace(mapping), itertools.count())), positions


def _free_positions(expr: sp.Basic, bound: frozenset) -> list | None:
    """Indices of ``expr``'s tensor entries not bound inside it, in order; None if not plain."""
    if isinstance(expr, sp.Indexed):
        found = []
        for index in expr.indices:
            if not isinstance(index, (sp.Idx, sp.Symbol)):
                return None
            if _key(index) not in bound and index not in found:
                found.append(index)
        return found
    if isinstance(expr, ExprWithLimits):
        inner = bound | {_key(limit[0]) for limit in expr.limits}
        return _free_positions(expr.function, inner)
    found = []
    for arg in getattr(expr, "args", ()):
        more = _free_positions(arg, bound)
        if more is None:
            return None
        found += [index for index in more if index not in found]
    return found


def _rename_bound(expr: sp.Basic, counter: Iterator[int]) -> sp.Basic:
    if isinstance(expr, ExprWithLimits):
        function, limits = expr.function, []
        for variable, lower, upper in expr.limits:
            new = sp.Symbol(f"_b{next(counter)}", integer=True)
            function = function.xreplace({variable: new, _key(variable): new})
            limits.append((new, lower, upper))
        return expr.func(_rename_bound(function, counter), *limits)
    if not expr.args:
        return expr
    return expr.func(*(_rename_bound(arg, counter) for arg in expr.args))


def _degree(expr: sp.Basic, marker: sp.Function) -> sp.Expr | int | None:
    """Degree of homogeneity of ``expr`` in applications of ``marker``; None if not homogeneous."""
    if isinstance(expr, sp.core.function.AppliedUndef) and expr.func == marker:
        return 1
    if not expr.has(marker):
        return 0
    if isinstance(expr, sp.Mul):
        degrees = [_degree(arg, marker) for arg in expr.args]
        # no None once the test has passed: every factor's degree is known
        return None if None in degrees else sum(cast("list[sp.Expr | int]", degrees))
    if isinstance(expr, sp.Pow):
        base = _degree(expr.base, marker)
        if base is None or expr.exp.has(marker) or not expr.exp.is_Number:
            return None if base != 0 else (0 if not expr.exp.has(marker) else None)
        return base * expr.exp
    if isinstance(expr, sp.Add):
        # a fully-masked indicator is nonzero only where the masked sum beside it is zero, so it
        # takes whatever degree that sum has
        distinct = {_degree(arg, marker) for arg in expr.args if not isinstance(arg, AllMasked)}
        return distinct.pop() if len(distinct) == 1 else None
    if isinstance(expr, ExprWithLimits):
        inner = _degree(expr.function, marker)
        variables = {limit[0] for limit in expr.limits} | {_key(l[0]) for l in expr.limits}
        varies = any(a.has(*variables) for a in expr.function.atoms(sp.core.function.AppliedUndef)
                     if a.func == marker)
        return None if varies and inner != 0 else inner
    degrees = [_degree(arg, marker) for arg in expr.args]
    return 0 if all(d == 0 for d in degrees) else None
