"""Statistical claims: the mean or the variance of a polynomial in random tensor entries.

The tensors named in ``random=`` (every input tensor when it is not given) are random, their
entries independent and identically distributed by a declared ``Law`` (independent across
tensors too); the other inputs are fixed, and the claimed value may depend on them: ``E_ω[…]``
for given x, y. Dimensions stay symbolic. ``Variance(S, d_k, law=Moments(0, 1))`` says
Var(S) = d_k for every law with mean 0 and variance 1.

Symbolic route (moment algebra, all sizes): expectation is linear, so it passes through every
sum; a monomial's expectation factors over independent tensors; within one tensor, for entries
x_I and x_J, E x_I = μ and E x_I x_J = μ² + σ² δ_IJ (δ_IJ a product of ``KroneckerDelta`` over
the index positions); under a ``Gaussian`` law, E exp(Σ_I c_I x_I) = exp(Σ_I (μ c_I + σ² c_I²/2))
when each entry appears once in the exponent (the moment generating function; random features
of the Performer kind). A statistic whose monomials hold an entry of one tensor more than twice
needs higher moments: for a finite law (``Rademacher``) the route then enumerates every ±1
pattern at every size up to the bound ("proved for sizes <= k", PROVED_BOUNDED), otherwise it
says so and leaves the claim to the numbers. The result
minus the claimed value goes through the sum normal form (``_normal_form.residual``); zero is
a proof for all sizes and for every law with the stated mean and variance (Gaussian or not).

Exact refutation: the same moment algebra at sizes 1, 2, 3, evaluated exactly; where the law
is finite (``Rademacher``) the counterexample is confirmed by enumerating every ±1 pattern.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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
    free_indices,
    index_assignments,
    residual,
    search_steps,
    size_assignments,
    size_steps,
    structured_draws,
    substituted,
)

if TYPE_CHECKING:
    from ..route import Domain, Tensor, Theorem

# at most this many random entries are enumerated to confirm a counterexample (2^12 patterns)
ENUMERATION_LIMIT = 12


@dataclass(frozen=True)
class Law:
    """The distribution of every random entry: its name (as reports print it), mean, variance,
    and how the numeric route samples it (``"normal"`` or ``"sign"``)."""

    name: str
    mean: sp.Expr
    variance: sp.Expr
    sampler: str = "normal"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", sp.sympify(self.mean))
        object.__setattr__(self, "variance", sp.sympify(self.variance))
        if not (self.mean.is_number and self.variance.is_number and self.variance >= 0):
            raise TheoremError(f"law {self.name}: mean and variance must be numbers, "
                               f"variance >= 0 (got {self.mean}, {self.variance})")

    @property
    def finite(self) -> bool:
        return self.sampler == "sign"

    def latex(self) -> str:
        if self.sampler == "sign":
            return r"\mathrm{Rademacher}(\pm 1)"
        if self.name == "any":
            return (rf"\text{{any law with mean }} {sp.latex(self.mean)}"
                    rf"\text{{, variance }} {sp.latex(self.variance)}")
        return rf"\mathcal{{N}}({sp.latex(self.mean)}, {sp.latex(self.variance)})"


def Moments(mean: sp.Expr | float = 0, variance: sp.Expr | float = 1) -> Law:
    """Any law with this mean and variance: the claim is asserted for all of them (the numeric
    route samples the Gaussian one)."""
    return Law("any", mean, variance, "normal")


def Gaussian(mean: sp.Expr | float = 0, variance: sp.Expr | float = 1) -> Law:
    return Law("Gaussian", mean, variance, "normal")


def Rademacher() -> Law:
    """±1 with probability 1/2 each: mean 0, variance 1, and finite, so enumerable."""
    return Law("Rademacher", 0, 1, "sign")


class UnsupportedMoment(Exception):
    """The statistic needs a moment of the law beyond the second."""


# -- the claim --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Statistic(ClaimKind):
    statistic: sp.Expr
    value: sp.Expr
    law: Law = field(default_factory=Moments)
    random: tuple[Tensor, ...] = ()  # the random tensors; every input tensor when empty

    kind = "statistical"
    numeric_draws = ('independent samples of every random tensor from the declared law (fixed '
                     "seed), at each dimension's smallest size, 2 and its largest")
    relation = "="
    # the claim is about exact random variables, and the route computes only each sample's
    # statistic on the backend (the moments are taken in float64 afterwards); a lower format
    # would measure its own rounding, which is no part of the claim, and would double the
    # catalog's time for nothing the claim says
    numeric_formats = ("float64", "float32")
    operator = ""

    def __post_init__(self) -> None:
        kind = type(self).__name__
        object.__setattr__(self, "statistic", as_expression(self.statistic, f"{kind}: statistic"))
        object.__setattr__(self, "value", as_expression(self.value, f"{kind}: value"))
        if not isinstance(self.law, Law):
            raise TheoremError(f"{kind}: law must be Moments(...), Gaussian(...) or "
                               f"Rademacher(), got {type(self.law).__name__}")
        object.__setattr__(self, "random", tuple(self.random))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("statistic", self.statistic), ("value", self.value))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        over = ""
        if self.random:
            over = "_{" + ", ".join(latex(t.base) for t in self.random) + "}"
        return (rf"\operatorname{{{self.operator}}}{over}\left[{latex(self.statistic)}\right] = "
                rf"{latex(self.value)}, \quad \text{{entries i.i.d. }} \sim {self.law.latex()}")

    def random_tensors(self, theorem: Theorem) -> tuple[Tensor, ...]:
        """The random tensors: those named in ``random=``, else every input tensor."""
        return self.random or theorem.tensors

    def validate(self, theorem: Theorem, where: str) -> None:
        declared = {t.name for t in theorem.tensors}
        for tensor in self.random:
            if getattr(tensor, "name", None) not in declared:
                raise TheoremError(f"{where}: random tensor {getattr(tensor, 'name', tensor)} "
                                   "is not among the inputs")
        random = {t.name for t in self.random_tensors(theorem)}
        every = "" if self.random else " (every input tensor is random)"
        if not random & {str(x.base) for x in self.statistic.atoms(sp.Indexed)}:
            raise TheoremError(f"{where}: the statistic {self.statistic} holds no random "
                               f"tensor{every}")
        for x in self.value.atoms(sp.Indexed):
            if str(x.base) in random:
                raise TheoremError(f"{where}: the claimed value depends on the random tensor "
                                   f"{x.base}; it must be a formula in the sizes and the fixed "
                                   "inputs")
        if theorem.scalars and not self.random:
            raise TheoremError(f"{where}: scalar {theorem.scalars[0].name} is not random; name "
                               "the random tensors with random=(...) to keep other inputs fixed")
        if free_indices(self.value) - free_indices(self.statistic):
            raise TheoremError(f"{where}: the claimed value has a free index the statistic "
                               "lacks")

    def moment(self, theorem: Theorem) -> sp.Expr:
        """The statistic's mean or variance by moment algebra, as an expression in the sizes."""
        raise NotImplementedError

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return prove_statistic(self, theorem, bound)



