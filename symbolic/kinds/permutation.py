"""Permutations of an index, declared as inputs: equivariance and invariance claims.

A ``Permutation`` π of a dimension n is an input like a tensor, drawn as a bijection of
{0, …, n−1}; a statement uses it inside an index (``K[pi[j], a]``: the keys reordered). The
symbolic route re-indexes: for a bijection π of the range of j,

    Σ_{j<n} f(π(j)) = Σ_{j<n} f(j),

so a sum over j in which j occurs only as π(j) loses the π; and a claim for every free i in
which i occurs only as π(i) holds for every i exactly when it holds with i in place of π(i),
since π(i) takes every value once. Both are equalities for every size and every bijection, so
a zero residual of the sum normal form afterwards proves the claim for all sizes and all
permutations. The exact refutation tries every permutation of sizes up to 3 (the identity,
swaps, reversals among them) with structured rationals.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    REFUTED,
    ClaimKind,
    Dim,
    Domain,
    ProofResult,
    Tensor,
    TheoremError,
    describe_counterexample,
    exact_value,
    free_indices,
    index_assignments,
    instantiate,
    rename_bound_indices,
    search_steps,
    small_sizes,
    structured_draws,
    theorem_residual,
    used_values,
)

if TYPE_CHECKING:
    from ..route import Theorem

PROVED_METHOD = ("re-indexing by the permutation (Σ_j f(π(j)) = Σ_j f(j) for a bijection π), "
                 "then sum normal form (all sizes, every permutation)")


@dataclass(frozen=True)
class Bijection(Domain):
    """The entries of a permutation: each of 0, …, n−1 exactly once."""

    def sympy_assumptions(self) -> dict[str, bool]:
        return {"integer": True, "nonnegative": True}

    def describe(self) -> str:
        return "a permutation of 0, …, n−1"


class Permutation(Tensor):
    """A permutation π of the dimension ``dim``, declared among a theorem's inputs; ``pi[j]``
    is π(j), used inside another tensor's index."""

    def __init__(self, name: str, dim: Dim) -> None:
        super().__init__(name, (dim,), Bijection())

    @property
    def dim(self) -> Dim:
        return self.dims[0]


def permutations_of(theorem: Theorem) -> list[Permutation]:
    return [t for t in theorem.tensors if isinstance(t, Permutation)]


def _is_entry_of(node: sp.Basic, permutation: Permutation) -> bool:
    return isinstance(node, sp.Indexed) and str(node.base.label) == permutation.name


# -- re-indexing ------------------------------------------------------------------------------


def reindex(expr: sp.Expr, permutations: Sequence[Permutation], free: Iterable[sp.Idx] = ()
            ) -> sp.Expr:
    """Every sum over j (and every index in ``free``) that occurs only as π(j), for one
    permutation π of exactly its range, with π(j) replaced by j."""
    expr = _reindex_sums(expr, permutations)
    for index in free:
        expr = _drop_permutation(expr, index, permutations, (0, index.upper))
    return expr


def _reindex_sums(expr: sp.Basic, permutations: Sequence[Permutation]) -> sp.Basic:
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    args = [_reindex_sums(a, permutations) for a in expr.args]
    if not isinstance(expr, sp.Sum):
        return expr.func(*args)
    function = args[0]
    for variable, lower, upper in expr.limits:
        function = _drop_permutation(function, variable, permutations, (lower, upper))
    return sp.Sum(function, *expr.limits)


def _drop_permutation(expr: sp.Expr, variable: sp.Symbol, permutations: Sequence[Permutation],
                      limits: tuple[sp.Expr, sp.Expr]) -> sp.Expr:
    """``expr`` with π(variable) → variable, when π permutes exactly the range ``limits`` and
    ``variable`` occurs nowhere else."""
    lower, upper = limits
    for permutation in permutations:
        if lower != 0 or sp.expand(upper + 1 - permutation.dim.symbol) != 0:
            continue
        entry = permutation[variable]
        marker = sp.Dummy("marked")
        if not expr.has(entry) or expr.xreplace({entry: marker}).has(variable):
            continue
        return expr.xreplace({entry: variable})
    return expr


