"""Compile an index expression into readable, vectorized array code over a module handle ``xp``.

SymPy's own routes are silently wrong or slow here (DESIGN.md, "Compiling to array code"), so
this is a small compiler of its own. Every value is a :class:`Term`: the name of an array whose
axes are a leading batch axis (when ``batched``) followed by one axis per index in ``axes``.
Products under a sum become one ``einsum``; ``KroneckerDelta`` becomes ``eye``; vocabulary nodes
get their max-shifted stable spelling; ratios of exponentials are shifted by ``_stable``.

Compiled functions have the signature ``f(xp, arrays, sizes)``: ``arrays`` maps input names to
batched arrays (Integer scalars to Python ints), ``sizes`` maps dimension names (and ``batch``)
to Python ints, so shapes stay static under ``jit``.
"""

from __future__ import annotations

import functools
import itertools
import keyword
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp

from attnproof.symbolic import Defined, Integer, LogSumExp, Mask, Scalar, Softmax, Tensor
from attnproof.symbolic import ReduceMax as RowMax

from ._stable import KeptMax, ReduceMax, stabilize_exponentials

_LETTERS = "abcdefghijklmnopqrstuvwxy"
_BATCH_LETTER = "z"


@dataclass(frozen=True)
class Term:
    code: str
    axes: tuple[sp.Symbol, ...]
    batched: bool
    number: float | None = None  # the value of a constant, so products can drop ones


@dataclass(frozen=True)
class Target:
    """What the emitted source may call on one array module.

    ``missing`` declares the NumPy names the module lacks, so a gap is refused when compiling,
    naming the target, instead of surfacing as an AttributeError mid-run. ``einsum`` spells a
    contraction; NumPy's has no bfloat16 loop and upcasts under ``optimize``, hence the cast back.
    """

    name: str
    einsum: str
    missing: frozenset[str] = frozenset()


TARGETS = {
    "numpy": Target("numpy", "xp.einsum({operands}, optimize=True).astype(dtype, copy=False)"),
    "jax": Target("jax", "xp.einsum({operands})"),
    # mlx.core has no amax, amin, select, dot, diagflat (nor the ndarray.dot method)
    "mlx": Target("mlx", "xp.einsum({operands})",
                  frozenset({"amax", "amin", "select", "dot", "diagflat", "einsum_path"})),
}


@dataclass(frozen=True)
class Pair:
    """A node's value and, when compiling the abs-scale, its scale (same axes as the value)."""

    value: Term
    scale: Term | None = None


@dataclass(frozen=True, eq=False)
class Compiled:
    """Source and callable of one compiled expression; ``out`` is the order of its free axes."""

    source: str
    function: Callable
    out: tuple[sp.Idx, ...]
    abs_scale: bool
    target: str = "numpy"

    def __call__(self, xp, arrays, sizes):
        return self.function(xp, arrays, sizes)


def compile_expression(
    expr: sp.Expr,
    out: Sequence[sp.Idx],
    *,
    inputs: Sequence[Tensor | Scalar] = (),
    definitions: Sequence[Defined] = (),
    abs_scale: bool = False,
    target: str = "numpy",
    magnitudes: bool = False,
) -> Compiled:
    """Compile ``expr`` to ``f(xp, arrays, sizes) -> array (batch, *sizes of out)`` for the
    array module ``target`` names (a key of :data:`TARGETS`).

    With ``abs_scale`` the function returns the abs-scale of ``expr`` instead of its value; with
    ``magnitudes`` it returns the pair (abs-scale, per batch row the largest abs-scale of any
    exponent (argument of exp, softmax or log-sum-exp)): once eps times that reaches 1,
    rounding alone can move an exponential by a factor e, and a format that coarse cannot
    evaluate the row at all.
    The same arguments give the same :class:`Compiled` object.

    Raises:
        NotImplementedError: for a node or index pattern the compiler does not support, or a
            function the target declares missing.
    """
    return _compile_cached(sp.sympify(expr), tuple(out), tuple(inputs), tuple(definitions),
                           bool(abs_scale), target, bool(magnitudes))


@functools.lru_cache(maxsize=1024)
def _compile_cached(expr, out, inputs, definitions, abs_scale, target, magnitudes) -> Compiled:
    emitter = _Emitter(inputs, definitions, abs_scale or magnitudes, TARGETS[target], magnitudes)
    source = emitter.function_source(stabilize_exponentials(expr), out)
    _refuse_missing(source, TARGETS[target])
    namespace: dict = {}
    exec(compile(source, f"<attnproof compiled {_short(expr)}>", "exec"), namespace)
    return Compiled(source, namespace["compiled"], out, abs_scale, target)


def _refuse_missing(source: str, target: Target) -> None:
    used = set(re.findall(r"\bxp\.(\w+)", source))
    gaps = sorted(used & target.missing)
    if gaps:
        raise NotImplementedError(f"{target.name} lacks {', '.join(gaps)}, which this needs")