@dataclass(frozen=True)
class Expectation(_Statistic):
    """E[statistic] = value, for i.i.d. entries of the declared law."""

    operator = "E"

    def moment(self, theorem: Theorem) -> sp.Expr:
        return expectation_of(theorem.expand(self.statistic), theorem, self.law)


@dataclass(frozen=True)
class Variance(_Statistic):
    """Var[statistic] = value, for i.i.d. entries of the declared law."""

    operator = "Var"

    def moment(self, theorem: Theorem) -> sp.Expr:
        x = theorem.expand(self.statistic)
        square = expectation_of(_product(x, x), theorem, self.law)
        mean = expectation_of(x, theorem, self.law)
        mean_again = expectation_of(_fresh_bound(x), theorem, self.law)
        return square - mean * mean_again


# -- moment algebra ---------------------------------------------------------------------------


def expectation_of(expr: sp.Expr, theorem: Theorem, law: Law) -> sp.Expr:
    """E[expr], the claim's random tensors with i.i.d. entries of ``law``, the rest fixed."""
    assert isinstance(theorem.claim, _Statistic)  # asked by the statistic's own ``moment``
    random = {t.base for t in theorem.claim.random_tensors(theorem)}
    return sp.Add(*(_sum(_expect_body(body, random, law), limits)
                    for limits, body in _terms(expr)))


