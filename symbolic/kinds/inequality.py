"""Inequalities proved from named facts: ``GreaterOrEqual`` (lhs ≥ rhs) and ``Greater`` (lhs > rhs).

A theorem names the facts its inequality follows from (``by=(Gibbs(p, q, j), ...)``). Each fact
is a quantity known to be nonnegative (or positive), with its justification and hypotheses
(Gibbs' inequality: KL(p‖q) ≥ 0 for distributions p, q). The claim is **proved** when

* every fact's hypotheses are shown for the expressions it is applied to (a distribution sums
  to 1 in sum normal form and its entries are nonnegative by their domains), and
* lhs − rhs equals, in sum normal form (``symbolic/_normal_form.py``), a combination of the facts'
  quantities and the constant 1 whose coefficients are nonnegative by the symbols' assumptions
  (a temperature T > 0 may be a coefficient); for ``Greater`` at least one coefficient of a
  positive quantity (exp(x) > 0, 1 > 0) is positive.

The coefficients are solved for (they are linear unknowns of the normal form) and then checked
by the same zero test, so a proof never rests on the solver. An expression with a ``Piecewise``
(ELU) is proved by case analysis: each branch, with its condition as one more fact, separately.
Every step is an equality or a stated fact, so "proved" holds for all sizes and all values the
domains allow. The exact refutation route tries small sizes and small rationals (zeros, ties,
one-hot rows, range ends); a ``Greater`` claim is refuted where lhs = rhs exactly, too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import sympy as sp

from ..route import (
    EXTREME_PROOFS,
    NOT_PROVED,
    PROVED,
    REFUTED,
    AtLeast,
    ClaimKind,
    ProofResult,
    ReduceMax,
    ReduceMin,
    TheoremError,
    as_expression,
    check_names_valid,
    check_shapes,
    check_symbols_covered,
    describe_counterexample,
    exact_value,
    free_indices,
    is_nonnegative,
    is_positive,
    mask_bases,
    rename_bound_indices,
    small_instances,
    substituted,
    theorem_residual,
    used_values,
)

if TYPE_CHECKING:
    from ..route import AnyConfiguration, Theorem

# -- facts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fact:
    """A quantity known to be nonnegative (``strict``: positive), and why.

    Subclasses give ``name`` (how a method cites it), ``quantity`` (the expression known to be
    ≥ 0 or > 0), ``justification`` (the argument, one sentence) and ``hypotheses`` (what must
    hold of the expressions the fact is applied to; the prover checks each).
    """

    name = "fact"
    strict = False
    justification = ""

    @property
    def quantity(self) -> sp.Expr:
        raise NotImplementedError

    def expressions(self) -> tuple[sp.Expr, ...]:
        """The expressions the fact is applied to, validated like the claim's."""
        raise NotImplementedError

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        """Why the fact does not apply to these expressions, or None when it does."""
        return None

    def statement(self) -> str:
        return f"{self.name} ({self.quantity} {'>' if self.strict else '>='} 0)"


def _sum(expr: sp.Expr, over: sp.Idx) -> sp.Sum:
    return sp.Sum(expr, (over, over.lower, over.upper))


@dataclass(frozen=True)
class Gibbs(Fact):
    """Gibbs' inequality: KL(p‖q) = Σ p (log p − log q) ≥ 0 for distributions p, q over
    ``over`` (q > 0). From log x ≤ x − 1: −KL = Σ p log(q/p) ≤ Σ q − Σ p = 0."""

    p: sp.Expr
    q: sp.Expr
    over: sp.Idx
    name = "Gibbs' inequality"
    justification = "log x ≤ x − 1 gives −KL(p‖q) ≤ Σq − Σp = 0"

    @property
    def quantity(self) -> sp.Expr:
        return _sum(self.p * (sp.log(self.p) - sp.log(self.q)), self.over)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.p, self.q)

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        for label, weights, positive in (("p", self.p, False), ("q", self.q, True)):
            expanded = theorem.expand(weights)
            if not is_positive(expanded) and not (
                    not positive and expanded.is_nonnegative):
                sign = "positive" if positive else "nonnegative"
                return f"{label} = {weights} is not shown {sign}"
            total = rename_bound_indices(_sum(expanded, self.over) - 1)
            if theorem_residual(theorem, total) != 0:
                return f"{label} = {weights} is not shown to sum to 1 over {self.over}"
        return None