def _short(expr) -> str:
    text = str(expr)
    return text if len(text) < 60 else text[:57] + "..."


_RESERVED = {"xp", "arrays", "sizes", "dtype", "compiled"}


def identifier(name: str) -> str:
    """A Python identifier for a user's symbol name (``lambda``, ``m'``, ``2x`` are all legal
    names in a theorem); temporaries start with ``_`` and user names never do."""
    safe = re.sub(r"\W", "_", name).lstrip("_") or "v"
    if safe[0].isdigit() or keyword.iskeyword(safe) or safe in _RESERVED:
        safe = f"{safe}_"
    return safe


def index_key(index) -> sp.Symbol:
    """Axes are identified by an index's label, so ``Idx(j, n)`` and its label ``j`` agree."""
    return index.label if isinstance(index, sp.Idx) else index


def _number(value) -> str:
    return repr(float(value))


class _Emitter:
    def __init__(self, inputs, definitions, abs_scale: bool, target: Target, magnitudes: bool):
        self.target, self.magnitudes = target, magnitudes
        self.exponents: list[Pair] = []  # arguments of exponentials, for ``magnitudes``
        self.tensors = {t.name: t for t in inputs if isinstance(t, Tensor)}
        self.scalars = {s.name: s for s in inputs if isinstance(s, Scalar)}
        self.definitions = {d.name: d for d in definitions}
        self.abs = abs_scale
        self.lines: list[str] = []
        self.memo: dict = {}
        self.sizes: dict[sp.Symbol, sp.Expr] = {}
        self.used_inputs: list[str] = []
        self.used_dims: set[str] = set()
        self.counter = itertools.count()
        self.emitted: dict[str, str] = {}
        # the index order of the definition being compiled, innermost last: contractions
        # produce their axes in that order so no transpose is needed afterwards
        self.preferred_order: list[tuple] = []

    # -- the function ------------------------------------------------------------------------

    def function_source(self, expr, out) -> str:
        for index in out:
            self._note_index(index)
        result = self.visit(expr)
        term = result.scale if self.abs else result.value
        keys = tuple(index_key(i) for i in out)
        extra = set(term.axes) - set(keys)
        if extra:
            raise NotImplementedError(f"free indices {sorted(map(str, extra))} not in output order")
        shape = ", ".join(["batch"] + [self._size_code(k) for k in keys])
        final = f"xp.broadcast_to({self.align(term, keys, batch=True)}, ({shape},))"
        if self.magnitudes:  # both bounds from one evaluation of the abs-scale
            final = f"({final}, {self._largest_exponent()})"
        header = [f'{identifier(name)} = arrays["{name}"]' for name in self.used_inputs]
        header += [
            f'{identifier(name)} = sizes["{name}"]' for name in sorted(self.used_dims | {"batch"})
        ]
        header += [f"dtype = {self._dtype_source()}"]
        body = header + self.lines + [f"return {final}"]
        doc = f'"""{"abs-scale of " if self.abs else ""}{_short(expr)}"""'.replace("\\", "\\\\")
        return "def compiled(xp, arrays, sizes):\n    " + "\n    ".join([doc] + body) + "\n"

    def _largest_exponent(self) -> str:
        """Per batch row, the largest abs-scale of any exponent (0 when there is none)."""
        rows = ["xp.zeros(batch, dtype=dtype)"]
        for term in (pair.scale for pair in self.exponents):
            if term.batched:
                rows.append(f"xp.max(xp.abs(xp.reshape({term.code}, (batch, -1))), axis=1)")
            else:
                rows.append(f"xp.zeros(batch, dtype=dtype) + xp.max(xp.abs({term.code}))")
        return functools.reduce(lambda a, b: f"xp.maximum({a}, {b})", rows)

    def _dtype_source(self) -> str:
        batched = [n for n in self.used_inputs if n in self.tensors or not self._is_integer(n)]
        return f"{identifier(batched[0])}.dtype" if batched else "xp.float64"

    def _is_integer(self, name: str) -> bool:
        scalar = self.scalars.get(name)
        return scalar is not None and isinstance(scalar.domain, Integer)

    def typed(self, value) -> Term:
        """A constant in the arrays' dtype: a Python float would promote NumPy's bfloat16."""
        number = float(value)
        term = self.emit(f"xp.asarray({_number(number)}, dtype=dtype)", (), False)
        return Term(term.code, (), False, number)

    def emit(self, code: str, axes, batched: bool) -> Term:
        """Assign ``code`` to a fresh temporary; identical code reuses the earlier temporary."""
        if code not in self.emitted:
            self.emitted[code] = f"_t{next(self.counter)}"
            self.lines.append(f"{self.emitted[code]} = {code}")
        return Term(self.emitted[code], tuple(axes), batched)

    # -- sizes -------------------------------------------------------------------------------

    def _note_index(self, index, size: sp.Expr | None = None) -> None:
        key = index_key(index)
        if size is None and isinstance(index, sp.Idx) and index.upper is not None:
            size = index.upper - index.lower + 1
        if size is not None and key not in self.sizes:
            self.sizes[key] = sp.sympify(size)

    def _size_code(self, key) -> str:
        if key not in self.sizes:
            raise NotImplementedError(f"cannot tell the size of index {key}")
        return self._int_code(self.sizes[key])

    def _int_code(self, expr: sp.Expr) -> str:
        expr = sp.sympify(expr)
        for symbol in expr.free_symbols:
            self._use_symbol(symbol)
        return str(expr.xreplace({s: sp.Symbol(identifier(s.name)) for s in expr.free_symbols}))

    def _use_symbol(self, symbol) -> None:
        if symbol.name in self.scalars:
            self._use_input(symbol.name)
        else:
            self.used_dims.add(symbol.name)

    def _use_input(self, name: str) -> None:
        if name not in self.used_inputs:
            self.used_inputs.append(name)

    # -- alignment ---------------------------------------------------------------------------

    def align(self, term: Term, target, batch: bool = False) -> str:
        """Source for ``term`` transposed, with ``None`` axes, to broadcast against ``target``."""
        if not term.axes and not term.batched:
            return term.code
        lead = [0] if term.batched else []
        offset = len(lead)
        order = [term.axes.index(a) for a in target if a in term.axes]
        code = term.code
        if order != sorted(order):
            perm = tuple(lead + [p + offset for p in order])
            code = f"xp.transpose({code}, {perm})"
        if len(order) == len(target):
            return code
        index = [":"] * offset + [":" if a in term.axes else "None" for a in target]
        if not term.batched and batch:
            index = ["None"] + index
        return f"{code}[{', '.join(index)}]"

    def combine(self, terms: Sequence[Term], op: str) -> Term:
        axes = _union(t.axes for t in terms)
        batched = any(t.batched for t in terms)
        if op == "*" and len(terms) > 1:
            terms = [t for t in terms if t.number != 1.0] or terms[:1]
        if len(terms) == 1:
            only = terms[0]
            return only if only.axes == axes else self.emit(self.align(only, axes), axes, batched)
        parts = [self.align(t, axes) for t in terms]
        code = f" {op} ".join(p if _is_atom(p) else f"({p})" for p in parts)
        return self.emit(code, axes, batched)

    def with_axis(self, term: Term, key) -> Term:
        """``term`` broadcast to also run over ``key`` (for an axis its value does not vary on)."""
        if key in term.axes:
            return term
        zeros = Term(f"xp.zeros({self._size_code(key)}, dtype=dtype)", (key,), False)
        return self.combine([term, zeros], "+")

    def axis_of(self, term: Term, key) -> int:
        return term.axes.index(key) + (1 if term.batched else 0)

    # -- dispatch ----------------------------------------------------------------------------

    def visit(self, expr) -> Pair:
        if expr not in self.memo:
            self.memo[expr] = self._visit(expr)
        return self.memo[expr]

    def _visit(self, expr) -> Pair:
        for kind, rule in self._rules():
            if isinstance(expr, kind):
                return rule(expr)
        if expr.is_Number or expr in (sp.pi, sp.E):
            return self._constant(expr)
        raise NotImplementedError(f"the compiler does not support {type(expr).__name__}: {expr}")

    def _rules(self):
        return (
            (sp.Indexed, self._indexed),
            (sp.Symbol, self._symbol),
            (sp.KroneckerDelta, self._delta),
            (sp.Add, self._add),
            (sp.Mul, self._mul),
            (sp.Pow, self._pow),
            (sp.exp, self._exp),
            (sp.log, self._log),
            (sp.Abs, self._abs),
            (sp.Max, self._max),
            (sp.Min, self._min),
            (sp.Sum, self._sum),
            (sp.Product, self._product),
            (Softmax, self._softmax),
            (LogSumExp, self._lse),
            (ReduceMax, self._reduce_max),
            (KeptMax, self._kept_max),
            (RowMax, self._rowmax),
        )

    def _pair(self, value: Term, scale: Callable[[], Term] | None) -> Pair:
        return Pair(value, scale() if self.abs else None)

    def _abs_of(self, term: Term) -> Term:
        return self.emit(f"xp.abs({term.code})", term.axes, term.batched)

    # -- leaves ------------------------------------------------------------------------------

    def _constant(self, expr) -> Pair:
        value = self.typed(expr)
        return Pair(value, self.typed(abs(expr)) if self.abs else None)

    def _symbol(self, expr: sp.Symbol) -> Pair:
        self._use_symbol(expr)
        batched = expr.name in self.scalars and not self._is_integer(expr.name)
        value = Term(identifier(expr.name), (), batched)
        if not batched:
            return self._pair(value, lambda: Term(f"abs({value.code})", (), False))
        return self._pair(value, lambda: self._abs_of(value))

    def _indexed(self, expr: sp.Indexed) -> Pair:
        name = str(expr.base.label)
        if name in self.definitions:
            return self._defined(expr, self.definitions[name])
        if name not in self.tensors:
            raise NotImplementedError(f"{name} is neither an input tensor nor a definition")
        self._use_input(name)
        dims = self.tensors[name].dims
        slots, keys = [":"], []
        for position, index in enumerate(expr.indices):
            if index.is_Integer:
                slots.append(str(int(index)))
                continue
            if not isinstance(index, (sp.Idx, sp.Symbol)):
                raise NotImplementedError(f"index arithmetic {index} in {expr} is not supported")
            self._note_index(index, sp.Symbol(dims[position].name, integer=True, positive=True))
            slots.append(":")
            keys.append(index_key(index))
        array = identifier(name)
        code = array if all(s == ":" for s in slots) else f"{array}[{', '.join(slots)}]"
        value = self._diagonal(Term(code, tuple(keys), True))
        return self._pair(value, lambda: self._abs_of(value))

    def _diagonal(self, term: Term) -> Term:
        """Collapse repeated axes (``X[i, i]``) to their diagonal with one einsum."""
        if len(set(term.axes)) == len(term.axes):
            return term
        letters = _letters(term.axes)
        axes = _union([term.axes])
        lead = _BATCH_LETTER if term.batched else ""
        spec = f"{lead}{''.join(letters[a] for a in term.axes)}->{lead}"
        spec += "".join(letters[a] for a in axes)
        call = self.target.einsum.format(operands=f'"{spec}", {term.code}')
        return self.emit(call, axes, term.batched)

    def _defined(self, expr: sp.Indexed, definition: Defined) -> Pair:
        for index in definition.indices:
            self._note_index(index)
        self.preferred_order.append(tuple(index_key(i) for i in definition.indices))
        try:
            body = self._in_declared_order(self.visit(definition.body), definition)
        finally:
            self.preferred_order.pop()
        mapping = {}
        for own, used in zip(definition.indices, expr.indices, strict=True):
            if not isinstance(used, (sp.Idx, sp.Symbol)):
                raise NotImplementedError(f"{expr}: definitions take plain indices")
            self._note_index(used, self.sizes.get(index_key(own)))
            mapping[index_key(own)] = index_key(used)

        def relabel(term: Term) -> Term:
            renamed = Term(term.code, tuple(mapping.get(a, a) for a in term.axes), term.batched)
            return self._diagonal(renamed)

        return Pair(relabel(body.value), relabel(body.scale) if self.abs else None)

    def _in_declared_order(self, body: Pair, definition: Defined) -> Pair:
        """Lay a definition out in the order of its declared indices (``S[i, j]`` as (i, j)),
        so that reductions over its last index run over contiguous memory."""
        order = tuple(index_key(i) for i in definition.indices)

        def reorder(term: Term | None) -> Term | None:
            if term is None or set(term.axes) != set(order) or term.axes == order:
                return term
            return self.emit(self.align(term, order), order, term.batched)

        return Pair(reorder(body.value), reorder(body.scale))

    def _delta(self, expr: sp.KroneckerDelta) -> Pair:
        a, b = expr.args[:2]
        if index_key(a) == index_key(b):
            return self._constant(sp.S.One)
        if a.is_Integer or b.is_Integer:
            raise NotImplementedError(f"KroneckerDelta with a fixed entry: {expr}")
        for index in (a, b):
            self._note_index(index)
        size = self._size_code(index_key(a) if index_key(a) in self.sizes else index_key(b))
        self.sizes.setdefault(index_key(a), self.sizes.get(index_key(b)))
        self.sizes.setdefault(index_key(b), self.sizes.get(index_key(a)))
        value = self.emit(f"xp.eye({size}, dtype=dtype)", (index_key(a), index_key(b)), False)
        return Pair(value, value if self.abs else None)

    # -- arithmetic --------------------------------------------------------------------------

    def _add(self, expr: sp.Add) -> Pair:
        pairs = [self.visit(arg) for arg in expr.args]
        value = self.combine([p.value for p in pairs], "+")
        return self._pair(value, lambda: self.combine([p.scale for p in pairs], "+"))

    def _mul(self, expr: sp.Mul) -> Pair:
        pairs = [self.visit(arg) for arg in expr.args]
        value = self.combine(self._mask_guard(expr.args, [p.value for p in pairs]), "*")
        return self._pair(value, lambda: self.combine(
            self._mask_guard(expr.args, [p.scale for p in pairs]), "*"))

    def _pow(self, expr: sp.Pow) -> Pair:
        base, exponent = expr.args
        b = self.visit(base)
        if exponent == -1:
            one = self.typed(1)
            value = self.emit(f"{one.code} / {b.value.code}", b.value.axes, b.value.batched)
        elif exponent == sp.Rational(1, 2):
            value = self.emit(f"xp.sqrt({b.value.code})", b.value.axes, b.value.batched)
        elif exponent.is_Number:
            code = f"{b.value.code} ** {self.typed(exponent).code}"
            value = self.emit(code, b.value.axes, b.value.batched)
        else:
            e = self.visit(exponent)
            value = self.combine([b.value, e.value], "**")
            return self._pair(value, lambda: self._general_pow_scale(value, b, e))
        return self._pair(value, lambda: self._pow_scale(b, float(exponent)))

    def _pow_scale(self, base: Pair, p: float) -> Term:
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

    def _general_pow_scale(self, value: Term, b: Pair, e: Pair) -> Term:
        log_b = self.emit(f"xp.abs(xp.log(xp.abs({b.value.code})))", b.value.axes, b.value.batched)
        rel_b = self.combine([b.scale, self._abs_of(b.value)], "/")
        growth = self.combine([self.combine([e.scale, log_b], "*"),
                               self.combine([self._abs_of(e.value), rel_b], "*")], "+")
        return self.combine([self._abs_of(value), self._one_plus(growth)], "*")

    def _one_plus(self, term: Term) -> Term:
        return self.emit(f"1.0 + {term.code}", term.axes, term.batched)

    def _exp(self, expr: sp.exp) -> Pair:
        a = self.visit(expr.args[0])
        self.exponents.append(a)
        value = self.emit(f"xp.exp({a.value.code})", a.value.axes, a.value.batched)
        return self._pair(value, lambda: self.combine([value, self._one_plus(a.scale)], "*"))

    def _log(self, expr: sp.log) -> Pair:
        softmax = self._as_softmax(expr.args[0])
        if softmax is not None:
            return self._log_softmax(softmax)
        a = self.visit(expr.args[0])
        value = self.emit(f"xp.log({a.value.code})", a.value.axes, a.value.batched)
        return self._pair(value, lambda: self.combine(
            [self._abs_of(value), self.combine([a.scale, self._abs_of(a.value)], "/")], "+"))

    def _as_softmax(self, expr) -> Softmax | None:
        """``expr`` as a Softmax node, looking through a definition such as ``A[i, j]``."""
        if isinstance(expr, sp.Indexed) and str(expr.base.label) in self.definitions:
            definition = self.definitions[str(expr.base.label)]
            if isinstance(definition.body, Softmax):
                renaming = dict(zip(definition.indices, expr.indices, strict=True))
                expr = definition.body.xreplace(renaming)
        # log of a masked weight is -inf where masked: no fused log-softmax for it
        return expr if isinstance(expr, Softmax) and expr.mask == 1 else None

    def _abs(self, expr: sp.Abs) -> Pair:
        a = self.visit(expr.args[0])
        value = self._abs_of(a.value)
        return self._pair(value, lambda: a.scale)

    def _max(self, expr) -> Pair:
        return self._pairwise(expr, "xp.maximum")

    def _min(self, expr) -> Pair:
        return self._pairwise(expr, "xp.minimum")

    def _pairwise(self, expr, function: str) -> Pair:
        pairs = [self.visit(arg) for arg in expr.args]
        value = self._fold([p.value for p in pairs], function)
        return self._pair(value, lambda: self._fold([p.scale for p in pairs], "xp.maximum"))

    def _fold(self, terms: Sequence[Term], function: str) -> Term:
        result = terms[0]
        for term in terms[1:]:
            axes = _union([result.axes, term.axes])
            code = f"{function}({self.align(result, axes)}, {self.align(term, axes)})"
            result = self.emit(code, axes, result.batched or term.batched)
        return result

    # -- reductions --------------------------------------------------------------------------

    def _sum(self, expr: sp.Sum) -> Pair:
        for variable, _, _ in expr.limits:
            self._note_index(variable)
        coefficient, factors = _factors(expr.function)
        pairs = [self.visit(f) for f in factors]
        masks = [m for limit in expr.limits if (m := self._range_mask(limit)) is not None]
        summed = [index_key(v) for v, _, _ in expr.limits]
        values = self._mask_guard(factors, [p.value for p in pairs])
        value = self._contract(values + masks, summed, coefficient, expr)
        return self._pair(value, lambda: self._contract(
            self._mask_guard(factors, [p.scale for p in pairs]) + masks, summed,
            abs(coefficient), expr))

    def _product(self, expr: sp.Product) -> Pair:
        """A product over one whole dimension, e.g. a masked softmax's "row fully masked" factor
        Π(1 − m). Its abs-scale Π(|f| + s_f) bounds the product and, to first order, every
        perturbation of its factors."""
        if len(expr.limits) != 1:
            raise NotImplementedError(f"product over several indices: {expr}")
        (variable, lower, upper), = expr.limits
        self._note_index(variable, upper - lower + 1)
        if self._range_mask(expr.limits[0]) is not None:
            raise NotImplementedError(f"product over a partial range: {expr}")
        key = index_key(variable)
        f = self.visit(expr.function)

        def product_over_key(term: Term) -> Term:
            return self._reduce(self.with_axis(term, key), [key], "prod")

        return self._pair(product_over_key(f.value), lambda: product_over_key(
            self.combine([self._abs_of(f.value), f.scale], "+")))

    def _mask_guard(self, factors, values: list[Term]) -> list[Term]:
        """Factors of a product, as one term that is exactly 0 wherever a 0/1 mask factor is 0,
        even where another factor overflowed (0 * inf would be nan); unchanged without a mask.
        Serves values and abs-scales alike: a mask's abs-scale |m| is 0/1 as well."""
        kept = [v for f, v in zip(factors, values, strict=True) if self._is_mask(f)]
        if not kept or len(kept) == len(values):
            return values
        product = self.combine(values, "*")
        keep = self.combine(kept, "*")
        zero = self.typed(0).code
        code = f"xp.where({self.align(keep, product.axes)} > 0, {product.code}, {zero})"
        return [self.emit(code, product.axes, product.batched)]

    def _is_mask(self, expr) -> bool:
        tensor = self.tensors.get(str(expr.base.label)) if isinstance(expr, sp.Indexed) else None
        return tensor is not None and isinstance(tensor.domain, Mask)

    def _range_mask(self, limit) -> Term | None:
        """A 0/1 vector over the index's whole dimension, or None when the sum is full-range."""
        variable, lower, upper = limit
        key = index_key(variable)
        size = self.sizes.get(key)
        if size is None:
            if lower != 0:
                raise NotImplementedError(f"size of summation index {variable} unknown")
            return None
        if sp.simplify(lower) == 0 and sp.simplify(upper - (size - 1)) == 0:
            return None
        if any(bound.atoms(sp.Indexed, sp.Idx) for bound in (lower, upper)):
            raise NotImplementedError(f"sum limits depending on an index: {limit}")
        arange = f"xp.arange({self._size_code(key)})"
        condition = f"({arange} >= {self._int_code(lower)}) & ({arange} <= {self._int_code(upper)})"
        return self.emit(f"xp.asarray({condition}, dtype=dtype)", (key,), False)

    def _contract(self, operands, summed, coefficient, expr) -> Term:
        """One einsum over ``operands``, summing the axes in ``summed``."""
        scalars = [o for o in operands if not o.axes and not o.batched]
        arrays = [o for o in operands if o.axes or o.batched]
        present = _union(o.axes for o in arrays)
        kept = self._preferred(tuple(a for a in present if a not in summed))
        batched = any(o.batched for o in arrays)
        count = [self._count_code(expr, key) for key in summed if key not in present]
        factor = [self.typed(coefficient).code] if coefficient != 1 else []
        factor += [s.code for s in scalars] + count
        if not arrays:
            return self.emit(" * ".join(factor) or self.typed(1).code, (), False)
        letters = _letters(present)
        specs = [(_BATCH_LETTER if o.batched else "") + "".join(letters[a] for a in o.axes)
                 for o in arrays]
        result = (_BATCH_LETTER if batched else "") + "".join(letters[a] for a in kept)
        operands = f'"{",".join(specs)}->{result}", {", ".join(o.code for o in arrays)}'
        call = self.target.einsum.format(operands=operands)
        code = " * ".join(factor + [call])
        return self.emit(code, kept, batched)

    def _preferred(self, axes: tuple) -> tuple:
        order = self.preferred_order[-1] if self.preferred_order else ()
        if not set(axes) <= set(order):
            return axes
        return tuple(a for a in order if a in axes)

    def _count_code(self, expr: sp.Sum, key) -> str:
        for variable, lower, upper in expr.limits:
            if index_key(variable) == key:
                return f"({self._int_code(upper - lower + 1)})"
        raise AssertionError(key)

    def _shifted(self, logits: sp.Expr, index) -> tuple[Pair, Term, int]:
        """Logits over ``index`` and their finite row maximum (keepdims) for a stable reduction."""
        self._note_index(index)
        u = self.visit(logits)
        key = index_key(index)
        value = self.with_axis(u.value, key)
        axis = self.axis_of(value, key)
        peak = self._finite(self.emit(f"xp.max({value.code}, axis={axis}, keepdims=True)",
                                      value.axes, value.batched))
        scale = self.with_axis(u.scale, key) if self.abs else None
        self.exponents.append(Pair(value, scale))
        return Pair(value, scale), peak, axis

    def _finite(self, peak: Term) -> Term:
        """An infinite maximum (a row of -inf) shifts by 0 instead of making inf - inf = nan."""
        zero = self.typed(0).code
        return self.emit(f"xp.where(xp.isfinite({peak.code}), {peak.code}, {zero})", peak.axes,
                         peak.batched)

    def _softmax(self, expr: Softmax) -> Pair:
        if expr.mask != 1:
            return self._masked_softmax(expr)
        if not self.abs and expr.beta != 1 and expr.beta.is_positive:
            return Pair(self._scaled_softmax(expr))
        u, peak, axis = self._shifted(expr.beta * expr.logits, expr.index)
        axes, batched = u.value.axes, u.value.batched
        e = self.emit(f"xp.exp({u.value.code} - {peak.code})", axes, batched)
        p = self.emit(f"{e.code} / xp.sum({e.code}, axis={axis}, keepdims=True)", axes, batched)
        return self._pair(p, lambda: self._softmax_scale(p, u.scale, peak, axis))

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
        shifted = self.emit(f"{x.value.code} - {peak.code}", x.value.axes, x.value.batched)
        scaled = self.combine([self.visit(expr.beta).value, shifted], "*")
        return scaled, self.axis_of(scaled, index_key(expr.index))

    def _masked_softmax(self, expr: Softmax) -> Pair:
        """Weights over the kept entries only; a fully masked row gets zero weights.

        Masked logits are replaced by the row's smallest logit before the max-shift, so the
        shift is the largest *kept* logit and nothing masked can overflow; a fully masked row
        has a zero sum and is divided by 1 instead.
        """
        positive_beta = expr.beta.is_positive and not self.abs
        logits = expr.logits if positive_beta else expr.beta * expr.logits
        self._note_index(expr.index)
        u = self.visit(logits)
        key = index_key(expr.index)
        x, kept, masked = self._masked_to_floor(self.with_axis(u.value, key), expr.mask, [key])
        axis = self.axis_of(x, key)
        peak = self.emit(f"xp.max({masked.code}, axis={axis}, keepdims=True)", x.axes,
                         x.batched)
        scale = self._on_axes(self.with_axis(u.scale, key), x.axes) if self.abs else None
        self.exponents.append(Pair(masked, scale))
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
        return self._pair(p, lambda: self._softmax_scale(p, scale, peak, axis))

    def _on_axes(self, term: Term, axes) -> Term:
        return term if term.axes == axes else self.emit(self.align(term, axes), axes, term.batched)

    def _softmax_scale(self, p: Term, s_u: Term, peak: Term, axis: int) -> Term:
        """|dp_j| <= p_j (|du_j| + sum_k p_k |du_k|), with du the error of u - max(u)."""
        shifted = self.emit(f"{s_u.code} + xp.abs({peak.code})", p.axes, p.batched)
        mean = self.emit(f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)",
                         p.axes, p.batched)
        return self.emit(f"{p.code} * (1.0 + {shifted.code} + {mean.code})", p.axes, p.batched)

    def _lse(self, expr: LogSumExp) -> Pair:
        (variable, lower, upper), = expr.limits
        self._note_index(variable)
        if self._range_mask(expr.limits[0]) is not None:
            raise NotImplementedError(f"log-sum-exp over a partial range: {expr}")
        u, peak, axis = self._shifted(expr.function, variable)
        axes = tuple(a for a in u.value.axes if a != index_key(variable))
        batched = u.value.batched
        e = self.emit(f"xp.exp({u.value.code} - {peak.code})", u.value.axes, batched)
        total = f"xp.sum({e.code}, axis={axis})"
        value = self.emit(f"xp.log({total}) + xp.squeeze({peak.code}, axis={axis})", axes, batched)
        return self._pair(value, lambda: self._lse_scale(value, e, u.scale, peak, axis))

    def _lse_scale(self, value: Term, e: Term, s_u: Term, peak: Term, axis: int) -> Term:
        weighted = f"xp.sum({e.code} * ({s_u.code} + xp.abs({peak.code})), axis={axis})"
        mean = f"{weighted} / xp.sum({e.code}, axis={axis})"
        return self.emit(f"xp.abs({value.code}) + {mean}", value.axes, value.batched)

    def _log_softmax(self, node: Softmax) -> Pair:
        if not self.abs and node.beta != 1 and node.beta.is_positive:
            return Pair(self._minus_log_sum_exp(*self._scaled_shift(node)))
        u, peak, axis = self._shifted(node.beta * node.logits, node.index)
        axes, batched = u.value.axes, u.value.batched
        z = self.emit(f"{u.value.code} - {peak.code}", axes, batched)
        value = self._minus_log_sum_exp(z, axis)

        def scale() -> Term:
            p = self.emit(f"xp.exp({value.code})", axes, batched)
            shifted = self.emit(f"{u.scale.code} + xp.abs({peak.code})", axes, batched)
            mean = f"xp.sum({p.code} * {shifted.code}, axis={axis}, keepdims=True)"
            return self.emit(f"xp.abs({value.code}) + {shifted.code} + {mean}", axes, batched)

        return self._pair(value, scale)

    def _minus_log_sum_exp(self, z: Term, axis: int) -> Term:
        e = self.emit(f"xp.exp({z.code})", z.axes, z.batched)
        return self.emit(f"{z.code} - xp.log(xp.sum({e.code}, axis={axis}, keepdims=True))",
                         z.axes, z.batched)

    def _reduce_max(self, expr: ReduceMax) -> Pair:
        function, *indices = expr.args
        for index in indices:
            self._note_index(index)
        f = self.visit(function)
        value, scale = f.value, f.scale
        for index in indices:
            value = self._max_over(value, index_key(index))
            scale = self._max_over(scale, index_key(index)) if self.abs else None
        return Pair(value, scale)

    def _kept_max(self, expr: KeptMax) -> Pair:
        """Maximum over the kept entries, or over all entries where the mask keeps none."""
        function, mask, *indices = expr.args
        for index in indices:
            self._note_index(index)
        f = self.visit(function)
        keys = [index_key(i) for i in indices]
        x, kept, masked = self._masked_to_floor(f.value, mask, keys)
        any_kept = self._reduce(self.emit(f"xp.asarray({kept.code}, dtype=dtype)", x.axes,
                                          x.batched), keys, "max")
        kept_peak, all_peak = self._reduce(masked, keys, "max"), self._reduce(x, keys, "max")
        value = self.emit(f"xp.where({any_kept.code} > 0, {kept_peak.code}, {all_peak.code})",
                          all_peak.axes, all_peak.batched)
        scale = self._reduce(f.scale, keys, "max") if self.abs else None
        return Pair(value, scale)

    def _masked_to_floor(self, value: Term, mask: sp.Expr, keys) -> tuple[Term, Term, Term]:
        """``value`` over the axes of ``value`` and ``mask`` together (x), where the mask keeps
        an entry (kept), and x with masked entries lowered to its minimum over ``keys``
        (masked): its maximum is then the largest kept entry, or any entry if none is kept."""
        m = self.visit(mask).value
        x = self.combine([value, self.emit(f"{m.code} * {self.typed(0).code}", m.axes,
                                           m.batched)], "+")  # + 0 * mask: broadcast
        kept = self.emit(f"{self.align(m, x.axes)} > 0", x.axes, m.batched)
        floor = self._reduce(x, keys, "min")
        masked = self.emit(f"xp.where({kept.code}, {x.code}, {self.align(floor, x.axes)})",
                           x.axes, x.batched)
        return x, kept, masked

    def _reduce(self, term: Term, keys, how: str) -> Term:
        """``xp.<how>`` (max, min, prod) of ``term`` over each of ``keys`` it runs over."""
        for key in keys:
            if key in term.axes:
                axes = tuple(a for a in term.axes if a != key)
                term = self.emit(f"xp.{how}({term.code}, axis={self.axis_of(term, key)})", axes,
                                 term.batched)
        return term

    def _rowmax(self, expr: RowMax) -> Pair:
        """The statement language's ``rowmax``: a maximum over the whole range of one index."""
        (index, lower, upper), = expr.limits
        if not isinstance(index, sp.Idx) or (lower, upper) != (index.lower, index.upper):
            raise NotImplementedError(f"a maximum over part of a range: {expr}")
        return self._reduce_max(ReduceMax(expr.function, index))

    def _max_over(self, term: Term, key) -> Term:
        return term if key not in term.axes else self._finite(self._reduce(term, [key], "max"))


def _factors(expr: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]]:
    """Numeric coefficient and remaining factors of a summand."""
    if isinstance(expr, sp.Mul):
        coefficient, rest = expr.as_coeff_mul()
        return coefficient, list(rest)
    if expr.is_Number:
        return expr, []
    return sp.S.One, [expr]


def _union(axes_lists) -> tuple:
    seen: list = []
    for axes in axes_lists:
        for a in axes:
            if a not in seen:
                seen.append(a)
    return tuple(seen)


def _letters(axes) -> dict:
    unique = _union([axes])
    if len(unique) > len(_LETTERS):
        raise NotImplementedError("more indices in one contraction than einsum letters")
    return {a: _LETTERS[n] for n, a in enumerate(unique)}


def _is_atom(code: str) -> bool:
    """A name, number or plain subscript, which needs no parentheses inside an operator."""
    plain = code.replace("_", "").replace(".", "").isalnum()
    return plain or (code.endswith("]") and "(" not in code)
