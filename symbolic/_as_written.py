"""The one "as written" evaluator: a formula evaluated node by node, in the order it is written,
with an arithmetic that says what each operation gives.

Every route that evaluates a formula as written walks it here: the IEEE values' enclosures of
every value a format can produce (``symbolic/kinds/ieee.py``) and their backend's arrays
(``numeric/kinds/ieee.py``), a limit's row values (``numeric/kinds/_row_values.py``), the error
bounds a whole axis at a time (``numeric/kinds/_along_axes.py``) and a spectral claim's interval
sides (``numeric/kinds/spectral.py``). Both routes of a claim evaluate the same operations in the
same order: a sum's x − max(…) first where it is written, then its terms left to right; x/y one
division; x^n as n − 1 products; a literal through the arithmetic (which rounds it into its
format); indices and loop values exact; a where() or a Piecewise decided by the fixed inputs and
the indices. A subexpression is evaluated once per value of the indices it depends on.

A node's rule is the evaluator's method ``_rule_<Class>`` for the first class along the node's
MRO that has one, the way SymPy's printers find ``_print_<Class>``: a subclass of the evaluator
changes one rule by defining that one method (``AlongAxes`` replaces the index rules and reads
exp, log and a maximum its own way; the spectral walk its powers), and a node class of the
vocabulary that subclasses a SymPy node keeps its parent's rule until it has one of its own. A
node no rule evaluates is a ``TheoremError`` naming it.

The arithmetic is declared as ``Arithmetic`` (every evaluator's operations), with the
operations only some arithmetics give as protocols of their own (``Minimum``, ``Absolute``,
``Power``) and ``DecidingArithmetic`` for one that decides a condition per value.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, Protocol, TypeVar, cast, runtime_checkable

import sympy as sp

from ._errors import TheoremError
from ._theorem import ordered_free_indices
from ._vocabulary import Indicator, ReduceMax, ReduceMin, Where

V = TypeVar("V")
# an input of a theorem as the evaluator reads it: a scalar's name, or (tensor, entry)
InputKey = str | tuple[str, tuple[int, ...]]
# the loop variables' values where an expression is evaluated, keyed by label (``loop_key``)
Env = dict[sp.Symbol, sp.Integer]
# a value of an arithmetic: an enclosure, an interval, or an array of any backend (NumPy, JAX,
# MLX, ...): no one type covers them
Value = Any
# a relation's name, as an arithmetic that decides conditions compares it
RELATIONS = {sp.Eq: "==", sp.Ne: "!=", sp.Le: "<=", sp.Lt: "<", sp.Ge: ">=", sp.Gt: ">"}


# -- what an arithmetic gives ------------------------------------------------------------------


class Arithmetic(Protocol[V]):
    """What the evaluator asks of every arithmetic whose values are ``V``. ``exact`` is an
    index, a loop value or an empty sum's 0 and product's 1; ``size`` a size of the statement;
    ``input`` a scalar by name or a tensor's entry as ``(tensor, indices)``; ``maximum`` names
    the node and the loop values, so that one maximum met twice is known as one.
    ``decides_conditions`` is True for an arithmetic over drawn values that decides a Piecewise
    or an Indicator per value (``DecidingArithmetic``); otherwise a condition is decided by the
    fixed inputs and the indices."""

    decides_conditions: bool

    def literal(self, value: sp.Expr) -> V: ...
    def exact(self, value: int) -> V: ...
    def size(self, value: int) -> V: ...
    def input(self, key: InputKey) -> V: ...
    def add(self, a: V, b: V) -> V: ...
    def subtract_maximum(self, x: V, minus_max: V) -> V: ...
    def negate(self, value: V) -> V: ...
    def multiply(self, a: V, b: V) -> V: ...
    def divide(self, a: V, b: V) -> V: ...
    def sqrt(self, value: V) -> V: ...
    def exp(self, value: V) -> V: ...
    def log(self, value: V) -> V: ...
    def maximum(self, operands: list[V], expr: sp.Expr, env: Env) -> V: ...


class DecidingArithmetic(Arithmetic[V], Protocol[V]):
    """An arithmetic over drawn values that decides a condition per value: a truth is whatever
    it holds one as (an array of booleans), and the evaluator only hands it back."""

    def compare(self, relation: str, a: V, b: V) -> object: ...
    def both(self, a: object, b: object) -> object: ...
    def either(self, a: object, b: object) -> object: ...
    def negation(self, value: object) -> object: ...
    def select(self, holds: object, a: V, b: V) -> V: ...


# the operations only some arithmetics give (the arrays' the first two, a limit's rows all
# three, the enclosures none): a node that needs one is refused by name by the others


@runtime_checkable
class Minimum(Protocol):
    def minimum(self, operands: list[Any]) -> Any: ...


@runtime_checkable
class Absolute(Protocol):
    def absolute(self, value: Any) -> Any: ...


@runtime_checkable
class Power(Protocol):
    def power(self, base: Any, exponent: Any) -> Any: ...


# -- the evaluator -----------------------------------------------------------------------------

A = TypeVar("A", bound="Arithmetic[Any]")
# a rule as the class holds it: (the evaluator, the node, the loop values) -> the node's value
Rule = Callable[[Any, Any, Env], Value]


class AsWritten(Generic[A]):
    """``expr`` evaluated with ``arithmetic`` at ``sizes``, the inputs ``fixed`` (by key) read
    where a where()'s mask or a condition needs them (the module docstring)."""

    def __init__(self, arithmetic: A, sizes: dict[str, int],
                 fixed: Mapping[InputKey, sp.Expr]) -> None:
        self.arithmetic, self.sizes, self.fixed = arithmetic, sizes, fixed
        # a node's value, by the node and what tells its evaluations apart
        self.known: dict[tuple[object, ...], Value] = {}

    def eval(self, expr: sp.Expr, env: Env) -> Value:
        key = (expr, loop_values(env, expr))
        if key not in self.known:
            self.known[key] = self.evaluate(expr, env)
        return self.known[key]

    def evaluate(self, expr: sp.Expr, env: Env) -> Value:
        rule = rule_for(type(self), type(expr))
        return self.refuse(expr, env) if rule is None else rule(self, expr, env)

    # -- leaves --------------------------------------------------------------------------------

    # an integer, a float, a rational, ±∞ and NaN: a literal of the arithmetic
    def _rule_Number(self, expr: sp.Number, env: Env) -> Value:
        return self.arithmetic.literal(expr)

    def _rule_ComplexInfinity(self, expr: sp.Expr, env: Env) -> Value:
        return self.arithmetic.literal(sp.nan)

    def _rule_Idx(self, expr: sp.Idx, env: Env) -> Value:
        return self.arithmetic.exact(integer_value(expr, env, self.sizes))

    def _rule_Symbol(self, expr: sp.Symbol, env: Env) -> Value:
        if expr in env:
            return self.arithmetic.exact(int(env[expr]))
        if expr.name in self.sizes:
            return self.arithmetic.size(self.sizes[expr.name])
        return self.arithmetic.input(expr.name)

    def _rule_Indexed(self, expr: sp.Indexed, env: Env) -> Value:
        return self.arithmetic.input((str(expr.base), tuple(integer_value(i, env, self.sizes)
                                                            for i in expr.indices)))

    # -- arithmetic ----------------------------------------------------------------------------

    def _rule_Add(self, expr: sp.Add, env: Env) -> Value:
        total: Value | None = None
        for group in addition_groups(expr.args):
            value = self.eval(group[0], env)
            if len(group) == 2:
                value = self.arithmetic.subtract_maximum(value, self.eval(group[1], env))
            total = value if total is None else self.arithmetic.add(total, value)
        assert total is not None  # a sum has terms
        return total

    def _rule_Mul(self, expr: sp.Mul, env: Env) -> Value:
        numerator, denominator = fraction_parts(expr)
        if numerator[:1] == [sp.S.NegativeOne] and len(numerator) == 2 and not denominator:
            return self.arithmetic.negate(self.eval(numerator[1], env))
        top = self.product(numerator, env)
        if not denominator:
            return top
        return self.arithmetic.divide(top, self.product(denominator, env))

    def product(self, factors: list[sp.Expr], env: Env) -> Value:
        value: Value | None = None
        for factor in factors:
            item = self.eval(factor, env)
            value = item if value is None else self.arithmetic.multiply(value, item)
        return value if value is not None else self.arithmetic.exact(1)

    def _rule_Pow(self, expr: sp.Pow, env: Env) -> Value:
        base, exponent = expr.args
        if exponent == sp.Rational(1, 2):
            return self.arithmetic.sqrt(self.eval(base, env))
        if exponent == -sp.Rational(1, 2):  # 1/√x: a root and a division
            return self.arithmetic.divide(self.arithmetic.exact(1),
                                          self.arithmetic.sqrt(self.eval(base, env)))
        if exponent.is_Integer and exponent > 0:
            return self.product([base] * int(exponent), env)
        if exponent.is_Integer and exponent < 0:
            return self.arithmetic.divide(self.arithmetic.exact(1),
                                          self.product([base] * -int(exponent), env))
        arithmetic = self.arithmetic
        if not isinstance(arithmetic, Power):
            raise self.missing("power", expr)
        return arithmetic.power(self.eval(base, env), self.eval(exponent, env))

    def _rule_exp(self, expr: sp.exp, env: Env) -> Value:
        return self.arithmetic.exp(self.eval(expr.args[0], env))

    def _rule_log(self, expr: sp.log, env: Env) -> Value:
        return self.arithmetic.log(self.eval(expr.args[0], env))

    def _rule_Abs(self, expr: sp.Abs, env: Env) -> Value:
        arithmetic = self.arithmetic
        if not isinstance(arithmetic, Absolute):
            raise self.missing("absolute", expr)
        return arithmetic.absolute(self.eval(expr.args[0], env))

    # -- sums, products and extrema ----------------------------------------------------------

    def _rule_Sum(self, expr: sp.Sum, env: Env) -> Value:
        return self.fold(expr, env, self.arithmetic.add, 0)

    def _rule_Product(self, expr: sp.Product, env: Env) -> Value:
        return self.fold(expr, env, self.arithmetic.multiply, 1)

    def fold(self, expr: sp.Sum | sp.Product, env: Env,
             operation: Callable[[Value, Value], Value], empty: int) -> Value:
        # over several indices, the first innermost (SymPy's order): the last one loops here
        *inner, (variable, lower, upper) = expr.limits
        function = type(expr)(expr.function, *inner) if inner else expr.function
        total: Value | None = None
        for v in range(integer_value(lower, env, self.sizes),
                       integer_value(upper, env, self.sizes) + 1):
            item = self.eval(function, {**env, loop_key(variable): sp.Integer(v)})
            total = item if total is None else operation(total, item)
        return total if total is not None else self.arithmetic.exact(empty)

    def _rule_Max(self, expr: sp.Max | ReduceMax, env: Env) -> Value:
        operands = [self.eval(o, e) for o, e in max_operands(expr, env, self.sizes)]
        return self.arithmetic.maximum(operands, expr, env)

    _rule_ReduceMax = _rule_Max

    def _rule_Min(self, expr: sp.Min | ReduceMin, env: Env) -> Value:
        operands = [self.eval(o, e) for o, e in max_operands(expr, env, self.sizes)]
        arithmetic = self.arithmetic
        if not isinstance(arithmetic, Minimum):
            raise self.missing("minimum", expr)
        return arithmetic.minimum(operands)

    _rule_ReduceMin = _rule_Min

    # -- selections ----------------------------------------------------------------------------

    def _rule_Where(self, expr: Where, env: Env) -> Value:
        mask, x, fill = expr.args
        return self.eval(x if mask_keeps(mask, env, self.sizes, self.fixed) else fill, env)

    def _rule_Piecewise(self, expr: sp.Piecewise, env: Env) -> Value:
        return self.branches(expr.args, env)

    def _rule_Indicator(self, expr: Indicator, env: Env) -> Value:
        return self.branches(((sp.S.One, expr.args[0]), (sp.S.Zero, sp.true)), env)

    def branches(self, pairs: Sequence[tuple[sp.Expr, sp.Basic]], env: Env) -> Value:
        """The first branch whose condition holds (NaN where none does): decided by the fixed
        inputs and the indices, or, for an arithmetic that decides conditions, per value."""
        if not self.arithmetic.decides_conditions:
            for branch, condition in pairs:
                if condition_holds(condition, env, self.sizes, self.fixed):
                    return self.eval(branch, env)
            return self.arithmetic.literal(sp.nan)
        deciding = self._deciding()
        result = deciding.literal(sp.nan)
        for branch, condition in reversed(pairs):  # so that the first that holds is kept
            result = deciding.select(self.condition(condition, env), self.eval(branch, env),
                                     result)
        return result

    def _deciding(self) -> DecidingArithmetic[Any]:
        """The arithmetic, where it sets ``decides_conditions`` (so it gives ``compare``,
        ``both``, ``either``, ``negation`` and ``select``: ``DecidingArithmetic``)."""
        return cast("DecidingArithmetic[Any]", self.arithmetic)

    def condition(self, condition: sp.Basic, env: Env) -> object:
        """A condition's truth per value, its relations compared through the arithmetic."""
        deciding = self._deciding()
        if condition in (sp.true, sp.false):
            return condition == sp.true
        if isinstance(condition, (sp.And, sp.Or)):
            combine = deciding.both if isinstance(condition, sp.And) else deciding.either
            parts = [self.condition(part, env) for part in condition.args]
            result = parts[0]
            for part in parts[1:]:
                result = combine(result, part)
            return result
        if isinstance(condition, sp.Not):
            return deciding.negation(self.condition(condition.args[0], env))
        if type(condition) not in RELATIONS:
            raise TheoremError(f"no rule decides the condition {condition} as written")
        return deciding.compare(RELATIONS[type(condition)], self.eval(condition.lhs, env),
                                self.eval(condition.rhs, env))

    # -- what a subclass uses ------------------------------------------------------------------

    def missing(self, operation: str, expr: sp.Expr) -> TheoremError:
        """The refusal of ``expr``, whose rule needs an ``operation`` this arithmetic does not
        give (one of the protocols above)."""
        return TheoremError(f"no rule evaluates {type(expr).__name__} as written here ({expr}):"
                            f" this arithmetic has no {operation}")

    def refuse(self, expr: sp.Expr, env: Env) -> Value:
        """A node no rule evaluates, or one whose rule a subclass takes away: refused by name."""
        raise TheoremError(f"no rule evaluates {type(expr).__name__} as written ({expr})")


