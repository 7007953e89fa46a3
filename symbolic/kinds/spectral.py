"""Spectral claims: relations between the extreme singular values and condition numbers of
matrices written as index expressions.

``singular_max(A, r, c)`` and ``singular_min(A, r, c)`` are the largest and the smallest singular
value of the matrix A whose rows run over ``r`` and columns over ``c``, and ``cond(A, r, c)`` its
condition number κ(A) = σ_max(A) / σ_min(A). The smallest singular value is taken over the
columns, σ_min(A) = min_{‖x‖ = 1} ‖Ax‖ (x over the columns): it is 0, and κ(A) = ∞, when A has
fewer rows than columns or is rank deficient (A = 0 included). This is the condition number of
least squares: for A of full column rank it is σ_1/σ_n, and it makes κ(XᵀX) = κ(X)² hold for every
shape. ``Spectral(lhs, relation, rhs)`` claims lhs = rhs, lhs ≤ rhs or lhs < rhs, for every
value of the inputs, where either side is an expression in these terms and in scalar inputs
(sums, products, integer and half-integer powers), κ = ∞ compared as in the extended reals.

Symbolic route: each term is reduced to symbols by what the matrix is, after its definitions
are expanded:

* c·I (c free of indices and tensors): every singular value is |c|;
* a Gram matrix c·Σ_k F_ka F_kb (c ≥ 0), plus d·I (d ≥ 0): symmetric positive semi-definite,
  so its singular values are its eigenvalues, c·σ_i(F)² + d; its extreme ones are
  c·σ_max(F)² + d and c·σ_min(F)² + d (σ_min(F) over F's columns, so FᵀF is singular exactly
  when σ_min(F) = 0);
* any other matrix X: two symbols 0 ≤ m_X ≤ M_X, its σ_min and σ_max (the same X, written
  alike, gets the same symbols).

The claim then reads as a statement about rational functions of those symbols and the scalar
inputs. It is proved for every value of them in two kinds of region: every m_X > 0 (an identity
by cancellation; an inequality when, with M_X = m_X + t_X, rhs − lhs is a quotient of polynomials
with nonnegative coefficients in variables that are positive or nonnegative), and each set of
m_X = 0 (the condition numbers whose smallest singular value then vanishes are ∞, the others
finite, compared in the extended reals). Both regions together are every matrix: "proved (all
sizes)". A matrix it cannot reduce enters as its own symbols, which proves only what holds for
every pair m ≤ M.

Exact refutation: at sizes 1, 2, 3 with the structured rational draws, each matrix is formed
exactly, its extreme singular values are the square roots of the extreme eigenvalues of AᵀA (or
AAᵀ for a wide A, whose σ_min is 0) from the exact characteristic polynomial, and the two sides
are compared at 50 digits (∞ exactly where σ_min is exactly 0).
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
    REFUTED,
    STRUCTURED_PATTERNS,
    ClaimKind,
    ProofResult,
    TheoremError,
    free_indices,
    instantiate,
    search_steps,
    small_sizes,
    structured_draws,
)
from .linalg import check_matrix_indices, gram_factor

if TYPE_CHECKING:
    from sympy.printing.latex import LatexPrinter

    from ..route import Theorem
    from .linalg import GramFactor

RELATIONS = ("=", "<=", "<")
SEARCH_SIZES = 3
SEARCH_TRIES = 2 * len(STRUCTURED_PATTERNS)
# a difference below this (at 50 digits) is no counterexample
MARGIN = sp.Float("1e-30", 50)


# -- the terms ---------------------------------------------------------------------------------


class SpectralTerm(sp.Function):
    """A spectral quantity of the matrix ``args[0]`` over rows ``args[1]``, columns ``args[2]``;
    unevaluated: only the spectral claim's routes give it a value."""

    nargs = 3
    symbol_latex = ""

    @classmethod
    def eval(cls, matrix: sp.Expr, row: sp.Idx, column: sp.Idx) -> None:
        return None

    @property
    def matrix(self) -> sp.Expr:
        return self.args[0]

    @property
    def row(self) -> sp.Idx:
        return self.args[1]

    @property
    def column(self) -> sp.Idx:
        return self.args[2]

    def _eval_is_real(self) -> bool:
        return True

    def _eval_is_nonnegative(self) -> bool:
        return True

    def _latex(self, printer: LatexPrinter, exp: str | None = None) -> str:
        matrix = self.matrix
        if isinstance(matrix, sp.Indexed) and matrix.indices == (self.row, self.column):
            shown = printer._print(matrix.base.label)  # the whole matrix: its name
        else:
            r, c = printer._print(self.row), printer._print(self.column)
            shown = rf"\left[{printer._print(matrix)}\right]_{{{r} {c}}}"
        text = rf"{self.symbol_latex}\left({shown}\right)"
        return text if exp is None else rf"{text}^{{{exp}}}"


