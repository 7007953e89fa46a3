"""Reshapes: a dimension declared as a product H·D, with the flat index h·D + c.

A claim about "Concat(head_1, …, head_H) W_O" or the split/combine of heads is an identity in
which some tensors are *views* of others: the same entries laid out on other axes, where an
axis over the product dimension H·D holds the entry (h, c) at the flat position f = h·D + c
(row-major, as ``reshape`` lays it out). The statement keeps the views by name; the symbolic
route rewrites every flat index into its parts before the sum-normal-form zero test:

    Σ_{f < H·D} g(f) = Σ_{h < H} Σ_{c < D} g(h·D + c),     ⌊(h·D + c)/D⌋ = h,  (h·D + c) mod D = c

(0 ≤ c < D), and a free flat index f is replaced by h·D + c with h, c free (every f in range is
exactly one such pair). Both rewrites are equalities for every size, so a zero residual proves
the identity for all sizes. The numeric route computes each view with the backend's own
``reshape``/``transpose``/``concatenate`` and compares the sides (numeric/kinds/reshape.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sympy as sp

from ..route import (
    NOT_PROVED,
    PROVED,
    REFUTED,
    ClaimKind,
    Defined,
    Dim,
    ProofResult,
    Sizes,
    Tensor,
    TheoremError,
    check_name,
    describe_counterexample,
    exact_value,
    free_indices,
    rename_bound_indices,
    small_instances,
    theorem_residual,
    used_values,
)

if TYPE_CHECKING:
    from ..route import Theorem

PROVED_METHOD = ("sum normal form after splitting every flat index: Σ_{f<HD} g(f) = "
                 "Σ_{h<H} Σ_{c<D} g(hD + c) (all sizes, by splitting the flat index)")


@dataclass(frozen=True)
class FlatDim(Dim):
    """A dimension that is the product of ``factors``: its index is the flat position
    f = ((a₁·n₂ + a₂)·n₃ + a₃)… of the factors' indices, the last factor fastest."""

    factors: tuple[Dim, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        if len(self.factors) < 2 or not all(type(d) is Dim for d in self.factors):
            raise TheoremError(f"flat dimension {self.name}: needs two or more plain "
                               "dimensions as factors")

    @property
    def symbol(self) -> sp.Expr:
        return sp.Mul(*(d.symbol for d in self.factors))

    def strides(self) -> tuple[sp.Expr, ...]:
        """The step of each factor's index in the flat index (the last factor's is 1)."""
        return tuple(sp.Mul(*(d.symbol for d in self.factors[k + 1:]))
                     for k in range(len(self.factors)))

    def join(self, parts: Sequence[sp.Expr]) -> sp.Expr:
        """The flat index of the factor indices ``parts``."""
        return sp.Add(*(p * s for p, s in zip(parts, self.strides(), strict=True)))

    def split(self, flat: sp.Expr) -> tuple[sp.Expr, ...]:
        """The factor indices of the flat index ``flat``; exactly ``parts`` when ``flat`` is
        written as ``join(parts)`` of indices over the factors."""
        parts = parts_of(flat, self)
        if parts is not None:
            return parts
        sizes = [d.symbol for d in self.factors]
        return tuple(sp.Mod(sp.floor(flat / s), n) if k else sp.floor(flat / s)
                     for k, (s, n) in enumerate(zip(self.strides(), sizes, strict=True)))


def flat(*factors: Dim, name: str | None = None, latex: str | None = None) -> FlatDim:
    """The product dimension of ``factors`` (e.g. ``flat(heads, per_head)`` for H·D)."""
    name = name or "_".join(d.name for d in factors)
    low = high = 1
    for d in factors:
        low, high = low * d.sizes.low, high * d.sizes.high
    text = latex or r" \cdot ".join(d.latex or d.name for d in factors)
    return FlatDim(name, Sizes(low, high), text, tuple(factors))


def parts_of(flat_index: sp.Expr, dim: FlatDim) -> tuple[sp.Idx, ...] | None:
    candidates = [i for i in flat_index.atoms(sp.Idx)]
    by_dim = []
    for factor in dim.factors:
        matching = [i for i in candidates if i.upper + 1 == factor.symbol]
        if len(matching) != 1:
            return None
        by_dim.append(matching[0])
    if sp.expand(flat_index - dim.join(by_dim)) != 0:
        return None
    return tuple(by_dim)


@dataclass(frozen=True, eq=False)
class View:
    """A tensor holding the entries of ``source`` on the axes ``dims``: the same plain
    dimensions, in any order, grouped into flat ones or split out of them.

    ``method`` says how the numeric route builds it: "reshape" (reshape to the plain axes,
    transpose, reshape) or "concatenate" (the slices along the first factor of the one flat
    axis, joined along it: Concat(head_1, …, head_H)).
    """

    name: str
    source: Tensor | Defined | View
    dims: tuple[Dim, ...]
    method: str = "reshape"
    latex: str | None = None

    def __post_init__(self) -> None:
        check_name(self.name, "view")
        object.__setattr__(self, "dims", tuple(self.dims))
        where = f"view {self.name}"
        if sorted(d.name for d in plain_dims(self.dims)) != sorted(
                d.name for d in plain_dims(self.source_dims)):
            raise TheoremError(f"{where}: its axes {[d.name for d in self.dims]} do not hold the "
                               f"same plain dimensions as {self.source.name}'s "
                               f"{[d.name for d in self.source_dims]}")
        if self.method not in ("reshape", "concatenate"):
            raise TheoremError(f"{where}: method must be 'reshape' or 'concatenate'")
        if self.method == "concatenate":
            flats = [d for d in self.dims if isinstance(d, FlatDim)]
            if len(flats) != 1 or any(isinstance(d, FlatDim) for d in self.source_dims):
                raise TheoremError(f"{where}: concatenate joins the plain axes of "
                                   f"{self.source.name} into exactly one flat axis")

    @property
    def source_dims(self) -> tuple[Dim, ...]:
        """The source's axes: a tensor's or view's dimensions, a definition's index ranges."""
        if isinstance(self.source, (Tensor, View)):
            return tuple(self.source.dims)
        return tuple(Dim(str(i.upper + 1)) for i in self.source.indices)

    @property
    def base(self) -> sp.IndexedBase:
        return sp.IndexedBase(self.name, shape=tuple(d.symbol for d in self.dims), real=True)

    def __getitem__(self, indices: sp.Expr | tuple[sp.Expr, ...]) -> sp.Indexed:
        indices = indices if isinstance(indices, tuple) else (indices,)
        if len(indices) != len(self.dims):
            raise TheoremError(f"view {self.name} has {len(self.dims)} axes, indexed with "
                               f"{len(indices)}: {indices}")
        return self.base[indices]

    def entry(self, indices: Sequence[sp.Expr]) -> sp.Expr:
        """The source entry the view holds at ``indices``."""
        by_plain: dict[str, sp.Expr] = {}
        for dim, index in zip(self.dims, indices, strict=True):
            parts: Sequence[sp.Expr] = dim.split(index) if isinstance(dim, FlatDim) else (index,)
            for factor, part in zip(plain_dims((dim,)), parts, strict=True):
                by_plain[factor.name] = part
        source_indices = []
        for dim in self.source_dims:
            parts = [by_plain[d.name] for d in plain_dims((dim,))]
            source_indices.append(dim.join(parts) if isinstance(dim, FlatDim) else parts[0])
        return self.source[tuple(source_indices)]

    def definition_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        """``Concat_{i, hD + c} = O_{h, i, c}`` at the view's own plain indices (lower-case
        dimension names where they are single letters), commas between the indices."""
        plain = _plain_indices(plain_dims(self.dims))
        indices = [dim.join([plain[f.name] for f in dim.factors]) if isinstance(dim, FlatDim)
                   else plain[dim.name] for dim in self.dims]
        entry = self.entry(indices)
        return (f"{_entry_latex(latex, self.latex or latex(self.base), indices)} = "
                f"{_entry_latex(latex, latex(entry.base), entry.indices)}")


def _plain_indices(dims: Iterable[Dim]) -> dict[str, sp.Idx]:
    pool = iter("pqrsuvwxyz")
    taken: set[str] = set()
    found = {}
    for d in dims:
        letter = d.name.lower()
        if len(letter) != 1 or letter in taken:
            letter = next(x for x in pool if x not in taken)
        taken.add(letter)
        found[d.name] = d.index(letter)
    return found


def _entry_latex(latex: Callable[[sp.Expr], str], name: str, indices: Iterable[sp.Expr]) -> str:
    joined = r",\, ".join(latex(i) for i in indices)
    return f"{{{name}}}_{{{joined}}}"


def plain_dims(dims: Iterable[Dim]) -> list[Dim]:
    """``dims`` with each flat dimension replaced by its factors."""
    return [f for d in dims for f in (d.factors if isinstance(d, FlatDim) else (d,))]


def flat_dims_of(tensors: Iterable[Tensor], views: Iterable[View]) -> list[FlatDim]:
    """Every flat dimension the statement's tensors and views have, once each."""
    seen: dict[str, FlatDim] = {}
    for dims in [t.dims for t in tensors] + [v.dims for v in views]:
        for d in dims:
            if isinstance(d, FlatDim):
                seen.setdefault(d.name, d)
    return list(seen.values())


# -- splitting flat indices -------------------------------------------------------------------


def expand_views(expr: sp.Expr, views: Iterable[View]) -> sp.Expr:
    """Every entry of a view replaced by the source entry it holds (a view of a view too)."""
    by_name = {v.name: v for v in views}
    while True:
        found = [x for x in expr.atoms(sp.Indexed) if str(x.base.label) in by_name]
        if not found:
            return expr
        expr = expr.xreplace({x: by_name[str(x.base.label)].entry(x.indices) for x in found})


def split_flat_indices(expr: sp.Expr, flats: Sequence[FlatDim]) -> sp.Expr:
    """Every sum over a flat index becomes the nested sums over its parts, and every free flat
    index f becomes join(parts) with fresh free parts: both equalities for every size."""
    expr = _split_sums(expr, flats)
    for index in sorted(free_indices(expr), key=str):
        dim = _flat_of(index.upper + 1 if index.upper is not None else None, flats)
        if dim is not None:
            parts = tuple(d.index(f"{index.label}_{d.name}") for d in dim.factors)
            expr = _substitute_flat(expr, index, dim, parts)
    return expr


def _flat_of(size: sp.Expr | None, flats: Sequence[FlatDim]) -> FlatDim | None:
    for dim in flats:
        if size is not None and sp.expand(size - dim.symbol) == 0:
            return dim
    return None


def _split_sums(expr: sp.Expr, flats: Sequence[FlatDim]) -> sp.Expr:
    if not isinstance(expr, sp.Basic) or not expr.args:
        return expr
    args = [_split_sums(a, flats) for a in expr.args]
    if not isinstance(expr, sp.Sum):
        return expr.func(*args)
    function, limits = args[0], list(expr.limits)
    new_limits: list[tuple[sp.Symbol, sp.Expr, sp.Expr]] = []
    for variable, lower, upper in reversed(limits):
        dim = _flat_of(upper - lower + 1, flats) if lower == 0 else None
        if dim is None:
            new_limits.insert(0, (variable, lower, upper))
            continue
        parts = tuple(sp.Dummy(f"{variable.name}_{d.name}", integer=True) for d in dim.factors)
        function = _substitute_flat(function, variable, dim, parts)
        new_limits[:0] = [(p, 0, d.symbol - 1) for p, d in zip(parts, dim.factors, strict=True)]
    return sp.Sum(function, *new_limits)


def _substitute_flat(expr: sp.Expr, variable: sp.Symbol, dim: FlatDim,
                     parts: tuple[sp.Expr, ...]) -> sp.Expr:
    """``expr`` at variable = join(parts): its split forms become the parts themselves."""
    forms = dict(zip(dim.split(variable), parts, strict=True))
    return expr.xreplace(forms).xreplace({variable: dim.join(parts)})


# -- the claim kind ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Reshape(ClaimKind):
    """``lhs = rhs`` for every value of every free index, where ``views`` lay out entries of
    the inputs on other axes (flat dimensions H·D, with flat index h·D + c)."""

    lhs: sp.Expr
    rhs: sp.Expr
    views: tuple[View, ...] = field(default=())
    kind = "reshape"
    relation = "="

    def __post_init__(self) -> None:
        object.__setattr__(self, "lhs", sp.sympify(self.lhs, strict=True))
        object.__setattr__(self, "rhs", sp.sympify(self.rhs, strict=True))
        object.__setattr__(self, "views", tuple(self.views))

    def flats(self, theorem: Theorem | None = None) -> list[FlatDim]:
        tensors = theorem.tensors if theorem is not None else [
            v.source for v in self.views if isinstance(v.source, Tensor)]
        return flat_dims_of(tensors, self.views)

    def atomized(self, side: sp.Expr, flats: Sequence[FlatDim]) -> sp.Expr:
        """A side with views expanded and every flat index split into its parts."""
        return split_flat_indices(rename_bound_indices(expand_views(side, self.views)), flats)

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        flats = self.flats()
        return (("left-hand side", self.atomized(self.lhs, flats)),
                ("right-hand side", self.atomized(self.rhs, flats)))

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        statement = f"{latex(self.lhs)} = {latex(self.rhs)}"
        if not self.views:
            return statement
        where = r",\quad ".join(v.definition_latex(latex) for v in self.views)
        return rf"{statement} \quad\text{{where }} {where}"

    def validate(self, theorem: Theorem, where: str) -> None:
        names = {x.name for x in theorem.inputs} | {d.name for d in theorem.definitions}
        for view in self.views:
            if view.name in names:
                raise TheoremError(f"{where}: view {view.name!r} has the name of an input or "
                                   "a definition")
            sources = (*theorem.tensors, *theorem.definitions, *self.views)
            if not any(view.source is x for x in sources):
                raise TheoremError(f"{where}: view {view.name!r} lays out {view.source.name}, "
                                   "which is neither an input, a definition nor a view")
        _check_view_entries(self, where)
        used = {str(x.base.label) for e in (self.lhs, self.rhs) for x in e.atoms(sp.Indexed)}
        known = names | {v.name for v in self.views}
        for name in sorted(used - known):
            raise TheoremError(f"{where}: tensor {name} is neither an input, a definition nor "
                               "a view")
        if not self.flats(theorem):
            raise TheoremError(f"{where}: a reshape claim needs a flat dimension (flat(H, D)) "
                               "among its views or inputs")

    def prove(self, theorem: Theorem, bound: int) -> ProofResult:
        flats = self.flats(theorem)
        difference = atomized_difference(theorem, self, flats)
        left = theorem_residual(theorem, difference)
        if left == 0:
            return ProofResult(PROVED, PROVED_METHOD)
        counterexample = exact_counterexample(theorem, difference, flats)
        if counterexample is not None:
            return ProofResult(REFUTED, "exact counterexample at small sizes (flat indices "
                               "split into their parts)", counterexample=counterexample,
                               residual=str(left))
        return ProofResult(NOT_PROVED, "sum normal form left a residual after splitting every "
                           "flat index, and no exact counterexample at sizes <= 3; numeric "
                           "evidence only", residual=str(left))


def _check_view_entries(claim: Reshape, where: str) -> None:
    """Every entry of a view is read in the view's own axis order: an index runs over the
    dimension of the axis it indexes (as for tensors), bound indices included, which the
    statement's check on the expanded sides no longer sees."""
    views = {v.name: v for v in claim.views}
    for side in (claim.lhs, claim.rhs):
        for entry in side.atoms(sp.Indexed):
            view = views.get(str(entry.base.label))
            if view is None:
                continue
            for index, dim in zip(entry.indices, view.dims, strict=True):
                if isinstance(index, sp.Idx) and sp.expand(index.upper + 1 - dim.symbol) != 0:
                    raise TheoremError(
                        f"{where}: index {index} runs over {index.upper + 1} but indexes axis "
                        f"{dim.name} of view {view.name}, whose axes are "
                        f"{[d.name for d in view.dims]} (mismatched shapes)")


def atomized_difference(theorem: Theorem, claim: Reshape, flats: Sequence[FlatDim]) -> sp.Expr:
    """lhs − rhs with views, definitions and vocabulary expanded and flat indices split."""
    lhs, rhs = (theorem.expand(expand_views(side, claim.views)) for side in (claim.lhs, claim.rhs))
    lhs, rhs = claim.atomized(lhs, flats), claim.atomized(rhs, flats)
    return rename_bound_indices(lhs - rhs)


def exact_counterexample(theorem: Theorem, difference: sp.Expr, flats: Sequence[FlatDim],
                         tries: int = 12) -> dict | None:
    """Small sizes (every plain dimension 1, 2, 3) and structured rationals at which lhs − rhs
    is provably nonzero (50 digits)."""
    plain = {d.name: d for t in theorem.tensors for d in plain_dims(t.dims)}

    def sizes_at(theorem: Theorem, largest: int) -> dict[str, int]:
        """Every plain dimension at ``largest`` (or its bound); a flat one at their product."""
        sizes = {name: max(d.sizes.low, min(largest, d.sizes.high)) for name, d in plain.items()}
        for dim in flats:
            sizes[dim.name] = int(sp.Mul(*(sizes[f.name] for f in dim.factors)))
        return sizes

    for sizes, index_values, concrete, values in small_instances(theorem, difference, tries,
                                                                 sizes_at):
        value = exact_value(concrete, values)
        if value is not None and abs(value) > 1e-30:
            used = used_values(concrete, values)
            return describe_counterexample(sizes, index_values, used, value)
    return None
