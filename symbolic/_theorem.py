"""A theorem declared once, as data, and validated when it is declared."""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

import sympy as sp
from sympy.concrete.expr_with_limits import ExprWithLimits
from sympy.core.function import AppliedUndef

from ._kind import Claim, TwoSided
from ._language import (
    Defined,
    Dim,
    Scalar,
    Tensor,
    TheoremError,
    as_expression,
    check_name,
)
from ._normal_form import carry_out_derivatives
from ._vocabulary import expand_vocabulary

EXPECTATIONS = ("holds", "refuted")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # an ASCII Python identifier


__all__ = ["TheoremError"]  # re-exported: it is defined with the language it guards


# The source documents by title (seeds/README.md maps titles to files): reports cite a document
# by the title a reader knows it by, and keep the file name for anything not listed here.
DOCUMENT_TITLES = {
    "000_4cf6f5ddf16e1ebe.txt": "attn-tensors README",
    "001_9db7190c12608696.txt": "Attention as Bilinear Form",
    "002_ef3c412201bbbc34.txt": "Worked example 48",
    "003_7f210888dbe15d95.txt": "Theory notebook",
    # a claim none of the four documents writes down (RoPE's identities): its source names
    # where the claim is from, and the coverage of the documents leaves it out
    "outside": "Outside the documents",
}


@dataclass(frozen=True)
class Source:
    """Where a claim is written: seed file, section, equation numbers."""

    file: str
    section: str
    equations: str = ""

    @property
    def title(self) -> str:
        """The document's title, or its file name when the title is not known."""
        return DOCUMENT_TITLES.get(self.file, self.file)

    def __str__(self) -> str:
        equations = f", eq. {self.equations}" if self.equations else ""
        return f"{self.title} {self.section}{equations}"


def claim_expressions(claim: Claim) -> tuple[tuple[str, sp.Expr], ...]:
    """The statement's expressions, labelled (``Claim.expressions``)."""
    return tuple(claim.expressions())