# -- the claim kind ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Permuted(ClaimKind):
    """``lhs = rhs`` for every value of every free index and every permutation declared among
    the inputs (``Permutation``), which the sides use inside indices (``K[pi[j], a]``)."""

    lhs: sp.Expr
    rhs: sp.Expr
    kind = "permutation"
    relation = "="

    def __post_init__(self) -> None:
        object.__setattr__(self, "lhs", sp.sympify(self.lhs, strict=True))
        object.__setattr__(self, "rhs", sp.sympify(self.rhs, strict=True))

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        return (("left-hand side", self.lhs), ("right-hand side", self.rhs))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        return f"{latex(self.lhs)} = {latex(self.rhs)}"

    def validate(self, theorem: Theorem, where: str) -> None:
        permutations = permutations_of(theorem)
        if not permutations:
            raise TheoremError(f"{where}: a permutation claim needs a Permutation among its "
                               "inputs")
        expressions = [self.lhs, self.rhs, *(d.body for d in theorem.definitions)]
        for permutation in permutations:
            entries = [x for e in expressions for x in e.atoms(sp.Indexed)
                       if _is_entry_of(x, permutation)]
            if not entries:
                raise TheoremError(f"{where}: permutation {permutation.name} is declared but "
                                   "never used")
            for entry in entries:
                (index,) = entry.indices
                plain = isinstance(index, sp.Idx) or _is_entry_of(index, permutation)
                if not plain or (isinstance(index, sp.Idx)
                                 and index.upper + 1 != permutation.dim.symbol):
                    raise TheoremError(
                        f"{where}: permutation {permutation.name} permutes "
                        f"{permutation.dim.name} but is applied to {index}")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        permutations = permutations_of(theorem)
        difference = reindexed_difference(theorem, self, permutations)
        left = theorem_residual(theorem, difference)
        if left == 0:
            return ProofResult(PROVED, PROVED_METHOD)
        counterexample = exact_counterexample(theorem, self, permutations)
        if counterexample is not None:
            return ProofResult(REFUTED, "exact counterexample at small sizes, every permutation "
                               "of them tried", counterexample=counterexample, residual=str(left))
        return ProofResult(NOT_PROVED, "re-indexing and the sum normal form left a residual, and "
                           "no exact counterexample at sizes <= 3; numeric evidence only",
                           residual=str(left))


def reindexed_difference(theorem: Theorem, claim: Permuted,
                         permutations: Sequence[Permutation]) -> sp.Expr:
    difference = rename_bound_indices(theorem.expand(claim.lhs) - theorem.expand(claim.rhs))
    free = sorted(free_indices(difference), key=str)
    return rename_bound_indices(reindex(difference, permutations, free))


def exact_counterexample(theorem: Theorem, claim: Permuted, permutations: Sequence[Permutation],
                         tries: int = 12) -> dict | None:
    """Sizes 1, 2, 3, every permutation of them, structured rationals: lhs − rhs provably
    nonzero (50 digits) gives the counterexample, with the permutation in it."""
    difference = rename_bound_indices(theorem.expand(claim.lhs) - theorem.expand(claim.rhs))
    for largest in search_steps(theorem, 3):
        sizes = small_sizes(theorem, largest)
        draws = structured_draws(theorem, sizes, largest, tries)
        choices = [list(itertools.permutations(range(sizes[p.dim.name]))) for p in permutations]
        for chosen in itertools.product(*choices):
            for index_values in index_assignments(difference, sizes):
                concrete = instantiate(theorem, difference, sizes, index_values)
                concrete = _apply(concrete, permutations, chosen)
                for values in draws:
                    value = exact_value(concrete, values)
                    if value is not None and abs(value) > 1e-30:
                        used = used_values(concrete, values)
                        described = describe_counterexample(sizes, index_values, used, value)
                        described["permutations"] = {
                            p.name: f"({', '.join(map(str, order))})"
                            for p, order in zip(permutations, chosen, strict=True)}
                        return described
    return None


def _apply(concrete: sp.Expr, permutations: Sequence[Permutation],
           chosen: Sequence[tuple[int, ...]]) -> sp.Expr:
    """Every π(k) at a concrete k replaced by its value, innermost first."""
    for _ in range(8):
        entries = {x: sp.Integer(order[int(x.indices[0])])
                   for p, order in zip(permutations, chosen, strict=True)
                   for x in concrete.atoms(sp.Indexed)
                   if _is_entry_of(x, p) and x.indices[0].is_Integer}
        if not entries:
            return concrete
        concrete = concrete.xreplace(entries)
    return concrete
