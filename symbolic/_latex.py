"""LaTeX rendering of statements, from the very SymPy objects the provers and compiler use."""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter

from ._theorem import Theorem


class StatementPrinter(LatexPrinter):
    """Indices print as their bare names (no ranges); tensors as ``S_{ij}``."""

    def _print_Idx(self, expr: sp.Idx) -> str:
        return self._print(expr.label)

    def _print_Dummy(self, expr: sp.Dummy) -> str:
        return expr.name.rstrip("0123456789") or "k"

    def _print_Indexed(self, expr: sp.Indexed) -> str:
        base = self._print(expr.base.label)
        indices = " ".join(self._print(i) for i in expr.indices)
        if "_" in base or "^" in base:  # W_K[h, b] is {W_{K}}_{h b}: TeX has no double subscript
            base = f"{{{base}}}"
        return f"{base}_{{{indices}}}"

    def _print_Derivative(self, expr: sp.Derivative) -> str:
        variables = " ".join(rf"\partial {self._print(v)}" for v, _ in expr.variable_count)
        return rf"\frac{{\partial {self.parenthesize(expr.expr, 0)}}}{{{variables}}}"


def latex(expr: sp.Expr) -> str:
    return StatementPrinter().doprint(expr)


def statement_latex(theorem: Theorem) -> str:
    """The claim as one display formula, e.g. ``\\frac{∂A_{ij}}{∂S_{mn}} = …``."""
    return theorem.claim.to_latex(latex)


def definitions_latex(theorem: Theorem) -> list[str]:
    """Each definition as ``A_{ij} = …``, in declaration order."""
    return [f"{latex(d[d.indices])} = {latex(d.body)}" for d in theorem.definitions]
