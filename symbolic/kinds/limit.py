"""Limits in a scalar: ``Limit(expr, T, 0, value)`` claims lim_{T→0+} expr = value.

The documents take limits of attention weights and their entropy as the temperature goes to 0
or to ∞ (tutorial (17)–(20)). SymPy's ``limit`` (Gruntz's algorithm) decides such limits for
symbolic entries once it knows the sign of every exponent, so the symbolic route enumerates the
orders of one row of scores ``S[i, j]``: which entries are maxima, which tie at the next level,
and so on (every weak order). An entry of level r is m − (d1 + … + dr) with the maximum m real
and every gap d > 0, so every real row is one of these patterns, and a limit shown for every
pattern and every row size n <= k is shown for every real row of those sizes ("proved for sizes
<= k"). Softmax's logits are shifted by m first: softmax(β x) = softmax(β (x − m)) for any
constant m (the tutorial's (19)). The statement may involve only that one row (``validate``
checks it), so the other axes are taken at size 1. With ``unique_maximum=True`` the row is
assumed to have a unique maximum and only those orders are enumerated. A limit with no tensor
at all (0·log 0 = 0) is decided once, for every value of its scalars.

The exact refutation takes the first order at which the limit differs from the claim and
reports that row with maximum 0 and gaps 1: for (17), the row (0, 0).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    ClaimKind,
    ProofResult,
    Softmax,
    TheoremError,
    as_expression,
    instantiate,
)

if TYPE_CHECKING:
    from ..route import Theorem

# the points a limit may be taken at: from above at a finite point, or at +∞
_INFINITY = (sp.oo,)


@dataclass(frozen=True)
class Limit(ClaimKind):
    """lim_{variable → point} expr = value (from above when ``point`` is finite).

    Args:
        expr: the expression whose limit is taken (vocabulary such as ``softmax`` allowed).
        variable: the scalar that tends to ``point`` (a ``Scalar``'s ``.symbol``).
        point: a number (approached from above) or ``sympy.oo``.
        value: the claimed limit; it may use ``rowmax`` and ``Piecewise`` to say which entries
            are maxima.
        row: the scores ``S[i, j]`` whose pattern of maxima the symbolic route enumerates (None
            when no tensor occurs); ``j`` runs over the row.
        unique_maximum: assume the row has a unique maximum (a positive gap to every other
            entry); the numeric route draws only such rows.
        rate: for a limit in scalars only, the stated bound on |expr − value| near the point
            (an expression in the scalars) that the numeric route checks along its sequence;
            a limit over a row has the kind's own rates (numeric/kinds/limit.py).
    """

    expr: sp.Expr
    variable: sp.Symbol
    point: sp.Expr
    value: sp.Expr
    row: sp.Expr | None = None
    unique_maximum: bool = False
    rate: sp.Expr | None = None

    kind = "limit"
    numeric_draws = ("rows on a grid of 13 values evenly spaced over each tensor's declared range "
                     "(ties frequent), at the row's smallest, largest and a middle size, each "
                     "along the limit variable's sequence")
    relation = "="

    def __post_init__(self) -> None:
        object.__setattr__(self, "expr", as_expression(self.expr, "Limit: the expression"))
        object.__setattr__(self, "value", as_expression(self.value, "Limit: the value"))
        object.__setattr__(self, "point", sp.sympify(self.point))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("expression", self.expr), ("limit", self.value))

    @property
    def at_infinity(self) -> bool:
        return self.point in _INFINITY

    @property
    def assumption(self) -> str:
        return "a unique maximum" if self.unique_maximum else "any real row, ties included"

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        side = "" if self.at_infinity else "^{+}"
        statement = (rf"\lim_{{{latex(self.variable)} \to {latex(self.point)}{side}}} "
                     rf"{latex(self.expr)} = {latex(self.value)}")
        if self.unique_maximum and self.row is not None:
            index = latex(self.row.indices[-1])
            statement += (rf" \quad \text{{(unique maximum of }} {latex(self.row)} "
                          rf"\text{{ over }} {index}\text{{)}}")
        return statement

    def validate(self, theorem: Theorem, where: str) -> None:
        names = {s.symbol for s in theorem.scalars}
        if self.variable not in names:
            raise TheoremError(f"{where}: limit variable {self.variable} is not an input scalar")
        if not (self.at_infinity or self.point.is_number and self.point.is_finite):
            raise TheoremError(f"{where}: limit point {self.point} must be a number or oo")
        if self.row is None:
            if theorem.tensors or self.unique_maximum:
                raise TheoremError(f"{where}: a limit over tensors needs row=S[i, j], the "
                                   "scores whose maxima the proof enumerates")
            if self.rate is None:
                raise TheoremError(f"{where}: a limit in scalars states its rate (rate=...), "
                                   f"the bound on the error near {self.variable} = {self.point}")
            return
        _check_row(theorem, self, where)

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        if self.row is None:
            return _prove_scalar_limit(theorem, self)
        return _prove_by_patterns(theorem, self, bound)


def _check_row(theorem: Theorem, claim: Limit, where: str) -> None:
    row = claim.row
    if not isinstance(row, sp.Indexed) or str(row.base) not in {t.name for t in theorem.tensors}:
        raise TheoremError(f"{where}: row {row} must be an input tensor indexed like S[i, j]")
    leading = row.indices[:-1]
    for part, expr in claim.expressions():
        for entry in theorem.expand_definitions(expr).atoms(sp.Indexed):
            if entry.base != row.base:
                raise TheoremError(f"{where}, {part}: tensor {entry.base} is not the row "
                                   f"{row.base}: a limit is taken over one row of scores")
            if entry.indices[:-1] != leading:
                raise TheoremError(f"{where}, {part}: {entry} leaves the row {row} (its "
                                   "leading indices must stay those of the row)")


# -- a limit in scalars only ----------------------------------------------------------------


def _direction(claim: Limit) -> str:
    return "-" if claim.at_infinity else "+"


def _prove_scalar_limit(theorem: Theorem, claim: Limit) -> ProofResult:
    expr = theorem.expand(theorem.expand_definitions(claim.expr))
    method = "SymPy limit (Gruntz), every value of the other scalars under their domains"
    try:
        found = sp.limit(expr, claim.variable, claim.point, _direction(claim))
    except NotImplementedError as error:
        return ProofResult(NOT_PROVED, f"{method}: not decided ({error})")
    value = theorem.expand(theorem.expand_definitions(claim.value))
    difference = sp.simplify(found - value)
    if difference == 0:
        return ProofResult(PROVED, method)
    if difference.is_number and difference != 0:
        return ProofResult(REFUTED, method, counterexample={
            "limit": str(found), "claimed": str(value), "lhs_minus_rhs": str(difference)})
    return ProofResult(NOT_PROVED, f"{method}: the difference {difference} was not decided")


# -- a limit over one row of scores ----------------------------------------------------------


def _patterns(size: int, unique: bool) -> Iterator[tuple[int, ...]]:
    """Every weak order of a row's entries, as the rank of each entry (0: a maximum, 1: the
    next value, ...); with ``unique`` only those with a single maximum. Every real row has
    exactly one."""
    for ranks in itertools.product(range(size), repeat=size):
        levels = set(ranks)
        if levels != set(range(len(levels))) or (unique and ranks.count(0) != 1):
            continue
        yield ranks


# The row's maximum: a real symbol. Softmax's logits are shifted by it (the tutorial's (19),
# softmax's shift invariance), so Gruntz's algorithm sees exponents −g/T of known sign; the
# gaps between successive levels are positive symbols, so every exponent's order is known too.
_TOP = sp.Symbol("m", real=True)


def _symbolic_row(base: sp.IndexedBase, leading: Sequence[int], ranks: tuple[int, ...]
                  ) -> dict[sp.Indexed, sp.Expr]:
    """Entries of a row with these ranks: the maximum m, an entry of rank r is m − (d1 + … +
    dr) with every gap d > 0."""
    gaps = [sp.Symbol(f"d{level}", positive=True) for level in range(1, max(ranks) + 1)]
    return {base[(*leading, k)]: _TOP - sum(gaps[:rank], sp.S.Zero)
            for k, rank in enumerate(ranks)}


def _shift_softmax_by_maximum(expr: sp.Expr) -> sp.Expr:
    """softmax(β x) = softmax(β (x − m)) for the row maximum m, node by node."""
    def shifted(*args: sp.Expr) -> sp.Expr:
        return Softmax(args[0] - _TOP, *args[1:])
    return expr.replace(Softmax, shifted)


def _exact_row(entries: dict) -> dict:
    """The same row with maximum 0 and every gap 1."""
    concrete = {s: (0 if s == _TOP else 1) for e in entries.values() for s in e.free_symbols}
    return {k: v.xreplace(concrete) for k, v in entries.items()}


def _row_dim_name(claim: Limit) -> str:
    assert claim.row is not None  # asked only of a limit over a row (``_prove_by_patterns``)
    return str(claim.row.indices[-1].upper + 1)


def _row_sizes(theorem: Theorem, claim: Limit, bound: int) -> range:
    """``bound`` row sizes from the row dimension's declared minimum, none past its maximum."""
    row = next((d for d in theorem.dims if d.name == _row_dim_name(claim)), None)
    low, high = (row.sizes.low, row.sizes.high) if row is not None else (1, bound)
    return range(low, min(low + bound, high + 1))


