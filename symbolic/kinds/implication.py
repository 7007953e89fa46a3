"""Implications from a spectral property to a relation: ``Implies(hypothesis, conclusion)`` claims
that every instance whose matrix has the property (``RankAtMost``: "dominated by few singular
values"; rank one is a single non-zero singular value, an infinite condition number) satisfies
the relation (``Equals``, ``AtLeast``, ``GreaterOrEqual`` or ``Greater``, for every value of its
free indices), such as "ill-conditioned attention concentrates its weights" with the conclusion
an entropy bound.

Symbolic route. Proved when the conclusion holds on its own (proved as a theorem of its own
with the same inputs: then it holds under any hypothesis). Refuted by an exact instance: at sizes
1, 2, 3 with the structured rational draws (zeros, ties, repeated rows reach the low-rank
matrices), the hypothesis's matrix has exactly the property (its exact rank is within the bound)
and the conclusion fails at 50 digits (an identity off by more than 10⁻³⁰, an inequality below
it, a strict one not above it). Otherwise not proved: an implication whose hypothesis holds on a
measure-zero set is shown by no search.

Numeric route (``numeric/kinds/implication.py``): the instances where the hypothesis holds within
rounding (at most ``bound`` singular values above the linear-algebra tolerance), the conclusion
judged there within its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    STRUCTURED_PATTERNS,
    ClaimKind,
    Equals,
    ProofResult,
    Theorem,
    TheoremError,
    index_assignments,
    instantiate,
    search_steps,
    small_sizes,
    structured_draws,
    substituted,
)
from .linalg import RankAtMost

if TYPE_CHECKING:
    from ..route import AtLeast
    from .inequality import Greater, GreaterOrEqual

SEARCH_SIZES = 3
SEARCH_TRIES = 2 * len(STRUCTURED_PATTERNS)
MARGIN = 1e-30  # an exact value (50 digits) within this of 0 is 0


def relation_of(conclusion: object) -> str | None:
    """"=", ">=" or ">" for a conclusion with two sides; None for any other claim."""
    if not (hasattr(conclusion, "lhs") and hasattr(conclusion, "rhs")):
        return None
    if isinstance(conclusion, Equals):
        return "="
    if getattr(conclusion, "relation", None) == r"\geq":
        return ">="
    if getattr(conclusion, "relation", None) == ">" and getattr(conclusion, "strict", False):
        return ">"
    return None


@dataclass(frozen=True)
class Implies(ClaimKind):
    """Every instance with the ``hypothesis`` (a ``RankAtMost``) satisfies the ``conclusion`` (a
    relation between two sides)."""

    hypothesis: RankAtMost
    # what relation_of accepts: a relation between two sides
    conclusion: Equals | AtLeast | GreaterOrEqual | Greater

    kind = "implication"
    relation = r"\Rightarrow"
    numeric_draws = None
    numeric_formats = ("float64", "float32")  # the backends' SVDs decide the hypothesis
    measures_rounding = False  # its records count instances, they report no error in ulps

    def __post_init__(self) -> None:
        if not isinstance(self.hypothesis, RankAtMost):
            raise TheoremError(f"Implies takes a RankAtMost hypothesis, got "
                               f"{type(self.hypothesis).__name__}")
        if relation_of(self.conclusion) is None:
            raise TheoremError(f"Implies concludes Equals, AtLeast, GreaterOrEqual or Greater, "
                               f"got {type(self.conclusion).__name__}")

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("hypothesis matrix", self.hypothesis.matrix),
                ("hypothesis bound", self.hypothesis.bound),
                ("conclusion, left-hand side", sp.sympify(self.conclusion.lhs)),
                ("conclusion, right-hand side", sp.sympify(self.conclusion.rhs)))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return (rf"{self.hypothesis.to_latex(latex)} \;\Longrightarrow\; "
                rf"{self.conclusion.to_latex(latex)}")

    def validate(self, theorem: Theorem, where: str) -> None:
        self.hypothesis.validate(theorem, f"{where}, hypothesis")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        alone = Theorem(name=theorem.name, source=theorem.source, claim=self.conclusion,
                        inputs=theorem.inputs, definitions=theorem.definitions,
                        dimensions=theorem.dimensions)
        result = self.conclusion.prove(alone, bound)
        if result.status in (PROVED, PROVED_BOUNDED):
            return ProofResult(result.status, f"the conclusion holds without the hypothesis: "
                               f"{result.method}", max_size=result.max_size)
        counterexample = _search(self, theorem)
        if counterexample is not None:
            return ProofResult(REFUTED, "exact instance at small sizes where the hypothesis "
                               "holds (exact rank) and the conclusion fails (50 digits)",
                               counterexample=counterexample)
        return ProofResult(NOT_PROVED, "the conclusion is not proved on its own, and no exact "
                           f"instance at sizes <= {SEARCH_SIZES} has the hypothesis without it; "
                           "numeric evidence only")


# -- exact refutation ------------------------------------------------------------------------


def _search(claim: Implies, theorem: Theorem) -> dict | None:
    hypothesis = claim.hypothesis
    matrix = theorem.expand(hypothesis.matrix)
    difference = (theorem.expand(sp.sympify(claim.conclusion.lhs))
                  - theorem.expand(sp.sympify(claim.conclusion.rhs)))
    relation = relation_of(claim.conclusion)
    assert relation is not None  # Implies admits only a conclusion that has one
    for largest in search_steps(theorem, SEARCH_SIZES):
        sizes = small_sizes(theorem, largest)
        matrices = _concrete_matrices(theorem, hypothesis, matrix, sizes)
        differences = [(values, instantiate(theorem, difference, sizes, values))
                       for values in index_assignments(difference, sizes)]
        for draw in structured_draws(theorem, sizes, largest, SEARCH_TRIES):
            ranks = _ranks(matrices, draw)
            if ranks is None or max(ranks.values(), default=0) > hypothesis.bound_at(sizes):
                continue
            for index_values, concrete in differences:
                value = _value(substituted(concrete, draw))
                if value is not None and _fails(value, relation):
                    return {"sizes": sizes, "indices": index_values,
                            "values": _used(matrices, concrete, draw),
                            "hypothesis": f"rank {max(ranks.values(), default=0)} <= "
                                          f"{hypothesis.bound} = {hypothesis.bound_at(sizes)}",
                            "conclusion": f"lhs - rhs = {value:.6g}, so lhs {relation} rhs "
                                          "fails",
                            "lhs_minus_rhs": f"{value:.6g}"}
    return None


def _concrete_matrices(theorem: Theorem, hypothesis: RankAtMost, matrix: sp.Expr,
                       sizes: dict[str, int]) -> dict[tuple[int, ...], sp.Matrix]:
    """The hypothesis's matrix at each value of its batch indices, entries as expressions."""
    rows = sizes[str(hypothesis.row.upper + 1)]
    columns = sizes[str(hypothesis.column.upper + 1)]
    batch = hypothesis.batch_indices()
    found = {}
    for values in itertools.product(*(range(sizes[str(b.upper + 1)]) for b in batch)):
        at = {str(b.label): v for b, v in zip(batch, values, strict=True)}
        found[tuple(values)] = sp.Matrix(rows, columns, lambda r, c, at=at: instantiate(
            theorem, matrix, sizes, {**at, str(hypothesis.row.label): int(r),
                                     str(hypothesis.column.label): int(c)}))
    return found


