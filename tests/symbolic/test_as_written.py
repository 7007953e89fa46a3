"""The one "as written" evaluator's design: a node's rule is found along its class's MRO, a
subclass changes one rule by defining one method, the operations only some arithmetics give are
refused by name where they are missing, and the walks built on it (along axes, on intervals)
replace the rules they say and no others."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from attnproof.numeric.kinds._along_axes import AlongAxes, AxisArithmetic
from attnproof.numeric.kinds._evaluate import ArrayArithmetic
from attnproof.numeric.kinds.spectral import IntervalArithmetic, IntervalWalk
from attnproof.symbolic import TheoremError, where
from attnproof.symbolic.kinds.spectral import singular_max
from attnproof.symbolic.route import (
    Arithmetic,
    AsWritten,
    Indicator,
    rule_for,
    rule_names,
)

x, y = sp.symbols("x y", real=True)


class Floats(ArrayArithmetic):
    """Python floats by name: the smallest arithmetic a test can hold in its head."""

    def __init__(self, values: dict[str, float]) -> None:
        super().__init__(np)
        self.values = values

    def literal(self, value: sp.Expr) -> float:
        return float(value)

    exact = size = literal

    def input(self, key: object) -> float:
        return self.values[str(key)]


class _NoMinimum:
    """An arithmetic of the protocol's operations alone: no minimum, absolute or power."""

    decides_conditions = False

    def literal(self, value: sp.Expr) -> float:
        return float(value)

    exact = size = literal

    def input(self, key: object) -> float:
        return {"x": 2.0, "y": 5.0}[str(key)]

    def add(self, a: float, b: float) -> float:
        return a + b

    subtract_maximum = add

    def negate(self, value: float) -> float:
        return -value

    def multiply(self, a: float, b: float) -> float:
        return a * b

    def divide(self, a: float, b: float) -> float:
        return a / b

    def sqrt(self, value: float) -> float:
        return float(np.sqrt(value))

    def exp(self, value: float) -> float:
        return float(np.exp(value))

    def log(self, value: float) -> float:
        return float(np.log(value))

    def maximum(self, operands: list[float], expr: sp.Expr, env: object) -> float:
        return max(operands)


def _changed(evaluator: type) -> set[str]:
    """The rules of ``AsWritten`` that ``evaluator`` defines again."""
    return {name for name in rule_names(AsWritten)
            if getattr(evaluator, f"_rule_{name}") is not getattr(AsWritten, f"_rule_{name}")}


def evaluated(expr: sp.Expr, values: dict[str, float], evaluator: type = AsWritten) -> float:
    return evaluator(Floats(values), {}, fixed={}).eval(expr, {})


def test_a_node_gets_the_rule_of_the_first_class_along_its_mro_that_has_one():
    class Larger(sp.Max):  # a vocabulary node subclassing a SymPy one: no rule of its own
        pass

    node = Larger(x, y)
    assert type(node) is Larger
    assert rule_for(AsWritten, Larger) is rule_for(AsWritten, sp.Max)
    assert evaluated(node, {"x": 2.0, "y": 5.0}) == 5.0


def test_a_node_no_class_of_its_mro_has_a_rule_for_is_refused_by_name():
    class Spline(sp.Function):
        pass

    with pytest.raises(TheoremError, match=r"no rule evaluates Spline as written \(Spline\(x\)\)"):
        evaluated(Spline(x), {"x": 1.0})


def test_a_subclass_changes_one_rule_by_defining_one_method():
    class Spline(sp.Function):
        pass

    class WithSpline(AsWritten):
        def _rule_Spline(self, expr, env):
            return 3.0 * self.eval(expr.args[0], env)

    class ExpAsTwo(AsWritten):
        def _rule_exp(self, expr, env):
            return 2.0

    expr = sp.exp(x) + Spline(y) * x
    assert evaluated(expr, {"x": 1.5, "y": 2.0}, WithSpline) == pytest.approx(np.exp(1.5) + 9.0)
    assert evaluated(sp.exp(x) + x, {"x": 1.5}, ExpAsTwo) == 3.5
    # every other rule is the evaluator's own: the subclass has exactly one more, or one changed
    assert rule_names(WithSpline) == rule_names(AsWritten) | {"Spline"}
    assert _changed(ExpAsTwo) == {"exp"}