@dataclass(frozen=True)
class Squares(Fact):
    """A square is nonnegative: x² ≥ 0 for real x, and Σ w x² ≥ 0 over ``over`` for weights
    w ≥ 0 (a variance, a squared distance)."""

    x: sp.Expr
    over: sp.Idx | None = None
    weight: sp.Expr = sp.S.One
    name = "a sum of squares"
    justification = "x² ≥ 0 for real x, and a sum of nonnegative terms is nonnegative"

    @property
    def quantity(self) -> sp.Expr:
        term = self.weight * self.x**2
        return term if self.over is None else _sum(term, self.over)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.x, sp.sympify(self.weight))

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        if theorem.expand(self.x).is_real is False:
            return f"{self.x} is not real"
        weight = theorem.expand(sp.sympify(self.weight))
        if not (weight.is_nonnegative or is_positive(weight)):
            return f"the weight {self.weight} is not shown nonnegative"
        return None


@dataclass(frozen=True)
class ExpPositive(Fact):
    """exp(x) > 0 for real x."""

    x: sp.Expr
    name = "exp > 0"
    strict = True
    justification = "the exponential of a real number is positive"

    @property
    def quantity(self) -> sp.Expr:
        return sp.exp(self.x)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.x,)


@dataclass(frozen=True)
class CauchySchwarz(Fact):
    """(Σ u²)(Σ v²) − (Σ u v)² ≥ 0 over ``over`` for real u, v (Lagrange's identity: it is
    ½ Σ_a Σ_b (u_a v_b − u_b v_a)²)."""

    u: sp.Expr
    v: sp.Expr
    over: sp.Idx
    name = "Cauchy–Schwarz"
    justification = "Lagrange's identity writes the gap as ½ Σ_a Σ_b (u_a v_b − u_b v_a)²"

    @property
    def quantity(self) -> sp.Expr:
        u, v, over = self.u, self.v, self.over
        return _sum(u**2, over) * _sum(v**2, over) - _sum(u * v, over) ** 2

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.u, self.v)


@dataclass(frozen=True)
class _Condition(Fact):
    """A branch condition of a case analysis, ``value ≥ 0`` or ``value > 0``."""

    value: sp.Expr
    is_strict: bool
    name = "the branch condition"
    justification = "the case being proved"

    @property
    def quantity(self) -> sp.Expr:
        return self.value

    @property
    def strict(self) -> bool:  # type: ignore[override]
        return self.is_strict

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.value,)


@dataclass(frozen=True)
class _One(Fact):
    name = "1 > 0"
    strict = True
    justification = "arithmetic"

    @property
    def quantity(self) -> sp.Expr:
        return sp.S.One

    def expressions(self) -> tuple[sp.Expr, ...]:
        return ()


@dataclass(frozen=True)
class EntropyTerms(Fact):
    """−Σ p log p ≥ 0 over ``over`` for a distribution p: each entry lies in (0, 1], where
    log p ≤ 0."""

    p: sp.Expr
    over: sp.Idx
    name = "−p log p ≥ 0 on [0, 1]"
    justification = "the entries of a distribution lie in [0, 1], where log p ≤ 0"

    @property
    def quantity(self) -> sp.Expr:
        return -_sum(self.p * sp.log(self.p), self.over)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.p,)

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        return Gibbs(self.p, self.p, self.over).unmet_hypothesis(theorem)


@dataclass(frozen=True)
class BelowMaximum(Fact):
    """Σ_j w_j (max_k x_k − x_j) ≥ 0 over ``over`` for weights w ≥ 0: no entry exceeds its row's
    maximum. With weights that sum to 1 (a softmax, a distribution), a convex combination of the
    x_j lies at or below the largest of them."""

    weight: sp.Expr
    x: sp.Expr
    over: sp.Idx
    name = "entries at most their maximum"
    justification = "x_j ≤ max_k x_k for every j, and nonnegative weights keep the sign"

    @property
    def quantity(self) -> sp.Expr:
        return _sum(self.weight * (_extreme(ReduceMax, self.x, self.over) - self.x), self.over)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.weight, self.x)

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        return _weights_and_entries(theorem, self.weight, self.x)


