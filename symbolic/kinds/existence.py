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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import mpmath
import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    STRUCTURED_PATTERNS,
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
    search_steps,
    small_sizes,
    structured_draws,
    substituted,
)

if TYPE_CHECKING:
    from ..route import AnyConfiguration

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
    for_all: tuple[Tensor | Scalar, ...] = ()
    witness: Defined | None = None

    kind = "existence"
    relation = "="

    def __post_init__(self) -> None:
        object.__setattr__(self, "for_all", tuple(self.for_all))
        if not isinstance(self.unknown, Tensor):
            raise TheoremError(f"Exists: the unknown must be a Tensor, got "
                               f"{type(self.unknown).__name__}")
        if not isinstance(self.claim, Equals):
            raise TheoremError(f"Exists: the claim must be Equals(...), got "
                               f"{type(self.claim).__name__}")

    def unknowns(self) -> tuple[Tensor, ...]:
        return (self.unknown,)

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        found = [("left-hand side", self.claim.lhs), ("right-hand side", self.claim.rhs)]
        if self.witness is not None:
            found.append(("witness", self.witness.body))
        return tuple(found)

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        every = ", ".join(latex(_symbol_of(x)) for x in self.for_all)
        quantifier = rf"\exists\, {latex(self.unknown.base)}\ " + (
            rf"\forall\, {every}:\ " if every else ":\\ ")
        statement = quantifier + rf"{latex(self.claim.lhs)} = {latex(self.claim.rhs)}"
        if self.witness is None:
            return statement
        entry = self.witness.base[self.witness.indices]
        return statement + rf", \quad \text{{namely }} {latex(entry)} = {latex(self.witness.body)}"

    def numeric_configurations(self, found: list[AnyConfiguration]
                               ) -> list[AnyConfiguration]:
        return found if self.witness is not None else []

    def validate(self, theorem: Theorem, where: str) -> None:
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

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return prove_existence(self, theorem, bound)

    def with_witness(self, theorem: Theorem) -> Theorem:
        """The identity the witness makes: the claim with the unknown defined by it."""
        assert self.witness is not None  # asked only of a claim that states its witness
        return Theorem(name=theorem.name, source=theorem.source, claim=self.claim,
                       inputs=theorem.inputs, dimensions=theorem.dimensions,
                       definitions=(*theorem.definitions, self.witness), origin=theorem.origin)

    def searched_as(self, theorem: Theorem) -> Theorem:
        return theorem if self.witness is None else self.with_witness(theorem)


def _symbol_of(x: Tensor | Scalar) -> sp.Expr:
    return x.symbol if isinstance(x, Scalar) else x.base


def _mentions(expr: sp.Expr, x: Tensor | Scalar) -> bool:
    if isinstance(x, Scalar):
        return expr.has(x.symbol)
    return any(str(e.base) == x.name for e in expr.atoms(sp.Indexed))


# -- the routes -------------------------------------------------------------------------------


def prove_existence(claim: Exists, theorem: Theorem, bound: int) -> ProofResult:
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


def _linear_solve(claim: Exists, theorem: Theorem) -> ProofResult | None:
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


def _system(claim: Exists | NotExists, theorem: Theorem, sizes: dict[str, int]
            ) -> tuple[list[sp.Symbol], list[sp.Expr] | None]:
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


def _varies(key: object, for_all: tuple[Tensor | Scalar, ...]) -> bool:
    names = {x.name for x in for_all}
    return (key[0] if isinstance(key, tuple) else getattr(key, "name", None)) in names


def _least_squares_residual(rows: list[sp.Expr], unknowns: list[sp.Symbol]
                            ) -> mpmath.mpf | None:
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


# -- negated existence ---------------------------------------------------------------------------


