"""What every compiler rule writes with: terms, emitted temporaries, sizes, axis alignment, and
the array idioms (contraction, reductions, mask guards) that value and error-scale rules share."""

from __future__ import annotations

import itertools
import keyword
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

import sympy as sp

from attnproof.symbolic import Defined, Indicator, Integer, Mask, Scalar, Tensor

from ._backends import Target

_LETTERS = "abcdefghijklmnopqrstuvwxy"
BATCH_LETTER = "z"


@dataclass(frozen=True)
class Term:
    code: str
    axes: tuple[sp.Symbol, ...]
    batched: bool
    number: float | None = None  # the value of a constant, so products can drop ones


@dataclass(frozen=True)
class Pair:
    """A node's value and, when compiling the abs-scale, its scale (same axes as the value)."""

    value: Term
    scale: Term | None = None


_RESERVED = {"xp", "arrays", "sizes", "dtype", "compiled"}


def identifier(name: str) -> str:
    """A Python identifier for a user's symbol name (``lambda``, ``m'``, ``2x`` are all legal
    names in a theorem); temporaries start with ``_`` and user names never do."""
    safe = re.sub(r"\W", "_", name).lstrip("_") or "v"
    if safe[0].isdigit() or keyword.iskeyword(safe) or safe in _RESERVED:
        safe = f"{safe}_"
    return safe


def index_key(index: sp.Basic) -> sp.Symbol:
    """Axes are identified by an index's label, so ``Idx(j, n)`` and its label ``j`` agree."""
    return index.label if isinstance(index, sp.Idx) else index


def number_code(value: float | sp.Expr) -> str:
    return repr(float(value))


