"""Existence claims: ``Exists(A, Equals(lhs, rhs), for_all=(x,))`` claims there is a tensor A,
the same for every value of the inputs in ``for_all``, with lhs = rhs (A may depend on the other
inputs and on the sizes). "PE_{pos+k} is a linear function of PE_pos" is one: some M, depending
on k but not on pos, has PE_{pos+k} = M PE_pos.

Symbolic route. With a witness (``witness=Defined("A", indices, body)``, a body free of the
``for_all`` inputs) the claim is the identity lhs = rhs with A defined by it, proved as any
identity is (sum normal form, all sizes): proved when the witness is, refuted when the exact
search refutes it (the statement names its witness: "there is an A, namely this one").
Without one, or when the witness leaves a residual, a linear solve at small sizes: A's entries
become unknowns, the ``for_all`` inputs several exact draws, the other inputs one, and
lhs − rhs = 0 a linear system in the unknowns evaluated to 50 digits. A system with no solution
(its least-squares residual above 10⁻²⁵) refutes the claim: no A exists at those sizes and
values. A system solvable at every size tried shows A exists there, which proves nothing for
all values: the report says one was found, and the claim stays unproved until it is stated.

Numeric route: with a witness, the identity it makes is checked as any identity (the compiled
search, every backend and dtype); without one there is nothing to evaluate.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import mpmath
import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    REFUTED,
    ClaimKind,
    Defined,
    Equals,
    ProofResult,
    Scalar,
    Tensor,
    Theorem,
    TheoremError,
    index_assignments,
    instantiate,
    prove_directly,
    small_sizes,
    structured_draws,
    substituted,
)

# a least-squares residual above this (at 50 digits) is an inconsistent system, not rounding
INCONSISTENT = mpmath.mpf("1e-25")
DRAWS_FOR_ALL = 4  # exact draws of the for_all inputs per instance


@dataclass(frozen=True)
class Exists(ClaimKind):
    """There is an ``unknown`` (a tensor over its dimensions, not an input) such that ``claim``
    holds for every value of the ``for_all`` inputs.

    Args:
        unknown: the tensor asserted to exist, e.g. ``Tensor("M", (P, two, two))``.
        claim: an ``Equals`` in which the unknown's entries appear.
        for_all: the inputs the unknown may not depend on (those after "for every").
        witness: ``Defined`` with the unknown's name: the A the user claims works.
    """

    unknown: Tensor
    claim: Equals
    for_all: tuple = ()
    witness: Defined | None = None

    kind = "existence"
    relation = "="

    def __post_init__(self):
        object.__setattr__(self, "for_all", tuple(self.for_all))
        if not isinstance(self.unknown, Tensor):
            raise TheoremError(f"Exists: the unknown must be a Tensor, got "
                               f"{type(self.unknown).__name__}")
        if not isinstance(self.claim, Equals):
            raise TheoremError(f"Exists: the claim must be Equals(...), got "
                               f"{type(self.claim).__name__}")

    def unknowns(self):
        return (self.unknown,)

    def expressions(self):
        found = [("left-hand side", self.claim.lhs), ("right-hand side", self.claim.rhs)]
        if self.witness is not None:
            found.append(("witness", self.witness.body))
        return tuple(found)

    def to_latex(self, latex) -> str:
        every = ", ".join(latex(_symbol_of(x)) for x in self.for_all)
        quantifier = rf"\exists\, {latex(self.unknown.base)}\ " + (
            rf"\forall\, {every}:\ " if every else ":\\ ")
        statement = quantifier + rf"{latex(self.claim.lhs)} = {latex(self.claim.rhs)}"
        if self.witness is None:
            return statement
        entry = self.witness.base[self.witness.indices]
        return statement + rf", \quad \text{{namely }} {latex(entry)} = {latex(self.witness.body)}"

    def numeric_configurations(self, found):
        return found if self.witness is not None else []

    def validate(self, theorem, where: str) -> None:
        inputs = {x.name for x in theorem.inputs}
        for x in self.for_all:
            if getattr(x, "name", None) not in inputs:
                raise TheoremError(f"{where}: for_all input {getattr(x, 'name', x)} is not "
                                   "among the inputs")
        if self.unknown.name in inputs:
            raise TheoremError(f"{where}: the unknown {self.unknown.name} is an input; what "
                               "exists is not drawn")
        if self.witness is None:
            return
        if self.witness.name != self.unknown.name:
            raise TheoremError(f"{where}: the witness defines {self.witness.name}, not the "
                               f"unknown {self.unknown.name}")
        for x in self.for_all:
            if _mentions(self.witness.body, x):
                raise TheoremError(f"{where}: the witness depends on {x.name}, which the claim "
                                   "says it must not (for_all)")

    def prove(self, theorem, bound: int):
        return prove_existence(self, theorem, bound)

    def with_witness(self, theorem) -> Theorem:
        """The identity the witness makes: the claim with the unknown defined by it."""
        return Theorem(name=theorem.name, source=theorem.source, claim=self.claim,
                       inputs=theorem.inputs, dimensions=theorem.dimensions,
                       definitions=(*theorem.definitions, self.witness))


def _symbol_of(x):
    return x.symbol if isinstance(x, Scalar) else x.base


def _mentions(expr, x) -> bool:
    if isinstance(x, Scalar):
        return expr.has(x.symbol)
    return any(str(e.base) == x.name for e in expr.atoms(sp.Indexed))


# -- the routes -------------------------------------------------------------------------------


def prove_existence(claim: Exists, theorem, bound: int):
    residual = None
    found = None
    if claim.witness is not None:
        result = prove_directly(claim.with_witness(theorem), bound)
        if result.status == PROVED:
            return ProofResult(PROVED, f"the witness {claim.witness.name} = "
                               f"{claim.witness.body} makes the claim an identity, proved in "
                               "sum normal form (all sizes)")
        if result.status == REFUTED:  # the statement names its witness: that one fails
            found = _linear_solve(claim, theorem)
            others = ("; no other exists either" if found is not None and found.status == REFUTED
                      else "")
            return ProofResult(REFUTED, f"the stated witness {claim.witness.name} = "
                               f"{claim.witness.body} fails: exact counterexample at small "
                               f"sizes{others}", counterexample=result.counterexample,
                               residual=result.residual)
        residual = result.residual
    found = found or _linear_solve(claim, theorem)
    if found is not None and found.status != NOT_PROVED:
        return found
    given = "" if claim.witness is None else ("the witness left a residual; ")
    solved = found.method if found is not None else "no linear solve applies"
    return ProofResult(NOT_PROVED, f"{given}{solved}", residual=residual)


def _linear_solve(claim: Exists, theorem):
    """Refuted where the linear system for the unknown's entries has no solution; else a
    NOT_PROVED result saying where it had one; None when the claim is not linear in them."""
    for largest in (1, 2, 3):
        sizes = small_sizes(theorem, largest)
        unknowns, system = _system(claim, theorem, sizes)
        if system is None:
            return None
        draws = structured_draws(theorem, sizes, seed=largest, tries=12)
        fixed = draws[0]
        rows = []
        for draw in draws[1:1 + DRAWS_FOR_ALL]:
            point = {**fixed, **{k: v for k, v in draw.items() if _varies(k, claim.for_all)}}
            rows += [substituted(equation, point) for equation in system]
        residual = _least_squares_residual(rows, unknowns)
        if residual is None:
            return None
        if residual > INCONSISTENT:
            return ProofResult(REFUTED, "linear solve at small sizes: no value of "
                               f"{claim.unknown.name} satisfies the claim for every drawn "
                               f"{', '.join(x.name for x in claim.for_all)}",
                               counterexample={"sizes": sizes, "unknowns": len(unknowns),
                                               "equations": len(rows),
                                               "least_squares_residual": f"{float(residual):.3g}"})
    return ProofResult(NOT_PROVED, f"a linear solve found a {claim.unknown.name} at every size "
                       "<= 3 tried (values drawn, not all): state it as witness= to prove the "
                       "claim; numeric evidence needs the witness too")


def _system(claim: Exists, theorem, sizes):
    """(unknown symbols, [lhs − rhs at each free-index value]) at ``sizes``, with the
    unknown's entries as symbols; (…, None) when some equation is not linear in them."""
    difference = theorem.expand(claim.claim.lhs) - theorem.expand(claim.claim.rhs)
    shape = [sizes[d.name] for d in claim.unknown.dims]
    symbols = {entry: sp.Symbol(f"_u{n}") for n, entry in
               enumerate(itertools.product(*(range(k) for k in shape)))}
    equations = []
    for values in index_assignments(difference, sizes):
        concrete = instantiate(theorem, difference, sizes, values)
        concrete = concrete.xreplace({x: symbols[tuple(int(i) for i in x.indices)]
                                      for x in concrete.atoms(sp.Indexed)
                                      if str(x.base) == claim.unknown.name})
        if any(sp.degree(concrete, s) > 1 for s in symbols.values() if concrete.has(s)):
            return list(symbols.values()), None
        equations.append(concrete)
    return list(symbols.values()), equations


def _varies(key, for_all) -> bool:
    names = {x.name for x in for_all}
    return (key[0] if isinstance(key, tuple) else getattr(key, "name", None)) in names


def _least_squares_residual(rows, unknowns):
    """‖A u − b‖ at the least-squares u, to 50 digits; None if a row is not a number."""
    with mpmath.workdps(50):
        matrix, target = [], []
        for row in rows:
            row = sp.expand(row)
            coefficients = [row.coeff(u) for u in unknowns]
            constant = row.subs(dict.fromkeys(unknowns, 0))
            try:
                matrix.append([mpmath.mpf(sp.N(c, 50)) for c in coefficients])
                target.append(-mpmath.mpf(sp.N(constant, 50)))
            except (TypeError, ValueError):
                return None
        if not unknowns:
            return mpmath.norm(mpmath.matrix(target))
        a, b = mpmath.matrix(matrix), mpmath.matrix(target)
        normal = a.T * a
        # a rank-deficient system: a tiny ridge keeps the normal equations solvable
        ridge = mpmath.mpf("1e-40") * mpmath.eye(len(unknowns))
        solution = mpmath.lu_solve(normal + ridge, a.T * b)
        return mpmath.norm(a * solution - b)