def _sizes(theorem: Theorem, claim: Limit, size: int) -> dict[str, int]:
    """The row's dimension at ``size``, every other one at its declared minimum."""
    row_dim = _row_dim_name(claim)
    return {d.name: (size if d.name == row_dim else d.sizes.low) for d in theorem.dims}


def _index_values(theorem: Theorem, claim: Limit, sizes: dict[str, int]
                  ) -> Iterator[dict[str, int]]:
    indices = theorem.free_indices
    ranges = [range(sizes.get(str(i.upper + 1), 1)) for i in indices]
    for values in itertools.product(*ranges):
        yield {str(i.label): v for i, v in zip(indices, values, strict=True)}


class _Instances:
    """Each side of the claim at concrete sizes and indices, its sums written out, computed once
    per (side, sizes, indices) for every order of the row: writing out a Max or Piecewise of
    entries whose order is unknown is the slow part."""

    def __init__(self, theorem: Theorem) -> None:
        self.theorem = theorem
        self.cache: dict[tuple, sp.Expr] = {}

    def side(self, expr: sp.Expr, sizes: dict[str, int], index_values: dict[str, int],
             entries: dict[sp.Indexed, sp.Expr]) -> sp.Expr:
        key = (expr, tuple(sizes.items()), tuple(index_values.items()))
        if key not in self.cache:
            theorem = self.theorem
            shifted = _shift_softmax_by_maximum(theorem.expand_definitions(expr))
            self.cache[key] = instantiate(theorem, theorem.expand(shifted), sizes, index_values)
        concrete = self.cache[key]
        # instantiating gives the tensor's base its concrete shape: match entries by name
        by_name = {(str(k.base), k.indices): v for k, v in entries.items()}
        found = {x: by_name[(str(x.base), x.indices)] for x in concrete.atoms(sp.Indexed)
                 if (str(x.base), x.indices) in by_name}
        return concrete.xreplace(found).doit()