# the rule found for each (evaluator class, node class): a node's MRO is walked once per run
_FOUND: dict[tuple[type, type], Rule | None] = {}


def rule_for(evaluator: type, node: type) -> Rule | None:
    """``evaluator``'s rule for a node of class ``node``: its ``_rule_<Class>`` for the first
    class along ``node``'s MRO that has one (None where no class does)."""
    key = (evaluator, node)
    if key not in _FOUND:
        found = (getattr(evaluator, f"_rule_{klass.__name__}", None) for klass in node.__mro__)
        _FOUND[key] = next((cast("Rule", rule) for rule in found if rule is not None), None)
    return _FOUND[key]


def rule_names(evaluator: type) -> set[str]:
    """The node classes ``evaluator`` has a rule for, by name (a refused one included)."""
    return {name.removeprefix("_rule_") for name in dir(evaluator) if name.startswith("_rule_")}


# -- the order of a sum and a product ------------------------------------------------------------


def is_negated_maximum(term: sp.Expr) -> bool:
    return (isinstance(term, sp.Mul) and len(term.args) == 2 and term.args[0] == -1
            and isinstance(term.args[1], (sp.Max, ReduceMax)))


def addition_groups(terms: Iterable[sp.Expr]) -> list[list[sp.Expr]]:
    """The order a sum is evaluated in, on both routes: x − max(…) first when it is written,
    then the other terms left to right."""
    terms = list(terms)
    maxima = [t for t in terms if is_negated_maximum(t)]
    others = [t for t in terms if not is_negated_maximum(t)]
    if maxima and others:
        return [[others[0], maxima[0]], *([t] for t in others[1:] + maxima[1:])]
    return [[t] for t in terms]