@dataclass(frozen=True)
class AboveMinimum(Fact):
    """Σ_j w_j (x_j − min_k x_k) ≥ 0 over ``over`` for weights w ≥ 0: no entry lies below its
    row's minimum (``rowmin``, which the provers read as −max(−x)). With weights that sum to 1,
    a convex combination lies at or above the smallest entry."""

    weight: sp.Expr
    x: sp.Expr
    over: sp.Idx
    name = "entries at least their minimum"
    justification = "x_j ≥ min_k x_k for every j, and nonnegative weights keep the sign"

    @property
    def quantity(self) -> sp.Expr:
        return _sum(self.weight * (self.x - _extreme(ReduceMin, self.x, self.over)), self.over)

    def expressions(self) -> tuple[sp.Expr, ...]:
        return (self.weight, self.x)

    def unmet_hypothesis(self, theorem: Theorem) -> str | None:
        return _weights_and_entries(theorem, self.weight, self.x)


def _extreme(node: type[ReduceMax] | type[ReduceMin], x: sp.Expr, over: sp.Idx) -> sp.Expr:
    """The maximum or minimum of ``x`` over ``over``'s whole range, under a bound name of its
    own (the fact's sum binds ``over`` around it)."""
    inner = sp.Dummy(f"{over.label}_k", integer=True)
    return node(x.xreplace({over: inner}), (inner, over.lower, over.upper))


def _weights_and_entries(theorem: Theorem, weight: sp.Expr, x: sp.Expr) -> str | None:
    expanded = theorem.expand(sp.sympify(weight))
    if not is_nonnegative(expanded):
        return f"the weight {weight} is not shown nonnegative"
    if theorem.expand(x).is_real is False:
        return f"{x} is not real"
    return None


FACTS = (Gibbs, Squares, ExpPositive, CauchySchwarz, EntropyTerms, BelowMaximum, AboveMinimum)


def elu(x: sp.Expr) -> sp.Expr:
    """ELU(x) = x for x > 0, exp(x) − 1 otherwise (the linear-attention feature map of §10.2
    is ELU(x) + 1), written max(x, 0) + exp(min(x, 0)) − 1: one formula the numeric compiler
    evaluates without overflow, and whose max and min the prover splits into cases."""
    return sp.Max(x, 0) + sp.exp(sp.Min(x, 0)) - 1


