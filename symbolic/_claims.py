"""The built-in claims: an identity (``Equals``), an inequality checked numerically
(``AtLeast``) and worked numbers (``Rounds``).

They are claims like every kind (``Claim``, symbolic/_kind.py): each brings its statement, its
LaTeX and its symbolic route (in the prover), and says what the numeric side needs from it, so
nothing else in the tool asks which of them a claim is. The compiled search is the numeric route
of an identity and an inequality; worked numbers have nothing to draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import sympy as sp

from ._kind import AnyConfiguration, Claim, TwoSided
from ._language import TheoremError, as_expression
from ._prover import (
    NOT_PROVED,
    PROVED,
    check_worked_numbers,
    claim_difference,
    prove_identity,
    prove_relation,
    refute_inequality,
)
from ._theorem import Theorem, free_indices
from ._vocabulary import ReduceMax

if TYPE_CHECKING:
    from ._prover import ProofResult

# Proofs of an inequality from the facts its row maxima and minima call for, ``f(theorem,
# difference) -> ProofResult``: ``kinds/inequality`` registers its own when it loads (the kinds
# import this module, so this module cannot import them).
EXTREME_PROOFS: list[Callable[[Theorem, sp.Expr], ProofResult]] = []


class _TwoSides(Claim):
    """A claim stated as two sides, ``lhs`` and ``rhs``, with the same free indices."""

    if TYPE_CHECKING:  # every subclass has both: fields, or (``Rounds``) a derived rhs
        @property
        def lhs(self) -> sp.Expr: ...

        @property
        def rhs(self) -> sp.Expr: ...

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("left-hand side", as_expression(self.lhs, "the left-hand side")),
                ("right-hand side", as_expression(self.rhs, "the right-hand side")))

    def validate(self, theorem: Theorem, where: str) -> None:
        check_free_indices_agree(theorem, where)


class _Relation(_TwoSides):
    """An identity or an inequality between two sides, checked by the compiled search: its
    numeric route is the common one, so none is registered for it."""

    has_numeric_route = False
    serves_as_lemma = True

    def __post_init__(self) -> None:
        _sides_as_expressions(self)

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return f"{latex(sp.sympify(self.lhs))} {self.relation} {latex(self.rhs)}"

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return prove_relation(theorem, bound)

    def numeric_configurations(self, found: list[AnyConfiguration]
                               ) -> list[AnyConfiguration]:
        return found


@dataclass(frozen=True)
class Equals(_Relation):
    """An identity ``lhs = rhs`` for every value of every free index."""

    lhs: sp.Expr
    rhs: sp.Expr
    kind = "identity"
    relation = "="
    combines_linearly = True

    def prove_without_lemmas(self, theorem: Theorem, bound: int) -> ProofResult:
        """The sum normal form, else an exact counterexample, else entry-wise cancellation."""
        return prove_identity(theorem, bound)


@dataclass(frozen=True)
class AtLeast(_Relation):
    """An inequality ``lhs >= rhs`` for every value of every free index."""

    lhs: sp.Expr
    rhs: sp.Expr
    kind = "inequality (numeric)"
    relation = r"\geq"
    truth_measure = "shortfall"

    def prove_without_lemmas(self, theorem: Theorem, bound: int) -> ProofResult:
        """An exact counterexample refutes; else proved for all sizes when lhs − rhs is a
        nonnegative combination of the gaps to a row's maximum or minimum that its weighted sums
        call for (a convex combination lies between the smallest and the largest entry:
        ``kinds/inequality.prove_from_extremes``); else numeric evidence only."""
        refuted = refute_inequality(theorem, bound)
        if refuted.status != NOT_PROVED:
            return refuted
        difference = claim_difference(theorem, self)
        if not difference.has(ReduceMax):
            return refuted
        for prove_from_extremes in EXTREME_PROOFS:
            proved = prove_from_extremes(theorem, difference)
            if proved.status == PROVED:
                return proved
        return refuted


@dataclass(frozen=True)
class Rounds(_TwoSides):
    """Worked numbers: each entry of ``lhs``, evaluated exactly, rounds to the printed decimal.

    ``printed`` keeps the text the document prints (``"0.401"``), because its number of digits
    is part of the claim: ``0.401`` asserts the value lies within ±0.0005 of 0.401.
    """

    lhs: sp.ImmutableMatrix
    # rows of decimal texts, as written (lists or tuples); kept as tuples of str
    printed: Sequence[Sequence[str]]
    kind = "worked numbers"
    relation = r"\approx"
    has_numeric_route = False
    nothing_to_draw = "worked numbers have nothing to draw; they are evaluated exactly"

    def __post_init__(self) -> None:
        _reject_strings(self.lhs, "worked numbers: a value")
        object.__setattr__(self, "lhs", sp.ImmutableMatrix(self.lhs))
        rows = tuple(tuple(str(x) for x in row) for row in self.printed)
        object.__setattr__(self, "printed", rows)
        if (len(rows), len(rows[0]) if rows else 0) != self.lhs.shape:
            raise TheoremError(
                f"worked numbers: {self.lhs.shape} values but {len(rows)} printed rows"
            )

    @property
    def rhs(self) -> sp.ImmutableMatrix:
        return sp.ImmutableMatrix([[sp.Float(x, len(x)) for x in row] for row in self.printed])

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        # the document's numbers exactly as printed: their digits are part of the claim
        rows = r" \\ ".join(" & ".join(row) for row in self.printed)
        return (f"{latex(sp.sympify(self.lhs))} {self.relation} "
                rf"\begin{{pmatrix}} {rows} \end{{pmatrix}}")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return check_worked_numbers(self)


def _sides_as_expressions(claim: _Relation) -> None:
    kind = type(claim).__name__
    for side, label in (("lhs", "left-hand side"), ("rhs", "right-hand side")):
        value = as_expression(getattr(claim, side), f"{kind}: the {label}")
        object.__setattr__(claim, side, value)


def _reject_strings(values: object, what: str) -> None:
    """Matrix entries are sympified, so a string among them would be parsed: refuse it."""
    if isinstance(values, str) or values is None:
        as_expression(values, what)
    if isinstance(values, (list, tuple)):
        for value in values:
            _reject_strings(value, what)


def check_free_indices_agree(theorem: Theorem, where: str) -> None:
    """The two sides' free indices agree: one side's are among the other's."""
    # called by the claim's own validate(), so the theorem's claim is that two-sided claim
    claim = cast(TwoSided, theorem.claim)
    lhs = free_indices(claim.lhs)
    rhs = free_indices(claim.rhs)
    if not rhs <= lhs and not lhs <= rhs:
        raise TheoremError(
            f"{where}: the two sides have different free indices "
            f"({sorted(map(str, lhs))} vs {sorted(map(str, rhs))})"
        )
