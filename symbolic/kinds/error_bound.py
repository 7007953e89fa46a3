"""Floating-point error bounds: "the computed value of this expression, evaluated as written,
is within B of its exact value", proved for every size from a declared rounding model.

The rounding model (the standard one, Higham, *Accuracy and Stability of Numerical Algorithms*,
§2.2): every basic operation of the format is exact up to one factor (1 + δ), |δ| ≤ u, with u
the format's unit roundoff (``u`` below); exp is exact up to ``c_exp`` such factors (its
accuracy in units of u, declared per backend and format in ``numeric/kinds/error_bound.py`` and
checked there); inputs are numbers of the format; nothing overflows or underflows. A product of
k factors (1 + δ_i)^(±1) is 1 + θ_k with |θ_k| ≤ γ_k = k·u / (1 − k·u) (Higham's Lemma 3.1), so a
bound is a *count* of rounding errors, an expression in the sizes.

The symbolic route walks the expression as written and counts, for every size at once:

* an input entry, a maximum of inputs (``rowmax``) and a positive integer are exact;
* x − max_l x_l of inputs is one subtraction: its computed value is (x − m)(1 + δ), off by at
  most u·(max − min) = u·``spread``, an error that exp turns into a factor e^(±u·spread);
* exp(a) costs ``c_exp`` errors (and carries a's absolute error as that factor);
* a sum of n positive terms, added left to right, costs n − 1 errors on top of its terms'
  (each term's θ and e^(±·) bound the weighted mean of the terms' errors too);
* a product or quotient of m positive factors costs m − 1 errors on top of its factors'.

What it derives is |ŷ/y − 1| ≤ (1 + γ_k)·e^X − 1 for a count k and an exponent X; the claim
``ErrorBound(computed, count=K, exponent=X')`` is proved when K − k ≥ 0 and X' − X ≥ 0 for every
size from the declared minimum and every c_exp ≥ 1 (both polynomials with nonnegative
coefficients once every variable is written as its minimum plus a nonnegative one), which
holds wherever K·u < 1. ``FirstOrderErrorBound(computed, B)`` claims the first-order form
|ŷ/y − 1| ≤ B + O(u²) (the form published results take): proved when B − (k·u + X) ≥ 0 the same
way; its O(u²) remainder is not bounded, and the method says so.

A derived bound larger than the claimed one does not refute the claim (the derivation is an
upper bound); only the numeric route refutes, with an observed error above B.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import sympy as sp
from sympy.printing.str import StrPrinter

from ..route import (
    NOT_PROVED,
    PROVED,
    ClaimKind,
    OnlineSoftmax,
    ProofResult,
    ReduceMax,
    TheoremError,
    as_expression,
    free_indices,
    raised_latex,
)

if TYPE_CHECKING:
    from sympy.printing.latex import LatexPrinter

    from ..route import Theorem

RELATIVE_TO = ("value", "abs-scale", "absolute")
u = sp.Symbol("u", positive=True)  # the unit roundoff of the format evaluated in
c_exp = sp.Symbol("c_exp", integer=True, positive=True)  # exp's accuracy, in units of u
c_log = sp.Symbol("c_log", integer=True, positive=True)  # log's accuracy, relative to its value


class LogError(sp.Function):
    """λ_k = −log(1 − γ_k): how far log moves a value whose relative error is at most γ_k
    (|log(1 + θ)| ≤ −log(1 − |θ|)); it increases with k."""

    nargs = 1

    def _eval_rewrite_as_log(self, count: sp.Expr, **kwargs: Any) -> sp.Expr:
        return -sp.log(1 - gamma(count))

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        return raised_latex(rf"\lambda_{{{printer._print(self.args[0])}}}", exp,
                            parenthesized=True)


def log_error(count: sp.Expr) -> LogError:
    """λ_k = −log(1 − γ_k), the absolute error log makes of a value off by k roundings."""
    return LogError(sp.sympify(count))


def gamma(count: sp.Expr) -> sp.Expr:
    """γ_k = k·u / (1 − k·u): the bound on |θ_k| for k rounding errors (k·u < 1)."""
    return count * u / (1 - count * u)


def spread(function: sp.Expr, over: sp.Idx) -> sp.Expr:
    """max − min over ``over``: how far apart the entries of a row lie."""
    return (ReduceMax(function, (over, over.lower, over.upper))
            + ReduceMax(-function, (over, over.lower, over.upper)))


@dataclass(frozen=True)
class Relative:
    """|ŷ/y − 1| ≤ (1 + γ_count)·e^exponent − 1; ``positive``: y > 0 is known (an exp, a
    positive input, sums, products and quotients of such), which the sum rule needs."""

    count: sp.Expr
    exponent: sp.Expr = sp.S.Zero
    positive: bool = False


@dataclass(frozen=True)
class Absolute:
    """|ŷ − y| ≤ bound."""

    bound: sp.Expr


@dataclass(frozen=True)
class Scaled:
    """|ŷ − y| ≤ ((1 + γ_count)·e^exponent − 1)·A, A the abs-scale: the same expression with
    every signed input outside exp taken by its absolute value (Σ_j |t_j| for a sum), which a
    sum whose terms can cancel is measured against."""

    count: sp.Expr
    exponent: sp.Expr = sp.S.Zero


EXACT = Relative(sp.S.Zero)
EXACT_POSITIVE = Relative(sp.S.Zero, positive=True)


class UnsupportedOperation(TheoremError):
    """The expression has an operation the error analysis has no rule for."""


def derive(expr: sp.Expr, dims: dict[str, sp.Symbol]) -> Relative | Absolute | Scaled:
    """The error of ``expr`` evaluated as written, under the rounding model (module docstring)."""
    if isinstance(expr, (sp.Sum, ReduceMax, OnlineSoftmax)):
        _over_whole_ranges(expr)
    if isinstance(expr, sp.Indexed) or isinstance(expr, ReduceMax) and _of_inputs(expr):
        return EXACT_POSITIVE if expr.is_positive else EXACT
    if isinstance(expr, sp.Max) and all(isinstance(a, sp.Indexed) for a in expr.args):
        return EXACT_POSITIVE if expr.is_positive else EXACT  # a maximum is exact
    if expr.is_Integer and expr > 0:
        return EXACT_POSITIVE
    if expr.is_Integer:  # zero and the negative integers the statements use are exact
        return EXACT
    if expr.is_number and expr.is_positive:
        return Relative(sp.S.One, positive=True)  # a constant rounded once into the format
    if expr.is_number and expr.is_negative:
        return Relative(sp.S.One)
    if expr in dims.values():  # a size, rounded once into the format (bfloat16 holds 257 as 256)
        return Relative(sp.S.One, positive=True)
    if isinstance(expr, sp.Symbol) and expr not in (u, c_exp, c_log):  # a scalar input: exact
        return EXACT_POSITIVE if expr.is_positive else EXACT
    if isinstance(expr, sp.exp):
        return _exp(expr.args[0], dims)
    if isinstance(expr, OnlineSoftmax):
        return _online_softmax(expr, dims)
    if isinstance(expr, sp.log):
        return _log(expr, dims)
    if isinstance(expr, sp.Sum):
        return _sum(expr, dims)
    if isinstance(expr, sp.Mul):
        return _product(expr, dims)
    if isinstance(expr, sp.Pow) and expr.exp == -1:
        return _relative(expr.base, dims, expr)  # a divisor must not cancel
    if isinstance(expr, sp.Pow):
        return _power(expr, dims)
    if isinstance(expr, sp.Add):
        return _shift(expr) if _is_shift(expr) else _terms(expr, dims)
    raise UnsupportedOperation(
        f"no rounding rule for {type(expr).__name__} in {expr}: the error analysis knows inputs, "
        "rowmax of inputs, x − rowmax(x), exp, sums of positive terms, products and quotients")


def _over_whole_ranges(expr: sp.Expr) -> None:
    """A count is an expression in the sizes, and the as-written evaluation reads every sum and
    maximum over its index's whole range: limits that depend on an index (Σ_{j ≤ i}, a causal
    running sum, whose number of terms differs from entry to entry; a free index is an ``Idx``,
    a bound one renamed a ``Dummy``) have no rule here."""
    for limit in expr.limits:
        for bound in map(sp.sympify, limit[1:]):
            if bound.atoms(sp.Idx) or any(isinstance(s, sp.Dummy) for s in bound.free_symbols):
                raise UnsupportedOperation(
                    f"a sum or maximum whose limits depend on an index "
                    f"({', '.join(map(str, limit))}) in {expr}: the error analysis counts sums "
                    "over a whole range of sizes")


def _of_inputs(maximum: ReduceMax) -> bool:
    return all(isinstance(a, sp.Indexed) or a.is_number
               for a in sp.Add.make_args(sp.expand(maximum.function)))


def _exp(argument: sp.Expr, dims: dict[str, sp.Symbol]) -> Relative:
    error = derive(argument, dims)
    if isinstance(error, Relative) and error.count != 0:
        raise UnsupportedOperation(f"exp of a rounded value with relative error: {argument}")
    extra = error.bound if isinstance(error, Absolute) else sp.S.Zero
    return Relative(c_exp, extra, positive=True)


def _log(expr: sp.log, dims: dict[str, sp.Symbol]) -> Absolute:
    """log of a positive value off by (1 + θ_k)e^(±X): off by at most λ_k + X before log's own
    rounding, c_log·u relative to the result: (λ_k + X)(1 + c_log·u) + c_log·u·|log a|."""
    argument = _relative(expr.args[0], dims, expr)
    moved = LogError(argument.count) + argument.exponent
    return Absolute(moved * (1 + c_log * u) + c_log * u * sp.Abs(expr))


def _with_absolute(expr: sp.Add, errors: list[Relative | Absolute | Scaled]) -> Absolute:
    """a + b with a an exact input (a row maximum) and b off by an absolute error, added once:
    (e_a + e_b)(1 + u) + u·|a + b|."""
    if len(errors) != 2 or any(isinstance(e, Scaled) or isinstance(e, Relative) and e.count != 0
                               for e in errors):
        raise UnsupportedOperation(f"a sum with an absolute error other than exact + one value: "
                                   f"{expr}")
    moved = sum((e.bound for e in errors if isinstance(e, Absolute)), sp.S.Zero)
    return Absolute(moved * (1 + u) + u * sp.Abs(expr))


def _is_shift(expr: sp.Add) -> bool:
    """x − max(...) of inputs: a score minus a running or row maximum."""
    terms = sp.Add.make_args(expr)
    return len(terms) == 2 and any(isinstance(-t, (ReduceMax, sp.Max)) for t in terms)


def _shift(expr: sp.Add) -> Absolute:
    """x − max of inputs: one subtraction of exact operands, off by u·|x − max|, which is at
    most u·spread for a row maximum and u·|a − b| for x = a and max(a, b)."""
    terms = sp.Add.make_args(expr)
    maximum = next(-t for t in terms if isinstance(-t, (ReduceMax, sp.Max)))
    x = next(t for t in terms if t != -maximum)
    if not isinstance(x, sp.Indexed):
        raise UnsupportedOperation(f"a shift of a computed value: {expr}")
    if isinstance(maximum, ReduceMax):
        (index, _, _), = maximum.limits
        return Absolute(u * spread(maximum.function, index))
    others = [a for a in maximum.args if a != x]
    if len(maximum.args) != 2 or len(others) != 1:
        raise UnsupportedOperation(f"x − max(...) with x not one of two arguments: {expr}")
    return Absolute(u * sp.Abs(x - others[0]))


def _terms(expr: sp.Add, dims: dict[str, sp.Symbol]) -> Relative | Absolute | Scaled:
    """A sum written out term by term, added left to right: one error per addition."""
    errors = [derive(t, dims) for t in expr.args]
    if any(isinstance(e, Absolute) for e in errors):
        return _with_absolute(expr, errors)
    bounded = cast(list[Relative | Scaled], errors)  # none is Absolute: that returned above
    count = sp.Max(*(e.count for e in bounded)) + len(errors) - 1
    exponent = sp.Max(*(e.exponent for e in bounded))
    if all(isinstance(e, Relative) and e.positive for e in errors):
        return Relative(count, exponent, positive=True)
    return Scaled(count, exponent)


def _power(expr: sp.Pow, dims: dict[str, sp.Symbol]) -> Relative:
    """x^p for an integer p ≥ 2, as p − 1 products, and x^(−p) as one division more; √x and
    1/√x, IEEE 754's correctly rounded square root (one error; √ halves the argument's error,
    counted here in full) and a division."""
    base, power = expr.base, expr.exp
    if power.is_Integer and power >= 2:
        error = derive(base, dims)
        if not isinstance(error, Relative):
            raise UnsupportedOperation(f"a power of a value that can cancel: {expr}")
        return Relative(power * error.count + power - 1, power * error.exponent,
                        positive=error.positive or power % 2 == 0)
    if power.is_Integer and power <= -2:  # 1 / (x·…·x): |p| − 1 products and a division
        error = _relative(base, dims, expr)
        return Relative(-power * error.count - power, -power * error.exponent, positive=True)
    if power in (sp.S.Half, -sp.S.Half):
        error = _relative(base, dims, expr)
        return Relative(error.count + (1 if power > 0 else 2), error.exponent, positive=True)
    raise UnsupportedOperation(f"no rounding rule for the power {power} in {expr}")


def _sum(expr: sp.Sum, dims: dict[str, sp.Symbol]) -> Relative | Scaled:
    """n terms added left to right: n − 1 errors. Positive terms keep a relative bound; terms
    of either sign can cancel, and their sum is bounded against its abs-scale Σ|t_j|."""
    term = derive(expr.function, dims)
    if isinstance(term, Absolute):
        raise UnsupportedOperation(f"a sum of terms with an absolute error: {expr}")
    # over several indices, the first innermost (SymPy's order): n_m − 1 additions for each
    count, exponent = term.count, term.exponent
    for index, low, high in expr.limits:
        count += (high - low + 1) - 1
        if free_indices(exponent) & {index}:  # each term its own exponent: the largest bounds
            exponent = ReduceMax(exponent, (index, low, high))
    if isinstance(term, Relative) and term.positive:
        return Relative(count, exponent, positive=True)
    return Scaled(count, exponent)


def _product(expr: sp.Mul, dims: dict[str, sp.Symbol]) -> Relative | Absolute | Scaled:
    """m factors multiplied and divided as written: m − 1 errors. A product of relative errors
    is relative whatever the signs; one factor bounded against its abs-scale makes the product
    so bounded (the other factors' magnitudes scale it)."""
    coefficient, rest = expr.as_coeff_Mul()
    if coefficient == -1:  # a negation is exact: the error of the rest, its sign unknown
        error = derive(rest, dims)
        return Relative(error.count, error.exponent) if isinstance(error, Relative) else error
    derived = [derive(f, dims) for f in expr.args]
    if any(isinstance(f, Absolute) for f in derived):
        raise UnsupportedOperation(f"a product of a value with an absolute error: {expr}")
    factors = cast(list[Relative | Scaled], derived)  # none is Absolute: refused above
    count = sum((f.count for f in factors), sp.S.Zero) + len(factors) - 1
    exponent = sum((f.exponent for f in factors), sp.S.Zero)
    scaled = [f for f in factors if isinstance(f, Scaled)]
    if len(scaled) > 1:
        raise UnsupportedOperation(f"a product of two sums that can cancel: {expr}")
    if scaled:  # (a divisor that can cancel was refused by the quotient rule already)
        return Scaled(count, exponent)
    relative = cast(list[Relative], factors)  # none is Scaled: that returned above
    return Relative(count, exponent, positive=all(f.positive for f in relative))


def _relative(expr: sp.Expr, dims: dict[str, sp.Symbol], whole: sp.Expr) -> Relative:
    """``expr``'s error, which must be relative to a positive value: a sum of terms of either
    sign can cancel, and then no relative bound holds."""
    error = derive(expr, dims)
    if not isinstance(error, Relative) or not error.positive:
        raise UnsupportedOperation(f"{expr} in {whole} can be negative or cancel: the relative "
                                   "rules apply to positive quantities only")
    return error


def blocks(length: sp.Expr, block: sp.Expr) -> sp.Expr:
    """T = ⌈n / b⌉, the number of blocks of b keys (the last may hold fewer)."""
    return sp.ceiling(length / block)


def _online_softmax(expr: OnlineSoftmax, dims: dict[str, sp.Symbol]) -> Relative | Scaled:
    """The block-wise algorithm (``OnlineSoftmax``), by induction on the number of blocks t.

    Invariant after t ≥ 1 blocks: the running sum is Σ_j w_j(1 + θ_j)e^(η_j) over the keys
    seen, w_j = e^(s_j − m_t), |θ_j| ≤ γ_K(t), |η_j| ≤ u(m_t − s_j), with
    K(t) = k_term + (b − 1) + (t − 1)(c_exp + 2), k_term a term's own count (c_exp for the sum,
    c_exp + k_v + 1 for the output's w_j·v_j). Base: the first block's ≤ b terms added left to
    right (ℓ_0 = 0 adds nothing: 0·x and 0 + x are exact). Step: the rescaling
    α = exp((m_t − m_(t+1))(1 + δ)) costs c_exp and moves η by u(m_(t+1) − m_t), its product and
    the addition of the new block's partial sum one each; the new block's terms carry
    k_term + b. With m_t nondecreasing the η's telescope to u(m_T − s_j) ≤ u·spread, and the
    division at the end adds one error and the sum's η: the bound of one division of the whole
    sums, with a count that grows with b + T instead of n."""
    (index, lower, upper), = expr.limits
    score = derive(expr.score, dims)
    if not (isinstance(score, Relative) and score.count == 0):
        raise UnsupportedOperation(f"block-wise softmax of computed scores: {expr.score}")
    value = derive(expr.value, dims)
    if isinstance(value, Absolute):
        raise UnsupportedOperation(f"block-wise softmax of values with an absolute error: {expr}")
    b, t = expr.block, sp.Symbol("t", integer=True, positive=True)

    def invariant(term_count: sp.Expr, after: sp.Expr) -> sp.Expr:
        return term_count + (b - 1) + (after - 1) * (c_exp + 2)

    for term_count in (c_exp, c_exp + value.count + 1):
        steps = (invariant(term_count, t + 1) - invariant(term_count, t) - (c_exp + 2),
                 invariant(term_count, t + 1) - (term_count + b))
        floors = {t: 1, b: 1, c_exp: 1, **{s: 0 for s in value.count.free_symbols}}
        if not all(nonnegative(step, floors) for step in steps):  # the induction step
            raise UnsupportedOperation(f"the block-wise invariant does not carry over: {expr}")
    count_blocks = blocks(upper - lower + 1, b)
    count = (invariant(c_exp, count_blocks) + invariant(c_exp + value.count + 1, count_blocks)
             + 1)
    exponent = 2 * u * spread(expr.score, index) + value.exponent
    if isinstance(value, Relative) and value.positive:
        return Relative(count, exponent, positive=True)
    return Scaled(count, exponent)


# -- proving K ≥ k: a polynomial with nonnegative coefficients -------------------------------


def nonnegative(expr: sp.Expr, floors: dict[sp.Symbol, int]) -> bool:
    """Whether ``expr`` ≥ 0 for every value of its symbols at or above their floors: each symbol
    s becomes floor + t with t ≥ 0 and every coefficient of the expanded polynomial in the t's
    must be ≥ 0 (sufficient, not necessary: it may miss a proof, never fake one)."""
    if expr.atoms(ReduceMax):  # a maximum outside a spread: no sign is known
        return False
    shifted = {s: floors.get(s, 0) + sp.Dummy(f"t_{s}", nonnegative=True)
               for s in expr.free_symbols}
    expanded = sp.expand(expr.xreplace(shifted))
    variables = [v for v in shifted.values() if isinstance(v, sp.Add)]
    dummies = sorted({d for v in variables for d in v.free_symbols if isinstance(d, sp.Dummy)},
                     key=str)
    if not expanded.free_symbols <= set(dummies):
        return False
    poly = sp.Poly(expanded, *dummies) if dummies else None
    coefficients = poly.coeffs() if poly is not None else [expanded]
    return all(c.is_number and c >= 0 for c in coefficients)


@dataclass(frozen=True)
class _BoundClaim(ClaimKind):
    computed: sp.Expr

    kind = "error bound"
    refutes_exactly = False  # a derived bound larger than the claim's refutes nothing
    numeric_draws = ("sizes up to the declared maximum, scores Gaussian, spread out, tied and "
                     "driven toward the bound (hypothesis.target on observed/B); inputs rounded "
                     "into the format; the exact value in a wider format")

    if TYPE_CHECKING:  # every subclass has it: a field, or (AbsoluteErrorBound) a constant
        @property
        def relative_to(self) -> str: ...

    def _derived(self, theorem: Theorem) -> Relative | Scaled | Absolute:
        dims = {d.name: d.symbol for d in theorem.dims}
        error = derive(theorem.expand_definitions(self.computed), dims)
        if (self.relative_to == "absolute") != isinstance(error, Absolute):
            raise UnsupportedOperation(
                "the computed value has an absolute error bound (it passes through log): state "
                "it with relative_to=\"absolute\"" if isinstance(error, Absolute) else
                "an absolute bound is stated for values that pass through log; this one has a "
                "relative bound")
        if self.relative_to == "value" and isinstance(error, Scaled):
            raise UnsupportedOperation(
                "the computed value is a sum whose terms can cancel, so no bound relative to it "
                "holds: state it relative to its abs-scale (relative_to=\"abs-scale\")")
        return error

    def _floors(self, theorem: Theorem, expr: sp.Expr) -> dict[sp.Symbol, int]:
        floors = {d.symbol: d.sizes.low for d in theorem.dims}
        floors[c_exp] = 1
        floors[c_log] = 1
        floors[u] = 0
        return {s: floors.get(s, 0) for s in expr.free_symbols}

    def validate(self, theorem: Theorem, where: str) -> None:
        try:
            self._derived(theorem)
        except TheoremError as error:
            raise TheoremError(f"{where}: {error}") from None


def _spreads_as_symbols(*exprs: sp.Expr) -> list[sp.Expr]:
    """The expressions with each spread, max f + max(−f) over a row, as one nonnegative symbol
    (the same for every expression), whatever the bound index is called; a maximum left over
    outside a spread stays, and then no comparison is proved."""
    canonical = [_canonical_maxima(sp.expand(e)) for e in exprs]
    maxima = set().union(*(e.atoms(ReduceMax) for e in canonical))
    replacements: dict[sp.Expr, sp.Expr] = {}
    for maximum in sorted(maxima, key=str):
        negated = ReduceMax(-maximum.function, *maximum.limits)
        if negated in maxima and negated not in replacements and maximum not in replacements:
            spread_symbol = sp.Symbol(f"R_{len(replacements)}", nonnegative=True)
            replacements[negated] = spread_symbol - maximum
    # a distance |a − b| between inputs is a nonnegative number too
    distances = set().union(*(e.atoms(sp.Abs) for e in canonical))
    replacements.update({d: sp.Symbol(f"D_{n}", nonnegative=True)
                         for n, d in enumerate(sorted(distances, key=str))})
    # a count of blocks ⌈n / b⌉ of positive sizes is at least 1: 1 + a nonnegative number
    counts = set().union(*(e.atoms(sp.ceiling) for e in canonical))
    replacements.update({c: 1 + sp.Symbol(f"T_{n}", nonnegative=True)
                         for n, c in enumerate(sorted(counts, key=str)) if c.args[0].is_positive})
    return [sp.expand(e.xreplace(replacements)) for e in canonical]


def readable(expr: sp.Expr) -> str:
    """An expression of the analysis as a reader writes it: spreads and λ's by name, maxima,
    sums and absolute values in their usual signs, nothing expanded inside them."""
    expr = _canonical_maxima(expr)
    for maximum in sorted(expr.atoms(ReduceMax), key=str):
        if maximum.function.could_extract_minus_sign():
            continue
        negated = ReduceMax(-maximum.function, *maximum.limits)
        if expr.has(negated):
            name = sp.Symbol(f"spread({_Readable().doprint(maximum.function)})")
            expr = expr.xreplace({negated: name - maximum})
    # the canonical bound index of a maximum reads as l
    return re.sub(r"\b_l(\d*)\b", r"l\1", _Readable().doprint(sp.factor_terms(expr)))


class _Readable(StrPrinter):
    """Prints λ_k, max_l f, Σ_k f and |y| as a reader writes them."""

    def _print_LogError(self, expr: LogError) -> str:
        return f"λ_({self._print(expr.args[0])})"

    def _print_ReduceMax(self, expr: ReduceMax) -> str:
        (index, _, _), = expr.limits
        name = self._print(index)
        return f"max_{name.lstrip('_')} {self.parenthesize(expr.function, 60)}"

    def _print_Sum(self, expr: sp.Sum) -> str:
        (index, _, _), = expr.limits
        return f"Σ_{self._print(index)} {self.parenthesize(expr.function, 60)}"

    def _print_Abs(self, expr: sp.Abs) -> str:
        return f"|{self._print(expr.args[0])}|"


def _canonical_maxima(expr: sp.Expr, depth: int = 0) -> sp.Expr:
    """Every maximum's bound index renamed to a fixed name per nesting depth (_l, _l1, ...), so
    that two maxima of the same function over differently named indices compare equal."""
    if isinstance(expr, ReduceMax):
        (variable, low, high), = expr.limits
        fixed = sp.Symbol("_l" + (str(depth) if depth else ""), integer=True)
        inner = _canonical_maxima(expr.function.xreplace({variable: fixed}), depth + 1)
        return ReduceMax(inner, (fixed, low, high))
    if not expr.args or not expr.has(ReduceMax):
        return expr
    return expr.func(*(_canonical_maxima(a, depth) for a in expr.args))


@dataclass(frozen=True)
class ErrorBound(_BoundClaim):
    """``computed``, evaluated as written in a format with unit roundoff u, has relative error
    at most (1 + γ_count)·e^exponent − 1 in every entry (rigorous, every size with count·u < 1).
    ``count`` and ``exponent`` may use the sizes, ``c_exp``, ``u`` and ``spread(...)``."""

    count: sp.Expr = sp.S.Zero
    exponent: sp.Expr = sp.S.Zero
    # "value": |ŷ/y − 1| ≤ B; "abs-scale": |ŷ − y| ≤ B·A, A the abs-scale (``Scaled``), for a
    # value whose terms can cancel (an attention output over signed values)
    relative_to: str = "value"

    relation = r"\leq"

    def __post_init__(self) -> None:
        for name in ("computed", "count", "exponent"):
            object.__setattr__(self, name, as_expression(getattr(self, name),
                                                         f"ErrorBound: {name}"))
        if self.relative_to not in RELATIVE_TO:
            raise TheoremError(f"ErrorBound: relative_to must be one of {RELATIVE_TO}, got "
                               f"{self.relative_to!r}")

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("computed value", self.computed),)

    @property
    def bound(self) -> sp.Expr:
        return (1 + gamma(self.count)) * sp.exp(self.exponent) - 1

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        bound = (rf"\left(1 + \gamma_{{{latex(self.count)}}}\right)"
                 rf"e^{{{latex(self.exponent)}}} - 1")
        y = latex(self.computed)
        if self.relative_to == "abs-scale":
            return (rf"\left|\mathrm{{fl}}({y}) - {y}\right| \leq \left({bound}\right)"
                    rf"\,\mathrm{{abs}}({y})")
        return rf"\left|\frac{{\mathrm{{fl}}({y})}}{{{y}}} - 1\right| \leq {bound}"

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        # relative to the value or its abs-scale: _derived returns no absolute error (it raises)
        derived = cast(Relative | Scaled, self._derived(theorem))
        count_gap, exponent_gap = _spreads_as_symbols(self.count - derived.count,
                                                      self.exponent - derived.exponent)
        floors = self._floors(theorem, count_gap + exponent_gap)
        shown = (f"derived (1 + γ_({readable(derived.count)}))·e^({readable(derived.exponent)})"
                 " − 1")
        if nonnegative(count_gap, floors) and nonnegative(exponent_gap, floors):
            return ProofResult(PROVED, f"running error analysis (all sizes with count·u < 1): "
                               f"{shown}; the claimed count and exponent are at least as large")
        return ProofResult(NOT_PROVED, f"running error analysis: {shown}, not shown to be at most "
                           "the claimed bound; numeric evidence only")