class Emitter:
    """The state of one compilation and the code-writing primitives every rule uses."""

    # a node's value and scale, memoized: the compilation that mixes the rules in defines it
    visit: Callable[[sp.Basic], Pair]

    def __init__(self, inputs: Iterable[Tensor | Scalar], definitions: Iterable[Defined],
                 abs_scale: bool, target: Target, magnitudes: bool) -> None:
        self.target, self.magnitudes = target, magnitudes
        self.exponents: list[Pair] = []  # arguments of exponentials, for ``magnitudes``
        self.tensors = {t.name: t for t in inputs if isinstance(t, Tensor)}
        self.scalars = {s.name: s for s in inputs if isinstance(s, Scalar)}
        self.definitions = {d.name: d for d in definitions}
        self.abs = abs_scale
        self.lines: list[str] = []
        self.memo: dict[sp.Basic, Pair] = {}
        self.sizes: dict[sp.Symbol, sp.Expr] = {}
        self.used_inputs: list[str] = []
        self.used_dims: set[str] = set()
        self.counter = itertools.count()
        self.emitted: dict[str, str] = {}
        # the index order of the definition being compiled, innermost last: contractions
        # produce their axes in that order so no transpose is needed afterwards
        self.preferred_order: list[tuple] = []

    def _dtype_source(self) -> str:
        batched = [n for n in self.used_inputs if n in self.tensors or not self._is_integer(n)]
        return f"{identifier(batched[0])}.dtype" if batched else "xp.float64"

    def _is_integer(self, name: str) -> bool:
        scalar = self.scalars.get(name)
        return scalar is not None and isinstance(scalar.domain, Integer)

    def typed(self, value: float | sp.Expr) -> Term:
        """A constant in the arrays' dtype: a Python float would promote NumPy's bfloat16."""
        number = float(value)
        term = self.emit(f"xp.asarray({number_code(number)}, dtype=dtype)", (), False)
        return Term(term.code, (), False, number)

    def emit(self, code: str, axes: Iterable[sp.Symbol], batched: bool) -> Term:
        """Assign ``code`` to a fresh temporary; identical code reuses the earlier temporary."""
        if code not in self.emitted:
            self.emitted[code] = f"_t{next(self.counter)}"
            self.lines.append(f"{self.emitted[code]} = {code}")
        return Term(self.emitted[code], tuple(axes), batched)

    # -- sizes -------------------------------------------------------------------------------

    def _note_index(self, index: sp.Basic, size: sp.Expr | None = None) -> None:
        key = index_key(index)
        if size is None and isinstance(index, sp.Idx) and index.upper is not None:
            size = index.upper - index.lower + 1
        if size is not None and key not in self.sizes:
            self.sizes[key] = sp.sympify(size)

    def _size_code(self, key: sp.Symbol) -> str:
        if key not in self.sizes:
            raise NotImplementedError(f"cannot tell the size of index {key}")
        return self._int_code(self.sizes[key])

    def _int_code(self, expr: sp.Expr) -> str:
        expr = sp.sympify(expr)
        for symbol in expr.free_symbols:
            self._use_symbol(symbol)
        return str(expr.xreplace({s: sp.Symbol(identifier(s.name)) for s in expr.free_symbols}))

    def _use_symbol(self, symbol: sp.Symbol) -> None:
        if symbol.name in self.scalars:
            self._use_input(symbol.name)
        else:
            self.used_dims.add(symbol.name)

    def _use_input(self, name: str) -> None:
        if name not in self.used_inputs:
            self.used_inputs.append(name)

    # -- alignment ---------------------------------------------------------------------------

    def align(self, term: Term, target: Sequence[sp.Symbol], batch: bool = False) -> str:
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
        axes = union(t.axes for t in terms)
        batched = any(t.batched for t in terms)
        if op == "*" and len(terms) > 1:
            terms = [t for t in terms if t.number != 1.0] or terms[:1]
        if len(terms) == 1:
            only = terms[0]
            return only if only.axes == axes else self.emit(self.align(only, axes), axes, batched)
        parts = [self.align(t, axes) for t in terms]
        code = f" {op} ".join(p if _is_atom(p) else f"({p})" for p in parts)
        return self.emit(code, axes, batched)

    def with_axis(self, term: Term, key: sp.Symbol) -> Term:
        """``term`` broadcast to also run over ``key`` (for an axis its value does not vary on)."""
        if key in term.axes:
            return term
        zeros = Term(f"xp.zeros({self._size_code(key)}, dtype=dtype)", (key,), False)
        return self.combine([term, zeros], "+")

    def axis_of(self, term: Term, key: sp.Symbol) -> int:
        return term.axes.index(key) + (1 if term.batched else 0)

    def _on_axes(self, term: Term, axes: tuple[sp.Symbol, ...]) -> Term:
        return term if term.axes == axes else self.emit(self.align(term, axes), axes, term.batched)

    def _diagonal(self, term: Term) -> Term:
        """Collapse repeated axes (``X[i, i]``) to their diagonal with one einsum."""
        if len(set(term.axes)) == len(term.axes):
            return term
        letters = letters_for(term.axes)
        axes = union([term.axes])
        lead = BATCH_LETTER if term.batched else ""
        spec = f"{lead}{''.join(letters[a] for a in term.axes)}->{lead}"
        spec += "".join(letters[a] for a in axes)
        call = self.target.einsum.format(operands=f'"{spec}", {term.code}')
        return self.emit(call, axes, term.batched)

    # -- elementwise idioms ------------------------------------------------------------------

    def _abs_of(self, term: Term) -> Term:
        return self.emit(f"xp.abs({term.code})", term.axes, term.batched)

    def _one_plus(self, term: Term) -> Term:
        return self.emit(f"1.0 + {term.code}", term.axes, term.batched)

    def _fold(self, terms: Sequence[Term], function: str) -> Term:
        result = terms[0]
        for term in terms[1:]:
            axes = union([result.axes, term.axes])
            code = f"{function}({self.align(result, axes)}, {self.align(term, axes)})"
            result = self.emit(code, axes, result.batched or term.batched)
        return result

    def _finite(self, peak: Term) -> Term:
        """An infinite maximum (a row of -inf) shifts by 0 instead of making inf - inf = nan."""
        zero = self.typed(0).code
        return self.emit(f"xp.where(xp.isfinite({peak.code}), {peak.code}, {zero})", peak.axes,
                         peak.batched)

    def _mask_guard(self, factors: Sequence[sp.Expr], values: list[Term]) -> list[Term]:
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

    def _range_guard(self, values: list[Term], masks: list[Term]) -> list[Term]:
        """Factors of a summand with the sum's range masks: multiplied into the contraction,
        except a mask that depends on other indices (Σ_{j ≤ i}), which selects instead, so
        that a term outside the range that overflowed (exp past the row's kept maximum)
        contributes an exact 0, not 0 · ∞."""
        selecting = [m for m in masks if len(m.axes) > 1]
        if not selecting:
            return values + masks
        product = self.combine(values, "*")
        keep = self.combine(selecting, "*")
        axes = union([product.axes, keep.axes])
        zero = self.typed(0).code
        code = (f"xp.where({self.align(keep, axes)} > 0, {self.align(product, axes)}, {zero})")
        guarded = self.emit(code, axes, product.batched or keep.batched)
        return [guarded] + [m for m in masks if len(m.axes) <= 1]

    def _is_mask(self, expr: sp.Basic) -> bool:
        """A 0/1 mask entry, or an indicator written as an expression of indices ([j ≤ i])."""
        if isinstance(expr, Indicator):
            return True
        tensor = self.tensors.get(str(expr.base.label)) if isinstance(expr, sp.Indexed) else None
        return tensor is not None and isinstance(tensor.domain, Mask)

    # -- reductions --------------------------------------------------------------------------

    def _range_mask(self, limit: tuple[sp.Expr, sp.Expr, sp.Expr]) -> Term | None:
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
        if any(bound.atoms(sp.Indexed, sp.Idx) or bound.free_symbols & set(self.sizes)
               for bound in (lower, upper)):
            return self._index_range_mask(key, lower, upper)
        arange = f"xp.arange({self._size_code(key)})"
        condition = f"({arange} >= {self._int_code(lower)}) & ({arange} <= {self._int_code(upper)})"
        return self.emit(f"xp.asarray({condition}, dtype=dtype)", (key,), False)

    def _index_range_mask(self, key: sp.Symbol, lower: sp.Expr, upper: sp.Expr) -> Term:
        """Σ_{j = lower}^{upper} with limits depending on other indices (Σ_{j ≤ i}): a 0/1
        mask over j and those indices, built from the limits' own values."""
        positions = self.emit(f"xp.arange({self._size_code(key)}, dtype=dtype)", (key,), False)
        low, high = self.visit(sp.sympify(lower)).value, self.visit(sp.sympify(upper)).value
        inside = self.combine([self.combine([positions, low], ">="),
                               self.combine([positions, high], "<=")], "&")
        return self.emit(f"xp.asarray({inside.code}, dtype=dtype)", inside.axes, inside.batched)

    def _contract(self, operands: Sequence[Term], summed: Collection[sp.Symbol],
                  coefficient: float | sp.Expr, expr: sp.Sum) -> Term:
        """One einsum over ``operands``, summing the axes in ``summed``."""
        scalars = [o for o in operands if not o.axes and not o.batched]
        arrays = [o for o in operands if o.axes or o.batched]
        present = union(o.axes for o in arrays)
        kept = self._preferred(tuple(a for a in present if a not in summed))
        batched = any(o.batched for o in arrays)
        count = [self._count_code(expr, key) for key in summed if key not in present]
        factor = [self.typed(coefficient).code] if coefficient != 1 else []
        factor += [s.code for s in scalars] + count
        if not arrays:
            return self.emit(" * ".join(factor) or self.typed(1).code, (), False)
        letters = letters_for(present)
        specs = [(BATCH_LETTER if o.batched else "") + "".join(letters[a] for a in o.axes)
                 for o in arrays]
        result = (BATCH_LETTER if batched else "") + "".join(letters[a] for a in kept)
        # einsum's arguments as source: its own name, apart from the Terms ``operands``
        arguments = f'"{",".join(specs)}->{result}", {", ".join(o.code for o in arrays)}'
        call = self.target.einsum.format(operands=arguments)
        code = " * ".join(factor + [call])
        return self.emit(code, kept, batched)

    def _preferred(self, axes: tuple) -> tuple:
        order = self.preferred_order[-1] if self.preferred_order else ()
        if not set(axes) <= set(order):
            return axes
        return tuple(a for a in order if a in axes)

    def _count_code(self, expr: sp.Sum, key: sp.Symbol) -> str:
        for variable, lower, upper in expr.limits:
            if index_key(variable) == key:
                return f"({self._int_code(upper - lower + 1)})"
        raise AssertionError(key)

    def _reduce(self, term: Term, keys: Iterable[sp.Symbol], how: str) -> Term:
        """``xp.<how>`` (max, min, prod) of ``term`` over each of ``keys`` it runs over."""
        for key in keys:
            if key in term.axes:
                axes = tuple(a for a in term.axes if a != key)
                term = self.emit(f"xp.{how}({term.code}, axis={self.axis_of(term, key)})", axes,
                                 term.batched)
        return term

    def _max_over(self, term: Term, key: sp.Symbol) -> Term:
        return term if key not in term.axes else self._finite(self._reduce(term, [key], "max"))


def factors_of(expr: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]]:
    """Numeric coefficient and remaining factors of a summand."""
    if isinstance(expr, sp.Mul):
        coefficient, rest = expr.as_coeff_mul()
        return coefficient, list(rest)
    if expr.is_Number:
        return expr, []
    return sp.S.One, [expr]


def union(axes_lists: Iterable[Iterable[sp.Symbol]]) -> tuple:
    seen: list = []
    for axes in axes_lists:
        for a in axes:
            if a not in seen:
                seen.append(a)
    return tuple(seen)


def letters_for(axes: Iterable[sp.Symbol]) -> dict[sp.Symbol, str]:
    unique = union([axes])
    if len(unique) > len(_LETTERS):
        raise NotImplementedError("more indices in one contraction than einsum letters")
    return {a: _LETTERS[n] for n, a in enumerate(unique)}


def _is_atom(code: str) -> bool:
    """A name, number or plain subscript, which needs no parentheses inside an operator."""
    plain = code.replace("_", "").replace(".", "").isalnum()
    return plain or (code.endswith("]") and "(" not in code)


@dataclass(frozen=True)
class Node:
    """A node's value and the intermediates its error-scale and magnitude rules reuse."""

    value: Term
    parts: dict | None = None