class SingularMax(SpectralTerm):
    """σ_max(A), the largest singular value (the spectral norm ‖A‖₂)."""

    symbol_latex = r"\sigma_{\max}"


class SingularMin(SpectralTerm):
    """σ_min(A) = min over unit x of ‖Ax‖, x over the columns (0 for a wide matrix)."""

    symbol_latex = r"\sigma_{\min}"


class ConditionNumber(SpectralTerm):
    """κ(A) = σ_max(A) / σ_min(A), ∞ where σ_min(A) = 0."""

    symbol_latex = r"\kappa"

    def _eval_is_positive(self) -> bool:
        return True


def singular_max(matrix: sp.Expr, row: sp.Idx, column: sp.Idx) -> SingularMax:
    """The largest singular value of the matrix ``matrix`` over (``row``, ``column``)."""
    return SingularMax(matrix, row, column)


def singular_min(matrix: sp.Expr, row: sp.Idx, column: sp.Idx) -> SingularMin:
    """The smallest singular value over the columns (0 when there are fewer rows)."""
    return SingularMin(matrix, row, column)


def cond(matrix: sp.Expr, row: sp.Idx, column: sp.Idx) -> ConditionNumber:
    """The condition number σ_max/σ_min of ``matrix`` over (``row``, ``column``)."""
    return ConditionNumber(matrix, row, column)


def spectral_terms(expr: sp.Expr) -> list[SpectralTerm]:
    """The spectral terms of ``expr``, in a fixed order."""
    return sorted(sp.sympify(expr).atoms(SpectralTerm), key=sp.default_sort_key)


def _dimension(index: sp.Idx) -> sp.Expr:
    return index.upper + 1


# -- the statement -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Spectral(ClaimKind):
    """``lhs`` ``relation`` ``rhs`` ("=", "<=" or "<") for every value of the inputs, the sides
    written in ``singular_max``, ``singular_min``, ``cond`` and scalar inputs."""

    lhs: sp.Expr
    relation_text: str
    rhs: sp.Expr

    kind = "spectral"
    numeric_formats = ("float64", "float32")  # the backends' SVDs take no float16 or bfloat16
    measures_rounding = False  # judged by intervals around each singular value, not in ulps
    numeric_draws = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "lhs", sp.sympify(self.lhs))
        object.__setattr__(self, "rhs", sp.sympify(self.rhs))

    @property
    def relation(self) -> str:
        return {"=": "=", "<=": r"\leq", "<": "<"}.get(self.relation_text, "=")

    def terms(self) -> list[SpectralTerm]:
        return spectral_terms(self.lhs + self.rhs)

    def scalar_part(self) -> sp.Expr:
        """The sides with every spectral term put to 1: what is left are scalars and numbers."""
        ones = dict.fromkeys(self.terms(), sp.Integer(1))
        return self.lhs.xreplace(ones) + self.rhs.xreplace(ones)

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        found = [(f"matrix of {type(t).__name__}", t.matrix) for t in self.terms()]
        return (*found, ("scalars of the sides", self.scalar_part()))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return f"{latex(self.lhs)} {self.relation} {latex(self.rhs)}"

    def validate(self, theorem: Theorem, where: str) -> None:
        if self.relation_text not in RELATIONS:
            raise TheoremError(f"{where}: Spectral's relation must be one of {RELATIONS}, got "
                               f"{self.relation_text!r}")
        terms = self.terms()
        if not terms:
            raise TheoremError(f"{where}: a spectral claim names singular_max, singular_min or "
                               "cond of a matrix")
        for term in terms:
            check_matrix_indices(where, type(term).__name__, term.matrix, term.row, term.column)
            extra = free_indices(term.matrix) - {term.row, term.column}
            if extra:
                raise TheoremError(f"{where}: the matrix {term.matrix} has free indices "
                                   f"{sorted(map(str, extra))} beyond its row and column")
        for side in (self.lhs, self.rhs):
            _check_arithmetic(side, where)

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        return prove_spectral(self, theorem)


