"""Error-scale rules: each node's abs-scale (a bound on how far rounding can move its value, same
axes as the value), one ``scale_<kind>`` per kind, from its value and its arguments' pairs."""

from __future__ import annotations

import sympy as sp

from ._emit import Node, Term, index_key


class ScaleRules:
    """Mixed into the emitter; a rule runs right after the node's value rule."""

    # -- leaves ------------------------------------------------------------------------------

    def scale_constant(self, expr, node: Node) -> Term:
        return self.typed(abs(expr))

    def scale_symbol(self, expr: sp.Symbol, node: Node) -> Term:
        value = node.value
        if not value.batched:
            return Term(f"abs({value.code})", (), False)
        return self._abs_of(value)

    def scale_indexed(self, expr: sp.Indexed, node: Node) -> Term:
        if not node.parts:
            return self._abs_of(node.value)
        definition = node.parts["definition"]
        body = self._in_declared_order(self.visit(definition.body).scale, definition)
        return self._relabel(body, node.parts["mapping"])

    def scale_delta(self, expr: sp.KroneckerDelta, node: Node) -> Term:
        if index_key(expr.args[0]) == index_key(expr.args[1]):
            return self.scale_constant(sp.S.One, node)
        return node.value

    # -- arithmetic --------------------------------------------------------------------------

    def scale_add(self, expr: sp.Add, node: Node) -> Term:
        return self.combine([self.visit(arg).scale for arg in expr.args], "+")

    def scale_mul(self, expr: sp.Mul, node: Node) -> Term:
        scales = [self.visit(arg).scale for arg in expr.args]
        return self.combine(self._mask_guard(expr.args, scales), "*")

    def scale_pow(self, expr: sp.Pow, node: Node) -> Term:
        base, exponent = expr.args
        b = self.visit(base)
        if exponent.is_Number:
            return self._pow_scale(b, float(exponent))
        return self._general_pow_scale(node.value, b, self.visit(exponent))

    def _pow_scale(self, base, p: float) -> Term:
        """S(b**p) = S(b)**p for p > 0 (as for a product); S(b)**|p| / |b|**(2|p|) for p < 0."""
        s, v = base.scale, base.value
        if p == 1:
            return s
        if p > 0:
            return self.emit(f"{s.code} ** {p!r}", s.axes, s.batched)
        q = -p
        return self.combine(
            [self.emit(f"{s.code} ** {q!r}", s.axes, s.batched),
             self.emit(f"xp.abs({v.code}) ** {2 * q!r}", v.axes, v.batched)], "/")

    def _general_pow_scale(self, value: Term, b, e) -> Term:
        log_b = self.emit(f"xp.abs(xp.log(xp.abs({b.value.code})))", b.value.axes, b.value.batched)
        rel_b = self.combine([b.scale, self._abs_of(b.value)], "/")
        growth = self.combine([self.combine([e.scale, log_b], "*"),
                               self.combine([self._abs_of(e.value), rel_b], "*")], "+")
        return self.combine([self._abs_of(value), self._one_plus(growth)], "*")

    def scale_exp(self, expr: sp.exp, node: Node) -> Term:
        return self.combine([node.value, self._one_plus(self.visit(expr.args[0]).scale)], "*")

    def scale_log(self, expr: sp.log, node: Node) -> Term:
        if node.parts:
            return self._log_softmax_scale(node)
        a = self.visit(expr.args[0])
        return self.combine(
            [self._abs_of(node.value), self.combine([a.scale, self._abs_of(a.value)], "/")], "+")

    def scale_index(self, expr, node: Node) -> Term:
        return node.value  # an exact count, 0, 1, …: its own magnitude

    def scale_cos(self, expr: sp.cos, node: Node) -> Term:
        return self._turn_scale(expr, node)

    def scale_sin(self, expr: sp.sin, node: Node) -> Term:
        return self._turn_scale(expr, node)

    def _turn_scale(self, expr, node: Node) -> Term:
        """|cos x| + S(x), likewise for sin: its own rounding, and a slope of at most 1."""
        return self.combine([self._abs_of(node.value), self.visit(expr.args[0]).scale], "+")

    def scale_rotation(self, expr, node: Node) -> Term:
        """|cos| |δ| + |sin| |row − column|, each factor's scale as for a product."""
        angle, row, column = expr.args
        parts = node.parts
        cos, sin = self.visit(sp.cos(angle)).scale, self.visit(sp.sin(angle)).scale
        return self.combine([self.combine([cos, self._abs_of(parts["identity"])], "*"),
                             self.combine([sin, self._abs_of(parts["turn"])], "*")], "+")

    def scale_mod(self, expr, node: Node) -> Term:
        return self._abs_of(node.value)  # of exact integers: exact

    scale_floor = scale_mod  # a block number i // B of exact integers

    def scale_piecewise(self, expr: sp.Piecewise, node: Node) -> Term:
        """The chosen piece's scale: the conditions are exact (``value_piecewise``)."""
        *pieces, (otherwise, _) = expr.args
        result = self.visit(otherwise).scale
        for value, condition in reversed(pieces):
            result = self._select(self.visit(condition).value, self.visit(value).scale, result)
        return result

    def scale_indicator(self, expr, node: Node) -> Term:
        return node.value  # exactly 0 or 1

    def scale_compare(self, expr, node: Node) -> Term:
        return node.value  # a condition has no rounding error: it only selects

    scale_all = scale_any = scale_negate = scale_compare

    def scale_abs(self, expr: sp.Abs, node: Node) -> Term:
        return self.visit(expr.args[0]).scale

    def scale_max(self, expr, node: Node) -> Term:
        return self._fold([self.visit(arg).scale for arg in expr.args], "xp.maximum")

    def scale_min(self, expr, node: Node) -> Term:
        return self._fold([self.visit(arg).scale for arg in expr.args], "xp.maximum")

    # -- reductions --------------------------------------------------------------------------

    def scale_sum(self, expr: sp.Sum, node: Node) -> Term:
        parts = node.parts
        scales = [self.visit(f).scale for f in parts["factors"]]
        return self._contract(self._range_guard(self._mask_guard(parts["factors"], scales),
                                                parts["masks"]),
                              parts["summed"], abs(parts["coefficient"]), expr)

    def scale_product(self, expr: sp.Product, node: Node) -> Term:
        """Π(|f| + s_f) bounds the product and, to first order, every perturbation of its
        factors."""
        f = self.visit(expr.function)
        return self._product_over(self.combine([self._abs_of(f.value), f.scale], "+"),
                                  node.parts["key"])

    def scale_reduce_max(self, expr, node: Node) -> Term:
        function, *indices = expr.args
        scale = self.visit(function).scale
        for index in indices:
            scale = self._max_over(scale, index_key(index))
        return scale

    def scale_kept_max(self, expr, node: Node) -> Term:
        return self._reduce(self.visit(expr.args[0]).scale, node.parts["keys"], "max")

    def scale_rowmax(self, expr, node: Node) -> Term:
        return self.scale_reduce_max(self._as_reduce_max(expr), node)

    def scale_rowmin(self, expr, node: Node) -> Term:
        """|min f| ≤ max |f|: the largest abs-scale over the row, as for a maximum."""
        index = self._whole_range(expr)
        return self._reduce(self.visit(expr.function).scale, [index_key(index)], "max")

    # -- softmax-like nodes ------------------------------------------------------------------

    def _logits_scale(self, node: Node) -> Term:
        """The abs-scale of the logits a softmax-like node shifted, on the axes it shifted."""
        parts = node.parts
        scale = self.with_axis(self.visit(parts["logits"]).scale, parts["key"])
        return self._on_axes(scale, parts["shifted"].axes) if parts.get("masked") else scale

    def scale_softmax(self, expr, node: Node) -> Term:
        parts = node.parts
        return self._softmax_scale(node.value, self._logits_scale(node), parts["peak"],
                                   parts["axis"])

    def _softmax_scale(self, p: Term, s_u: Term, peak: Term, axis: int) -> Term:
        """|dp_j| <= p_j (|du_j| + sum_k p_k |du_k|), with du the error of u - max(u)."""
        shifted = self.emit(f"{s_u.code} + xp.abs({peak.code})", p.axes, p.batched)
        mean = self.emit(f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)",
                         p.axes, p.batched)
        return self.emit(f"{p.code} * (1.0 + {shifted.code} + {mean.code})", p.axes, p.batched)

    def scale_lse(self, expr, node: Node) -> Term:
        parts, value = node.parts, node.value
        s_u, peak, axis, e = (self._logits_scale(node), parts["peak"], parts["axis"],
                              parts["exponentials"])
        weighted = f"xp.sum({e.code} * ({s_u.code} + xp.abs({peak.code})), axis={axis})"
        mean = f"{weighted} / xp.sum({e.code}, axis={axis})"
        return self.emit(f"xp.abs({value.code}) + {mean}", value.axes, value.batched)

    def _log_softmax_scale(self, node: Node) -> Term:
        value, parts = node.value, node.parts
        s_u, peak, axis = self._logits_scale(node), parts["peak"], parts["axis"]
        axes, batched = value.axes, value.batched
        p = self.emit(f"xp.exp({value.code})", axes, batched)
        shifted = self.emit(f"{s_u.code} + xp.abs({peak.code})", axes, batched)
        mean = f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)"
        return self.emit(f"xp.abs({value.code}) + {shifted.code} + {mean}", axes, batched)