def test_an_operation_the_arithmetic_does_not_give_is_refused_by_name():
    arithmetic: Arithmetic[float] = _NoMinimum()
    evaluation = AsWritten(arithmetic, {}, fixed={})
    assert evaluation.eval(sp.Max(x, y) + x * y, {}) == 15.0
    for expr, operation in ((sp.Min(x, y), "minimum"), (sp.Abs(x - y), "absolute"),
                            (x ** y, "power")):
        with pytest.raises(TheoremError, match=f"this arithmetic has no {operation}"):
            evaluation.eval(expr, {})
    # the arrays' arithmetic gives minimum and absolute
    assert evaluated(sp.Min(x, y) + sp.Abs(x - y), {"x": 2.0, "y": 5.0}) == 5.0


def test_the_walk_along_axes_replaces_the_rules_it_says_and_takes_away_four():
    own = {"Indexed", "Symbol", "Idx", "Sum", "Product", "Max", "ReduceMax", "ReduceMin",
           "exp", "log", "OnlineSoftmax"}
    taken_away = {"Min", "Where", "Piecewise", "Indicator"}
    assert rule_names(AlongAxes) == rule_names(AsWritten) | {"OnlineSoftmax"}
    for name in rule_names(AlongAxes):
        mine = getattr(AlongAxes, f"_rule_{name}")
        theirs = getattr(AsWritten, f"_rule_{name}", None)
        if name in taken_away:
            assert mine is AsWritten.refuse
        elif name in own:
            assert mine is not theirs
        else:
            assert mine is theirs, name
    walk = AlongAxes(AxisArithmetic(np, np.zeros((1, 2))), {"S": np.zeros((1, 2))}, {"n": 2},
                     [], AxisArithmetic(np, np.zeros((1, 2))))
    i = sp.Idx("i", 2)
    for node in (sp.Min(x, y), where(sp.IndexedBase("M")[i], x, 0), Indicator(sp.Eq(i, 0)),
                 sp.Piecewise((x, x > 0), (y, True))):
        with pytest.raises(TheoremError, match=f"no rule evaluates {type(node).__name__}"):
            walk.eval(node)


def test_the_interval_walk_replaces_only_powers_and_adds_spectral_terms():
    assert rule_names(IntervalWalk) == rule_names(AsWritten) | {"SpectralTerm"}
    assert _changed(IntervalWalk) == {"Pow"}


def _interval(expr: sp.Expr, values: dict[str, float], terms: dict | None = None
              ) -> tuple[float, float]:
    scalars = {name: np.array([value]) for name, value in values.items()}
    walk = IntervalWalk(IntervalArithmetic(scalars, 1), {}, terms=terms or {})
    lo, hi = walk.eval(expr, {})
    return float(lo[0]), float(hi[0])


def test_an_even_power_of_an_interval_across_zero_starts_at_zero():
    # a side (σ_max − 1)² where σ_max ∈ [0, 2]: the power is one operation, so its interval
    # starts at 0 (rounded outwards), where (σ_max − 1)·(σ_max − 1) would start at −1
    M, i, j = sp.IndexedBase("M"), sp.Idx("i", 2), sp.Idx("j", 2)
    term = singular_max(M[i, j], i, j)
    terms = {term: (np.array([0.0]), np.array([2.0]))}
    lo, hi = _interval((term - 1) ** 2, {}, terms)
    assert -1e-300 < lo <= 0.0 and 1.0 <= hi < 1.0 + 1e-15
    # the same square written as a product of two operands: the walk cannot know they are one
    lo, hi = _interval(sp.Mul(term - 1, term - 1, evaluate=False), {}, terms)
    assert lo < -0.99


coefficients = st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False)


@settings(max_examples=200, deadline=None)
@given(coefficients, coefficients, coefficients, st.floats(0.5, 1e6))
def test_every_operation_rounds_outwards_so_the_exact_value_is_enclosed(a, b, c, d):
    # each operation, a literal the format does not hold (1/3) included, is rounded outwards
    expr = x + y + sp.Symbol("c") * y / sp.Symbol("d") - sp.Rational(1, 3) * x ** 2
    values = {"x": a, "y": b, "c": c, "d": d}
    lo, hi = _interval(expr, values)
    fa, fb, fc, fd = (Fraction(v) for v in (a, b, c, d))
    exact = fa + fb + fc * fb / fd - Fraction(1, 3) * fa ** 2
    assert Fraction(lo) <= exact <= Fraction(hi)