def _check_arithmetic(expr: sp.Expr, where: str) -> None:
    """Sides are sums, products and powers of terms, scalars and numbers (the numeric route
    evaluates exactly these with intervals)."""
    if isinstance(expr, (SpectralTerm, sp.Symbol, sp.Number)) or expr in (sp.oo,):
        return
    if isinstance(expr, sp.Pow):
        if not (expr.exp.is_Integer or (expr.exp.is_Rational and expr.exp.q == 2)):
            raise TheoremError(f"{where}: a spectral side raises to {expr.exp}; integer and "
                               "half-integer powers only")
        _check_arithmetic(expr.base, where)
        return
    if isinstance(expr, (sp.Add, sp.Mul)):
        for arg in expr.args:
            _check_arithmetic(arg, where)
        return
    raise TheoremError(f"{where}: a spectral side holds {type(expr).__name__} ({expr}); write it "
                       "with +, ×, powers, scalars and spectral terms")


# -- symbolic route: reducing each term to symbols ----------------------------------------------


@dataclass
class _Base:
    """An irreducible matrix: its σ_min and σ_max symbols, m ≤ M."""

    key: str
    small: sp.Symbol
    large: sp.Symbol
    gap: sp.Symbol  # M = m + gap, gap ≥ 0
    shown: str  # the matrix, its row index written r and its column index c


@dataclass
class _Reduced:
    """A matrix's extreme singular values in the base symbols, and how that was shown."""

    large: sp.Expr
    small: sp.Expr
    how: str


class _Reducer:
    def __init__(self, theorem: Theorem) -> None:
        self.theorem = theorem
        self.bases: dict[str, _Base] = {}

    def base(self, matrix: sp.Expr, row: sp.Expr, column: sp.Expr) -> _Base:
        canonical = matrix.xreplace({row: sp.Symbol("_row"), column: sp.Symbol("_column")})
        key = sp.srepr(canonical)
        if key not in self.bases:
            n = len(self.bases) + 1
            shown = str(canonical.xreplace({sp.Symbol("_row"): sp.Symbol("r"),
                                            sp.Symbol("_column"): sp.Symbol("c")}))
            self.bases[key] = _Base(key, sp.Symbol(f"_sigma_min_{n}", positive=True),
                                    sp.Symbol(f"_sigma_max_{n}", positive=True),
                                    sp.Symbol(f"_gap_{n}", nonnegative=True), shown)
        return self.bases[key]

    def reduce(self, matrix: sp.Expr, row: sp.Idx, column: sp.Idx) -> _Reduced:
        expanded = self.theorem.expand(matrix)
        identity, gram, rest = _split_terms(expanded, row, column)
        if not rest and gram is None and identity != 0:
            value = sp.Abs(identity)
            return _Reduced(value, value, f"{identity} times the identity")
        if not rest and gram is not None and _nonnegative(identity):
            coefficient, factor, limit = gram
            if factor is not None:
                assert limit is not None  # gram_factor gives F together with the limit of its sum
                inner = self.reduce_factor(factor, limit[0], row)
                shift = "" if identity == 0 else f" plus {identity} times the identity"
                return _Reduced(coefficient * inner.large**2 + identity,
                                coefficient * inner.small**2 + identity,
                                f"{coefficient} times the Gram matrix F^T F{shift}, F = "
                                f"{inner.how}: symmetric positive semi-definite, so its singular "
                                "values are c*sigma_i(F)^2 + d")
        base = self.base(expanded, row, column)
        return _Reduced(base.large, base.small, f"matrix {base.shown}")

    def reduce_factor(self, factor: sp.Expr, row: sp.Expr, column: sp.Expr) -> _Reduced:
        """F over (row k, column a), never reduced further: its own symbols."""
        base = self.base(factor, row, column)
        return _Reduced(base.large, base.small, base.shown)


def _split_terms(expanded: sp.Expr, row: sp.Idx, column: sp.Idx
                 ) -> tuple[sp.Expr, GramFactor | None, list[sp.Expr]]:
    """(coefficient of the identity, the single Gram term (c, F, limit) or None, other terms)."""
    identity = sp.Integer(0)
    gram: GramFactor | None = None
    rest: list[sp.Expr] = []
    for term in sp.Add.make_args(sp.expand(expanded, deep=False)):
        found = gram_factor(term, row, column)
        if found is not None and found[1] is None:
            identity += found[0]
        elif found is not None and gram is None and _nonnegative(found[0]):
            gram = found
        else:
            rest.append(term)
    return identity, gram, rest