@dataclass(frozen=True)
class FirstOrderErrorBound(_BoundClaim):
    """``computed``, evaluated as written, has relative error at most ``bound`` + O(u²) in every
    entry: the first-order form of published bounds; its O(u²) remainder is not bounded."""

    bound: sp.Expr = sp.S.Zero
    # "value": |ŷ/y − 1| ≤ B + O(u²); "absolute": |ŷ − y| ≤ B + O(u²) (through log)
    relative_to: str = "value"

    relation = r"\leq"

    def __post_init__(self) -> None:
        for name in ("computed", "bound"):
            object.__setattr__(self, name, as_expression(getattr(self, name),
                                                         f"FirstOrderErrorBound: {name}"))
        if self.relative_to not in ("value", "absolute"):
            raise TheoremError("FirstOrderErrorBound: relative_to must be 'value' or "
                               f"'absolute', got {self.relative_to!r}")

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("computed value", self.computed),)

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        y = latex(self.computed)
        if self.relative_to == "absolute":
            return rf"\left|\mathrm{{fl}}({y}) - {y}\right| \leq {latex(self.bound)} + O(u^2)"
        return (rf"\left|\frac{{\mathrm{{fl}}({y})}}{{{y}}}"
                rf" - 1\right| \leq {latex(self.bound)} + O(u^2)")

    def first_order(self, theorem: Theorem) -> sp.Expr:
        """The derived bound's first-order part in u."""
        derived = self._derived(theorem)
        if isinstance(derived, Absolute):
            return first_order_part(derived.bound)
        return derived.count * u + derived.exponent

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        first_order = self.first_order(theorem)
        gap, = _spreads_as_symbols(sp.expand((self.bound - first_order) / u))
        floors = self._floors(theorem, gap)
        shown = f"derived first-order bound {readable(first_order)}"
        if nonnegative(gap, floors):
            return ProofResult(PROVED, f"running error analysis, first order (all sizes): "
                               f"{shown} is at most the claimed one; O(u²) not bounded")
        return ProofResult(NOT_PROVED, f"running error analysis, first order: {shown}, not shown "
                           "to be at most the claimed bound; numeric evidence only")


