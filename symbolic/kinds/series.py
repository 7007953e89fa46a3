"""Series claims: ``Series(lhs, rhs, eta, order=k)`` claims lhs = rhs + O(η^{k+1}) as η → 0.

"Equal to first order in η" is such a claim (order 1). The symbolic route expands lhs − rhs in
η at 0: the claim holds exactly when its Taylor coefficients of η^0 … η^k vanish, for every value
of the other inputs. Each coefficient is a closed form (SymPy differentiates lhs − rhs and sets
η = 0), so the zero test is the identity prover's: the sum normal form for all sizes, else
entry-wise cancellation for sizes <= k. A coefficient that is not zero is refuted by the exact
search of small sizes and rationals, which names the order and the values where it is nonzero.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from .._kind import ClaimKind
from .._language import TheoremError, as_expression
from .._prover import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    ProofResult,
    _bounded_proof,
    _residual,
    claim_difference,
    find_counterexample,
)


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
    relation = "="
    numeric_route = "attnproof.numeric.kinds.series:check"

    def __post_init__(self):
        object.__setattr__(self, "lhs", as_expression(self.lhs, "Series: the left-hand side"))
        object.__setattr__(self, "rhs", as_expression(self.rhs, "Series: the right-hand side"))

    def expressions(self):
        return (("left-hand side", self.lhs), ("right-hand side", self.rhs))

    def to_latex(self, latex) -> str:
        power = latex(self.variable ** (self.order + 1))
        return (rf"{latex(self.lhs)} = {latex(self.rhs)} + O\left({power}\right) "
                rf"\quad ({latex(self.variable)} \to 0)")

    def numeric_configurations(self, found):
        # |lhs − rhs| / η^(k+1) divides rounding by η^(k+1): float16 and bfloat16 round
        # coarser than any η at which the series' remainder can be seen
        return [c for c in found if c[1] in ("float64", "float32")]

    def validate(self, theorem, where: str) -> None:
        if self.variable not in {s.symbol for s in theorem.scalars}:
            raise TheoremError(f"{where}: series variable {self.variable} is not an input scalar")
        if not isinstance(self.order, int) or self.order < 0:
            raise TheoremError(f"{where}: series order must be a whole number >= 0, got "
                               f"{self.order!r}")
        for part, expr in self.expressions():
            if not expr.has(self.variable) and part == "left-hand side":
                raise TheoremError(f"{where}, {part}: does not depend on {self.variable}")

    def prove(self, theorem, bound: int) -> ProofResult:
        return _prove_series(theorem, self, bound)


def coefficients(theorem, claim: Series) -> list[sp.Expr]:
    """The Taylor coefficients of η^0 … η^order of lhs − rhs at η = 0."""
    difference = claim_difference(theorem, claim)
    eta = claim.variable
    return [sp.diff(difference, eta, power).subs(eta, 0) / sp.factorial(power)
            for power in range(claim.order + 1)]


def _is_zero(theorem, coefficient: sp.Expr) -> bool:
    return _residual(theorem, coefficient) == 0 or sp.simplify(coefficient) == 0


def _prove_series(theorem, claim: Series, bound: int) -> ProofResult:
    method = (f"a series to order {claim.order} in {claim.variable}: the Taylor coefficients "
              f"of {claim.variable}^0 … {claim.variable}^{claim.order} of lhs − rhs at 0")
    open_coefficients = []
    for power, coefficient in enumerate(coefficients(theorem, claim)):
        if _is_zero(theorem, coefficient):
            continue
        counterexample = find_counterexample(theorem, coefficient)
        if counterexample is not None:
            # lhs_minus_rhs: the value there of this coefficient of lhs − rhs
            counterexample = {"order": power, "coefficient": str(sp.simplify(coefficient)),
                              **counterexample}
            return ProofResult(REFUTED, f"{method}: the coefficient of {claim.variable}^{power} "
                               "is nonzero at an exact instance", counterexample=counterexample)
        open_coefficients.append((power, coefficient))
    if not open_coefficients:
        return ProofResult(PROVED, f"{method} vanish in sum normal form (all sizes, every value "
                           "of the other inputs)")
    largest = min(_bounded_proof(theorem, c, bound) for _, c in open_coefficients)
    if largest:
        return ProofResult(PROVED_BOUNDED, f"{method} vanish entry-wise for sizes <= {largest}",
                           max_size=largest)
    powers = ", ".join(str(p) for p, _ in open_coefficients)
    return ProofResult(NOT_PROVED, f"{method}: the coefficient(s) of {claim.variable}^{{{powers}}} "
                       "left a residual")