def _nonnegative(value: sp.Expr) -> bool:
    value = sp.sympify(value)
    return value == 0 or bool(value.is_nonnegative)


def prove_spectral(claim: Spectral, theorem: Theorem) -> ProofResult:
    reducer = _Reducer(theorem)
    reduced = {t: reducer.reduce(t.matrix, t.row, t.column) for t in claim.terms()}
    bases = list(reducer.bases.values())
    proof = _prove_reduced(claim, reduced, bases)
    if proof is not None:
        return proof
    counterexample = _search(theorem, claim)
    if counterexample is not None:
        return ProofResult(REFUTED, "exact counterexample at small sizes (rational entries; "
                           "singular values from the exact characteristic polynomial, compared "
                           "at 50 digits)", counterexample=counterexample)
    return ProofResult(NOT_PROVED, "the reduced scalar statement was not shown for every "
                       f"m <= M ({_how(reduced)}), and the exact search at sizes <= "
                       f"{SEARCH_SIZES} found no counterexample; numeric evidence only")


def _how(reduced: dict[SpectralTerm, _Reduced]) -> str:
    return "; ".join(sorted({f"{_name(t)}: {r.how}" for t, r in reduced.items()}))


def _name(term: SpectralTerm) -> str:
    """The matrix a term is of, as a reader finds it in the statement."""
    matrix = term.matrix
    if isinstance(matrix, sp.Indexed) and matrix.indices == (term.row, term.column):
        return str(matrix.base)
    return f"[{matrix}]_({term.row}, {term.column})"


def _prove_reduced(claim: Spectral, reduced: dict[SpectralTerm, _Reduced], bases: list[_Base]
                   ) -> ProofResult | None:
    regions: list[str] = []
    for zero in itertools.chain.from_iterable(itertools.combinations(bases, k)
                                              for k in range(len(bases) + 1)):
        sides = [_in_region(side, reduced, bases, zero) for side in (claim.lhs, claim.rhs)]
        if any(s is None for s in sides) or not _holds(sides[0], claim.relation_text, sides[1]):
            return None
        regions.append("every sigma_min > 0" if not zero else
                       "sigma_min = 0 for " + ", ".join(b.shown for b in zero))
    words = "; ".join(sorted({f"{_name(t)}: {r.how}" for t, r in reduced.items()}))
    return ProofResult(PROVED, f"spectral reduction ({words}), then the scalar statement in "
                       "m <= M shown in every region (" + "; ".join(regions) + ") by "
                       "cancellation and nonnegative coefficients (all sizes)")


def _in_region(side: sp.Expr, reduced: dict[SpectralTerm, _Reduced], bases: list[_Base],
               zero: tuple[_Base, ...]) -> sp.Expr | None:
    """The side with each term replaced by its value when the bases in ``zero`` have σ_min = 0
    (and M = t there) and the others σ_min = m > 0, M = m + t: ∞ for a condition number whose
    smallest singular value vanishes; None where a side mixes ∞ with other terms."""
    values: dict[sp.Symbol, sp.Expr] = {}
    for base in bases:
        small = sp.Integer(0) if base in zero else base.small
        values[base.small] = small
        values[base.large] = small + base.gap
    replaced: dict[SpectralTerm, sp.Expr] = {}
    for term, r in reduced.items():
        large = sp.simplify(r.large.xreplace(values))
        small = sp.simplify(r.small.xreplace(values))
        if isinstance(term, SingularMax):
            replaced[term] = large
        elif isinstance(term, SingularMin):
            replaced[term] = small
        else:
            replaced[term] = sp.oo if small == 0 else large / small
    value = side.xreplace(replaced)
    if value.has(sp.oo) and value != sp.oo:
        value = sp.simplify(value)
        if value.has(sp.oo, sp.zoo, sp.nan) and value != sp.oo:
            return None
    return value