def fraction_parts(term: sp.Mul) -> tuple[list[sp.Expr], list[sp.Expr]]:
    """Numerator and denominator factors of a product, in order: x/y is one division."""
    numerator, denominator = [], []
    for factor in term.args:
        if (isinstance(factor, sp.Pow) and factor.exp.is_Integer and factor.exp < 0):
            denominator.append(factor.base ** -factor.exp if factor.exp != -1 else factor.base)
        else:
            numerator.append(factor)
    return numerator, denominator


def max_operands(expr: sp.Max | sp.Min | ReduceMax | ReduceMin, env: Env,
                 sizes: dict[str, int]) -> list[tuple[sp.Expr, Env]]:
    """The (operand, loop values) pairs a maximum (or a minimum) is taken over."""
    if isinstance(expr, (ReduceMax, ReduceMin)):
        (variable, lower, upper), = expr.limits
        return [(expr.function, {**env, loop_key(variable): sp.Integer(v)})
                for v in range(integer_value(lower, env, sizes),
                               integer_value(upper, env, sizes) + 1)]
    return [(arg, env) for arg in expr.args]


# -- indices, loop values and conditions: exact ------------------------------------------------


def integer_value(expr: sp.Expr, env: dict, sizes: dict) -> int:
    """An index bound or index value: exact, from the loop variables and the sizes."""
    if isinstance(expr, (int, sp.Integer)):
        return int(expr)
    label = expr.label if isinstance(expr, sp.Idx) else expr
    if label in env:
        return int(env[label])
    value = _exact(sp.sympify(expr), env, sizes)
    if not value.is_Integer:
        raise TheoremError(f"IEEE value: {expr} is not an integer here ({value})")
    return int(value)


