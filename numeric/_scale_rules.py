"""Error-scale rules: each node's abs-scale (a bound on how far rounding can move its value, same
axes as the value), one ``scale_<kind>`` per kind, from its value and its arguments' pairs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import sympy as sp

from ._emit import Node, Term, index_key

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence

    from sympy.core.relational import Relational

    from attnproof.symbolic import Defined, Indicator, LogSumExp, Rotation, Softmax
    from attnproof.symbolic import ReduceMax as RowMax
    from attnproof.symbolic import ReduceMin as RowMin

    from ._emit import Pair
    from ._stable import KeptMax, ReduceMax


class ScaleRules:
    """Mixed into the emitter; a rule runs right after the node's value rule."""

    if TYPE_CHECKING:
        # what the host provides: primitives of ``_emit.Emitter``, helpers of the value rules
        # (``_value_rules.ValueRules``) and the memoized ``visit`` of ``_compiler._Compilation``,
        # which mixes these rules in
        visit: Callable[[sp.Basic], Pair]

        def typed(self, value: float | sp.Expr) -> Term: ...
        def emit(self, code: str, axes: Iterable[sp.Symbol], batched: bool) -> Term: ...
        def combine(self, terms: Sequence[Term], op: str) -> Term: ...
        def with_axis(self, term: Term, key: sp.Symbol) -> Term: ...
        def _on_axes(self, term: Term, axes: tuple[sp.Symbol, ...]) -> Term: ...
        def _abs_of(self, term: Term) -> Term: ...
        def _one_plus(self, term: Term) -> Term: ...
        def _fold(self, terms: Sequence[Term], function: str) -> Term: ...
        def _mask_guard(self, factors: Sequence[sp.Expr], values: list[Term]) -> list[Term]: ...
        def _range_guard(self, values: list[Term], masks: list[Term]) -> list[Term]: ...
        def _contract(self, operands: Sequence[Term], summed: Collection[sp.Symbol],
                      coefficient: float | sp.Expr, expr: sp.Sum) -> Term: ...
        def _reduce(self, term: Term, keys: Iterable[sp.Symbol], how: str) -> Term: ...
        def _max_over(self, term: Term, key: sp.Symbol) -> Term: ...
        def _in_declared_order(self, term: Term, definition: Defined) -> Term: ...
        def _relabel(self, term: Term, mapping: dict[sp.Symbol, sp.Symbol]) -> Term: ...
        def _select(self, condition: Term, chosen: Term, otherwise: Term) -> Term: ...
        def _product_over(self, term: Term, key: sp.Symbol) -> Term: ...
        def _whole_range(self, expr: RowMin) -> sp.Idx: ...
        def _as_reduce_max(self, expr: RowMax) -> ReduceMax: ...

    # -- leaves ------------------------------------------------------------------------------

    def scale_constant(self, expr: sp.Expr, node: Node) -> Term:
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
        body = self._in_declared_order(_scale(self.visit(definition.body)), definition)
        return self._relabel(body, node.parts["mapping"])

    def scale_delta(self, expr: sp.KroneckerDelta, node: Node) -> Term:
        if index_key(expr.args[0]) == index_key(expr.args[1]):
            return self.scale_constant(sp.S.One, node)
        return node.value

    # -- arithmetic --------------------------------------------------------------------------

    def scale_add(self, expr: sp.Add, node: Node) -> Term:
        return self.combine([_scale(self.visit(arg)) for arg in expr.args], "+")

    def scale_mul(self, expr: sp.Mul, node: Node) -> Term:
        scales = [_scale(self.visit(arg)) for arg in expr.args]
        return self.combine(self._mask_guard(expr.args, scales), "*")

    def scale_pow(self, expr: sp.Pow, node: Node) -> Term:
        base, exponent = expr.args
        b = self.visit(base)
        if exponent.is_Number:
            return self._pow_scale(b, float(exponent))
        return self._general_pow_scale(node.value, b, self.visit(exponent))

    def _pow_scale(self, base: Pair, p: float) -> Term:
        """S(b**p) = S(b)**p for p > 0 (as for a product); S(b)**|p| / |b|**(2|p|) for p < 0."""
        s, v = _scale(base), base.value
        if p == 1:
            return s
        if p > 0:
            return self.emit(f"{s.code} ** {p!r}", s.axes, s.batched)
        q = -p
        return self.combine(
            [self.emit(f"{s.code} ** {q!r}", s.axes, s.batched),
             self.emit(f"xp.abs({v.code}) ** {2 * q!r}", v.axes, v.batched)], "/")

    def _general_pow_scale(self, value: Term, b: Pair, e: Pair) -> Term:
        log_b = self.emit(f"xp.abs(xp.log(xp.abs({b.value.code})))", b.value.axes, b.value.batched)
        rel_b = self.combine([_scale(b), self._abs_of(b.value)], "/")
        growth = self.combine([self.combine([_scale(e), log_b], "*"),
                               self.combine([self._abs_of(e.value), rel_b], "*")], "+")
        return self.combine([self._abs_of(value), self._one_plus(growth)], "*")

    def scale_exp(self, expr: sp.exp, node: Node) -> Term:
        return self.combine([node.value, self._one_plus(_scale(self.visit(expr.args[0])))], "*")

    def scale_log(self, expr: sp.log, node: Node) -> Term:
        if node.parts:
            return self._log_softmax_scale(node)
        a = self.visit(expr.args[0])
        return self.combine(
            [self._abs_of(node.value), self.combine([_scale(a), self._abs_of(a.value)], "/")], "+")

    def scale_index(self, expr: sp.Idx, node: Node) -> Term:
        return node.value  # an exact count, 0, 1, …: its own magnitude

    def scale_cos(self, expr: sp.cos, node: Node) -> Term:
        return self._turn_scale(expr, node)

    def scale_sin(self, expr: sp.sin, node: Node) -> Term:
        return self._turn_scale(expr, node)

    def _turn_scale(self, expr: sp.cos | sp.sin, node: Node) -> Term:
        """|cos x| + S(x), likewise for sin: its own rounding, and a slope of at most 1."""
        return self.combine([self._abs_of(node.value), _scale(self.visit(expr.args[0]))], "+")

    def scale_rotation(self, expr: Rotation, node: Node) -> Term:
        """|cos| |δ| + |sin| |row − column|, each factor's scale as for a product."""
        angle, row, column = expr.args
        parts = _parts(node)
        cos, sin = _scale(self.visit(sp.cos(angle))), _scale(self.visit(sp.sin(angle)))
        return self.combine([self.combine([cos, self._abs_of(parts["identity"])], "*"),
                             self.combine([sin, self._abs_of(parts["turn"])], "*")], "+")

    def scale_mod(self, expr: sp.Mod | sp.floor, node: Node) -> Term:
        return self._abs_of(node.value)  # of exact integers: exact

    scale_floor = scale_mod  # a block number i // B of exact integers

    def scale_piecewise(self, expr: sp.Piecewise, node: Node) -> Term:
        """The chosen piece's scale: the conditions are exact (``value_piecewise``)."""
        *pieces, (otherwise, _) = expr.args
        result = _scale(self.visit(otherwise))
        for value, condition in reversed(pieces):
            result = self._select(self.visit(condition).value, _scale(self.visit(value)), result)
        return result

    def scale_indicator(self, expr: Indicator, node: Node) -> Term:
        return node.value  # exactly 0 or 1

    def scale_compare(self, expr: Relational | sp.And | sp.Or | sp.Not, node: Node) -> Term:
        return node.value  # a condition has no rounding error: it only selects

    scale_all = scale_any = scale_negate = scale_compare

    def scale_abs(self, expr: sp.Abs, node: Node) -> Term:
        return _scale(self.visit(expr.args[0]))

    def scale_max(self, expr: sp.Max, node: Node) -> Term:
        return self._fold([_scale(self.visit(arg)) for arg in expr.args], "xp.maximum")

    def scale_min(self, expr: sp.Min, node: Node) -> Term:
        return self._fold([_scale(self.visit(arg)) for arg in expr.args], "xp.maximum")

    # -- reductions --------------------------------------------------------------------------

    def scale_sum(self, expr: sp.Sum, node: Node) -> Term:
        parts = _parts(node)
        scales = [_scale(self.visit(f)) for f in parts["factors"]]
        return self._contract(self._range_guard(self._mask_guard(parts["factors"], scales),
                                                parts["masks"]),
                              parts["summed"], abs(parts["coefficient"]), expr)

    def scale_product(self, expr: sp.Product, node: Node) -> Term:
        """Π(|f| + s_f) bounds the product and, to first order, every perturbation of its
        factors."""
        f = self.visit(expr.function)
        return self._product_over(self.combine([self._abs_of(f.value), _scale(f)], "+"),
                                  _parts(node)["key"])

    def scale_reduce_max(self, expr: ReduceMax, node: Node) -> Term:
        function, *indices = expr.args
        scale = _scale(self.visit(function))
        for index in indices:
            scale = self._max_over(scale, index_key(index))
        return scale

    def scale_kept_max(self, expr: KeptMax, node: Node) -> Term:
        return self._reduce(_scale(self.visit(expr.args[0])), _parts(node)["keys"], "max")

    def scale_rowmax(self, expr: RowMax, node: Node) -> Term:
        return self.scale_reduce_max(self._as_reduce_max(expr), node)

    def scale_rowmin(self, expr: RowMin, node: Node) -> Term:
        """|min f| ≤ max |f|: the largest abs-scale over the row, as for a maximum."""
        index = self._whole_range(expr)
        return self._reduce(_scale(self.visit(expr.function)), [index_key(index)], "max")

    # -- softmax-like nodes ------------------------------------------------------------------

    def _logits_scale(self, node: Node) -> Term:
        """The abs-scale of the logits a softmax-like node shifted, on the axes it shifted."""
        parts = _parts(node)
        scale = self.with_axis(_scale(self.visit(parts["logits"])), parts["key"])
        return self._on_axes(scale, parts["shifted"].axes) if parts.get("masked") else scale

    def scale_softmax(self, expr: Softmax, node: Node) -> Term:
        parts = _parts(node)
        return self._softmax_scale(node.value, self._logits_scale(node), parts["peak"],
                                   parts["axis"])

    def _softmax_scale(self, p: Term, s_u: Term, peak: Term, axis: int) -> Term:
        """|dp_j| <= p_j (|du_j| + sum_k p_k |du_k|), with du the error of u - max(u)."""
        shifted = self.emit(f"{s_u.code} + xp.abs({peak.code})", p.axes, p.batched)
        mean = self.emit(f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)",
                         p.axes, p.batched)
        return self.emit(f"{p.code} * (1.0 + {shifted.code} + {mean.code})", p.axes, p.batched)

    def scale_lse(self, expr: LogSumExp, node: Node) -> Term:
        parts, value = _parts(node), node.value
        s_u, peak, axis, e = (self._logits_scale(node), parts["peak"], parts["axis"],
                              parts["exponentials"])
        weighted = f"xp.sum({e.code} * ({s_u.code} + xp.abs({peak.code})), axis={axis})"
        mean = f"{weighted} / xp.sum({e.code}, axis={axis})"
        return self.emit(f"xp.abs({value.code}) + {mean}", value.axes, value.batched)

    def _log_softmax_scale(self, node: Node) -> Term:
        value, parts = node.value, _parts(node)
        s_u, peak, axis = self._logits_scale(node), parts["peak"], parts["axis"]
        axes, batched = value.axes, value.batched
        p = self.emit(f"xp.exp({value.code})", axes, batched)
        shifted = self.emit(f"{s_u.code} + xp.abs({peak.code})", axes, batched)
        mean = f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)"
        return self.emit(f"xp.abs({value.code}) + {shifted.code} + {mean}", axes, batched)


def _scale(pair: Pair) -> Term:
    """A node's abs-scale: every node has one while the scale rules run, since they run only
    when the abs-scale is compiled (``_Compilation._visit``)."""
    assert pair.scale is not None
    return pair.scale


def _parts(node: Node) -> dict:
    """The intermediates a node's value rule keeps for its scale rule: set, for the kinds whose
    scale rule reads them."""
    assert node.parts is not None
    return node.parts
