"""The one "as written" evaluator (``AsWritten``, ``symbolic/_as_written.py``) walked a whole
axis at a time: the error bounds' evaluation.

``AsWritten`` walks a formula entry by entry: an index is a number and a sum a loop over its
values, which suits one case of a case analysis or one entry of a row. An error bound's sums run
to n_k = 512 keys over batches of 32 instances, where that walk would evaluate each term's
subtree once per key. :class:`AlongAxes` applies the same node rules (a sum's x − max(…) first
where it is written, then its terms left to right; x/y one division; x^n as n − 1 products; a
literal rounded into the format) to arrays with axes (batch, *axes): the claim's free indices,
then the bound index of each sum or maximum being evaluated, size 1 where a value does not
depend on it. Only these rules are its own (``AlongAxes`` defines them, and inherits the rest):

- an entry is its input laid out along the open axes;
- a sum's terms are computed at once along a new last axis, then added one by one, left to
  right, in the format (a loop of n − 1 additions: a backend's own reduction may add pairwise;
  in a JAX program, a sequential scan); a maximum is exact in any order;
- the block-wise online softmax runs its blocks along the key axis.

The abs-scale of a bound relative to Σ|t| is the same walk with :class:`MagnitudeArithmetic`:
every input and literal by its absolute value and negation dropped, except inside exp, log and
a maximum, whose arguments are read as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import sympy as sp

from attnproof.symbolic import OnlineSoftmax, ReduceMax, ReduceMin, TheoremError
from attnproof.symbolic.route import AsWritten, integer_value

from ..route import Array, ArrayModule
from ._evaluate import ArrayArithmetic

if TYPE_CHECKING:
    from attnproof.symbolic.route import Env


class Watch(Protocol):
    """What sees the walk's values (the error bounds' ``RangeWatch``): every result, and every
    argument of exp and log."""

    def __call__(self, value: Array) -> None: ...

    def argument(self, function: str, value: Array) -> None: ...


class AxisArithmetic(ArrayArithmetic):
    """The arithmetic of the walk along axes on ``xp``'s arrays, in the inputs' format. ``watch``,
    where given, sees every result (every partial product, quotient and partial sum) and every
    argument of exp and log (``watch.argument``)."""

    magnitude = False

    def __init__(self, xp: ArrayModule, template: Array, watch: Watch | None = None,
                 traced: bool = False) -> None:
        super().__init__(xp)
        self.template = template  # an input: its format is the format of every literal
        self.watch = watch
        # values traced into one JAX program: a loop along an axis is a sequential scan there
        self.traced = traced

    def seen(self, value: Array) -> Array:
        if self.watch is not None:
            self.watch(value)
        return value

    def exp(self, value: Array) -> Array:
        if self.watch is not None:
            self.watch.argument("exp", value)
        return super().exp(value)

    def log(self, value: Array) -> Array:
        if self.watch is not None:
            self.watch.argument("log", value)
        return super().log(value)

    def literal(self, value: sp.Expr | float) -> Array:
        """A literal rounded once into the inputs' format: a Python number would carry NumPy's
        bfloat16 into float32, the format of bfloat16 and a Python float combined."""
        return self.xp.asarray(float(value), dtype=self.template.dtype)

    exact = size = literal  # an integer, as a literal of the format

    def read(self, value: Array) -> Array:
        """An input's entries, as the walk reads them."""
        return value

    def along(self, operation: Callable[[Array, Array], Array], terms: Array) -> Array:
        """``terms`` combined by ``operation`` along their last axis, left to right."""
        if self.traced:
            return _scan_last_axis(operation, terms)
        total = terms[..., 0]
        for k in range(1, terms.shape[-1]):
            total = operation(total, terms[..., k])
        return total


class MagnitudeArithmetic(AxisArithmetic):
    """The abs-scale's arithmetic: inputs and literals by their absolute values, and a negation
    dropped, so that every term adds its magnitude."""

    magnitude = True

    def literal(self, value: sp.Expr | float) -> Array:
        return super().literal(abs(float(value)))

    exact = size = literal

    def read(self, value: Array) -> Array:
        return self.xp.abs(value)

    def negate(self, value: Array) -> Array:
        return value