def _holds(lhs: sp.Expr, relation: str, rhs: sp.Expr) -> bool:
    if lhs == sp.oo or rhs == sp.oo:
        if lhs == sp.oo and rhs == sp.oo:
            return relation in ("=", "<=")
        if lhs == sp.oo:  # ∞ against a finite value: never below or equal
            return False
        return relation != "=" and _finite(lhs)
    if relation == "=":
        return sp.simplify(sp.together(lhs - rhs)) == 0 and _finite(lhs) and _finite(rhs)
    sign = _sign(rhs - lhs)
    return sign == "positive" or (relation == "<=" and sign == "nonnegative")


def _finite(expr: sp.Expr) -> bool:
    """Its denominator is positive for every value of the variables: it is a finite number."""
    _, denominator = sp.fraction(sp.together(expr))
    return _polynomial_sign(denominator) == "positive"


def _sign(expr: sp.Expr) -> str | None:
    """"positive", "nonnegative" or None (not shown) for every value of the variables."""
    numerator, denominator = sp.fraction(sp.factor(sp.together(expr)))
    below = _polynomial_sign(denominator)
    if below is None:
        below_negated = _polynomial_sign(-denominator)
        if below_negated != "positive":
            return None
        numerator = -numerator
    elif below != "positive":
        return None
    return _polynomial_sign(numerator)


def _polynomial_sign(expr: sp.Expr) -> str | None:
    """A polynomial's sign from its coefficients: every coefficient ≥ 0 and each variable
    nonnegative gives ≥ 0, and a positive term in positive variables alone gives > 0."""
    expr = sp.expand(expr)
    if expr == 0:
        return "nonnegative"
    variables = sorted(expr.free_symbols, key=sp.default_sort_key)
    if any(not (v.is_nonnegative or v.is_positive) for v in variables):
        return None
    if not variables:
        return "positive" if expr.is_positive else ("nonnegative" if expr.is_zero else None)
    try:
        poly = sp.Poly(expr, *variables)
    except sp.PolynomialError:
        return None
    positive_term = False
    for monomial, coefficient in poly.terms():
        if not coefficient.is_nonnegative:
            return None
        used = [v for v, power in zip(variables, monomial, strict=True) if power]
        if coefficient.is_positive and all(v.is_positive for v in used):
            positive_term = True
    return "positive" if positive_term else "nonnegative"


# -- exact refutation ------------------------------------------------------------------------


def _search(theorem: Theorem, claim: Spectral) -> dict | None:
    terms = claim.terms()
    expanded = {t: theorem.expand(t.matrix) for t in terms}
    for largest in search_steps(theorem, SEARCH_SIZES):
        sizes = small_sizes(theorem, largest)
        symbolic = {t: _concrete(theorem, expanded[t], t, sizes) for t in terms}
        for values in structured_draws(theorem, sizes, largest, SEARCH_TRIES):
            found = _violation(claim, symbolic, values)
            if found is not None:
                return {"sizes": sizes, "values": _used(symbolic, values), **found}
    return None


def _concrete(theorem: Theorem, expanded: sp.Expr, term: SpectralTerm, sizes: dict[str, int]
              ) -> sp.Matrix:
    rows = int(_dimension(term.row).xreplace(_size_symbols(sizes)))
    columns = int(_dimension(term.column).xreplace(_size_symbols(sizes)))
    row, column = str(term.row.label), str(term.column.label)
    return sp.Matrix(rows, columns, lambda r, c: instantiate(
        theorem, expanded, sizes, {row: int(r), column: int(c)}))


def _size_symbols(sizes: dict[str, int]) -> dict[sp.Symbol, int]:
    return {sp.Symbol(n, integer=True, positive=True): v for n, v in sizes.items()}


def _violation(claim: Spectral, symbolic: dict[SpectralTerm, sp.Matrix], values: dict
               ) -> dict | None:
    replaced: dict[SpectralTerm, sp.Expr] = {}
    shown: dict[str, str] = {}
    for term, matrix in symbolic.items():
        exact = _exact(matrix, values)
        if exact is None:
            return None
        spectrum = exact_extremes(exact)
        if spectrum is None:
            return None
        large, small = spectrum
        if isinstance(term, SingularMax):
            replaced[term] = large
        elif isinstance(term, SingularMin):
            replaced[term] = small
        else:
            replaced[term] = sp.oo if small == 0 else large / small
        shown[f"{type(term).__name__} of {sp.Matrix(exact).tolist()}"] = _text(replaced[term])
    scalars = {k: v for k, v in values.items() if isinstance(k, sp.Symbol)}
    sides = [_evaluate(side.xreplace(replaced).xreplace(scalars))
             for side in (claim.lhs, claim.rhs)]
    lhs, rhs = sides
    if lhs is None or rhs is None:
        return None
    if _violates(lhs, claim.relation_text, rhs):
        difference = ("inf" if (lhs == sp.oo) != (rhs == sp.oo) else
                      "0" if lhs == rhs == sp.oo else f"{float(lhs - rhs):.6g}")
        return {"terms": shown, "lhs": _text(lhs), "rhs": _text(rhs),
                "relation": f"lhs {claim.relation_text} rhs fails",
                "lhs_minus_rhs": difference}
    return None


