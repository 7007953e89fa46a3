"""Magnitude rules: the exponents a node raises e to (their abs-scales bound how far a format's
rounding moves the exponential), one ``exponents_<kind>`` per kind that has any."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from ._emit import Node, Pair, Term

if TYPE_CHECKING:
    from collections.abc import Callable

    from attnproof.symbolic import LogSumExp, Softmax


class MagnitudeRules:
    """Mixed into the emitter; a rule runs after the node's value and scale rules. Kinds without
    an ``exponents_<kind>`` rule raise e to nothing."""

    if TYPE_CHECKING:
        # what the host provides: the memoized ``visit`` of ``_compiler._Compilation``, which
        # mixes these rules in, and the logits' scale of the scale rules (``_scale_rules``)
        visit: Callable[[sp.Basic], Pair]

        def _logits_scale(self, node: Node) -> Term: ...

    def exponents_of(self, kind: str, expr: sp.Basic, node: Node, scale: Term) -> list[Pair]:
        rule = getattr(self, f"exponents_{kind}", None)
        return [] if rule is None else rule(expr, node, scale)

    def exponents_exp(self, expr: sp.exp, node: Node, scale: Term) -> list[Pair]:
        return [self.visit(expr.args[0])]

    def exponents_cos(self, expr: sp.cos, node: Node, scale: Term) -> list[Pair]:
        # an angle that rounding moves by a radian leaves its cosine unknown, as an exponent
        # moved by 1 leaves its exponential unknown to a factor e
        return [self.visit(expr.args[0])]

    def exponents_sin(self, expr: sp.sin, node: Node, scale: Term) -> list[Pair]:
        return [self.visit(expr.args[0])]

    def exponents_log(self, expr: sp.log, node: Node, scale: Term) -> list[Pair]:
        return self._shifted_logits(node) if node.parts else []  # a fused log-softmax

    def exponents_softmax(self, expr: Softmax, node: Node, scale: Term) -> list[Pair]:
        return self._shifted_logits(node)

    def exponents_lse(self, expr: LogSumExp, node: Node, scale: Term) -> list[Pair]:
        return self._shifted_logits(node)

    def _shifted_logits(self, node: Node) -> list[Pair]:
        assert node.parts is not None  # kept by the value rules of the softmax-like nodes
        return [Pair(node.parts["shifted"], self._logits_scale(node))]
