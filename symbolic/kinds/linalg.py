"""Linear-algebra claims about a matrix-valued expression: positive (semi-)definiteness and a
bound on its rank.

The matrix is an index expression with a row and a column index; any other free index (a head
``h``) is a batch index, and the claim is made for each of its values.

* ``PositiveSemidefinite``: xᵀAx ≥ 0 for every real x. Proved for all sizes when A, with its
  definitions expanded, is a nonnegative multiple of a Gram matrix Σ_k F_ka F_kb (or of the
  identity): the quadratic form is then, in sum normal form, the sum of squares
  c · Σ_k (Σ_a F_ka x_a)², and that identity is checked by the normal form before "proved" is
  said.
* ``PositiveDefinite``: xᵀAx > 0 for every real x ≠ 0. Proved for all sizes only for a positive
  multiple of the identity (then xᵀAx = c‖x‖²); a Gram matrix Σ_k F_ka F_kb is positive definite
  only when F has full column rank, which no symbolic route here shows.
* ``RankAtMost``: rank A ≤ k. Proved for all sizes when A has k rows or columns, or is
  written as Σ_c L_ac R_cb with c running over k values (a factorization through a
  k-dimensional space); else proved for sizes ≤ N when every (k+1)-minor, with the entries left
  as symbols, expands to 0 (then it vanishes at every value of the entries).

Exact refutation (all three): at sizes 1, 2, 3, the inputs are filled with small rationals in
the structured patterns of ``_special_values`` (zeros, repeated rows, kernels, ...) and the
matrix is evaluated exactly. A definiteness counterexample is a rational x with xᵀAx < 0
(or = 0 with x ≠ 0, from the null space, for definiteness); a rank counterexample is the exact
rank. Imports SymPy only.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    PROVED_BOUNDED,
    REFUTED,
    STRUCTURED_PATTERNS,
    ClaimKind,
    ProofResult,
    TheoremError,
    free_indices,
    instantiate,
    search_steps,
    size_assignments,
    size_steps,
    small_sizes,
    structured_draws,
    theorem_residual,
)

if TYPE_CHECKING:
    from ..route import Theorem

# Exact search: sizes 1..SEARCH_SIZES, this many structured draws per size (every pattern twice).
SEARCH_SIZES = 3
SEARCH_TRIES = 2 * len(STRUCTURED_PATTERNS)
# The numeric route's formats: NumPy's and JAX's eigen solvers and SVDs take no float16 or
# bfloat16, and a spectrum is not an evaluation-order stability question a lower format answers.
SPECTRAL_DTYPES = ("float64", "float32")

# the limit (k, low, high) of a sum
SumLimit = tuple[sp.Symbol, sp.Expr, sp.Expr]
# ``gram_factor``'s answer (c, F, limit) for c · Σ_k F_k,row F_k,column, or (c, None, None) for c
# times the identity
GramFactor = tuple[sp.Expr, sp.Expr | None, SumLimit | None]
# what the exact search asks of each matrix it evaluates (``_search``): a counterexample or None
Witness = Callable[[sp.Matrix, dict[str, int]], dict | None]


def _dimension(index: sp.Idx) -> sp.Symbol:
    """The dimension symbol an index runs over (its range is 0 .. dimension − 1)."""
    return index.upper + 1


def _sum_over(expr: sp.Expr, *indices: sp.Idx) -> sp.Sum:
    return sp.Sum(expr, *((i, 0, i.upper) for i in indices))


# -- the statements --------------------------------------------------------------------------


@dataclass(frozen=True)
class _MatrixClaim(ClaimKind):
    """A claim about the matrix ``matrix`` whose rows run over ``row`` and columns over
    ``column``; other free indices of ``matrix`` are batch indices."""

    matrix: sp.Expr
    row: sp.Idx
    column: sp.Idx

    numeric_formats = SPECTRAL_DTYPES

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("matrix", self.matrix),)

    def batch_indices(self) -> list[sp.Idx]:
        others = free_indices(self.matrix) - {self.row, self.column}
        return sorted(others, key=lambda i: str(i.label))

    def validate(self, theorem: Theorem, where: str) -> None:
        check_matrix_indices(where, self.kind, self.matrix, self.row, self.column)

    def _matrix_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return rf"\left[{latex(self.matrix)}\right]_{{{latex(self.row)} {latex(self.column)}}}"


@dataclass(frozen=True)
class _Definiteness(_MatrixClaim):
    strict = False

    def validate(self, theorem: Theorem, where: str) -> None:
        super().validate(theorem, where)
        if _dimension(self.row) != _dimension(self.column):
            raise TheoremError(
                f"{where}: {self.kind} needs a square matrix, but row index {self.row} runs over "
                f"{_dimension(self.row)} and column index {self.column} over "
                f"{_dimension(self.column)}")

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        r, c = latex(self.row), latex(self.column)
        matrix = latex(self.matrix)
        if isinstance(self.matrix, sp.Add):
            matrix = rf"\left({matrix}\right)"
        form = rf"\sum_{{{r} {c}}} x_{{{r}}} {matrix} x_{{{c}}}"
        if self.strict:
            return rf"{form} > 0 \quad \text{{for every real }} x \neq 0"
        return rf"{form} \geq 0 \quad \text{{for every real }} x"

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        expanded = theorem.expand(self.matrix)
        proof = _definiteness_proof(theorem, expanded, self.row, self.column, self.strict)
        if proof is not None:
            return proof
        counterexample = _search(theorem, self, expanded,
                                 _definiteness_witness_for(self.strict))
        if counterexample is not None:
            return ProofResult(REFUTED, "exact counterexample at small sizes (rational entries, "
                               "exact arithmetic)", counterexample=counterexample)
        recognized = ("a positive multiple of the identity, or Gram matrices plus one"
                      if self.strict else "a nonnegative multiple of a Gram matrix or of the "
                      "identity, or Gram matrices plus one")
        return ProofResult(NOT_PROVED, f"not recognized as {recognized}, and the exact search "
                           f"at sizes <= {SEARCH_SIZES} found no counterexample; numeric "
                           "evidence only")


@dataclass(frozen=True)
class PositiveSemidefinite(_Definiteness):
    """xᵀAx ≥ 0 for every real vector x, A = ``matrix`` over (``row``, ``column``)."""

    kind = "positive semi-definite"
    relation = r"\geq"  # between the quadratic form and 0
    strict = False


@dataclass(frozen=True)
class PositiveDefinite(_Definiteness):
    """xᵀAx > 0 for every real vector x ≠ 0, A = ``matrix`` over (``row``, ``column``)."""

    kind = "positive definite"
    relation = ">"  # between the quadratic form and 0, for x ≠ 0
    strict = True


@dataclass(frozen=True)
class RankAtMost(_MatrixClaim):
    """rank A ≤ ``bound`` (an integer, or an expression in the dimensions such as d_k)."""

    bound: sp.Expr = sp.Integer(0)
    kind = "rank bound"
    relation = r"\leq"

    def __post_init__(self) -> None:
        object.__setattr__(self, "bound", sp.sympify(self.bound, strict=True))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("matrix", self.matrix), ("rank bound", self.bound))

    def validate(self, theorem: Theorem, where: str) -> None:
        super().validate(theorem, where)
        known = {d.symbol for d in theorem.dims}
        for symbol in self.bound.free_symbols:
            if symbol not in known:
                raise TheoremError(f"{where}: the rank bound uses {symbol}, which is not a "
                                   "dimension of the theorem")

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return rf"\operatorname{{rank}} {self._matrix_latex(latex)} \leq {latex(self.bound)}"

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        expanded = theorem.expand(self.matrix)
        proof = _rank_proof(self, expanded)
        if proof is not None:
            return proof
        counterexample = _search(theorem, self, expanded, self._rank_witness)
        if counterexample is not None:
            return ProofResult(REFUTED, "exact rank at small sizes (rational entries, exact "
                               "arithmetic)", counterexample=counterexample)
        largest = _minors_vanish_up_to(theorem, self, expanded, bound)
        if largest:
            return ProofResult(PROVED_BOUNDED, f"every ({self.bound} + 1)-minor expands to 0 "
                               f"with the entries as symbols, for sizes <= {largest}",
                               max_size=largest)
        return ProofResult(NOT_PROVED, "no factorization through a space of the bound's "
                           "dimension recognized, and the exact search found no counterexample; "
                           "numeric evidence only")

    def bound_at(self, sizes: dict[str, int]) -> int:
        value = self.bound.xreplace({sp.Symbol(n, integer=True, positive=True): v
                                     for n, v in sizes.items()})
        return int(sp.floor(value))

    def _rank_witness(self, matrix: sp.Matrix, sizes: dict) -> dict | None:
        """A (k+1)-minor that is exactly nonzero: the certificate that rank > k."""
        limit = self.bound_at(sizes)
        order = limit + 1
        if order > min(matrix.shape):
            return None
        for rows in itertools.combinations(range(matrix.rows), order):
            for columns in itertools.combinations(range(matrix.cols), order):
                minor = _exact_number(matrix.extract(list(rows), list(columns)).det())
                if minor.is_zero is False:
                    return {"rank": str(matrix.rank(simplify=True)),
                            "bound": f"{self.bound} = {limit}",
                            "nonzero minor": f"rows {list(rows)}, columns {list(columns)}: "
                                             f"{minor}",
                            "lhs_minus_rhs": str(matrix.rank(simplify=True) - limit)}
        return None


# -- symbolic route: definiteness --------------------------------------------------------------


def _split_coefficient(expr: sp.Expr, *indices: sp.Idx) -> tuple[sp.Expr, sp.Expr]:
    """``expr`` as (coefficient free of ``indices`` and of every tensor, the rest)."""
    factors = sp.Mul.make_args(expr)

    def constant(f: sp.Expr) -> bool:
        return not (f.has(*indices) or f.atoms(sp.Indexed) or f.has(sp.Sum))

    coefficient = sp.Mul(*(f for f in factors if constant(f)))
    return coefficient, sp.Mul(*(f for f in factors if not constant(f)))


def gram_factor(expr: sp.Expr, row: sp.Idx, column: sp.Idx) -> GramFactor | None:
    """``(c, F, k)`` with ``expr`` = c · Σ_k F(k, row) F(k, column), where F(k, column) is F(k, row)
    with ``row`` renamed, or ``(c, None, None)`` when ``expr`` = c · δ(row, column); None when
    ``expr`` has neither form."""
    coefficient, core = _split_coefficient(expr, row, column)
    if core == sp.KroneckerDelta(row, column):
        return coefficient, None, None
    if not _single_sum_free_of(core, row, column):
        return None
    left: list[sp.Expr] = []
    right: list[sp.Expr] = []
    rest: list[sp.Expr] = []
    for factor in sp.Mul.make_args(core.function):
        has_row, has_column = factor.has(row), factor.has(column)
        (left if has_row and not has_column else right if has_column and not has_row
         else rest).append(factor)
    if rest or not left:
        return None
    factor = sp.Mul(*left)
    if sp.Mul(*right) != factor.xreplace({row: column}):
        return None
    return coefficient, factor, core.limits[0]


def _single_sum_free_of(core: sp.Expr, row: sp.Idx, column: sp.Idx) -> bool:
    """``core`` is one sum over one index whose range does not depend on row or column."""
    if not isinstance(core, sp.Sum) or len(core.limits) != 1:
        return False
    _, low, high = core.limits[0]
    return not (low.has(row, column) or high.has(row, column))


def _definiteness_proof(theorem: Theorem, expanded: sp.Expr, row: sp.Idx, column: sp.Idx,
                        strict: bool) -> ProofResult | None:
    found = gram_factor(expanded, row, column)
    if found is None:
        return _shifted_gram_proof(theorem, expanded, row, column, strict)
    coefficient, factor, limit = found
    if factor is None:  # c · identity: xᵀAx = c Σ_a x_a²
        if coefficient.is_positive or (not strict and coefficient.is_nonnegative):
            relation = "> 0 for x != 0" if strict else ">= 0"
            return ProofResult(PROVED, f"the matrix is {coefficient} times the identity, "
                               f"{'positive' if strict else 'nonnegative'}: "
                               f"x^T A x = {coefficient} * sum_a x_a^2 {relation} (all sizes)")
        return None
    if strict or not coefficient.is_nonnegative:
        return None
    assert limit is not None  # gram_factor gives F together with the limit of its sum
    x = sp.IndexedBase("x_probe", real=True)
    quadratic = _sum_over(x[row] * expanded * x[column], row, column)
    squares = coefficient * sp.Sum(_sum_over(factor * x[row], row) ** 2, limit)
    if theorem_residual(theorem, quadratic - squares) != 0:
        return None
    shown = factor.xreplace({limit[0]: sp.Symbol("k")})  # the summation index, named k
    return ProofResult(PROVED, f"Gram matrix: x^T A x = {coefficient} * sum_k (sum_a F_ka x_a)^2 "
                       f"with F_ka = {shown}, an identity checked in sum normal form, and "
                       f"{coefficient} >= 0 (all sizes)")


def _shifted_gram_proof(theorem: Theorem, expanded: sp.Expr, row: sp.Idx, column: sp.Idx,
                        strict: bool) -> ProofResult | None:
    """A sum of Gram matrices with nonnegative coefficients plus c·I (the jitter of BᵀB + εI):
    xᵀAx = Σ_g c_g Σ_k (Σ_a F_ka x_a)² + c Σ_a x_a², checked in sum normal form; ≥ 0 when every
    coefficient is, and > 0 for x ≠ 0 when c > 0. Coefficients may hold inputs through sums
    without free indices (a jitter scaled to ‖B‖²), their sign read from their form."""
    grams: list[tuple[sp.Expr, sp.Expr, SumLimit]] = []
    shift = sp.Integer(0)
    for term in sp.Add.make_args(sp.expand(expanded)):
        deltas = [f for f in sp.Mul.make_args(term) if f == sp.KroneckerDelta(row, column)]
        rest = sp.Mul(*(f for f in sp.Mul.make_args(term) if f not in deltas))
        if len(deltas) == 1 and not rest.has(row, column):
            shift += rest
            continue
        found = gram_factor(term, row, column)
        if found is None or found[1] is None:
            return None
        # a Gram matrix (F is not None) comes with the limit of its sum: (c, F, limit)
        grams.append(cast("tuple[sp.Expr, sp.Expr, SumLimit]", found))
    if not grams or shift == 0:
        return None
    shift_sign = sign_by_form(shift)
    if not all(sign_by_form(c) in ("positive", "nonnegative") for c, _, _ in grams):
        return None
    if shift_sign != "positive" and (strict or shift_sign != "nonnegative"):
        return None
    x = sp.IndexedBase("x_probe", real=True)
    quadratic = _sum_over(x[row] * expanded * x[column], row, column)
    squares = shift * _sum_over(x[row] ** 2, row) + sp.Add(*(
        c * sp.Sum(_sum_over(factor * x[row], row) ** 2, limit) for c, factor, limit in grams))
    if theorem_residual(theorem, quadratic - squares) != 0:
        return None
    shown = ", ".join(str(factor.xreplace({limit[0]: sp.Symbol("k")}))
                      for _, factor, limit in grams)
    relation = "> 0 for x != 0" if strict else ">= 0"
    return ProofResult(PROVED, f"Gram matrices plus a multiple of the identity: x^T A x = "
                       f"sum_g c_g sum_k (sum_a F_ka x_a)^2 + ({shift}) * sum_a x_a^2 with F_ka "
                       f"= {shown}, an identity checked in sum normal form; the coefficients "
                       f"are nonnegative and {shift} is {shift_sign} by its form, so x^T A x "
                       f"{relation} (all sizes)")


def sign_by_form(expr: sp.Expr) -> str | None:
    """"positive", "nonnegative" or None (not shown), from the form of ``expr`` alone: positive
    symbols and numbers, even powers, sums and products of such, and Σ over a nonempty range."""
    expr = sp.sympify(expr)
    if expr.is_positive:
        return "positive"
    if expr.is_zero or expr.is_nonnegative:
        return "nonnegative"
    if isinstance(expr, sp.Pow) and expr.exp.is_Integer and expr.exp.is_even:
        return "positive" if sign_by_form(expr.base) == "positive" else "nonnegative"
    if isinstance(expr, sp.Pow) and expr.exp.is_real:
        return sign_by_form(expr.base) if sign_by_form(expr.base) == "positive" else None
    if isinstance(expr, (sp.Add, sp.Mul)):
        signs = [sign_by_form(a) for a in expr.args]
        if None in signs:
            return None
        if isinstance(expr, sp.Add):
            return "positive" if "positive" in signs else "nonnegative"
        return "positive" if all(s == "positive" for s in signs) else "nonnegative"
    if isinstance(expr, sp.Sum):
        inner = sign_by_form(expr.function)
        nonempty = all((upper - lower).is_nonnegative for _, lower, upper in expr.limits)
        if inner == "positive" and nonempty:
            return "positive"
        return "nonnegative" if inner is not None else None
    return None


# -- symbolic route: rank ------------------------------------------------------------------------


def _rank_proof(claim: RankAtMost, expanded: sp.Expr) -> ProofResult | None:
    for index, what in ((claim.row, "rows"), (claim.column, "columns")):
        if sp.simplify(_dimension(index) - claim.bound) == 0:
            return ProofResult(PROVED, f"the matrix has {claim.bound} {what}, so its rank is at "
                               f"most {claim.bound} (all sizes)")
    through = _factorization_dimension(expanded, claim.row, claim.column)
    if through is not None and sp.simplify(through - claim.bound) == 0:
        return ProofResult(PROVED, f"factorization A = L R through a {through}-dimensional "
                           "space: A_ab = sum_c L_ac R_cb with c over "
                           f"{through} values (all sizes)")
    return None


def _factorization_dimension(expr: sp.Expr, row: sp.Idx, column: sp.Idx) -> sp.Expr | None:
    """k when ``expr`` = c · Σ_{c<k} L(row, c) R(c, column) with no factor holding both row
    and column; None otherwise."""
    _, core = _split_coefficient(expr, row, column)
    if not _single_sum_free_of(core, row, column):
        return None
    if any(f.has(row) and f.has(column) for f in sp.Mul.make_args(core.function)):
        return None
    _, low, high = core.limits[0]
    return sp.simplify(high - low + 1)


def _minors_vanish_up_to(theorem: Theorem, claim: RankAtMost, expanded: sp.Expr,
                         bound: int) -> int:
    """The largest N such that at every size <= N each (k+1)-minor of the matrix, its entries
    left as symbols, expands to 0 (a polynomial identically 0 vanishes at every value)."""
    proved = 0
    for largest in size_steps(theorem, bound):
        for sizes in size_assignments(theorem, largest):
            for batch in _batch_assignments(claim, sizes):
                matrix = _concrete_matrix(theorem, claim, expanded, sizes, batch)
                if not _minors_vanish(matrix, claim.bound_at(sizes)):
                    return proved
        proved = largest
    return proved


def _minors_vanish(matrix: sp.Matrix, rank: int) -> bool:
    order = rank + 1
    if order > min(matrix.shape):
        return True
    for rows in itertools.combinations(range(matrix.rows), order):
        for columns in itertools.combinations(range(matrix.cols), order):
            if sp.expand(matrix.extract(list(rows), list(columns)).det(method="berkowitz")) != 0:
                return False
    return True


# -- exact refutation ----------------------------------------------------------------------------


def _batch_assignments(claim: _MatrixClaim, sizes: dict[str, int]) -> Iterator[dict[str, int]]:
    indices = claim.batch_indices()
    ranges = [range(sizes.get(str(_dimension(i)), 1)) for i in indices]
    for values in itertools.product(*ranges):
        yield {str(i.label): v for i, v in zip(indices, values, strict=True)}


def _concrete_matrix(theorem: Theorem, claim: _MatrixClaim, expanded: sp.Expr,
                     sizes: dict[str, int], batch: dict[str, int]) -> sp.Matrix:
    rows = sizes[str(_dimension(claim.row))]
    columns = sizes[str(_dimension(claim.column))]
    row, column = str(claim.row.label), str(claim.column.label)
    return sp.Matrix(rows, columns, lambda r, c: instantiate(
        theorem, expanded, sizes, {**batch, row: int(r), column: int(c)}))


def _search(theorem: Theorem, claim: _MatrixClaim, expanded: sp.Expr, witness: Witness
            ) -> dict | None:
    """Small sizes, structured rational inputs, the matrix evaluated exactly; the first
    instance ``witness(matrix, sizes)`` describes as a counterexample."""
    for largest in search_steps(theorem, SEARCH_SIZES):
        sizes = small_sizes(theorem, largest)
        draws = structured_draws(theorem, sizes, largest, SEARCH_TRIES)
        for batch in _batch_assignments(claim, sizes):
            symbolic = _concrete_matrix(theorem, claim, expanded, sizes, batch)
            for values in draws:
                matrix = _exact(symbolic, values)
                if matrix is None:
                    continue
                found = witness(matrix, sizes)
                if found is not None:
                    return {"sizes": sizes, "indices": batch, "values": _used(symbolic, values),
                            "matrix": str(matrix.tolist()), **found}
    return None


def _exact(symbolic: sp.Matrix, values: dict) -> sp.Matrix | None:
    entries = {x: values[(str(x.base), x.indices)] for x in symbolic.atoms(sp.Indexed)
               if (str(x.base), x.indices) in values}
    scalars = {k: v for k, v in values.items() if isinstance(k, sp.Symbol)}
    matrix = symbolic.xreplace(entries).xreplace(scalars).applyfunc(_exact_number)
    if matrix.free_symbols or matrix.has(sp.nan, sp.zoo, sp.oo, -sp.oo):
        return None
    return matrix


def _exact_number(value: sp.Expr) -> sp.Expr:
    """``value`` expanded with radicals simplified, exactly (never rounded to a rational)."""
    return sp.radsimp(sp.expand(value))


def _used(symbolic: sp.Matrix, values: dict) -> dict:
    names = {(str(x.base), x.indices) for x in symbolic.atoms(sp.Indexed)}
    symbols = {s.name for s in symbolic.free_symbols}
    used = {}
    for key, value in values.items():
        if isinstance(key, tuple) and key in names:
            used[f"{key[0]}[{', '.join(map(str, key[1]))}]"] = str(value)
        elif isinstance(key, sp.Symbol) and key.name in symbols:
            used[key.name] = str(value)
    return used


def _definiteness_witness(matrix: sp.Matrix, sizes: dict, strict: bool) -> dict | None:
    """A rational x with xᵀAx < 0 (or, for ``strict``, x ≠ 0 with xᵀAx = 0), exactly."""
    for x in _candidate_vectors(matrix, strict):
        value = _exact_number((x.T * matrix * x)[0, 0])
        if value.is_negative or (strict and value.is_zero and any(x)):
            return {"x": str(list(x)), "x^T A x": str(value), "lhs_minus_rhs": str(value),
                    "relation": "x^T A x = 0 with x != 0" if value.is_zero else "x^T A x < 0"}
    return None


def _candidate_vectors(matrix: sp.Matrix, strict: bool) -> Iterator[sp.Matrix]:
    """Basis vectors, e_i ± e_j, null-space vectors (for definiteness), and the eigenvector
    of the least eigenvalue of the symmetric part rounded to rationals (checked exactly after)."""
    n = matrix.rows
    basis = [sp.eye(n)[:, i] for i in range(n)]
    yield from basis
    for i, j in itertools.combinations(range(n), 2):
        yield basis[i] + basis[j]
        yield basis[i] - basis[j]
    symmetric = (matrix + matrix.T) / 2
    if strict:
        yield from symmetric.nullspace()
    yield from _least_eigenvector(symmetric)


def _least_eigenvector(symmetric: sp.Matrix) -> Iterator[sp.Matrix]:
    try:
        pairs = symmetric.evalf(30).eigenvects()
    except Exception:  # an eigen solver that fails offers no candidate; the others stand
        return
    if not pairs:
        return
    value, _, vectors = min(pairs, key=lambda p: sp.re(p[0]))
    for vector in vectors:
        yield vector.applyfunc(lambda v: sp.Rational(sp.re(v)).limit_denominator(10**6))


def _definiteness_witness_for(strict: bool) -> Witness:
    return lambda matrix, sizes: _definiteness_witness(matrix, sizes, strict)


def check_matrix_indices(where: str, what: str, matrix: sp.Expr, row: sp.Idx, column: sp.Idx
                         ) -> None:
    """A matrix named by an expression and two of its free indices: each an index of it, and
    not the same one (``TheoremError`` naming ``where`` and ``what`` otherwise)."""
    for name, index in (("row", row), ("column", column)):
        if not isinstance(index, sp.Idx):
            raise TheoremError(f"{where}: the {name} index of {what} must be an index "
                               f"(Dim.index), got {index!r}")
        if index not in free_indices(matrix):
            raise TheoremError(f"{where}: the {name} index {index} is not a free index of "
                               f"the matrix {matrix}")
    if row == column:
        raise TheoremError(f"{where}: row and column are the same index {row}")
