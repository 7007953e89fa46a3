"""The contract of a claim: what every claim supplies to be checked.

Every claim is a ``Claim``, so the prover, the LaTeX printer, the search, the backends and the
decision ask the claim object what to do and never branch on its type. An identity (``Equals``),
an inequality checked numerically (``AtLeast``) and worked numbers (``Rounds``) are built in
(``symbolic/_claims.py``); every other kind of claim the documents make (a limit, an inequality
proved from known facts, an IEEE value, a statistical statement, ...) is a subclass of
``ClaimKind`` that brings its own four parts:

1. ``to_latex``: the statement, rendered from the very SymPy objects the routes check;
2. ``prove``: the symbolic route, returning a ``ProofResult`` whose ``method`` says exactly what
   "proved" means for the kind (all sizes, sizes <= k, exact enumeration, a series to a stated
   order, ...) and under which assumptions;
3. the numeric route: a function in ``numeric/kinds/`` registered for the kind's class with
   ``@numeric_route(Kind)`` (``numeric/route.py``), called in a worker as
   ``route(theorem, where, profile, seed)`` to return the ``Evidence`` it saw, which the
   driver settles into a record (``numeric/_driver.py``); ``numeric_configurations`` keeps
   the configurations the kind makes sense for (none: the symbolic route settles it alone).
   The built-in identity and inequality register none: the compiled search is their numeric route;
4. the exact refutation route, inside ``prove``: small sizes, rationals, special values and
   boundary points, returning ``REFUTED`` with a readable ``counterexample``.

Kinds live in ``symbolic/kinds/`` (statement and symbolic route: SymPy only) and
``numeric/kinds/`` (numeric route: loads array backends), one module per kind in each; they
import what they use from the route toolkits ``symbolic/route.py`` and ``numeric/route.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TypeVar

import sympy as sp

if TYPE_CHECKING:
    from ._language import Tensor

class Configured(Protocol):
    """One numeric configuration as a claim reads it, by the names of its fields (the checker's
    ``Configuration``)."""

    @property
    def backend(self) -> str: ...
    @property
    def dtype(self) -> str: ...
    @property
    def device(self) -> str: ...
    @property
    def mode(self) -> str: ...


# the checker passes its own configurations, and a kind keeps some of them, so what it returns
# has their type
AnyConfiguration = TypeVar("AnyConfiguration", bound=Configured)


class Claim:
    """What every claim supplies; subclasses are frozen dataclasses.

    Attributes a subclass sets:
        kind: the kind's name as reports print it ("limit", "IEEE value", ...).
        relation: the LaTeX relation between the statement's two sides.
        has_numeric_route: whether ``numeric/kinds/`` registers a numeric route for the kind
            (False: the compiled search checks it, in the configurations
            ``numeric_configurations`` keeps, or nothing numeric does).
        numeric_draws: the numeric route's draws in words, when they are its own.
        measures_rounding: whether its numeric records report an error in ulps.
        truth_measure: how a numeric comparison of the two sides says the claim is false.
        nothing_to_draw: why no numeric configuration checks the claim, when none does.
        numeric_needs: what its numeric route needs of a backend (the rows' capabilities).
    """

    kind: str = "claim"
    if TYPE_CHECKING:
        # read-only to type checkers: a kind may derive it (``Cost``: from its order) where the
        # others set a class attribute
        @property
        def relation(self) -> str: ...
    else:
        relation = "="
    has_numeric_route: bool = True
    # What the numeric route draws, in words, when it does not draw as the compiled search
    # does (structured draws, range ends, scaled rows): the report's assumptions print this
    # instead, so that they say what was sampled. None: the compiled search's draws.
    numeric_draws: str | None = None
    # False for a kind whose numeric route compares exact counts, not rounded values: its
    # records carry no error in ulps, and nothing requires one.
    measures_rounding: bool = True
    # False for a kind whose symbolic route derives an upper bound and so can prove but never
    # refute (error bounds): only its numeric route shows a claim false.
    refutes_exactly: bool = True
    # How the numeric decision measures a comparison of the two sides in ulps: "distance"
    # (|lhs - rhs|: an identity, and every kind unless it says otherwise) or "shortfall" (how far
    # lhs falls below rhs: an inequality lhs >= rhs, where lhs above rhs is no error).
    truth_measure: str = "distance"
    # Set when the claim has no inputs to draw and so no numeric configuration (worked numbers:
    # evaluated exactly by the symbolic side); the text is the reason a numeric record gives.
    nothing_to_draw: str | None = None
    # What the numeric route needs of a backend beyond running the statement (a cost's counted
    # arrays), by the names of ``numeric/_backends.CAPABILITIES``: only the configurations of
    # a backend row that gives all of them check the claim. The kind names no backend.
    numeric_needs: frozenset[str] = frozenset()
    # The formats the numeric route checks, by name (None: every format a backend has): a kind
    # whose route decides with a backend's eigen solver or SVD keeps float64 and float32.
    numeric_formats: tuple[str, ...] | None = None
    # Whether lemmas and stated conditions may imply the claim as a linear combination of their
    # lhs - rhs (identities only: a sum of inequalities says nothing of their differences).
    combines_linearly: bool = False
    # Whether the claim may be a theorem's lemma or stated condition: a relation between two
    # sides (``Equals``, ``AtLeast``), whose lhs - rhs the prover combines and checks.
    serves_as_lemma: bool = False

    def expressions(self) -> tuple[tuple[str, sp.Expr], ...]:
        """Every expression of the statement, labelled for error messages ("left-hand side",
        "limit", ...): the theorem validates their names, symbols and shapes, and takes its
        dimensions and free indices from them."""
        raise NotImplementedError

    def to_latex(self, latex: Callable[[sp.Expr], str]) -> str:
        """The statement as one display formula; ``latex`` prints one expression."""
        raise NotImplementedError

    # ``prove``, ``searched_as`` and ``validate`` take a Theorem (and ``prove`` gives a
    # ProofResult), which the kinds' overrides say; here they stay unannotated, as the modules
    # defining both import this one, and the package's import graph has no cycle, type-only
    # imports included (tests/packaging/test_import_graph.py)
    def prove(self, theorem, bound: int):
        """Prove or refute exactly; return a ``ProofResult`` (symbolic/route.py)."""
        raise NotImplementedError

    def numeric_configurations(self, found: list[AnyConfiguration]) -> list[AnyConfiguration]:
        """The configurations this kind is checked on: none without a numeric route, else those
        of ``found`` in its ``numeric_formats``."""
        if not self.has_numeric_route:
            return []
        formats = self.numeric_formats
        return found if formats is None else [c for c in found if c.dtype in formats]

    def searched_as(self, theorem):
        """The theorem the compiled search checks for this claim, where a kind's route runs it
        on another statement (an existence claim: the identity its witness makes; an
        inequality: the built-in ``AtLeast``); a one-batch replay rebuilds that one."""
        return theorem

    def unknowns(self) -> tuple[Tensor, ...]:
        """Tensors the claim itself quantifies (the A of "there exists A"): not inputs, so no
        strategy draws them, but known to the statement's checks like declared tensors."""
        return ()

    def validate(self, theorem, where: str) -> None:
        """Kind-specific checks of a declaration; raise ``TheoremError`` naming ``where``."""


class ClaimKind(Claim):
    """Base class of a claim kind beyond the three built in: a frozen dataclass in
    ``symbolic/kinds/`` whose numeric route, if it has one, ``numeric/kinds/`` registers."""


class TwoSided(Protocol):
    """A statement of two sides, ``lhs`` and ``rhs`` (``Equals``, ``AtLeast``, ``Rounds`` and the
    kinds stated so): what lhs − rhs and the checks of the two sides read of a claim."""

    @property
    def lhs(self) -> sp.Expr: ...

    @property
    def rhs(self) -> sp.Expr: ...
