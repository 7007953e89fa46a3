"""Magnitude rules: the exponents a node raises e to (their abs-scales bound how far a format's
rounding moves the exponential), one ``exponents_<kind>`` per kind that has any."""

from __future__ import annotations

import sympy as sp

from ._emit import Node, Pair, Term


class MagnitudeRules:
    """Mixed into the emitter; a rule runs after the node's value and scale rules. Kinds without
    an ``exponents_<kind>`` rule raise e to nothing."""

    def exponents_of(self, kind: str, expr, node: Node, scale: Term) -> list[Pair]:
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

    def exponents_softmax(self, expr, node: Node, scale: Term) -> list[Pair]:
        return self._shifted_logits(node)

    def exponents_lse(self, expr, node: Node, scale: Term) -> list[Pair]:
        return self._shifted_logits(node)

    def _shifted_logits(self, node: Node) -> list[Pair]:
        return [Pair(node.parts["shifted"], self._logits_scale(node))]
