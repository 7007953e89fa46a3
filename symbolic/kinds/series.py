"""Series claims: ``Series(lhs, rhs, eta, order=k)`` claims lhs = rhs + O(η^{k+1}) as η → 0.

"Equal to first order in η" is such a claim (order 1). The symbolic route: the Taylor
coefficients of η^0 … η^k of lhs − rhs (SymPy differentiates and sets η = 0) are tested with the
identity prover's zero test (sum normal form); a coefficient that is not zero is refuted by the
exact search of small sizes and rationals, which names the order and the values where it is
nonzero. When every coefficient vanishes, SymPy's series of lhs − rhs at η = 0 must confirm it:
derivatives at 0 miss fractional powers (η^(3/2) has a vanishing first derivative but is not
O(η²)), the series does not. Proved then means "a series to order k", for every value of the
other inputs; where the series needs concrete sizes, for every size <= k entry by entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    ClaimKind,
    ProofResult,
    TheoremError,
    as_expression,
    claim_difference,
    find_counterexample,
    index_assignments,
    instantiate,
    size_assignments,
    size_steps,
    theorem_residual,
)

if TYPE_CHECKING:
    from ..route import Theorem


@dataclass(frozen=True)
class Series(ClaimKind):
    """lhs = rhs + O(variable^(order + 1)) as ``variable`` → 0.

    Args:
        lhs, rhs: the two sides (vocabulary and definitions allowed).
        variable: the small parameter (a ``Scalar``'s ``.symbol``, e.g. a step size η).
        order: the highest power of ``variable`` at which the two sides agree (1: "to first
            order").
    """

    lhs: sp.Expr
    rhs: sp.Expr
    variable: sp.Symbol
    order: int = 1

    kind = "series"
    numeric_draws = ("128 instances uniform over each input's declared range (log-uniform for a "
                     'positive scalar), each along η = 2^-1, 2^-2, …')
    relation = "="
    # |lhs − rhs| / η^(k+1) divides rounding by η^(k+1): float16 and bfloat16 round coarser
    # than any η at which the series' remainder can be seen
    numeric_formats = ("float64", "float32")

    def __post_init__(self) -> None:
        object.__setattr__(self, "lhs", as_expression(self.lhs, "Series: the left-hand side"))
        object.__setattr__(self, "rhs", as_expression(self.rhs, "Series: the right-hand side"))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("left-hand side", self.lhs), ("right-hand side", self.rhs))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        power = latex(self.variable ** (self.order + 1))
        return (rf"{latex(self.lhs)} = {latex(self.rhs)} + O\left({power}\right) "
                rf"\quad ({latex(self.variable)} \to 0)")

    def validate(self, theorem: Theorem, where: str) -> None:
        if self.variable not in {s.symbol for s in theorem.scalars}:
            raise TheoremError(f"{where}: series variable {self.variable} is not an input scalar")
        if not isinstance(self.order, int) or self.order < 0:
            raise TheoremError(f"{where}: series order must be a whole number >= 0, got "
                               f"{self.order!r}")
        for part, expr in self.expressions():
            if not expr.has(self.variable) and part == "left-hand side":
                raise TheoremError(f"{where}, {part}: does not depend on {self.variable}")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return _prove_series(theorem, self, bound)


def coefficients(theorem: Theorem, claim: Series) -> list[sp.Expr]:
    """The Taylor coefficients of η^0 … η^order of lhs − rhs at η = 0."""
    difference = claim_difference(theorem, claim)
    eta = claim.variable
    return [sp.diff(difference, eta, power).subs(eta, 0) / sp.factorial(power)
            for power in range(claim.order + 1)]


def _is_zero(theorem: Theorem, coefficient: sp.Expr) -> bool:
    return theorem_residual(theorem, coefficient) == 0 or sp.simplify(coefficient) == 0


def _series_vanishes(difference: sp.Expr, eta: sp.Symbol, order: int) -> bool | None:
    """Whether SymPy's series of ``difference`` in η at 0 is O(η^(order+1)); None when SymPy
    cannot expand it. The series, unlike derivatives at 0, sees fractional powers (η^(3/2) is
    not O(η²) though its first derivative vanishes at 0)."""
    try:
        expansion = sp.series(difference, eta, 0, order + 1).removeO()
    except (NotImplementedError, ValueError, TypeError):
        return None
    return sp.simplify(expansion) == 0


def _prove_series(theorem: Theorem, claim: Series, bound: int) -> ProofResult:
    method = (f"a series to order {claim.order} in {claim.variable}: SymPy's series of lhs − rhs "
              f"at 0 has no term below {claim.variable}^{claim.order + 1}")
    open_coefficients = []
    for power, coefficient in enumerate(coefficients(theorem, claim)):
        if _is_zero(theorem, coefficient):
            continue
        counterexample = find_counterexample(theorem, coefficient)
        if counterexample is not None:
            # lhs_minus_rhs: the value there of this Taylor coefficient of lhs − rhs
            counterexample = {"order": power, "coefficient": str(sp.simplify(coefficient)),
                              **counterexample}
            return ProofResult(REFUTED, f"{method}: the coefficient of {claim.variable}^{power} "
                               "is nonzero at an exact instance", counterexample=counterexample)
        open_coefficients.append(power)
    difference = claim_difference(theorem, claim)
    if not open_coefficients and _series_vanishes(difference, claim.variable, claim.order):
        return ProofResult(PROVED, f"{method} (all sizes, every value of the other inputs; its "
                           "Taylor coefficients vanish in sum normal form)")
    largest = _bounded_series(theorem, claim, difference, bound)
    if largest:
        return ProofResult(PROVED_BOUNDED, f"{method}, entry by entry for sizes <= {largest}",
                           max_size=largest)
    return ProofResult(NOT_PROVED, f"{method}: not shown (coefficient(s) of "
                       f"{claim.variable}^{open_coefficients or '?'} left a residual, or SymPy "
                       "could not expand the series)")


def _bounded_series(theorem: Theorem, claim: Series, difference: sp.Expr, bound: int) -> int:
    """The largest k such that the series vanishes to the order entry by entry for every size
    <= k (0 when the claim has no dimension: nothing is bounded then)."""
    if not theorem.dims:
        return 0
    proved = 0
    for largest in size_steps(theorem, bound):
        for sizes in size_assignments(theorem, largest):
            for values in index_assignments(difference, sizes):
                concrete = instantiate(theorem, difference, sizes, values)
                if not _series_vanishes(concrete, claim.variable, claim.order):
                    return proved
        proved = largest
    return proved