@dataclass(frozen=True, eq=False)
class Theorem:
    """One claim from the documents, stated in index notation.

    Args:
        name: a unique Python identifier (ASCII), such as ``softmax_rows`` or ``RoPE_relative``;
            unique regardless of case, as report anchors and cache folders are.
        source: where the claim is written.
        claim: ``Equals(lhs, rhs)`` or ``AtLeast(lhs, rhs)`` (either side may hold a
            ``sympy.Derivative`` of an expression with respect to a tensor entry),
            ``Rounds(...)``, or a claim kind (a ``ClaimKind`` subclass: ``Limit``, ...).
        inputs: every tensor and scalar the claim depends on, with their domains.
        definitions: named intermediate tensors, in dependency order.
        expect: ``"holds"``, or ``"refuted"`` for a claim the documents state but is false.
        corrects: for a corrected claim, the name of the refuted claim it replaces.
        lemmas: identities the claim follows from. They prove it only when the prover also
            shows that they (with ``given``) imply it; otherwise the report says "lemmas
            proved; claim checked numerically".
        implementation: ``f(xp, **arrays) -> array`` computing the claim's lhs, for claims
            about an algorithm (a loop) rather than a closed form.
        at: ``f(np, **arrays) -> dict`` mapping drawn float64 inputs to the point where the
            claim is asserted (e.g. a fixed point); a boolean ``"valid"`` entry marks the rows
            where that point was reached, and only those rows count as instances. The hook is
            an assumption: the prover never refutes the claim at a point it cannot produce,
            and proves it only from the conditions stated in ``given``.
        given: identities every point ``at`` produces satisfies (e.g. ξ = Kᵀ softmax(βKξ) at a
            fixed point); the prover may use them, together with ``lemmas``, to prove the
            claim under them.
        unstable_in: lower formats (``"float16"``, ...) in which evaluating the claim as
            written is known to fail its stability check; the report still says "holds;
            unstable in float16", but the run passes when the instability is the declared one
            (as a refutation is when ``expect="refuted"``). The note says why.
        denied: the document says this statement is false (e.g. "standard gradient descent
            does not have this property"); it is stated as the document denies it, with
            ``expect="refuted"``, so its refutation confirms the document and is no erratum.
        note: one or two sentences a reader needs, such as what was corrected.
        dimensions: dimensions the statement uses only through indices (Σ over p < P, an
            index as a number), with their sizes; a Dim listed among ``inputs`` lands here.
            An index over a dimension declared nowhere runs over ``Dim(name)``'s default sizes.
    """

    name: str
    source: Source
    claim: Claim
    inputs: tuple[Tensor | Scalar, ...]
    definitions: tuple[Defined, ...] = ()
    expect: str = "holds"
    corrects: str | None = None
    lemmas: tuple[Claim, ...] = ()
    implementation: Callable | None = None
    at: Callable | None = None
    given: tuple[Claim, ...] = ()
    unstable_in: tuple[str, ...] = ()
    denied: bool = False
    note: str = ""
    dimensions: tuple[Dim, ...] = ()
    origin: str = field(default="<unknown>", compare=False)

    if TYPE_CHECKING:
        # The constructor as a declaration calls it: ``inputs`` may list a Dim, which
        # ``__post_init__`` moves to ``dimensions``, so the field never holds one. The dataclass
        # writes the real ``__init__``; this one exists for the type checker alone, and a test
        # (tests/symbolic/test_theorem_signature.py) keeps it in step with the fields.
        def __init__(self, name: str, source: Source, claim: Claim,
                     inputs: tuple[Tensor | Scalar | Dim, ...],
                     definitions: tuple[Defined, ...] = (), expect: str = "holds",
                     corrects: str | None = None, lemmas: tuple[Claim, ...] = (),
                     implementation: Callable | None = None, at: Callable | None = None,
                     given: tuple[Claim, ...] = (), unstable_in: tuple[str, ...] = (),
                     denied: bool = False, note: str = "", dimensions: tuple[Dim, ...] = (),
                     origin: str = "<unknown>") -> None: ...

    def __post_init__(self) -> None:
        # a Dim among the inputs is a dimension the statement uses through indices alone
        declared = tuple(x for x in self.inputs if isinstance(x, Dim))
        object.__setattr__(self, "inputs", tuple(x for x in self.inputs if not isinstance(x, Dim)))
        object.__setattr__(self, "dimensions", (*self.dimensions, *declared))
        object.__setattr__(self, "definitions", tuple(self.definitions))
        object.__setattr__(self, "lemmas", tuple(self.lemmas))
        object.__setattr__(self, "given", tuple(self.given))
        _validate(self)

    def loaded_from(self, origin: str) -> Theorem:
        """This theorem as found in the file ``origin``: a copy with that origin, not validated
        again (nothing the validation reads depends on where the file is, and it is most of the
        catalog's load time)."""
        located = copy.copy(self)
        object.__setattr__(located, "origin", origin)
        return located

    # -- derived views -------------------------------------------------------------------

    @property
    def tensors(self) -> tuple[Tensor, ...]:
        return tuple(x for x in self.inputs if isinstance(x, Tensor))

    @property
    def scalars(self) -> tuple[Scalar, ...]:
        return tuple(x for x in self.inputs if isinstance(x, Scalar))

    @property
    def dims(self) -> tuple[Dim, ...]:
        """Every dimension: of the tensors, declared (``dimensions``, or a Dim among the
        inputs), then any other an index of the statement runs over, at the default sizes."""
        seen: dict[str, Dim] = {}
        tensors = (*self.tensors, *_unknowns(self))
        for dim in (*(d for t in tensors for d in t.dims), *self.dimensions):
            seen.setdefault(dim.name, dim)
        others = sorted(_statement_indices(self) - set(self.free_indices), key=str)
        for index in (*self.free_indices, *others):
            seen.setdefault(str(index.upper + 1), Dim(str(index.upper + 1)))
        return tuple(seen.values())

    @property
    def free_indices(self) -> tuple[sp.Idx, ...]:
        """The claim's free indices, in order of first appearance on the left-hand side."""
        return ordered_free_indices(*(expr for _, expr in claim_expressions(self.claim)))

    def expand(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with definitions and vocabulary expanded and derivatives carried out."""
        return _expanded(self, sp.sympify(expr))

    def expand_definitions(self, expr: sp.Expr) -> sp.Expr:
        by_base = {d.base: d for d in self.definitions}
        while True:
            found = [x for x in expr.atoms(sp.Indexed) if x.base in by_base]
            if not found:
                return expr
            expr = expr.xreplace({x: by_base[x.base].at(x.indices) for x in found})


@functools.lru_cache(maxsize=1024)
def _expanded(theorem: Theorem, expr: sp.Expr) -> sp.Expr:
    """Once per theorem and expression: the prover, the compiler for each backend and the
    exact reference all ask for the same expansions, and derivatives cost seconds."""
    expr = theorem.expand_definitions(expr)
    return carry_out_derivatives(expand_vocabulary(expr))


def _statement_indices(theorem: Theorem) -> set[sp.Idx]:
    """Every index, free or bound, of the statement's expressions, whose range is a dimension
    (its upper bound one less than a single size symbol)."""
    found: set[sp.Idx] = set()
    for _, expr in _statement_parts(theorem):
        found |= {i for i in sp.sympify(expr).atoms(sp.Idx)
                  if i.upper is not None and (i.upper + 1).is_Symbol}
    return found


def free_indices(expr: sp.Expr) -> set[sp.Idx]:
    """Indices that occur in ``expr`` outside the limits of every sum that binds them."""
    if isinstance(expr, sp.Idx):
        return {expr}
    if isinstance(expr, ExprWithLimits):
        bound = {limit[0] for limit in expr.limits}
        inner = free_indices(expr.function)
        for limit in expr.limits:
            for bound_expr in limit[1:]:
                inner |= free_indices(bound_expr)
        return {x for x in inner if x not in bound and x.label not in bound}
    if isinstance(expr, sp.Derivative):
        found = free_indices(expr.expr)
        for variable, _ in expr.variable_count:
            found |= free_indices(variable)
        return found
    found = set()
    for arg in getattr(expr, "args", ()):
        found |= free_indices(arg)
    return found


def ordered_free_indices(*exprs: sp.Expr) -> tuple[sp.Idx, ...]:
    free: set[sp.Idx] = set().union(*(free_indices(e) for e in exprs))
    ordered: list[sp.Idx] = []
    for expr in exprs:
        for node in sp.preorder_traversal(expr):
            if isinstance(node, sp.Idx) and node in free and node not in ordered:
                ordered.append(node)
    return tuple(ordered)


# -- validation ----------------------------------------------------------------------------


def _validate(theorem: Theorem) -> None:
    where = f"theorem {theorem.name!r}"
    if not _NAME.match(theorem.name):
        raise TheoremError(f"{where}: name must be a Python identifier in ASCII letters, digits "
                           "and _ (such as RoPE_relative)")
    if theorem.expect not in EXPECTATIONS:
        raise TheoremError(f"{where}: expect must be one of {EXPECTATIONS}, got {theorem.expect!r}")
    if theorem.denied and (theorem.expect != "refuted" or theorem.corrects):
        raise TheoremError(f"{where}: a statement the document denies (denied=True) is expected "
                           "to be refuted and corrects nothing")
    if not all(isinstance(d, str) and d != "float64" for d in theorem.unstable_in):
        raise TheoremError(f"{where}: unstable_in names lower formats such as 'float16', "
                           f"got {theorem.unstable_in!r}")
    if not isinstance(theorem.claim, Claim):
        raise TheoremError(f"{where}: claim must be Equals(...), AtLeast(...), Rounds(...) or "
                           f"a claim kind (Limit(...), ...), got {type(theorem.claim).__name__}")
    for number, lemma in enumerate(theorem.lemmas, 1):
        if not (isinstance(lemma, Claim) and lemma.serves_as_lemma):
            raise TheoremError(f"{where}: lemma {number} must be Equals(...) or AtLeast(...), "
                               f"got {type(lemma).__name__}")
    # a stated condition is read as lhs − rhs as a lemma is (other claims have no two sides)
    for number, condition in enumerate(theorem.given, 1):
        if not (isinstance(condition, Claim) and condition.serves_as_lemma):
            raise TheoremError(f"{where}: condition {number} must be Equals(...) or "
                               f"AtLeast(...), got {type(condition).__name__}")
    _check_names_unique(theorem, where)
    for part, expr in _statement_parts(theorem):
        _check_code_is_given(theorem, expr, f"{where}, {part}")
        check_names_valid(expr, f"{where}, {part}")
        check_symbols_covered(theorem, expr, f"{where}, {part}")
        check_shapes(theorem, expr, f"{where}, {part}")
    theorem.claim.validate(theorem, where)


def relation_sides(relation: Claim) -> TwoSided:
    """A lemma's or a stated condition's two sides: a theorem admits as either only a claim that
    serves as a lemma (``Equals``, ``AtLeast``: a relation between two sides)."""
    return cast(TwoSided, relation)  # validated (``_validate``), so two-sided by construction


def _statement_parts(theorem: Theorem) -> Iterator[tuple[str, sp.Expr]]:
    yield from claim_expressions(theorem.claim)
    for definition in theorem.definitions:
        yield f"definition of {definition.name}", definition.body
    for number, lemma in enumerate(map(relation_sides, theorem.lemmas), 1):
        what = f"lemma {number}"
        yield what, as_expression(lemma.lhs, what) - as_expression(lemma.rhs, what)
    for number, condition in enumerate(map(relation_sides, theorem.given), 1):
        what = f"condition {number}"
        yield what, as_expression(condition.lhs, what) - as_expression(condition.rhs, what)


def _check_code_is_given(theorem: Theorem, expr: sp.Expr, where: str) -> None:
    """An undefined function (``sp.Function("Impl")(i, j)``) stands for the code under test:
    without ``implementation=`` nothing could evaluate it, and the checks would end in an error
    of the compiler long after the declaration."""
    if theorem.implementation is not None:
        return
    applied = sorted({str(f) for f in expr.atoms(AppliedUndef)})
    if applied:
        raise TheoremError(
            f"{where}: {applied[0]} is an undefined function, which stands for the code under "
            "test, but the theorem has no implementation= (a function f(xp, **arrays) that "
            f"computes it); pass implementation=, or write out the expression {applied[0]} "
            "means")


def check_names_valid(expr: sp.Expr, where: str) -> None:
    """Names built with SymPy directly (not through Dim, Tensor, Scalar) are checked too."""
    named = [(i.label, "index") for i in expr.atoms(sp.Idx)]
    named += [(b.label, "tensor") for b in expr.atoms(sp.IndexedBase)]
    named += [(s, "symbol") for s in _plain_symbols(expr)]
    for label, what in named:
        try:
            check_name(str(label), what)
        except TheoremError as error:
            raise TheoremError(f"{where}: {error}") from None


def _check_names_unique(theorem: Theorem, where: str) -> None:
    names = [x.name for x in theorem.inputs] + [d.name for d in theorem.definitions]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TheoremError(f"{where}: symbol {duplicates[0]!r} is declared twice")


def check_symbols_covered(theorem: Theorem, expr: sp.Expr, where: str) -> None:
    """Every tensor, scalar and dimension of ``expr`` is declared by ``theorem``."""
    known_bases = {t.name for t in theorem.tensors} | {d.name for d in theorem.definitions}
    known_bases |= {t.name for t in _unknowns(theorem)}
    for indexed in expr.atoms(sp.Indexed):
        if str(indexed.base) not in known_bases:
            raise TheoremError(
                f"{where}: tensor {indexed.base} is not among the inputs or definitions, "
                "so no strategy can draw it"
            )
    known_symbols = {s.name for s in theorem.scalars} | {d.name for d in _all_dims(theorem)}
    for symbol in _plain_symbols(expr):
        if symbol.name not in known_symbols:
            raise TheoremError(
                f"{where}: symbol {symbol} is neither an input scalar nor a dimension, "
                "so no strategy can draw it"
            )


def _plain_symbols(expr: sp.Expr) -> set[sp.Symbol]:
    """Free symbols that are not indices, dummies, tensor bases or index labels."""
    labels = {i.label for i in expr.atoms(sp.Idx)}
    bases = {b.label for b in expr.atoms(sp.IndexedBase)}
    return {
        s
        for s in expr.free_symbols
        if isinstance(s, sp.Symbol)
        and not isinstance(s, (sp.Dummy, sp.Idx))
        and s not in labels
        and s not in bases
    }


def _unknowns(theorem: Theorem) -> tuple[Tensor, ...]:
    return theorem.claim.unknowns()


def _all_dims(theorem: Theorem) -> set[Dim]:
    dims = {dim for tensor in theorem.tensors for dim in tensor.dims} | set(theorem.dims)
    dims |= {factor for dim in dims for factor in getattr(dim, "factors", ())}  # of H·D: H, D
    for definition in theorem.definitions:
        dims |= {Dim(str(i.upper + 1)) for i in definition.indices}
    return dims


def check_shapes(theorem: Theorem, expr: sp.Expr, where: str) -> None:
    """Every entry of ``expr`` has its tensor's number of indices, each fitting its axis."""
    axes = {t.name: t.dims for t in (*theorem.tensors, *_unknowns(theorem))}
    for definition in theorem.definitions:
        axes[definition.name] = tuple(Dim(str(i.upper + 1)) for i in definition.indices)
    for indexed in expr.atoms(sp.Indexed):
        name = str(indexed.base)
        dims = axes.get(name)
        if dims is None:
            continue
        if len(indexed.indices) != len(dims):
            raise TheoremError(
                f"{where}: {name} has {len(dims)} axes but is indexed as {indexed}"
            )
        for index, dim in zip(indexed.indices, dims, strict=True):
            _check_index_fits(index, dim, name, where)


def _check_index_fits(index: sp.Expr, dim: Dim, name: str, where: str) -> None:
    if isinstance(index, sp.Idx) and str(index.upper + 1) != dim.name:
        raise TheoremError(
            f"{where}: index {index} runs over {index.upper + 1} but indexes axis "
            f"{dim.name} of {name} (mismatched shapes)"
        )