def along_axes(xp: ArrayModule, arrays: dict[str, Array], sizes: dict[str, int],
               out: Sequence[sp.Idx], watch: Watch | None = None, magnitude: bool = False,
               traced: bool = False) -> AlongAxes:
    """The walk of ``arrays`` (each with a leading batch axis) at ``sizes``, the values laid out
    along the free indices ``out``; the abs-scale's where ``magnitude``."""
    template = next(iter(arrays.values()))
    plain = AxisArithmetic(xp, template, watch, traced)
    walked = MagnitudeArithmetic(xp, template, traced=traced) if magnitude else plain
    return AlongAxes(walked, arrays, sizes, out, plain)


# Any: the walk's arithmetic reads no input by key (``entry`` lays out a tensor's entries
# itself), so it gives no ``input`` and is no ``Arithmetic`` of the protocol; its own type is
# declared on the attribute below
class AlongAxes(AsWritten[Any]):
    """``AsWritten``'s rules on arrays with axes (batch, *axes) (the module docstring). Its
    state is the list of open axes; the ``env`` the rules pass along is always empty."""

    arithmetic: AxisArithmetic

    def __init__(self, arithmetic: AxisArithmetic, arrays: dict[str, Array],
                 sizes: dict[str, int], out: Sequence[sp.Idx], plain: AxisArithmetic) -> None:
        super().__init__(arithmetic, sizes, fixed={})
        self.arrays = arrays
        self.plain = plain  # the arithmetic inside exp, log and a maximum
        self.axes = [_name(i) for i in out]  # by name: sizes put in rebuild an index

    def eval(self, expr: sp.Expr, env: Env | None = None) -> Array:
        """``expr``'s value, computed once per arithmetic and layout of open axes (a row maximum
        or a denominator inside a sum's term does not depend on the term's index); the
        arithmetic sees every node's value."""
        key = (expr, self.arithmetic.magnitude, tuple(self.axes))
        if key not in self.known:
            self.known[key] = self.arithmetic.seen(self.padded(self.evaluate(expr, {})))
        return self.known[key]

    # -- the rules of indices: an entry laid out along the open axes -------------------------

    def _rule_Indexed(self, expr: sp.Indexed, env: Env) -> Array:
        return self.arithmetic.read(self.entry(expr))

    def _rule_Symbol(self, expr: sp.Symbol, env: Env) -> Array:
        if expr.name in self.arrays:  # a scalar input, one value per instance
            value = self.arithmetic.xp.reshape(self.arrays[expr.name],
                                               (-1, *(1,) * len(self.axes)))
            return self.arithmetic.read(value)
        if expr.name not in self.sizes:
            return self._rule_Idx(expr, env)
        return super()._rule_Symbol(expr, env)

    def _rule_Idx(self, expr: sp.Expr, env: Env) -> Array:
        raise TheoremError(f"no rule evaluates {expr} as written along axes: an index or a "
                           "symbol that is neither an input nor a size")

    def padded(self, value: Array) -> Array:
        """``value`` with trailing axes of size 1 for the axes it does not depend on."""
        if not hasattr(value, "shape"):
            return value
        missing = 1 + len(self.axes) - len(value.shape)
        if missing <= 0:
            return value
        return self.arithmetic.xp.reshape(value, (*value.shape, *(1,) * missing))

    def plainly(self, compute: Callable[[], Array]) -> Array:
        """``compute()`` with the plain arithmetic: the abs-scale reads the arguments of exp,
        log and a maximum as they are."""
        arithmetic, self.arithmetic = self.arithmetic, self.plain
        try:
            return compute()
        finally:
            self.arithmetic = arithmetic

    def over(self, function: sp.Expr, limits: Sequence[tuple[sp.Expr, sp.Expr, sp.Expr]],
             reduce: Callable[[Array], Array]) -> Array:
        """Every term of ``function`` at once, along a new last axis per bound index, then
        reduced over each, the first limit innermost (SymPy's order)."""
        opened = []
        for index, _, _ in reversed(limits):
            if _name(index) in self.axes:  # a bound index named as a free one (spread(S[i, j], j))
                fresh = sp.Symbol(f"{_name(index)}_{len(self.axes)}", integer=True)
                function, index = function.xreplace({index: fresh}), fresh
            self.axes.append(_name(index))
            opened.append(index)
        try:
            terms = self.eval(function, {})
        finally:
            del self.axes[len(self.axes) - len(opened):]
        # a term that does not depend on an index (Σ_k c) is still added once per index value
        counts = tuple(integer_value(high - low + 1, {}, self.sizes)
                       for _, low, high in reversed(limits))
        terms = self.arithmetic.xp.broadcast_to(terms, (*terms.shape[:-len(counts)], *counts))
        for _ in opened:
            terms = reduce(terms)
        return terms

    def entry(self, expr: sp.Indexed) -> Array:
        """The tensor's entries with axes (batch, *self.axes), size 1 where it has none."""
        xp = self.arithmetic.xp
        indices = [_name(i) if isinstance(i, (sp.Idx, sp.Symbol)) else i for i in expr.indices]
        if any(index not in self.axes for index in indices):
            raise TheoremError(f"no rule evaluates {expr} as written along axes: index "
                               "arithmetic or constant indices")
        present = [axis for axis in self.axes if axis in indices]
        value = xp.transpose(self.arrays[str(expr.base.label)],
                             (0, *(1 + indices.index(a) for a in present)))
        shape, at = [value.shape[0]], 1
        for axis in self.axes:
            if axis in indices:
                shape.append(value.shape[at])
                at += 1
            else:
                shape.append(1)
        return xp.reshape(value, tuple(shape))

    def _rule_Sum(self, expr: sp.Sum, env: Env) -> Array:
        return self.over(expr.function, expr.limits,
                         lambda terms: self.arithmetic.along(self.arithmetic.add, terms))

    def _rule_Product(self, expr: sp.Product, env: Env) -> Array:
        return self.over(expr.function, expr.limits,
                         lambda terms: self.arithmetic.along(self.arithmetic.multiply, terms))

    # -- the abs-scale's plain reading: exp, log and a maximum read their arguments as they are

    def _rule_ReduceMax(self, expr: ReduceMax, env: Env) -> Array:
        return self.plainly(lambda: self.over(
            expr.function, expr.limits, lambda terms: self.arithmetic.xp.max(terms, axis=-1)))

    def _rule_ReduceMin(self, expr: ReduceMin, env: Env) -> Array:
        return self.plainly(lambda: self.over(
            expr.function, expr.limits, lambda terms: self.arithmetic.xp.min(terms, axis=-1)))

    def _rule_Max(self, expr: sp.Max, env: Env) -> Array:
        return self.plainly(lambda: self.arithmetic.maximum([self.eval(a, env)
                                                             for a in expr.args]))

    def _rule_exp(self, expr: sp.exp, env: Env) -> Array:
        return self.arithmetic.exp(self.plainly(lambda: self.eval(expr.args[0], env)))

    def _rule_log(self, expr: sp.log, env: Env) -> Array:
        return self.arithmetic.log(self.plainly(lambda: self.eval(expr.args[0], env)))

    # -- a node only this walk evaluates ---------------------------------------------------------

    def _rule_OnlineSoftmax(self, expr: OnlineSoftmax, env: Env) -> Array:
        """The block-wise algorithm as ``OnlineSoftmax`` states it: per block of b keys the
        running maximum, the rescaling e^(m_old − m_new), the block's partial sums added left
        to right and added once to the rescaled running ones; one division at the end."""
        arithmetic = self.arithmetic
        xp = arithmetic.xp
        scores = self.plainly(lambda: self.over(expr.score, expr.limits, _keep))
        values = self.over(expr.value, expr.limits, _keep)
        block = integer_value(expr.block, {}, self.sizes)
        if arithmetic.traced:  # the same steps, one program
            return _online_softmax_program(block)(scores, values)
        maximum = total = output = None
        for start in range(0, scores.shape[-1], block):
            chunk = scores[..., start:start + block]
            seen = xp.max(chunk, axis=-1)
            if maximum is not None:
                seen = xp.maximum(maximum, seen)
            weights = arithmetic.exp(chunk - seen[..., None])
            partial_total = arithmetic.along(arithmetic.add, weights)
            partial_output = arithmetic.along(arithmetic.add, arithmetic.multiply(
                weights, values[..., start:start + block]))
            if maximum is None:
                total, output = partial_total, partial_output
            else:
                rescale = arithmetic.exp(maximum - seen)
                total = arithmetic.add(arithmetic.multiply(rescale, total), partial_total)
                output = arithmetic.add(arithmetic.multiply(rescale, output), partial_output)
            maximum = seen
        # the blocks ran: a sum's row has at least one key
        assert maximum is not None
        # the weights the closed form rounds, e^(s_j − max): below the normal range there too
        arithmetic.seen(xp.exp(scores - maximum[..., None]))
        return arithmetic.divide(output, total)

    # taken away: a minimum of operands, and a selection decided entry by entry (a where(), a
    # Piecewise, an Indicator), which a whole axis at once cannot decide
    _rule_Min = _rule_Where = _rule_Piecewise = _rule_Indicator = AsWritten.refuse