# -- the claims -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Inequality(ClaimKind):
    lhs: sp.Expr
    rhs: sp.Expr
    by: tuple[Fact, ...] = field(default=())
    # set by each subclass: whether lhs = rhs refutes the claim (``Greater``)
    strict: ClassVar[bool]

    def __post_init__(self) -> None:
        kind = type(self).__name__
        object.__setattr__(self, "lhs", as_expression(self.lhs, f"{kind}: the left-hand side"))
        object.__setattr__(self, "rhs", as_expression(self.rhs, f"{kind}: the right-hand side"))
        by = self.by if isinstance(self.by, (tuple, list)) else (self.by,)
        for fact in by:
            if not isinstance(fact, Fact):
                known = ", ".join(f.__name__ for f in FACTS)
                raise TheoremError(f"{kind}: by= takes facts ({known}"
                                   f"), got {type(fact).__name__}")
        object.__setattr__(self, "by", tuple(by))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        # the facts' expressions are validated in ``validate``: a fact's summed index must not
        # become a free index of the claim
        return (("left-hand side", self.lhs), ("right-hand side", self.rhs))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return rf"{latex(self.lhs)} {self.relation} {latex(self.rhs)}"

    def searched_as(self, theorem: Theorem) -> Theorem:
        """lhs ≥ rhs as the built-in ``AtLeast``, which the compiled search checks (strictness
        is the numeric route's second search)."""
        return dataclasses.replace(theorem, claim=AtLeast(self.lhs, self.rhs))

    def numeric_configurations(self, found: list[AnyConfiguration]
                               ) -> list[AnyConfiguration]:
        """None for concrete numbers (nothing to draw: exact evaluation settles them)."""
        lhs_rhs = self.lhs - self.rhs
        concrete = not lhs_rhs.free_symbols and not lhs_rhs.has(sp.Indexed)
        return [] if concrete else list(found)

    def validate(self, theorem: Theorem, where: str) -> None:
        claimed = free_indices(self.lhs) | free_indices(self.rhs)
        for number, fact in enumerate(self.by, 1):
            part = f"{where}, fact {number} ({fact.name})"
            expressions = [as_expression(e, part) for e in fact.expressions()]
            for expr in expressions:
                check_names_valid(expr, part)
                check_symbols_covered(theorem, expr, part)
                check_shapes(theorem, expr, part)
            extra = set().union(*(free_indices(e) for e in expressions))
            extra -= claimed | {getattr(fact, "over", None)}
            if extra:
                raise TheoremError(
                    f"{part}: index "
                    f"{sorted(map(str, extra))[0]} is neither free in the claim nor summed by "
                    "the fact")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        difference = rename_bound_indices(theorem.expand(self.lhs) - theorem.expand(self.rhs))
        counterexample = find_violation(theorem, difference, self.strict)
        if counterexample is not None:
            what = "lhs = rhs, so lhs > rhs fails" if counterexample.get("equality") else \
                "lhs < rhs"
            return ProofResult(REFUTED, f"exact counterexample at small sizes ({what})",
                               counterexample=counterexample)
        if not difference.free_symbols and not difference.has(sp.Indexed):
            return _evaluated_exactly(difference, self.strict)
        if not self.by:
            return prove_from_extremes(theorem, difference, self.strict)
        for fact in self.by:
            unmet = fact.unmet_hypothesis(theorem)
            if unmet is not None:
                return ProofResult(NOT_PROVED, f"{fact.name} does not apply: {unmet}; "
                                   "numeric evidence only")
        return prove_from_facts(theorem, difference, self.by, self.strict)


@dataclass(frozen=True)
class GreaterOrEqual(_Inequality):
    """``lhs ≥ rhs`` for every value of every free index, proved from the facts named in
    ``by`` (module docstring)."""

    kind = "inequality"
    relation = r"\geq"
    strict = False


@dataclass(frozen=True)
class Greater(_Inequality):
    """``lhs > rhs`` for every value of every free index, proved from the facts named in ``by``
    of which one positive quantity carries a positive coefficient; refuted where lhs = rhs."""

    kind = "strict inequality"
    relation = ">"
    strict = True


# -- concrete numbers ---------------------------------------------------------------------------

# a 50-digit value this far from 0 has a certain sign (the worked numbers' standard)
_CERTAIN = 1e-30


def _evaluated_exactly(difference: sp.Expr, strict: bool) -> ProofResult:
    """Numbers without symbols: the sign of lhs − rhs evaluated to 50 digits."""
    value = sp.N(difference, 50)
    method = f"exact evaluation (50 digits): lhs − rhs = {sp.N(value, 6)}"
    if value.is_real and value > _CERTAIN:
        return ProofResult(PROVED, method)
    if value.is_real and (value < -_CERTAIN or (strict and sp.simplify(difference) == 0)):
        return ProofResult(REFUTED, method, counterexample={"lhs_minus_rhs": str(sp.N(value, 6))})
    if value.is_real and not strict and sp.simplify(difference) == 0:
        return ProofResult(PROVED, method + " exactly")
    return ProofResult(NOT_PROVED, method + ": too close to 0 to certify its sign")


# -- proof from facts -------------------------------------------------------------------------