def exact_extremes(matrix: sp.Matrix) -> tuple[sp.Expr, sp.Expr] | None:
    """(σ_max, σ_min) of a matrix of exact numbers, exactly (square roots of the extreme roots
    of the characteristic polynomial of AᵀA, or of AAᵀ for a wide A, whose σ_min is 0);
    None where SymPy cannot find the roots."""
    rows, columns = matrix.shape
    gram = matrix.T * matrix if rows >= columns else matrix * matrix.T
    gram = gram.applyfunc(lambda v: sp.radsimp(sp.expand(v)))
    if gram.is_zero_matrix:
        return sp.Integer(0), sp.Integer(0)
    roots = _eigenvalues(gram)
    if not roots:
        return None
    ordered = sorted(roots, key=lambda r: sp.N(r, 50))
    large = sp.sqrt(ordered[-1])
    singular = rows < columns or sp.simplify(gram.det()) == 0
    small = sp.Integer(0) if singular else sp.sqrt(ordered[0])
    return large, small


def _eigenvalues(symmetric: sp.Matrix) -> list[sp.Expr]:
    """The real eigenvalues of a symmetric matrix of exact numbers: exact real roots of its
    characteristic polynomial (rational entries), else SymPy's closed forms, real part."""
    x = sp.Dummy("x")
    try:
        poly = sp.Poly(symmetric.charpoly(x).as_expr(), x)
        if poly.domain.is_QQ or poly.domain.is_ZZ:
            return poly.real_roots()
        return [sp.re(r) for r in symmetric.eigenvals(multiple=True)]
    except Exception:  # no closed form: no exact instance here
        return []


def _exact(symbolic: sp.Matrix, values: dict) -> sp.Matrix | None:
    entries = {x: values[(str(x.base), x.indices)] for x in symbolic.atoms(sp.Indexed)
               if (str(x.base), x.indices) in values}
    scalars = {k: v for k, v in values.items() if isinstance(k, sp.Symbol)}
    matrix = symbolic.xreplace(entries).xreplace(scalars)
    matrix = matrix.applyfunc(lambda v: sp.radsimp(sp.expand(v)))
    if matrix.free_symbols or matrix.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    return matrix


def _evaluate(value: sp.Expr) -> sp.Expr | None:
    """∞, or the value to 50 digits; None where it is undefined (0·∞, ∞ − ∞, 0/0)."""
    value = sp.simplify(value) if value.has(sp.oo) else value
    if value == sp.oo:
        return sp.oo
    if value.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    number = sp.N(value, 50)
    if not number.is_real or number.has(sp.nan, sp.zoo):
        return None
    return number


def _violates(lhs: sp.Expr, relation: str, rhs: sp.Expr) -> bool:
    if lhs == sp.oo or rhs == sp.oo:
        if lhs == sp.oo and rhs == sp.oo:
            return relation == "<"
        return lhs == sp.oo or relation == "="
    difference = lhs - rhs
    if relation == "=":
        return abs(difference) > MARGIN
    if relation == "<=":
        return difference > MARGIN
    return difference > -MARGIN


def _text(value: sp.Expr) -> str:
    return "inf" if value == sp.oo else f"{float(sp.N(value, 30)):.6g}"


def _used(symbolic: dict[SpectralTerm, sp.Matrix], values: dict) -> dict[str, str]:
    names = {(str(x.base), x.indices) for m in symbolic.values() for x in m.atoms(sp.Indexed)}
    used = {}
    for key, value in values.items():
        if isinstance(key, tuple) and key in names:
            used[f"{key[0]}[{', '.join(map(str, key[1]))}]"] = str(value)
        elif isinstance(key, sp.Symbol):
            used[key.name] = str(value)
    return used