def _keep(terms: Array) -> Array:
    """Every term, unreduced."""
    return terms


def _name(index: sp.Basic) -> str:
    return str(index.label) if isinstance(index, sp.Idx) else str(index)


def _scan_last_axis(operation: Callable[[Array, Array], Array], terms: Array) -> Array:
    """JAX's sequential scan: the same operations in the same order as the loop, one program
    instead of one dispatch per entry."""
    import jax

    def step(total: Array, term: Array) -> tuple[Array, None]:
        return operation(total, term), None

    rest = jax.numpy.moveaxis(terms[..., 1:], -1, 0)
    return jax.lax.scan(step, terms[..., 0], rest)[0]


@functools.cache
def _online_softmax_program(block: int) -> Callable[[Array, Array], Array]:
    """``AlongAxes._rule_OnlineSoftmax`` as one compiled JAX program per block size: a scan over the
    blocks, each block's sums a scan over its keys. The last block is padded with scores of −∞
    and values of 0, whose weights e^(−∞) = 0 add exactly nothing."""
    import jax
    import jax.numpy as jnp

    def add(a: Array, b: Array) -> Array:
        return a + b

    def step(carry: tuple[Array, Array, Array], chunk: tuple[Array, ...]
             ) -> tuple[tuple[Array, Array, Array], None]:
        maximum, total, output = carry
        chunk_scores, chunk_values = chunk
        seen = jnp.maximum(maximum, jnp.max(chunk_scores, axis=-1))
        weights = jnp.exp(chunk_scores - seen[..., None])
        rescale = jnp.exp(maximum - seen)  # 0 before the first block: 0·0 + partial is exact
        total = rescale * total + _scan_last_axis(add, weights)
        output = rescale * output + _scan_last_axis(add, weights * chunk_values)
        return (seen, total, output), None

    @jax.jit
    def run(scores: Array, values: Array) -> Array:
        scores, values = jnp.broadcast_arrays(scores, values)
        length = scores.shape[-1]
        pad = -length % block
        widths = [(0, 0)] * (scores.ndim - 1) + [(0, pad)]
        scores = jnp.pad(scores, widths, constant_values=-jnp.inf)
        values = jnp.pad(values, widths)
        chunks = [jnp.moveaxis(x.reshape(*x.shape[:-1], -1, block), -2, 0)
                  for x in (scores, values)]
        start = jnp.full(scores.shape[:-1], -jnp.inf, scores.dtype)
        zero = jnp.zeros(scores.shape[:-1], scores.dtype)
        (_, total, output), _ = jax.lax.scan(step, (start, zero, zero), tuple(chunks))
        return output / total

    return run