def prove_from_facts(theorem: Theorem, difference: sp.Expr, facts: Sequence[Fact],
                     strict: bool) -> ProofResult:
    """PROVED when ``difference`` is a nonnegative combination of the facts (module docstring);
    a ``Piecewise`` is split into its branches first."""
    cases = _cases(difference)
    used: list[str] = []
    for value, conditions in cases:
        combination = _combination(theorem, value, (*facts, *conditions, _One()), strict)
        if combination is None:
            where = f" in the case {_describe_case(conditions)}" if len(cases) > 1 else ""
            return ProofResult(NOT_PROVED, "lhs − rhs is not shown to be a "
                               f"{'positive' if strict else 'nonnegative'} combination of the "
                               f"named facts{where} (sum normal form); numeric evidence only")
        used += [f.name for f, _ in combination if not isinstance(f, (_Condition, _One))]
        shown = " + ".join(f"{_coefficient(c)}[{f.name}]" for f, c in combination)
    cited = ", ".join(dict.fromkeys(used)) or "arithmetic"
    split = (f"case analysis on {len(cases)} branches (each with its condition as a fact), "
             if len(cases) > 1 else "")
    return ProofResult(PROVED, f"{split}from {cited}: lhs − rhs is a "
                       f"{'positive' if strict else 'nonnegative'} combination of the facts in "
                       "sum normal form (all sizes)"
                       + (f": lhs − rhs = {shown}" if len(cases) == 1 else ""))


def _coefficient(c: sp.Expr) -> str:
    return "" if c == 1 else f"{c}·"


def _combination(theorem: Theorem, difference: sp.Expr, facts: Sequence[Fact], strict: bool
                 ) -> list[tuple[Fact, sp.Expr]] | None:
    """The facts with a nonzero coefficient when ``difference`` = Σ c_f · fact_f with every
    c_f ≥ 0 (and, if ``strict``, some c_f > 0 on a positive fact); None otherwise."""
    quantities = [rename_bound_indices(theorem.expand(f.quantity)) for f in facts]
    unknowns = [sp.Dummy(f"c{n}") for n in range(len(facts))]
    solution = _solve(theorem, difference, quantities, unknowns)
    if solution is None:
        return None
    coefficients = [sp.simplify(solution.get(c, sp.S.Zero)) for c in unknowns]
    if not all(c.is_zero or c.is_nonnegative for c in coefficients):
        return None
    if strict and not any(f.strict and c.is_positive for f, c in zip(facts, coefficients,
                                                                     strict=True)):
        return None
    check = difference - sum(c * q for c, q in zip(coefficients, quantities, strict=True))
    if theorem_residual(theorem, rename_bound_indices(check)) != 0:  # the decisive test
        return None
    return [(f, c) for f, c in zip(facts, coefficients, strict=True) if not c.is_zero]


def _solve(theorem: Theorem, difference: sp.Expr, quantities: list[sp.Expr],
           unknowns: list[sp.Dummy]) -> dict[sp.Dummy, sp.Expr] | None:
    """Coefficients making ``difference − Σ c·q`` vanish term by term in sum normal form."""
    combined = difference - sum(c * q for c, q in zip(unknowns, quantities, strict=True))
    left = theorem_residual(theorem, rename_bound_indices(combined))
    numerator = sp.expand(sp.fraction(sp.together(left))[0])
    generators = _generators(numerator, set(unknowns))
    dummies = {g: sp.Dummy("g") for g in generators}
    try:
        polynomial = sp.Poly(numerator.xreplace(dummies), *dummies.values())
    except sp.PolynomialError:
        return None
    equations = [e for e in polynomial.coeffs() if e != 0]
    if any(not (e.free_symbols & set(unknowns)) for e in equations):
        return None  # a term no fact can cancel
    solutions = sp.linsolve(equations, unknowns) if equations else {tuple(unknowns)}
    if not solutions:
        return None
    (values,) = solutions
    free = set().union(*(sp.sympify(v).free_symbols for v in values)) & set(unknowns)
    return {c: sp.sympify(v).xreplace(dict.fromkeys(free, 0))
            for c, v in zip(unknowns, values, strict=True)}


def _generators(expr: sp.Expr, unknowns: set[sp.Dummy]) -> list[sp.Expr]:
    """The maximal parts of ``expr`` that depend on tensor entries or sums (polynomial
    generators); everything else (unknowns, scalars, sizes) may appear in a coefficient."""
    found: list[sp.Expr] = []

    def walk(node: sp.Expr) -> None:
        if not _depends_on_entries(node):
            return
        if isinstance(node, (sp.Add, sp.Mul)):
            for arg in node.args:
                walk(arg)
        elif isinstance(node, sp.Pow) and node.exp.is_Integer:
            walk(node.base)
        elif node not in found:
            found.append(node)

    walk(expr)
    return found