def _prove_by_patterns(theorem: Theorem, claim: Limit, bound: int) -> ProofResult:
    assert claim.row is not None  # ``prove`` takes this route only for a limit over a row
    sizes_walked = _row_sizes(theorem, claim, bound)
    largest = sizes_walked[-1] if sizes_walked else bound
    method = (f"SymPy limit (Gruntz) for every row size <= {largest} and every order of the "
              f"row's entries ({claim.assumption}), entries symbolic, softmax shifted by the row "
              "maximum (19)")
    leading = [0] * (len(claim.row.indices) - 1)
    instances = _Instances(theorem)
    for size in sizes_walked:
        sizes = _sizes(theorem, claim, size)
        for ranks in _patterns(size, claim.unique_maximum):
            entries = _symbolic_row(claim.row.base, leading, ranks)
            for index_values in _index_values(theorem, claim, sizes):
                verdict = _compare(instances, claim, sizes, index_values, entries)
                if verdict is None:
                    undecided = f"{method}: undecided at size {size}, ranks {list(ranks)}"
                    if size > sizes_walked.start:  # every smaller size was decided
                        return ProofResult(PROVED_BOUNDED, undecided, max_size=size - 1)
                    return ProofResult(NOT_PROVED, undecided)
                if verdict is not True:
                    return ProofResult(REFUTED, method, counterexample=verdict)
    if not sizes_walked:
        return ProofResult(NOT_PROVED, f"{method}: no row size in the declared domain")
    return ProofResult(PROVED_BOUNDED, method, max_size=sizes_walked[-1])


def _compare(instances: _Instances, claim: Limit, sizes: dict[str, int],
             index_values: dict[str, int], entries: dict[sp.Indexed, sp.Expr]
             ) -> Literal[True] | dict | None:
    """True when the limit equals the claimed value for this pattern, None when undecided,
    else the counterexample at the exact row with maximum 0 and gaps 1."""
    try:
        found = sp.limit(instances.side(claim.expr, sizes, index_values, entries),
                         claim.variable, claim.point, _direction(claim))
    except NotImplementedError:  # Gruntz could not order some exponent: undecided
        return None
    claimed = sp.piecewise_fold(instances.side(claim.value, sizes, index_values, entries))
    difference = sp.simplify(found - claimed)
    if difference == 0:
        return True
    at_row = _exact_row(_named(entries))  # every gap 1
    if not sp.simplify(difference.xreplace(at_row)).is_number:
        return None
    if sp.simplify(difference.xreplace(at_row)) == 0:
        return None
    return {
        "sizes": sizes,
        "indices": index_values,
        "values": {str(k): str(v) for k, v in _exact_row(entries).items()},
        "limit": str(sp.simplify(found.xreplace(at_row))),
        "claimed": str(sp.simplify(claimed.xreplace(at_row))),
        "lhs_minus_rhs": str(sp.simplify(difference.xreplace(at_row))),
    }


def _gap_symbols(entries: dict) -> list[sp.Symbol]:
    return sorted({s for e in entries.values() for s in e.free_symbols}, key=str)


def _named(entries: dict) -> dict:
    """Each symbol of the row keyed by itself, so ``_exact_row`` maps it to its value."""
    return {s: s for s in _gap_symbols(entries)}