def _ranks(matrices: dict[tuple[int, ...], sp.Matrix], draw: dict
           ) -> dict[tuple[int, ...], int] | None:
    ranks = {}
    for key, symbolic in matrices.items():
        exact = substituted(symbolic, draw).applyfunc(lambda v: sp.nsimplify(sp.simplify(v)))
        if exact.free_symbols or exact.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
            return None
        ranks[key] = exact.rank(simplify=True)
    return ranks


def _value(concrete: sp.Expr) -> float | None:
    if concrete.free_symbols:
        return None
    try:
        number = sp.N(concrete, 50)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    if number.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or not number.is_real:
        return None
    return float(number)


def _fails(value: float, relation: str) -> bool:
    if relation == "=":
        return abs(value) > MARGIN
    if relation == ">=":
        return value < -MARGIN
    return value <= MARGIN


def _used(matrices: dict[tuple[int, ...], sp.Matrix], concrete: sp.Expr, draw: dict
          ) -> dict[str, str]:
    names = {(str(x.base), x.indices) for m in matrices.values() for x in m.atoms(sp.Indexed)}
    names |= {(str(x.base), x.indices) for x in concrete.atoms(sp.Indexed)}
    used = {}
    for key, value in draw.items():
        if isinstance(key, tuple) and key in names:
            used[f"{key[0]}[{', '.join(map(str, key[1]))}]"] = str(value)
        elif isinstance(key, sp.Symbol):
            used[key.name] = str(value)
    return used
