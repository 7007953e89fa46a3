"""Compile an index expression into readable, vectorized array code over a module handle ``xp``.

SymPy's own routes are silently wrong or slow here (DESIGN.md, "Compiling to array code"), so
this is a small compiler of its own. Every value is a :class:`Term`: the name of an array whose
axes are a leading batch axis (when ``batched``) followed by one axis per index in ``axes``.
Products under a sum become one ``einsum``; ``KroneckerDelta`` becomes ``eye``; vocabulary nodes
get their max-shifted stable spelling; ratios of exponentials are shifted by ``_stable``.
Each node kind has one rule per concern: its value (``_value_rules``), its error scale
(``_scale_rules``) and the exponents it raises e to (``_magnitude_rules``).

Compiled functions have the signature ``f(xp, arrays, sizes)``: ``arrays`` maps input names to
batched arrays (Integer scalars to Python ints), ``sizes`` maps dimension names (and ``batch``)
to Python ints, so shapes stay static under ``jit``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy.core.relational import Relational

from attnproof.symbolic import Defined, Indicator, LogSumExp, Rotation, Scalar, Softmax, Tensor
from attnproof.symbolic import ReduceMax as RowMax
from attnproof.symbolic import ReduceMin as RowMin

from ._backends import BACKENDS, Target
from ._emit import Emitter, Node, Pair, Term, identifier, index_key
from ._magnitude_rules import MagnitudeRules
from ._scale_rules import ScaleRules
from ._stable import KeptMax, ReduceMax, stabilize_exponentials
from ._value_rules import ValueRules

__all__ = ["TARGETS", "Compiled", "Pair", "Target", "Term", "compile_expression", "identifier",
           "index_key"]

# each backend row's compiler target, by name (the backend table declares them)
TARGETS = {row.target: row.compiler for row in BACKENDS}


@dataclass(frozen=True, eq=False)
class Compiled:
    """Source and callable of one compiled expression; ``out`` is the order of its free axes."""

    source: str
    function: Callable
    out: tuple[sp.Idx, ...]
    abs_scale: bool
    target: str = "numpy"

    # ``xp`` and the arrays are any backend's (NumPy, JAX, MLX): no one type covers them
    def __call__(self, xp: Any, arrays: dict[str, Any], sizes: dict[str, int]) -> Any:
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
def _compile_cached(expr: sp.Expr, out: tuple[sp.Idx, ...], inputs: tuple[Tensor | Scalar, ...],
                    definitions: tuple[Defined, ...], abs_scale: bool, target: str,
                    magnitudes: bool) -> Compiled:
    emitter = _Compilation(inputs, definitions, abs_scale or magnitudes, TARGETS[target],
                           magnitudes)
    source = emitter.function_source(_stabilized(expr), out)
    _refuse_missing(source, TARGETS[target])
    namespace: dict = {}
    exec(compile(source, f"<attnproof compiled {_short(expr)}>", "exec"), namespace)
    return Compiled(source, namespace["compiled"], out, abs_scale, target)


@functools.lru_cache(maxsize=1024)
def _stabilized(expr: sp.Expr) -> sp.Expr:
    """The shifted form, computed once per expression: it does not depend on the target, and
    a theorem is compiled for every backend (the SymPy work took longer than emitting code)."""
    return stabilize_exponentials(expr)


def _refuse_missing(source: str, target: Target) -> None:
    used = set(re.findall(r"\bxp\.(\w+)", source))
    gaps = sorted(used & target.missing)
    if gaps:
        raise NotImplementedError(f"{target.name} lacks {', '.join(gaps)}, which this needs")


def _short(expr: sp.Basic) -> str:
    text = str(expr)
    return text if len(text) < 60 else text[:57] + "..."


# Node kinds in the order they are tried: a rule table row is the kind's name, and its rules are
# ``value_<name>``, ``scale_<name>`` and, where it raises e to a power, ``exponents_<name>``.
NODE_KINDS: tuple[tuple[type, str], ...] = (
    (sp.Indexed, "indexed"),
    (sp.Idx, "index"),
    (sp.Symbol, "symbol"),
    (sp.KroneckerDelta, "delta"),
    (sp.Add, "add"),
    (sp.Mul, "mul"),
    (sp.Pow, "pow"),
    (sp.exp, "exp"),
    (sp.log, "log"),
    (sp.cos, "cos"),
    (sp.sin, "sin"),
    (Rotation, "rotation"),
    (sp.Mod, "mod"),
    (sp.floor, "floor"),
    (Indicator, "indicator"),
    (sp.Piecewise, "piecewise"),
    (Relational, "compare"),
    (sp.And, "all"),
    (sp.Or, "any"),
    (sp.Not, "negate"),
    (sp.Abs, "abs"),
    (sp.Max, "max"),
    (sp.Min, "min"),
    (sp.Sum, "sum"),
    (sp.Product, "product"),
    (Softmax, "softmax"),
    (LogSumExp, "lse"),
    (ReduceMax, "reduce_max"),
    (KeptMax, "kept_max"),
    (RowMax, "rowmax"),
    (RowMin, "rowmin"),
)
CONSTANT = "constant"


def node_kind(expr: sp.Basic) -> str:
    for kind, name in NODE_KINDS:
        if isinstance(expr, kind):
            return name
    if expr.is_Number or expr in (sp.pi, sp.E):
        return CONSTANT
    raise NotImplementedError(f"the compiler does not support {type(expr).__name__}: {expr}")


class _Compilation(Emitter, ValueRules, ScaleRules, MagnitudeRules):
    """One expression compiled to the source of ``compiled(xp, arrays, sizes)``."""

    def visit(self, expr: sp.Basic) -> Pair:
        if expr not in self.memo:
            self.memo[expr] = self._visit(expr)
        return self.memo[expr]

    def _visit(self, expr: sp.Basic) -> Pair:
        kind = node_kind(expr)
        node: Node = getattr(self, f"value_{kind}")(expr)
        scale: Term | None = getattr(self, f"scale_{kind}")(expr, node) if self.abs else None
        if self.magnitudes:
            assert scale is not None  # magnitudes compile the abs-scale too (``_compile_cached``)
            self.exponents += self.exponents_of(kind, expr, node, scale)
        return Pair(node.value, scale)

    def function_source(self, expr: sp.Basic, out: Sequence[sp.Idx]) -> str:
        for index in out:
            self._note_index(index)
        result = self.visit(expr)
        term = result.scale if self.abs else result.value
        assert term is not None  # every node has its scale when the abs-scale is compiled
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
            assert term is not None  # exponents are collected with their scales (``_visit``)
            if term.batched:
                rows.append(f"xp.max(xp.abs(xp.reshape({term.code}, (batch, -1))), axis=1)")
            else:
                rows.append(f"xp.zeros(batch, dtype=dtype) + xp.max(xp.abs({term.code}))")
        return functools.reduce(lambda a, b: f"xp.maximum({a}, {b})", rows)