@dataclass(frozen=True)
class NotExists(ClaimKind):
    """There is no ``unknown`` (a tensor, not an input), the same for every value of the
    ``for_all`` inputs, with ``claim`` (lhs = rhs) for all of them: "FFN adds expressiveness",
    i.e. no matrix M gives FFN(x) = Mx for every x. Asserted for every value of the other inputs.

    Args:
        unknown: the tensor claimed not to exist, e.g. ``Tensor("M", (d, d))``.
        claim: an ``Equals`` in which the unknown's entries appear, linearly.
        for_all: the inputs the unknown may not depend on.
        witness: ``Defined`` with the unknown's name: an A the refutation tries first (when it
            makes the claim an identity, such an A exists for every value and size).

    Symbolic route. Refuted by a witness that makes lhs = rhs an identity (sum normal form, all
    sizes), else by an exact linear solve at small sizes: the other inputs drawn, the ``for_all``
    inputs left as symbols, lhs − rhs must vanish as a polynomial in them, a linear system in
    the unknown's entries solved in rational arithmetic; a solution is an A that exists there.
    Where lhs − rhs is not a polynomial in the ``for_all`` inputs (a ReLU), they are drawn
    instead. Proved for sizes <= 3 when every input is among ``for_all`` and at each size the
    equations at exact rational draws have no solution (an inconsistent system, shown in exact
    arithmetic: no A exists at that size); with other inputs a drawn value proves nothing for
    all values and the claim stays unproved.
    """

    unknown: Tensor
    claim: Equals
    for_all: tuple[Tensor | Scalar, ...] = ()
    witness: Defined | None = None

    kind = "negated existence"
    relation = r"\neq"
    numeric_draws = None
    # a least-squares fit of the unknown decides each instance: the backends' solvers take
    # float64 and float32
    numeric_formats = ("float64", "float32")
    measures_rounding = False  # judged by a least-squares residual, not in ulps

    def __post_init__(self) -> None:
        object.__setattr__(self, "for_all", tuple(self.for_all))
        if not isinstance(self.unknown, Tensor):
            raise TheoremError(f"NotExists: the unknown must be a Tensor, got "
                               f"{type(self.unknown).__name__}")
        if not isinstance(self.claim, Equals):
            raise TheoremError(f"NotExists: the claim must be Equals(...), got "
                               f"{type(self.claim).__name__}")

    def exists(self) -> Exists:
        """The existence claim this one denies."""
        return Exists(self.unknown, self.claim, self.for_all, self.witness)

    def unknowns(self) -> tuple[Tensor, ...]:
        return (self.unknown,)

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return self.exists().expressions()

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        every = ", ".join(latex(_symbol_of(x)) for x in self.for_all)
        quantifier = rf"\nexists\, {latex(self.unknown.base)}\ " + (
            rf"\forall\, {every}:\ " if every else ":\\ ")
        return quantifier + rf"{latex(self.claim.lhs)} = {latex(self.claim.rhs)}"

    def validate(self, theorem: Theorem, where: str) -> None:
        self.exists().validate(theorem, where)
        if not self.for_all:
            raise TheoremError(f"{where}: NotExists names the inputs the unknown may not depend "
                               "on (for_all=...)")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return prove_non_existence(self, theorem)


def prove_non_existence(claim: NotExists, theorem: Theorem) -> ProofResult:
    if claim.witness is not None:
        result = prove_directly(claim.exists().with_witness(theorem), 3)
        if result.status == PROVED:
            return ProofResult(REFUTED, f"the witness {claim.witness.name} = "
                               f"{claim.witness.body} makes lhs = rhs an identity, proved in sum "
                               "normal form: such a tensor exists for every value of the inputs "
                               "(all sizes)",
                               counterexample={"witness": f"{claim.witness.name} = "
                                               f"{claim.witness.body}",
                                               "holds": "lhs = rhs for every value (sum normal "
                                               "form, all sizes)",
                                               "lhs_minus_rhs": "0"})
    others = [x for x in theorem.inputs if not _in(x, claim.for_all)]
    proved_up_to = 0
    certificates = []
    for largest in search_steps(theorem, 3):
        sizes = small_sizes(theorem, largest)
        found = _exact_solve(claim, theorem, sizes, largest)
        if found is None:
            return ProofResult(NOT_PROVED, "lhs − rhs is not linear in the unknown's entries; "
                               "no exact route applies")
        solution, detail = found
        if solution is not None:
            return ProofResult(REFUTED, f"exact linear solve at small sizes: {claim.unknown.name} "
                               "exists there (lhs = rhs for every value of "
                               f"{', '.join(x.name for x in claim.for_all)})",
                               counterexample={"sizes": sizes, **detail, "lhs_minus_rhs": "0"})
        certificates.append(f"sizes {sizes}: {detail['equations']}")
        proved_up_to = largest
    if others:
        return ProofResult(NOT_PROVED, "at the drawn values of "
                           f"{', '.join(x.name for x in others)} no {claim.unknown.name} exists "
                           f"(sizes <= {proved_up_to}), which says nothing of their other values; "
                           "numeric evidence only")
    return ProofResult(PROVED_BOUNDED, f"no {claim.unknown.name} exists at sizes <= "
                       f"{proved_up_to}: the equations lhs = rhs at exact rational values of "
                       f"{', '.join(x.name for x in claim.for_all)} are inconsistent in exact "
                       f"arithmetic ({'; '.join(certificates)})", max_size=proved_up_to)


def _in(x: Tensor | Scalar, inputs: tuple[Tensor | Scalar, ...]) -> bool:
    return any(getattr(y, "name", None) == getattr(x, "name", None) for y in inputs)


