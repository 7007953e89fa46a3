"""Value rules: the array code of each vocabulary node's value, one ``value_<kind>`` per kind."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

import sympy as sp
from sympy.printing.str import StrPrinter

from attnproof.symbolic import Defined, Indicator, LogSumExp, Rotation, Softmax

from ._emit import Node, Term, factors_of, identifier, index_key, union
from ._stable import KeptMax, ReduceMax

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Sequence

    from sympy.core.relational import Relational

    from attnproof.symbolic import Dim, Scalar, Tensor
    from attnproof.symbolic import ReduceMax as RowMax
    from attnproof.symbolic import ReduceMin as RowMin

    from ._emit import Pair


class ValueRules:
    """Mixed into the emitter. Where an error scale is compiled (``self.abs``), softmax-like
    nodes keep the spelling whose shifted logits the scale rules bound."""

    if TYPE_CHECKING:
        # what the host provides: the state and primitives of ``_emit.Emitter`` and the memoized
        # ``visit`` of ``_compiler._Compilation``, which mixes these rules in
        tensors: dict[str, Tensor]
        scalars: dict[str, Scalar]
        definitions: dict[str, Defined]
        abs: bool
        sizes: dict[sp.Symbol, sp.Expr]
        preferred_order: list[tuple]
        visit: Callable[[sp.Basic], Pair]

        def typed(self, value: float | sp.Expr) -> Term: ...
        def emit(self, code: str, axes: Iterable[sp.Symbol], batched: bool) -> Term: ...
        def _note_index(self, index: sp.Basic, size: sp.Expr | None = None) -> None: ...
        def _size_code(self, key: sp.Symbol) -> str: ...
        def _use_symbol(self, symbol: sp.Symbol) -> None: ...
        def _use_input(self, name: str) -> None: ...
        def _is_integer(self, name: str) -> bool: ...
        def align(self, term: Term, target: Sequence[sp.Symbol], batch: bool = False) -> str: ...
        def combine(self, terms: Sequence[Term], op: str) -> Term: ...
        def with_axis(self, term: Term, key: sp.Symbol) -> Term: ...
        def axis_of(self, term: Term, key: sp.Symbol) -> int: ...
        def _diagonal(self, term: Term) -> Term: ...
        def _abs_of(self, term: Term) -> Term: ...
        def _fold(self, terms: Sequence[Term], function: str) -> Term: ...
        def _finite(self, peak: Term) -> Term: ...
        def _mask_guard(self, factors: Sequence[sp.Expr], values: list[Term]) -> list[Term]: ...
        def _range_guard(self, values: list[Term], masks: list[Term]) -> list[Term]: ...
        def _is_mask(self, expr: sp.Basic) -> bool: ...
        def _range_mask(self, limit: tuple[sp.Expr, sp.Expr, sp.Expr]) -> Term | None: ...
        def _contract(self, operands: Sequence[Term], summed: Collection[sp.Symbol],
                      coefficient: float | sp.Expr, expr: sp.Sum) -> Term: ...
        def _reduce(self, term: Term, keys: Iterable[sp.Symbol], how: str) -> Term: ...
        def _max_over(self, term: Term, key: sp.Symbol) -> Term: ...

    # -- leaves ------------------------------------------------------------------------------

    def value_constant(self, expr: sp.Expr) -> Node:
        return Node(self.typed(expr))

    def value_symbol(self, expr: sp.Symbol) -> Node:
        if expr in self.sizes:  # a bound index, renamed, used as a number
            return Node(self._positions(expr))
        self._use_symbol(expr)
        batched = expr.name in self.scalars and not self._is_integer(expr.name)
        return Node(Term(identifier(expr.name), (), batched))

    def value_index(self, expr: sp.Idx) -> Node:
        """An index used as a number (a position m in the angle m·θ): 0, 1, … along its axis."""
        self._note_index(expr)
        return Node(self._positions(index_key(expr)))

    def _positions(self, key: sp.Symbol) -> Term:
        return self.emit(f"xp.arange({self._size_code(key)}, dtype=dtype)", (key,), False)

    def value_indexed(self, expr: sp.Indexed) -> Node:
        name = str(expr.base.label)
        if name in self.definitions:
            return self._defined_value(expr, self.definitions[name])
        if name not in self.tensors:
            raise NotImplementedError(f"{name} is neither an input tensor nor a definition")
        self._use_input(name)
        dims = self.tensors[name].dims
        if any(not (i.is_Integer or isinstance(i, (sp.Idx, sp.Symbol))) for i in expr.indices):
            return Node(self._gathered(expr, dims))
        slots, keys = [":"], []
        for position, index in enumerate(expr.indices):
            if index.is_Integer:
                slots.append(str(int(index)))
                continue
            self._note_index(index, sp.Symbol(dims[position].name, integer=True, positive=True))
            slots.append(":")
            keys.append(index_key(index))
        array = identifier(name)
        code = array if all(s == ":" for s in slots) else f"{array}[{', '.join(slots)}]"
        return Node(self._diagonal(Term(code, tuple(keys), True)))

    def _gathered(self, expr: sp.Indexed, dims: tuple[Dim, ...]) -> Term:
        """An entry at index arithmetic (X[t, h·D + c], x[j + 1]): integer positions computed
        from the indices' ranges and gathered in one indexing, every position an integer
        array broadcast over all the indices the entry uses."""
        for position, index in enumerate(expr.indices):
            if isinstance(index, (sp.Idx, sp.Symbol)):
                self._note_index(index, dims[position].symbol)
        used = union([sorted(i.atoms(sp.Idx), key=str) if not isinstance(i, sp.Symbol) else [i]
                      for i in expr.indices])
        axes = tuple(index_key(i) for i in used)
        for index in used:
            self._note_index(index)
        positions = {index: self._axis_positions(index_key(index), axes) for index in used}
        slots = [":"]
        for index, dim in zip(expr.indices, dims, strict=True):
            self._check_in_range(index, dim, expr)
            slots.append(self._position_code(index, positions))
        return self.emit(f"{identifier(str(expr.base.label))}[{', '.join(slots)}]", axes, True)

    def _position_code(self, index: sp.Expr, positions: dict[sp.Basic, str]) -> str:
        """Source for the integer array of one index's values: each index by its positions,
        each size by its name."""
        placeholders = {i: sp.Dummy() for i in positions if index.has(i)}
        expr = index.xreplace(placeholders)
        names = {s: sp.Symbol(identifier(s.name)) for s in expr.free_symbols
                 if s not in placeholders.values()}
        for symbol in names:
            self._use_symbol(symbol)
        names.update({d: sp.Symbol(positions[i]) for i, d in placeholders.items()})
        return _PositionPrinter().doprint(expr.xreplace(names))

    def _axis_positions(self, key: sp.Symbol, axes: tuple[sp.Symbol, ...]) -> str:
        """0, 1, …, n − 1 as integers along ``key``'s place among ``axes``."""
        shape = ", ".join(":" if a == key else "None" for a in axes)
        return self.emit(f"xp.arange({self._size_code(key)})[{shape}]", (key,), False).code

    def _check_in_range(self, index: sp.Expr, dim: Dim, expr: sp.Indexed) -> None:
        """The index arithmetic of ``expr`` stays within ``dim`` for every size: affine in
        the indices, each coefficient of known sign."""
        if index.is_Integer or isinstance(index, (sp.Idx, sp.Symbol)):
            return
        if index.has(sp.Mod, sp.floor):  # the parts ⌊f/D⌋, f mod D of a flat index
            bounds = _interval(index)
            if bounds is None:
                raise NotImplementedError(f"index {index} in {expr}: no range known for it")
            low, high = bounds
            if not (sp.simplify(low).is_nonnegative
                    and sp.simplify(dim.symbol - 1 - high).is_nonnegative):
                raise NotImplementedError(f"index {index} in {expr} may leave axis {dim.name} "
                                          f"(0 … {dim.symbol - 1}): it ranges over {low} … "
                                          f"{high}")
            return
        low = high = index
        for i in index.atoms(sp.Idx):
            coefficient = index.coeff(i)
            if coefficient.has(sp.Idx) or not (coefficient.is_nonnegative
                                              or coefficient.is_nonpositive):
                raise NotImplementedError(f"index {index} in {expr} is not affine in {i} with "
                                          "a coefficient of known sign")
            small, large = (i.lower, i.upper) if coefficient.is_nonnegative else (i.upper, i.lower)
            low, high = low.xreplace({i: small}), high.xreplace({i: large})
        above_end = sp.simplify(dim.symbol - 1 - high)
        if not (sp.simplify(low).is_nonnegative and above_end.is_nonnegative):
            raise NotImplementedError(f"index {index} in {expr} may leave axis {dim.name} "
                                      f"(0 … {dim.symbol - 1}): it ranges over {low} … {high}")

    def _defined_value(self, expr: sp.Indexed, definition: Defined) -> Node:
        for index in definition.indices:
            self._note_index(index)
        self.preferred_order.append(tuple(index_key(i) for i in definition.indices))
        try:
            body = self.visit(definition.body).value
        finally:
            self.preferred_order.pop()
        body = self._in_declared_order(body, definition)
        mapping = {}
        for own, used in zip(definition.indices, expr.indices, strict=True):
            if not isinstance(used, (sp.Idx, sp.Symbol)):
                raise NotImplementedError(f"{expr}: definitions take plain indices")
            self._note_index(used, self.sizes.get(index_key(own)))
            mapping[index_key(own)] = index_key(used)
        return Node(self._relabel(body, mapping), {"definition": definition, "mapping": mapping})

    def _in_declared_order(self, term: Term, definition: Defined) -> Term:
        """Lay a definition out in the order of its declared indices (``S[i, j]`` as (i, j)),
        so that reductions over its last index run over contiguous memory."""
        order = tuple(index_key(i) for i in definition.indices)
        if set(term.axes) != set(order) or term.axes == order:
            return term
        return self.emit(self.align(term, order), order, term.batched)

    def _relabel(self, term: Term, mapping: dict[sp.Symbol, sp.Symbol]) -> Term:
        renamed = Term(term.code, tuple(mapping.get(a, a) for a in term.axes), term.batched)
        return self._diagonal(renamed)

    def value_delta(self, expr: sp.KroneckerDelta) -> Node:
        a, b = expr.args[:2]
        if index_key(a) == index_key(b):
            return self.value_constant(sp.S.One)
        if not all(isinstance(x, sp.Idx) or isinstance(x, sp.Symbol) and x.name not in
                   self.scalars for x in (a, b)):
            # a fixed entry (δ(j, 0)), an integer scalar or an integer expression (δ(j, i mod
            # k)): the equality test, exact in every format (``value_indicator``)
            return Node(self.visit(Indicator(sp.Eq(a, b))).value)
        for index in (a, b):
            self._note_index(index)
        size = self._size_code(index_key(a) if index_key(a) in self.sizes else index_key(b))
        self.sizes.setdefault(index_key(a), self.sizes.get(index_key(b)))
        self.sizes.setdefault(index_key(b), self.sizes.get(index_key(a)))
        return Node(self.emit(f"xp.eye({size}, dtype=dtype)", (index_key(a), index_key(b)),
                              False))

    # -- arithmetic --------------------------------------------------------------------------

    def value_add(self, expr: sp.Add) -> Node:
        return Node(self.combine([self.visit(arg).value for arg in expr.args], "+"))

    def value_mul(self, expr: sp.Mul) -> Node:
        values = [self.visit(arg).value for arg in expr.args]
        return Node(self.combine(self._mask_guard(expr.args, values), "*"))

    def value_pow(self, expr: sp.Pow) -> Node:
        base, exponent = expr.args
        b = self.visit(base).value
        if exponent == -1:
            one = self.typed(1)
            return Node(self.emit(f"{one.code} / {b.code}", b.axes, b.batched))
        if exponent == sp.Rational(1, 2):
            return Node(self.emit(f"xp.sqrt({b.code})", b.axes, b.batched))
        if exponent.is_Number:
            return Node(self.emit(f"{b.code} ** {self.typed(exponent).code}", b.axes, b.batched))
        return Node(self.combine([b, self.visit(exponent).value], "**"))

    def value_exp(self, expr: sp.exp) -> Node:
        a = self.visit(expr.args[0]).value
        return Node(self.emit(f"xp.exp({a.code})", a.axes, a.batched))

    def value_log(self, expr: sp.log) -> Node:
        softmax = self._as_softmax(expr.args[0])
        if softmax is not None:
            return self._log_softmax_value(softmax)
        a = self.visit(expr.args[0]).value
        return Node(self.emit(f"xp.log({a.code})", a.axes, a.batched))

    def _as_softmax(self, expr: sp.Expr) -> Softmax | None:
        """``expr`` as a Softmax node, looking through a definition such as ``A[i, j]``."""
        if isinstance(expr, sp.Indexed) and str(expr.base.label) in self.definitions:
            definition = self.definitions[str(expr.base.label)]
            if isinstance(definition.body, Softmax):
                renaming = dict(zip(definition.indices, expr.indices, strict=True))
                expr = definition.body.xreplace(renaming)
        # log of a masked weight is -inf where masked: no fused log-softmax for it
        return expr if isinstance(expr, Softmax) and expr.mask == 1 else None

    def value_cos(self, expr: sp.cos) -> Node:
        a = self.visit(expr.args[0]).value
        return Node(self.emit(f"xp.cos({a.code})", a.axes, a.batched))

    def value_sin(self, expr: sp.sin) -> Node:
        a = self.visit(expr.args[0]).value
        return Node(self.emit(f"xp.sin({a.code})", a.axes, a.batched))

    def value_rotation(self, expr: Rotation) -> Node:
        """cos(angle) δ(row, column) + (row − column) sin(angle), the node's own expansion:
        [[cos, −sin], [sin, cos]] over a pair's two coordinates."""
        angle, row, column = expr.args
        identity = self.visit(sp.KroneckerDelta(row, column)).value
        turn = self.visit(row - column).value
        cos, sin = self.visit(sp.cos(angle)).value, self.visit(sp.sin(angle)).value
        parts = {"identity": identity, "turn": turn, "cos": cos, "sin": sin}
        return Node(self.combine([self.combine([cos, identity], "*"),
                                  self.combine([sin, turn], "*")], "+"), parts)

    # -- conditions on indices ---------------------------------------------------------------

    def value_mod(self, expr: sp.Mod) -> Node:
        return Node(self.combine([self.visit(arg).value for arg in expr.args], "%"))

    def value_floor(self, expr: sp.floor) -> Node:
        """⌊a / b⌋ (a block number) as one division, correctly rounded, so that integers stay
        exact in every format; a / b as a · (1 / b) rounds twice (6 · fl(1/3) < 2 in float16)."""
        numerator, denominator = sp.fraction(expr.args[0])
        ratio = self.combine([self.visit(numerator).value, self.visit(denominator).value], "/")
        return Node(self.emit(f"xp.floor({ratio.code})", ratio.axes, ratio.batched))

    def value_indicator(self, expr: Indicator) -> Node:
        """1 where the condition holds, else 0; the condition may only test exact quantities
        (``_refuse_inexact``)."""
        self._refuse_inexact(expr.condition, expr)
        condition = self.visit(expr.condition).value
        return Node(self._select(condition, self.typed(1), self.typed(0)))

    def value_piecewise(self, expr: sp.Piecewise) -> Node:
        """The first piece whose condition holds, as nested ``xp.where``; conditions may only
        test exact quantities (indices, sizes, integer scalars, 0/1 masks), which rounding
        cannot flip."""
        *pieces, (otherwise, last) = expr.args
        if last != sp.true:
            raise NotImplementedError(f"a Piecewise without a final (value, True): {expr}")
        result = self.visit(otherwise).value
        for value, condition in reversed(pieces):
            self._refuse_inexact(condition, expr)
            result = self._select(self.visit(condition).value, self.visit(value).value, result)
        return Node(result)

    def _select(self, condition: Term, chosen: Term, otherwise: Term) -> Term:
        axes = union([condition.axes, chosen.axes, otherwise.axes])
        batched = condition.batched or chosen.batched or otherwise.batched
        parts = ", ".join(self.align(t, axes) for t in (condition, chosen, otherwise))
        return self.emit(f"xp.where({parts})", axes, batched)

    def _refuse_inexact(self, condition: sp.Basic, where: sp.Basic) -> None:
        for symbol in condition.free_symbols:
            scalar = self.scalars.get(getattr(symbol, "name", ""))
            if scalar is not None and not self._is_integer(scalar.name):
                raise NotImplementedError(
                    f"condition {condition} in {where} tests the real scalar {symbol}: "
                    "rounding could flip it; conditions test indices, sizes, integer scalars "
                    "and 0/1 masks")
        for entry in condition.atoms(sp.Indexed):
            if not self._is_mask(entry):
                raise NotImplementedError(
                    f"condition {condition} in {where} tests {entry}, which is not a 0/1 mask "
                    "entry: rounding could flip it")

    _COMPARISONS: ClassVar[dict[str, str]] = {"<=": "<=", "<": "<", ">=": ">=", ">": ">",
                                              "==": "==", "!=": "!="}

    def value_compare(self, expr: Relational) -> Node:
        op = self._COMPARISONS.get(expr.rel_op)
        if op is None:
            raise NotImplementedError(f"the compiler does not support the relation {expr}")
        return Node(self.combine([self.visit(expr.lhs).value, self.visit(expr.rhs).value], op))

    def value_all(self, expr: sp.And) -> Node:
        return Node(self.combine([self.visit(arg).value for arg in expr.args], "&"))

    def value_any(self, expr: sp.Or) -> Node:
        return Node(self.combine([self.visit(arg).value for arg in expr.args], "|"))

    def value_negate(self, expr: sp.Not) -> Node:
        a = self.visit(expr.args[0]).value
        return Node(self.emit(f"xp.logical_not({a.code})", a.axes, a.batched))

    def value_abs(self, expr: sp.Abs) -> Node:
        return Node(self._abs_of(self.visit(expr.args[0]).value))

    def value_max(self, expr: sp.Max) -> Node:
        return Node(self._fold([self.visit(arg).value for arg in expr.args], "xp.maximum"))

    def value_min(self, expr: sp.Min) -> Node:
        return Node(self._fold([self.visit(arg).value for arg in expr.args], "xp.minimum"))

    # -- reductions --------------------------------------------------------------------------

    def value_sum(self, expr: sp.Sum) -> Node:
        for variable, _, _ in expr.limits:
            self._note_index(variable)
        coefficient, factors = factors_of(expr.function)
        values = [self.visit(f).value for f in factors]
        masks = [m for limit in expr.limits if (m := self._range_mask(limit)) is not None]
        summed = [index_key(v) for v, _, _ in expr.limits]
        value = self._contract(self._range_guard(self._mask_guard(factors, values), masks),
                               summed, coefficient, expr)
        return Node(value, {"coefficient": coefficient, "factors": factors, "masks": masks,
                            "summed": summed})

    def value_product(self, expr: sp.Product) -> Node:
        """A product over one whole dimension, e.g. a masked softmax's "row fully masked"
        factor Π(1 − m)."""
        if len(expr.limits) != 1:
            raise NotImplementedError(f"product over several indices: {expr}")
        (variable, lower, upper), = expr.limits
        self._note_index(variable, upper - lower + 1)
        if self._range_mask(expr.limits[0]) is not None:
            raise NotImplementedError(f"product over a partial range: {expr}")
        key = index_key(variable)
        value = self.visit(expr.function).value
        return Node(self._product_over(value, key), {"key": key})

    def _product_over(self, term: Term, key: sp.Symbol) -> Term:
        return self._reduce(self.with_axis(term, key), [key], "prod")

    def value_reduce_max(self, expr: ReduceMax) -> Node:
        function, *indices = expr.args
        for index in indices:
            self._note_index(index)
        value = self.visit(function).value
        for index in indices:
            value = self._max_over(value, index_key(index))
        return Node(value)

    def value_kept_max(self, expr: KeptMax) -> Node:
        """Maximum over the kept entries, or over all entries where the mask keeps none."""
        function, mask, *indices = expr.args
        for index in indices:
            self._note_index(index)
        f = self.visit(function).value
        keys = [index_key(i) for i in indices]
        x, kept, masked = self._masked_to_floor(f, mask, keys)
        any_kept = self._reduce(self.emit(f"xp.asarray({kept.code}, dtype=dtype)", x.axes,
                                          x.batched), keys, "max")
        kept_peak, all_peak = self._reduce(masked, keys, "max"), self._reduce(x, keys, "max")
        return Node(self.emit(f"xp.where({any_kept.code} > 0, {kept_peak.code}, "
                              f"{all_peak.code})", all_peak.axes, all_peak.batched), {"keys": keys})

    def value_rowmax(self, expr: RowMax) -> Node:
        """The statement language's ``rowmax``: a maximum over the whole range of one index."""
        return self.value_reduce_max(self._as_reduce_max(expr))

    def value_rowmin(self, expr: RowMin) -> Node:
        """The statement language's ``rowmin``: a minimum over the whole range of one index."""
        index = self._whole_range(expr)
        self._note_index(index)
        return Node(self._reduce(self.visit(expr.function).value, [index_key(index)], "min"))

    def _whole_range(self, expr: RowMin) -> sp.Idx:
        (index, lower, upper), = expr.limits
        if not isinstance(index, sp.Idx) or (lower, upper) != (index.lower, index.upper):
            raise NotImplementedError(f"a minimum over part of a range: {expr}")
        return index

    def _as_reduce_max(self, expr: RowMax) -> ReduceMax:
        (index, lower, upper), = expr.limits
        if not isinstance(index, sp.Idx) or (lower, upper) != (index.lower, index.upper):
            raise NotImplementedError(f"a maximum over part of a range: {expr}")
        return ReduceMax(expr.function, index)

    def _masked_to_floor(self, value: Term, mask: sp.Expr,
                        keys: Sequence[sp.Symbol]) -> tuple[Term, Term, Term]:
        """``value`` over the axes of ``value`` and ``mask`` together (x), where the mask keeps
        an entry (kept), and x with masked entries lowered to its minimum over ``keys``
        (masked): its maximum is then the largest kept entry, or any entry if none is kept."""
        m = self.visit(mask).value
        x = self.combine([value, self.emit(f"{m.code} * {self.typed(0).code}", m.axes,
                                           m.batched)], "+")  # + 0 * mask: broadcast
        kept = self.emit(f"{self.align(m, x.axes)} > 0", x.axes, m.batched)
        if x.batched and not m.batched:  # a mask written with indices alone: give it x's batch
            kept = self.emit(f"{kept.code}[None]", x.axes, True)
        floor = self._reduce(x, keys, "min")
        masked = self.emit(f"xp.where({kept.code}, {x.code}, {self.align(floor, x.axes)})",
                           x.axes, x.batched)
        return x, kept, masked

    # -- softmax-like nodes ------------------------------------------------------------------

    def _shifted(self, logits: sp.Expr, index: sp.Idx) -> tuple[Term, Term, int]:
        """Logits over ``index`` and their finite row maximum (keepdims) for a stable reduction."""
        self._note_index(index)
        u = self.visit(logits).value
        key = index_key(index)
        value = self.with_axis(u, key)
        axis = self.axis_of(value, key)
        peak = self._finite(self.emit(f"xp.max({value.code}, axis={axis}, keepdims=True)",
                                      value.axes, value.batched))
        return value, peak, axis

    def value_softmax(self, expr: Softmax) -> Node:
        if expr.mask != 1:
            return self._masked_softmax_value(expr)
        if not self.abs and expr.beta != 1 and expr.beta.is_positive:
            return Node(self._scaled_softmax(expr))
        u, peak, axis = self._shifted(expr.beta * expr.logits, expr.index)
        e = self.emit(f"xp.exp({u.code} - {peak.code})", u.axes, u.batched)
        p = self.emit(f"{e.code} / xp.sum({e.code}, axis={axis}, keepdims=True)", u.axes,
                      u.batched)
        return Node(p, {"logits": expr.beta * expr.logits, "key": index_key(expr.index),
                        "shifted": u, "peak": peak, "axis": axis})

    def _scaled_softmax(self, expr: Softmax) -> Term:
        """softmax(beta x) as exp(beta (x - max x)) / sum (see ``_scaled_shift``)."""
        scaled, axis = self._scaled_shift(expr)
        # beta (x - max x) <= 0: where it overflows to -inf, exp gives the exact 0 it rounds to
        e = self.emit(f"xp.exp({scaled.code})", scaled.axes, scaled.batched)
        return self.emit(f"{e.code} / xp.sum({e.code}, axis={axis}, keepdims=True)", e.axes,
                         e.batched)

    def _scaled_shift(self, expr: Softmax) -> tuple[Term, int]:
        """beta (x - max x) and its softmax axis, for beta > 0: the shift commutes with the
        scaling, and beta * x itself (1e5 at x = 100, T = 1e-3) is never formed, so no format
        overflows on it."""
        x, peak, _ = self._shifted(expr.logits, expr.index)
        shifted = self.emit(f"{x.code} - {peak.code}", x.axes, x.batched)
        scaled = self.combine([self.visit(expr.beta).value, shifted], "*")
        return scaled, self.axis_of(scaled, index_key(expr.index))

    def _masked_softmax_value(self, expr: Softmax) -> Node:
        """Weights over the kept entries only; a fully masked row gets zero weights.

        Masked logits are replaced by the row's smallest logit before the max-shift, so the
        shift is the largest *kept* logit and nothing masked can overflow; a fully masked row
        has a zero sum and is divided by 1 instead.
        """
        positive_beta = expr.beta.is_positive and not self.abs
        logits = expr.logits if positive_beta else expr.beta * expr.logits
        self._note_index(expr.index)
        u = self.visit(logits).value
        key = index_key(expr.index)
        x, kept, masked = self._masked_to_floor(self.with_axis(u, key), expr.mask, [key])
        axis = self.axis_of(x, key)
        peak = self.emit(f"xp.max({masked.code}, axis={axis}, keepdims=True)", x.axes,
                         x.batched)
        shifted = self.emit(f"{masked.code} - {peak.code}", x.axes, x.batched)
        if positive_beta:
            shifted = self.combine([self.visit(expr.beta).value, shifted], "*")
        zero = self.typed(0).code
        e = self.emit(f"xp.where({kept.code}, xp.exp({shifted.code}), {zero})", x.axes,
                      x.batched)
        total = self.emit(f"xp.sum({e.code}, axis={axis}, keepdims=True)", x.axes, x.batched)
        one = self.typed(1).code
        p = self.emit(f"{e.code} / xp.where({total.code} > 0, {total.code}, {one})", x.axes,
                      x.batched)
        return Node(p, {"logits": logits, "key": key, "shifted": masked, "peak": peak,
                        "axis": axis, "masked": True})

    def value_lse(self, expr: LogSumExp) -> Node:
        (variable, lower, upper), = expr.limits
        self._note_index(variable)
        if self._range_mask(expr.limits[0]) is not None:
            raise NotImplementedError(f"log-sum-exp over a partial range: {expr}")
        u, peak, axis = self._shifted(expr.function, variable)
        axes = tuple(a for a in u.axes if a != index_key(variable))
        e = self.emit(f"xp.exp({u.code} - {peak.code})", u.axes, u.batched)
        total = f"xp.sum({e.code}, axis={axis})"
        value = self.emit(f"xp.log({total}) + xp.squeeze({peak.code}, axis={axis})", axes,
                          u.batched)
        return Node(value, {"logits": expr.function, "key": index_key(variable), "shifted": u,
                            "peak": peak, "axis": axis, "exponentials": e})

    def _log_softmax_value(self, node: Softmax) -> Node:
        if not self.abs and node.beta != 1 and node.beta.is_positive:
            return Node(self._minus_log_sum_exp(*self._scaled_shift(node)))
        u, peak, axis = self._shifted(node.beta * node.logits, node.index)
        z = self.emit(f"{u.code} - {peak.code}", u.axes, u.batched)
        return Node(self._minus_log_sum_exp(z, axis),
                    {"logits": node.beta * node.logits, "key": index_key(node.index),
                     "shifted": u, "peak": peak, "axis": axis})

    def _minus_log_sum_exp(self, z: Term, axis: int) -> Term:
        e = self.emit(f"xp.exp({z.code})", z.axes, z.batched)
        return self.emit(f"{z.code} - xp.log(xp.sum({e.code}, axis={axis}, keepdims=True))",
                         z.axes, z.batched)