def _depends_on_entries(node: sp.Expr) -> bool:
    if node.has(sp.Indexed, sp.Sum, sp.Product):
        return True
    # atoms of the normal form (Σ0, E1, ...) stand for sums and exponentials of entries
    return any(s.name[:1] in "ΣΠE" and not isinstance(s, sp.Dummy) for s in node.free_symbols)


# -- convex combinations: facts found in the statement -----------------------------------------


def extreme_facts(theorem: Theorem, difference: sp.Expr) -> list[Fact]:
    """The facts ``BelowMaximum`` that a difference with a row maximum calls for: for every
    maximum max_k f(k) in lhs − rhs (a ``rowmin`` is −max(−f)) and every sum Σ_j g(j) over the
    same range whose term is a weight times the same entry, g(j) = w(j)·f(j) with w free of f's
    entries, the fact Σ_j w (max f − f(j)) ≥ 0, or Σ_j (−w)(max f − f(j)) ≥ 0, whichever weight
    is shown nonnegative. A masked entry f = m·x + (1 − m)·c of a 0/1 mask m is read as the
    value x it keeps: g = w·x with w = m·w', so that w·f = g where m is 1 and where m is 0
    (the kept values' extreme of masked attention). Whether lhs − rhs is a nonnegative
    combination of the facts is then decided as for named facts (``prove_from_facts``):
    nothing here is assumed."""
    found: list[Fact] = []
    sums = [s for s in difference.atoms(sp.Sum) if len(s.limits) == 1]
    for maximum in sorted(difference.atoms(ReduceMax), key=sp.default_sort_key):
        (k, low, high), = maximum.limits
        for total in sums:
            (j, lower, upper), = total.limits
            if (lower, upper) != (low, high):
                continue
            over = sp.Idx(sp.Symbol(f"{j.name}_w", integer=True), (low, high))
            entry = maximum.function.xreplace({k: over})
            term = total.function.xreplace({j: over})
            for weight in _weights_of(theorem, entry, term):
                for signed in (weight, -weight):
                    fact = BelowMaximum(signed, entry, over)
                    if fact.unmet_hypothesis(theorem) is None and fact not in found:
                        found.append(fact)
    return found


def _weights_of(theorem: Theorem, entry: sp.Expr, term: sp.Expr) -> list[sp.Expr]:
    """Each w free of the entries of the value it weighs with term = w·entry: ``entry``
    itself, or the value it keeps where one of its mask entries is 1 (the identity is then
    checked by the zero test, which knows that m² = m)."""
    weights: list[sp.Expr] = []
    for kept in (entry, *_kept_values(theorem, entry)):
        weight = sp.cancel(term / kept) if kept != 0 else None
        if weight is None or weight.has(*kept.atoms(sp.Indexed)):
            continue
        if sp.expand(weight * entry - term) == 0 or (
                kept != entry and theorem_residual(
                    theorem, rename_bound_indices(weight * entry - term)) == 0):
            weights.append(weight)
    return weights


def _kept_values(theorem: Theorem, entry: sp.Expr) -> list[sp.Expr]:
    """``entry`` with each of its 0/1 mask entries set to 1."""
    masks = {str(base.label) for base in mask_bases(theorem)}
    entries = sorted((e for e in entry.atoms(sp.Indexed) if str(e.base.label) in masks),
                     key=sp.default_sort_key)
    return [entry.xreplace({m: 1}) for m in entries]


def prove_from_extremes(theorem: Theorem, difference: sp.Expr, strict: bool = False) -> ProofResult:
    """An inequality without named facts, from the facts its row maxima and minima call for
    (``extreme_facts``): min_j x_j ≤ Σ_j w_j x_j ≤ max_j x_j for weights w ≥ 0 that sum to 1,
    and whatever else is a nonnegative combination of such gaps, for all sizes."""
    facts = extreme_facts(theorem, difference)
    if not facts:
        return ProofResult(NOT_PROVED, "no facts named (by=), no row maximum or minimum with "
                           "weighted sums of its entries, and the exact search found no "
                           "counterexample; numeric evidence only")
    return prove_from_facts(theorem, difference, facts, strict)


# -- case analysis ----------------------------------------------------------------------------