def _exact_solve(claim: NotExists, theorem: Theorem, sizes: dict[str, int], seed: int
                 ) -> tuple[dict[sp.Symbol, sp.Expr] | None, dict] | None:
    """(solution, detail): an exact solution of the unknown's entries at ``sizes`` with the other
    inputs drawn, or (None, detail) with the equations that admit none; None when lhs − rhs is
    not linear in the unknown."""
    unknowns, system = _system(claim, theorem, sizes)
    if system is None:
        return None
    draws = structured_draws(theorem, sizes, seed=seed, tries=2 * len(STRUCTURED_PATTERNS))
    fixed = {k: v for k, v in draws[0].items() if not _varies(k, claim.for_all)}
    varying = _for_all_symbols(claim, system)
    symbolic = [substituted(e, fixed).xreplace(varying) for e in system]
    variables = set(varying.values()) | {x.symbol for x in claim.for_all if isinstance(x, Scalar)}
    polynomial = _coefficient_equations(symbolic, variables)
    if polynomial is not None:
        equations, how = polynomial, "lhs − rhs vanishes identically in " + ", ".join(
            x.name for x in claim.for_all)
    else:
        points = [{**fixed, **{k: v for k, v in draw.items() if _varies(k, claim.for_all)}}
                  for draw in draws]
        equations = [sp.nsimplify(substituted(e, point)) for point in points for e in system]
        how = f"at {len(draws)} exact draws of {', '.join(x.name for x in claim.for_all)}"
        pair = _inconsistent_pair(claim, system, points, unknowns)
        if pair is not None:
            how = f"already at the pair {pair}"
    equations = [e for e in (sp.expand(e) for e in equations) if e != 0]
    solution: dict[sp.Symbol, sp.Expr] | None
    if not equations:
        solution = dict.fromkeys(unknowns, sp.Integer(0))
    else:
        solved = sp.linsolve(equations, unknowns)
        solution = None if solved == sp.EmptySet else dict(zip(unknowns, next(iter(solved)),
                                                               strict=True))
    detail = {"values": {_entry(k): str(v) for k, v in fixed.items()},
              "equations": f"{len(equations)} equations in {len(unknowns)} unknowns, {how}"}
    if solution is None:
        return None, detail
    shown = {str(u): str(v.xreplace(dict.fromkeys(v.free_symbols, 0)))
             for u, v in solution.items()}
    return solution, {**detail, claim.unknown.name: _as_entries(claim, sizes, shown)}


def _inconsistent_pair(claim: NotExists, system: list[sp.Expr], points: list[dict],
                       unknowns: list[sp.Symbol]) -> str | None:
    """Two of the drawn points whose equations alone admit no solution, as text: the smallest
    certificate (for a linear map, f(x) and f(y) that no linear map joins)."""
    for first, second in itertools.combinations(points, 2):
        equations = [sp.expand(sp.nsimplify(substituted(e, point)))
                     for point in (first, second) for e in system]
        equations = [e for e in equations if e != 0]
        if equations and sp.linsolve(equations, unknowns) == sp.EmptySet:
            return " and ".join(_point_text(claim, point) for point in (first, second))
    return None


def _point_text(claim: NotExists, point: dict) -> str:
    names = {x.name for x in claim.for_all}
    entries = sorted(((k, v) for k, v in point.items()
                      if isinstance(k, tuple) and k[0] in names), key=lambda kv: kv[0])
    by_name: dict = {}
    for (name, _), value in entries:
        by_name.setdefault(name, []).append(str(value))
    scalars = [f"{k} = {v}" for k, v in point.items()
               if isinstance(k, sp.Symbol) and k.name in names]
    return ", ".join([f"{n} = [{', '.join(v)}]" for n, v in by_name.items()] + scalars)


def _for_all_symbols(claim: NotExists, system: list[sp.Expr]) -> dict[sp.Indexed, sp.Symbol]:
    """Every entry of the ``for_all`` tensors in ``system``, as a symbol of its own."""
    names = {x.name for x in claim.for_all if not isinstance(x, Scalar)}
    entries = {e for equation in system for e in equation.atoms(sp.Indexed)
               if str(e.base) in names}
    return {e: sp.Symbol(f"_{e.base}_{'_'.join(map(str, e.indices))}", real=True)
            for e in sorted(entries, key=sp.default_sort_key)}


def _coefficient_equations(equations: list[sp.Expr], variables: set[sp.Symbol]
                           ) -> list[sp.Expr] | None:
    """Each equation's coefficients as a polynomial in ``variables`` (each must vanish), or None
    where an equation is not a polynomial in them."""
    found = []
    for equation in equations:
        equation = sp.expand(equation)
        free = equation.free_symbols & variables
        if not free:
            found.append(equation)
            continue
        try:
            poly = sp.Poly(equation, *sorted(free, key=sp.default_sort_key))
        except sp.PolynomialError:
            return None
        if not all(c.is_number or not (c.free_symbols & variables) for c in poly.coeffs()):
            return None
        found += list(poly.coeffs())
    return found


def _as_entries(claim: NotExists, sizes: dict[str, int], shown: dict[str, str]) -> str:
    shape = [sizes[d.name] for d in claim.unknown.dims]
    flat = [shown.get(f"_u{n}", "?") for n in range(len(shown))]
    if len(shape) == 2:
        rows = [flat[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])]
        return "[" + ", ".join("[" + ", ".join(row) + "]" for row in rows) + "]"
    return "[" + ", ".join(flat) + "]"


def _entry(key: object) -> str:
    if isinstance(key, tuple):
        return f"{key[0]}[{', '.join(map(str, key[1]))}]"
    return str(key)
