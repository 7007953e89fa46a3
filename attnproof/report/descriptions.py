"""What a report says about a theorem besides its outcome, taken from the declared objects.

The statement, definitions and assumptions are rendered from the same SymPy objects and domains
that the provers and the numeric checker use, so a report cannot drift from what was checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

import sympy as sp

from attnproof import symbolic

if TYPE_CHECKING:
    from attnproof.symbolic import Dim, Scalar, Tensor, Theorem


class Declared(Protocol):
    """What ``declaration`` reads of a theorem: a ``Theorem``, or the declaration of one that a
    worker loaded (``attnproof._sandbox.DeclaredTheorem``)."""

    @property
    def name(self) -> str: ...
    @property
    def source(self) -> object: ...
    @property
    def expect(self) -> str: ...
    @property
    def corrects(self) -> str | None: ...
    @property
    def note(self) -> str | None: ...
    @property
    def unstable_in(self) -> Iterable[str]: ...
    @property
    def denied(self) -> bool: ...
    @property
    def origin(self) -> str: ...


def describe(theorem: Theorem) -> dict[str, Any]:
    """The fields of a ``TheoremResult`` that come from the declaration alone."""
    return {**declaration(theorem), **rendering(theorem)}


def declaration(theorem: Declared) -> dict[str, Any]:
    """The ``describe`` fields that need no rendering (the runner renders in its workers)."""
    return {"name": theorem.name, "source": str(theorem.source), "expect": theorem.expect,
            "corrects": theorem.corrects, "note": theorem.note,
            "unstable_in": list(theorem.unstable_in), "denied": theorem.denied,
            "origin": theorem.origin}


def rendering(theorem: Theorem) -> dict[str, Any]:
    """Statement, definitions and assumptions: the parts that need SymPy's printer."""
    return {
        "statement_latex": symbolic.statement_latex(theorem),
        "definitions_latex": symbolic.definitions_latex(theorem),
        "assumptions": assumptions(theorem),
    }


def assumptions(theorem: Theorem) -> list[dict[str, Any]]:
    """One entry per input and dimension: its LaTeX symbol and, in words, where it lives."""
    own_draws = getattr(theorem.claim, "numeric_draws", None)  # a claim kind's own draws
    entries = [_input_assumption(x, own_draws) for x in theorem.inputs]
    entries += [_dimension_assumption(d) for d in theorem.dims]
    return entries


def _input_assumption(value: Tensor | Scalar, own_draws: str | None) -> dict[str, Any]:
    # here, not at the top: the strategies import Hypothesis, which the command line needs
    # only to check theorems, never to read or re-render results
    from attnproof.numeric import edge_draws

    symbol = getattr(value, "latex", None) or symbolic.latex(sp.Symbol(value.name))
    domain = value.domain.describe()
    edges = edge_draws(value.domain) if isinstance(value, symbolic.Tensor) else None
    if own_draws:
        domain += f"; numeric checks draw {own_draws}"
    elif edges:  # numeric checks leave the declared range on purpose; the reader must know
        domain += f"; numeric checks also draw {edges}"
    return {"name": value.name, "latex": symbol, "domain": domain}


def _dimension_assumption(dim: Dim) -> dict[str, Any]:
    symbol = dim.latex or symbolic.latex(dim.symbol)
    sizes = f"size {dim.sizes.low}–{dim.sizes.high} in numeric checks (symbolic in proofs)"
    return {"name": dim.name, "latex": symbol, "domain": sizes}