def first_order_part(bound: sp.Expr) -> sp.Expr:
    """An absolute bound's terms of first order in u: λ_k is k·u to first order."""
    linear = sp.expand(bound.replace(LogError, lambda count: count * u))
    return sp.Add(*(t for t in sp.Add.make_args(linear) if sp.degree(t, u) <= 1))


def absolute_bound_holds(claimed: sp.Expr, derived: sp.Expr, floors: dict[sp.Symbol, int]
                         ) -> bool:
    """claimed ≥ derived for every value: data terms (|y|, spreads) become nonnegative symbols,
    λ's become one nonnegative symbol, or two with the larger count's the smaller's plus a
    nonnegative one (λ increases with k), and the difference must then have nonnegative
    coefficients."""
    gap, = _spreads_as_symbols(claimed - derived)
    logs = sorted(gap.atoms(LogError), key=str)
    if len(logs) > 2:
        return False
    if len(logs) == 2:
        first, second = logs
        counts = (first.args[0] - second.args[0], second.args[0] - first.args[0])
        if nonnegative(counts[0], floors):
            big, small = first, second
        elif nonnegative(counts[1], floors):
            big, small = second, first
        else:
            return False
        lam, more = sp.Symbol("L", nonnegative=True), sp.Symbol("L_more", nonnegative=True)
        gap = gap.xreplace({small: lam, big: lam + more})
    elif logs:
        gap = gap.xreplace({logs[0]: sp.Symbol("L", nonnegative=True)})
    return nonnegative(sp.expand(gap), floors)