def _interval(expr: sp.Expr) -> tuple[sp.Expr, sp.Expr] | None:
    """[low, high] that an integer index expression stays in for every value of its indices:
    indices over their ranges, sizes and integers as themselves, sums, products by a
    nonnegative factor, a mod m in [0, m − 1] (m > 0) and ⌊a / d⌋ in [⌊low/d⌋, ⌊high/d⌋]
    (d > 0); None for anything else (no range is guessed)."""
    if isinstance(expr, sp.Idx):
        return (expr.lower, expr.upper) if expr.upper is not None else None
    if expr.is_Integer or isinstance(expr, sp.Symbol) and expr.is_positive:
        return expr, expr
    if isinstance(expr, sp.Add):
        parts = [p for a in expr.args if (p := _interval(a)) is not None]
        if len(parts) != len(expr.args):  # some term has no known range
            return None
        return sp.Add(*(p[0] for p in parts)), sp.Add(*(p[1] for p in parts))
    if isinstance(expr, sp.Mul):
        factor, rest = expr.as_independent(sp.Idx, sp.Mod, sp.floor, as_Add=False)
        inner = _interval(rest) if rest != 1 else None
        if inner is None or not factor.is_nonnegative:
            return None
        return factor * inner[0], factor * inner[1]
    if isinstance(expr, sp.Mod) and expr.args[1].is_positive:
        return sp.S.Zero, expr.args[1] - 1
    if isinstance(expr, sp.floor):
        numerator, denominator = sp.fraction(sp.together(expr.args[0]))
        inner = _interval(numerator)
        if inner is None or not denominator.is_positive or denominator.has(sp.Idx):
            return None
        return sp.floor(inner[0] / denominator), sp.floor(inner[1] / denominator)
    return None


class _PositionPrinter(StrPrinter):
    """Integer index arithmetic as array code: ⌊a / b⌋ as ``a // b`` and a mod b as ``a % b``
    (a flat position split into its parts, f = h·D + c read at ⌊f / D⌋ and f mod D), exact on
    integer positions on every backend."""

    def _print_floor(self, expr: sp.floor) -> str:
        numerator, denominator = sp.fraction(sp.together(expr.args[0]))
        return f"(({self._print(numerator)}) // ({self._print(denominator)}))"

    def _print_Mod(self, expr: sp.Mod) -> str:
        return f"(({self._print(expr.args[0])}) % ({self._print(expr.args[1])}))"