def _exact(expr: sp.Expr, env: dict, sizes: dict) -> sp.Expr:
    """``expr`` with indices, loop variables and sizes replaced by their integers."""
    dims = {sp.Symbol(n, integer=True, positive=True): v for n, v in sizes.items()}
    expr = expr.xreplace({i: i.label for i in expr.atoms(sp.Idx)})
    return sp.sympify(expr.xreplace(env).xreplace(dims))  # a size alone becomes a Python int


def loop_key(variable: sp.Basic) -> sp.Symbol:
    """Loop variables are keyed by their label: an index and its label name one value."""
    return variable.label if isinstance(variable, sp.Idx) else variable


def loop_values(env: Env, expr: sp.Basic) -> frozenset[tuple[sp.Symbol, sp.Integer]]:
    """The loop values ``expr`` depends on: what tells apart two of its evaluations."""
    free = _free_labels(expr)
    return frozenset((k, v) for k, v in env.items() if k in free)


@functools.lru_cache(maxsize=65536)
def _free_labels(expr: sp.Basic) -> frozenset[sp.Symbol]:
    return frozenset(getattr(s, "label", s) for s in expr.free_symbols)


def condition_holds(condition: sp.Basic, env: Env, sizes: dict[str, int],
                    fixed: Mapping[InputKey, sp.Expr]) -> bool:
    """A where()'s condition, decided exactly from fixed inputs and index values."""
    if condition in (sp.true, True):
        return True
    replaced = condition.replace(
        lambda e: isinstance(e, sp.Indexed),
        lambda e: fixed[(str(e.base), tuple(integer_value(i, env, sizes) for i in e.indices))])
    replaced = replaced.xreplace({s: fixed[s.name] for s in replaced.free_symbols
                                  if getattr(s, "name", None) in fixed})
    replaced = _exact(replaced, env, sizes)
    if replaced not in (sp.true, sp.false):
        raise TheoremError(f"IEEE value: the condition {condition} is not decided by fixed "
                           f"inputs and indices ({replaced})")
    return replaced == sp.true


def mask_keeps(mask: sp.Expr, env: Env, sizes: dict[str, int],
               fixed: Mapping[InputKey, sp.Expr]) -> bool:
    """Whether a where()'s 0/1 mask entry is 1, read from the fixed inputs."""
    if isinstance(mask, sp.Indexed):
        key = (str(mask.base), tuple(integer_value(i, env, sizes) for i in mask.indices))
        return fixed[key] == 1
    return condition_holds(sp.Eq(mask, 1), env, sizes, fixed)


def index_env(expr: sp.Expr, sizes: dict) -> Iterator[Env]:
    """Every assignment of the free indices of ``expr`` at ``sizes``."""
    indices = ordered_free_indices(expr)
    ranges = [range(integer_value(i.upper, {}, sizes) + 1) for i in indices]
    for values in itertools.product(*ranges):
        yield {i.label: sp.Integer(v) for i, v in zip(indices, values, strict=True)}