def _cases(difference: sp.Expr) -> list[tuple[sp.Expr, tuple[_Condition, ...]]]:
    """``difference`` in each branch of its first ``Piecewise`` (max and min are written as
    ones), with the branch conditions as facts (conditions of the form a > b, a ≥ b, a < b,
    a ≤ b); one case without a Piecewise."""
    difference = difference.xreplace(
        {m: m.rewrite(sp.Piecewise) for m in difference.atoms(sp.Max, sp.Min)})
    pieces = sorted(difference.atoms(sp.Piecewise), key=sp.default_sort_key)
    if not pieces:
        return [(difference, ())]
    piece = pieces[0]
    cases: list[tuple[sp.Expr, tuple[_Condition, ...]]] = []
    earlier: list[sp.Basic] = []
    for value, condition in piece.args:
        facts = tuple(_condition_facts(condition, negated=False))
        for previous in earlier:
            facts += tuple(_condition_facts(previous, negated=True))
        earlier.append(condition)
        for inner, more in _cases(difference.xreplace({piece: value})):
            if not _impossible(facts + more):
                cases.append((inner, facts + more))
    return cases


def _impossible(conditions: tuple[_Condition, ...]) -> bool:
    """v > 0 together with −v ≥ 0 (or −v > 0): no value falls in this case."""
    return any(a.strict and sp.expand(a.value + b.value) == 0
               for a in conditions for b in conditions if a is not b)


def _condition_facts(condition: sp.Basic, negated: bool) -> Iterator[_Condition]:
    """``condition`` (or its negation) as facts value ≥ 0 / value > 0."""
    if condition is sp.true:
        return
    if isinstance(condition, sp.And) and not negated:
        for part in condition.args:
            yield from _condition_facts(part, False)
        return
    if not isinstance(condition, (sp.StrictGreaterThan, sp.GreaterThan, sp.StrictLessThan,
                                  sp.LessThan)):
        return  # unusable: the case is proved without it, or not at all
    greater = isinstance(condition, (sp.StrictGreaterThan, sp.GreaterThan))
    value = condition.lhs - condition.rhs if greater else condition.rhs - condition.lhs
    is_strict = isinstance(condition, (sp.StrictGreaterThan, sp.StrictLessThan))
    if negated:  # not (v > 0) is −v ≥ 0; not (v ≥ 0) is −v > 0
        value, is_strict = -value, not is_strict
    yield _Condition(value, is_strict)


def _describe_case(conditions: tuple[_Condition, ...]) -> str:
    return " and ".join(f"{c.value} {'>' if c.strict else '>='} 0" for c in conditions) or \
        "otherwise"


# -- exact refutation -------------------------------------------------------------------------


def find_violation(theorem: Theorem, difference: sp.Expr, strict: bool, tries: int = 12
                   ) -> dict | None:
    """Small sizes and small rationals (zeros, ties, one-hot rows, range ends) where lhs < rhs,
    or, for a strict claim, lhs = rhs, shown exactly: a value below −1e-30 at 50 digits, or an
    equality that SymPy confirms symbolically at those rationals."""
    for sizes, index_values, concrete, values in small_instances(theorem, difference, tries):
        found = _violation_at(concrete, values, strict)
        if found is not None:
            used = used_values(concrete, values)
            described = describe_counterexample(sizes, index_values, used, found)
            if strict and found == 0:
                described["equality"] = "lhs = rhs exactly"
            return described
    return None


def _violation_at(concrete: sp.Expr, values: dict, strict: bool) -> float | None:
    value = exact_value(concrete, values)
    if not isinstance(value, float):
        return None
    if value < -1e-30:
        return value
    if strict and abs(value) <= 1e-30 and _exactly_zero(concrete, values):
        return 0.0
    return None


def _exactly_zero(concrete: sp.Expr, values: dict) -> bool:
    try:
        return bool(sp.simplify(substituted(concrete, values)) == 0)
    except (TypeError, ValueError):
        return False


__all__ = ["AboveMinimum", "BelowMaximum", "CauchySchwarz", "EntropyTerms", "ExpPositive",
           "Fact", "Gibbs", "Greater", "GreaterOrEqual", "Squares", "elu"]


EXTREME_PROOFS.append(prove_from_extremes)  # AtLeast without named facts uses it