@dataclass(frozen=True)
class AbsoluteErrorBound(_BoundClaim):
    """``computed``, evaluated as written, is within ``bound`` of its exact value in every entry
    (rigorous): the form of a value that passes through log, such as log-sum-exp. ``bound`` may
    use the sizes, ``u``, ``c_exp``, ``c_log``, ``log_error(k)``, ``spread(...)`` and |y|
    (``sp.Abs(computed)``)."""

    bound: sp.Expr = sp.S.Zero

    relation = r"\leq"
    relative_to = "absolute"

    def __post_init__(self) -> None:
        for name in ("computed", "bound"):
            object.__setattr__(self, name, as_expression(getattr(self, name),
                                                         f"AbsoluteErrorBound: {name}"))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("computed value", self.computed),)

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        y = latex(self.computed)
        return rf"\left|\mathrm{{fl}}({y}) - {y}\right| \leq {latex(self.bound)}"

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        # relative_to is "absolute": _derived returns an absolute error or raises
        derived = cast(Absolute, self._derived(theorem))
        floors = self._floors(theorem, self.bound - derived.bound)
        shown = f"derived |ŷ − y| ≤ {readable(derived.bound)}"
        if absolute_bound_holds(self.bound, derived.bound, floors):
            return ProofResult(PROVED, f"running error analysis (all sizes with 2·count·u < 1): "
                               f"{shown}; the claimed bound is at least as large")
        return ProofResult(NOT_PROVED, f"running error analysis: {shown}, not shown to be at most "
                           "the claimed bound; numeric evidence only")