def _terms(expr: sp.Expr) -> list[tuple[tuple, sp.Expr]]:
    """``expr`` as Σ over terms of Sum(body, limits), with every sum pulled to the front and
    bound indices renamed apart, so bodies are products of entries and constants."""
    if isinstance(expr, sp.Add):
        return [t for arg in expr.args for t in _terms(arg)]
    if isinstance(expr, sp.Sum):
        return [(tuple(expr.limits) + limits, body) for limits, body in _terms(expr.function)]
    if isinstance(expr, sp.Mul):
        found = [((), sp.S.One)]
        for factor in expr.args:
            found = [(l1 + l2, b1 * b2) for l1, b1 in found
                     for l2, b2 in _terms(_fresh_bound(factor))]
        return found
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp > 0 and expr.base.has(sp.Sum):
        return _terms(sp.Mul(*(_fresh_bound(expr.base) for _ in range(int(expr.exp))),
                             evaluate=False))
    if expr.has(sp.Sum) and not isinstance(expr, sp.exp):
        raise UnsupportedMoment(f"a sum inside {type(expr).__name__}")
    return [((), expr)]


def _product(x: sp.Expr, y: sp.Expr) -> sp.Expr:
    return sp.Mul(x, _fresh_bound(y), evaluate=False)


def _fresh_bound(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every summation index renamed to a fresh one, so that two copies of a sum
    multiply into a double sum over independent indices."""
    renames = {}
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Sum):
            for limit in node.limits:
                index = limit[0]
                if index not in renames:
                    label = sp.Dummy(str(getattr(index, "label", index)), integer=True)
                    renames[index] = (sp.Idx(label, index.upper + 1) if isinstance(index, sp.Idx)
                                      else label)
    return expr.xreplace(renames) if renames else expr


def _sum(body: sp.Expr, limits: tuple) -> sp.Expr:
    return sp.Sum(body, *limits) if limits and body != 0 else body


def _expect_body(body: sp.Expr, random: set, law: Law) -> sp.Expr:
    """E of a sum-free polynomial in random entries: monomial by monomial."""
    # power_exp=False: SymPy's expand would turn exp(Σ f) into Π exp(f), hiding the exponent
    terms = sp.Add.make_args(sp.expand(body, power_exp=False))
    return sp.Add(*(_expect_monomial(m, random, law) for m in terms))


def _expect_monomial(monomial: sp.Expr, random: set, law: Law) -> sp.Expr:
    constant = sp.S.One
    entries: dict[sp.IndexedBase, list[tuple]] = {}  # each random tensor's entries
    exponentials: list[sp.Expr] = []
    for factor in sp.Mul.make_args(monomial):
        base, power = factor.as_base_exp()
        if isinstance(factor, sp.exp) and _holds_random(factor, random):
            exponentials.append(factor.args[0])
            continue
        if isinstance(base, sp.Indexed) and base.base in random:
            if not (power.is_Integer and power > 0):
                raise UnsupportedMoment(f"{factor} is no polynomial in the entries")
            entries.setdefault(base.base, []).extend([base.indices] * int(power))
        elif factor.atoms(sp.Indexed) & {x for x in factor.atoms(sp.Indexed)
                                         if x.base in random}:
            raise UnsupportedMoment(f"{factor} is no polynomial in the entries")
        else:
            constant *= factor
    if exponentials:
        if entries:
            raise UnsupportedMoment("random entries both inside and outside an exponential")
        return constant * _gaussian_mgf(sp.Add(*exponentials), random, law)
    for indices in entries.values():
        constant *= _entry_moment(indices, law)
    return constant


def _holds_random(expr: sp.Expr, random: set) -> bool:
    return any(x.base in random for x in expr.atoms(sp.Indexed))


def _gaussian_mgf(exponent: sp.Expr, random: set, law: Law) -> sp.Expr:
    """E exp(exponent) for an exponent linear in Gaussian entries, each entry once:
    exp(fixed part + Σ (μ c + σ² c²/2)) over the random terms c·x."""
    if law.name != "Gaussian":
        raise UnsupportedMoment("an exponential of random entries needs the whole law: declare "
                                "it Gaussian(...)")
    fixed: list[sp.Expr] = []
    # each random tensor's terms, as (limits, body)
    random_terms: dict[sp.IndexedBase, list[tuple[tuple, sp.Expr]]] = {}
    for term in sp.Add.make_args(sp.expand(exponent)):
        if not _holds_random(term, random):
            fixed.append(term)
            continue
        limits, body = _sum_of(term)
        random_terms.setdefault(_random_base(body, random), []).append((limits, body))
    cumulant = sp.Add(*fixed)
    for base, terms in random_terms.items():
        limits, body = _merged(terms)
        entry, coefficient = _linear_entry(body, base)
        bound = {limit[0] for limit in limits}
        if not bound <= set(entry.indices) or coefficient.has(entry):
            raise UnsupportedMoment(f"the exponent's entries of {base} do not each appear once")
        cumulant += sp.Sum(law.mean * coefficient + law.variance * coefficient**2 / 2, *limits) \
            if limits else law.mean * coefficient + law.variance * coefficient**2 / 2
    return sp.exp(cumulant)


def _sum_of(term: sp.Expr) -> tuple[tuple, sp.Expr]:
    """(limits, body) of c·Σ body; a term without a sum has no limits."""
    coefficient, rest = term.as_coeff_Mul()
    if isinstance(rest, sp.Sum):
        return tuple(rest.limits), coefficient * rest.function
    if rest.has(sp.Sum):
        raise UnsupportedMoment(f"a random term {term} that is no plain sum")
    return (), term


def _random_base(body: sp.Expr, random: set) -> sp.IndexedBase:
    bases = {x.base for x in body.atoms(sp.Indexed) if x.base in random}
    if len(bases) != 1:
        raise UnsupportedMoment(f"{body} mixes random tensors in one exponent term")
    return bases.pop()


def _merged(terms: list[tuple[tuple, sp.Expr]]) -> tuple[tuple, sp.Expr]:
    """Σ_a f(a) + Σ_b g(b) over the same ranges as one Σ_a (f(a) + g(a)), so each entry of the
    tensor appears in one coefficient."""
    limits, body = terms[0]
    for other_limits, other in terms[1:]:
        if len(other_limits) != len(limits) or any(
                (lo, hi) != (lo2, hi2)
                for (_, lo, hi), (_, lo2, hi2) in zip(limits, other_limits, strict=True)):
            raise UnsupportedMoment("random sums over different ranges in one exponent")
        renames = zip(limits, other_limits, strict=True)
        body += other.xreplace({v2: v for (v, _, _), (v2, _, _) in renames})
    return limits, body


def _linear_entry(body: sp.Expr, base: sp.IndexedBase) -> tuple[sp.Indexed, sp.Expr]:
    """(x, c) with body = c·x for one entry x of ``base`` and c free of it."""
    entries = {x for x in body.atoms(sp.Indexed) if x.base == base}
    if len(entries) != 1:
        raise UnsupportedMoment(f"{body} holds several entries of {base}")
    entry = entries.pop()
    coefficient = sp.expand(body).coeff(entry)
    if sp.expand(body - coefficient * entry) != 0:
        raise UnsupportedMoment(f"{body} is not linear in {entry}")
    return entry, coefficient


def _entry_moment(indices: list[tuple], law: Law) -> sp.Expr:
    """E of a product of entries of one tensor: μ for one, μ² + σ² δ_IJ for two."""
    if len(indices) == 1:
        return law.mean
    if len(indices) == 2:
        same = sp.Mul(*(sp.KroneckerDelta(a, b) for a, b in zip(*indices, strict=True)))
        return law.mean**2 + law.variance * same
    raise UnsupportedMoment(f"a product of {len(indices)} entries of one tensor needs moments "
                            "beyond the second")


def _delta_powers_to_one(expr: sp.Expr) -> sp.Expr:
    """δ^n = δ for n ≥ 1 (δ is 0 or 1), which the sum normal form does not know."""
    return expr.replace(
        lambda e: isinstance(e, sp.Pow) and isinstance(e.base, sp.KroneckerDelta)
        and e.exp.is_Integer and e.exp > 0,
        lambda e: e.base)


# -- the routes -------------------------------------------------------------------------------

MOMENT_ALGEBRA = ("moment algebra (all sizes): linearity of expectation through the sums, "
                  "independence across entries and tensors, E x = {mean}, Var x = {variance} "
                  "(so E x_I x_J = μ² + σ² δ_IJ); holds for every law with this mean and "
                  "variance")


GENERATING_FUNCTION = ("moment algebra with the Gaussian moment generating function (all sizes): "
                       "linearity of expectation through the sums, independence across entries "
                       "and tensors, E exp(c x) = exp(μ c + σ² c²/2) for x ~ N({mean}, "
                       "{variance}); holds for this Gaussian law, the other inputs fixed")


def _uses_generating_function(claim: _Statistic, theorem: Theorem) -> bool:
    random = {t.base for t in claim.random_tensors(theorem)}
    return any(_holds_random(e, random) for e in theorem.expand(claim.statistic).atoms(sp.exp))


def prove_statistic(claim: _Statistic, theorem: Theorem, bound: int) -> ProofResult:
    law = claim.law
    try:
        moment = sp.expand(claim.moment(theorem), power_exp=False)
    except UnsupportedMoment as why:
        if law.finite:
            return prove_by_enumeration(claim, theorem, bound, str(why))
        return ProofResult(NOT_PROVED, f"moment algebra needs the first two moments only: {why}; "
                           "Monte Carlo evidence only")
    difference = _delta_powers_to_one(moment - theorem.expand(claim.value))
    left = residual(difference, [], [])
    if left == 0:
        if _uses_generating_function(claim, theorem):
            return ProofResult(PROVED, GENERATING_FUNCTION.format(mean=law.mean,
                                                                  variance=law.variance))
        return ProofResult(PROVED, MOMENT_ALGEBRA.format(mean=law.mean, variance=law.variance))
    counterexample = _counterexample(claim, theorem, moment)
    if counterexample is not None:
        return ProofResult(REFUTED, "moment algebra evaluated exactly at small sizes",
                           counterexample=counterexample, residual=str(left))
    largest = _largest_size_checked(claim, theorem, moment, bound)
    if largest:
        return ProofResult(PROVED_BOUNDED, f"moment algebra evaluated exactly for sizes <= "
                           f"{largest}", max_size=largest, residual=str(left))
    return ProofResult(NOT_PROVED, "moment algebra left a residual", residual=str(left))


def _instances(theorem: Theorem, largest: int) -> Iterator[tuple[dict[str, int], dict[str, int]]]:
    """Size assignments with every size <= largest and one of them equal to it, each with every
    value of the free indices."""
    probe = sp.Add(*(expr for _, expr in theorem.claim.expressions()))
    for sizes in size_assignments(theorem, largest):
        for values in index_assignments(probe, sizes):
            yield sizes, values


def at_sizes(expr: sp.Expr, sizes: dict[str, int], values: dict[str, int]) -> sp.Expr:
    """``expr`` at concrete sizes and free-index values, every sum written out (as the
    prover's ``instantiate``, but sizes become SymPy integers, so a bare size such as d_k
    stays an expression)."""
    labels = {i: sp.Integer(values[str(i.label)]) for i in free_indices(expr)}
    dims = {sp.Symbol(name, integer=True, positive=True): sp.Integer(n)
            for name, n in sizes.items()}
    return sp.sympify(expr).xreplace(labels).xreplace(dims).doit()


def _exact_at(theorem: Theorem, expr: sp.Expr, sizes: dict[str, int], values: dict[str, int]
              ) -> sp.Expr:
    return sp.nsimplify(sp.simplify(_delta_powers_to_one(at_sizes(expr, sizes, values))))


def _counterexample(claim: _Statistic, theorem: Theorem, moment: sp.Expr) -> dict | None:
    for largest in search_steps(theorem, 3):
        for sizes, values in _instances(theorem, largest):
            lhs = _exact_at(theorem, moment, sizes, values)
            rhs = _exact_at(theorem, theorem.expand(claim.value), sizes, values)
            point = _where_unequal(claim, theorem, sizes, lhs, rhs)
            if point is not None:
                fixed, lhs, rhs = point
                found = {"sizes": sizes, "indices": values, "law": claim.law.name,
                         "lhs": str(lhs), "rhs": str(rhs),
                         "lhs_minus_rhs": str(sp.simplify(lhs - rhs))}
                if fixed:
                    found["fixed"] = fixed
                enumerated = _enumerate(claim, theorem, sizes, values)
                if enumerated is not None:
                    found["enumerated"] = enumerated
                return found
    return None


def _where_unequal(claim: _Statistic, theorem: Theorem, sizes: dict[str, int], lhs: sp.Expr,
                   rhs: sp.Expr) -> tuple[dict[str, str], sp.Expr, sp.Expr] | None:
    """(the fixed inputs' values, lhs, rhs) at a point where lhs ≠ rhs, or None. Without fixed
    inputs both are numbers; with them, a nonzero difference is confirmed at exact structured
    values of the fixed inputs (50 digits), never taken from a failed simplification."""
    if sp.simplify(lhs - rhs) == 0:
        return None
    fixed_names = {t.name for t in theorem.tensors} - {t.name for t in
                                                       claim.random_tensors(theorem)}
    if not fixed_names and not theorem.scalars:
        return {}, lhs, rhs

    domains = {x.name: x.domain for x in theorem.inputs}
    for draw in structured_draws(theorem, sizes, seed=len(sizes)):
        point = {k: v for k, v in draw.items()
                 if (k[0] in fixed_names if isinstance(k, tuple) else True)}
        if not all(_allows(domains[k[0] if isinstance(k, tuple) else k.name], v)
                   for k, v in point.items()):
            continue  # a point outside the declared domains refutes nothing claimed
        at_lhs, at_rhs = substituted(lhs, point), substituted(rhs, point)
        difference = sp.N(at_lhs - at_rhs, 50)
        if difference.is_number and abs(difference) > 1e-30:
            used = {f"{k[0]}[{', '.join(map(str, k[1]))}]" if isinstance(k, tuple) else str(k):
                    str(v) for k, v in point.items()}
            return used, at_lhs, at_rhs
    return None


def _allows(domain: Domain, value: sp.Expr) -> bool:
    low, high = getattr(domain, "low", None), getattr(domain, "high", None)
    if low is None or high is None:
        return True
    return bool(sp.Rational(str(low)) <= value <= sp.Rational(str(high)))


def _largest_size_checked(claim: _Statistic, theorem: Theorem, moment: sp.Expr, bound: int
                          ) -> int:
    proved = 0
    for largest in size_steps(theorem, bound):
        for sizes, values in _instances(theorem, largest):
            lhs = _exact_at(theorem, moment, sizes, values)
            if sp.simplify(lhs - _exact_at(theorem, theorem.expand(claim.value), sizes,
                                           values)) != 0:
                return proved
        proved = largest
    return proved


def _enumerated_moment(claim: _Statistic, theorem: Theorem, sizes: dict[str, int],
                       values: dict[str, int]) -> tuple[sp.Expr, int] | None:
    """For a finite law, (the statistic's mean or variance over every pattern of the entries it
    uses, exactly; the number of patterns), or None when there are too many entries."""
    statistic = _exact_at(theorem, theorem.expand(claim.statistic), sizes, values)
    # by name: instantiating fixes the bases' shapes
    random = {t.name for t in claim.random_tensors(theorem)}
    entries = sorted((x for x in statistic.atoms(sp.Indexed) if str(x.base) in random), key=str)
    if len(entries) > ENUMERATION_LIMIT:
        return None
    spread = sp.sqrt(claim.law.variance)
    points = (claim.law.mean - spread, claim.law.mean + spread)  # each with probability 1/2
    outcomes = [statistic.xreplace(dict(zip(entries, pattern, strict=True)))
                for pattern in itertools.product(points, repeat=len(entries))]
    mean = sp.simplify(sp.Add(*outcomes) / len(outcomes))
    if isinstance(claim, Expectation):
        return mean, len(outcomes)
    return sp.simplify(sp.Add(*((o - mean) ** 2 for o in outcomes)) / len(outcomes)), len(outcomes)


def _enumerate(claim: _Statistic, theorem: Theorem, sizes: dict[str, int], values: dict[str, int]
               ) -> str | None:
    """The enumerated value as a sentence: an independent confirmation of the moment
    algebra's."""
    if not claim.law.finite:
        return None
    found = _enumerated_moment(claim, theorem, sizes, values)
    if found is None:
        return None
    what = "mean" if isinstance(claim, Expectation) else "variance"
    return f"{what} over all {found[1]} ±1 patterns = {found[0]}"


def prove_by_enumeration(claim: _Statistic, theorem: Theorem, bound: int, why: str
                         ) -> ProofResult:
    """A finite law whose statistic needs higher moments: every pattern of the entries at
    every size up to ``bound`` (while there are at most ``ENUMERATION_LIMIT`` entries)."""
    proved = 0
    for largest in size_steps(theorem, bound):
        for sizes, values in _instances(theorem, largest):
            found = _enumerated_moment(claim, theorem, sizes, values)
            if found is None:
                return _bounded_enumeration(proved, why)
            rhs = _exact_at(theorem, theorem.expand(claim.value), sizes, values)
            point = _where_unequal(claim, theorem, sizes, found[0], rhs)
            if point is not None:
                fixed, lhs, rhs = point
                counterexample = {"sizes": sizes, "indices": values, "law": claim.law.name,
                                  "lhs": str(lhs), "rhs": str(rhs),
                                  "lhs_minus_rhs": str(sp.simplify(lhs - rhs)),
                                  "enumerated": f"over all {found[1]} patterns",
                                  **({"fixed": fixed} if fixed else {})}
                return ProofResult(REFUTED, "exact enumeration of every ±1 pattern",
                                   counterexample=counterexample)
        proved = largest
    return _bounded_enumeration(proved, why)


def _bounded_enumeration(proved: int, why: str) -> ProofResult:
    if not proved:
        return ProofResult(NOT_PROVED, f"{why}; too many entries to enumerate: Monte Carlo "
                           "evidence only")
    return ProofResult(PROVED_BOUNDED, f"exact enumeration of every ±1 pattern for sizes <= "
                       f"{proved} (moment algebra: {why})", max_size=proved)
